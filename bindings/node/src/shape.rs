//! Results and errors as the JSON text of the JavaScript objects the package
//! returns: camelCase fields, absent fields left out (so they read
//! `undefined`), the fields the service sent beyond the known ones under
//! `extra`. Made on the pool thread; the event loop only runs `JSON.parse`,
//! which is much cheaper than building objects property by property through
//! Node-API.

use std::borrow::Cow;
use std::time::{SystemTime, UNIX_EPOCH};

use roomchat::view::RawFields;
use roomchat::{Error, RateLimitState, RawResponse, Remedy, ResponseMeta};
use serde::Serialize;
use serde_json::{Map, Value};

#[derive(Serialize)]
struct JsRawResponse<'a> {
    status: u16,
    headers: &'a [(String, String)],
    body: &'a Value,
}

fn text<T: Serialize>(value: &T) -> String {
    // Serializing these borrowed views of core's models (strings, numbers,
    // maps of JSON values) cannot fail.
    serde_json::to_string(value).unwrap_or_else(|_| "null".to_owned())
}

/// Bytes a listed record takes as JSON, about: a page's text is sized once
/// instead of grown by doubling.
const RECORD_TEXT_SIZE: usize = 192;

/// A value as the JSON text of its JS object, written into `out`: core's
/// models (`models.rs`, generated: field by field, their JS names, `extra`)
/// and the values their fields hold.
///
/// Written directly rather than through serde: a users listing is the largest
/// result and the most frequent, serde escapes every key of every user again,
/// and its string escaping was the addon's costliest function in perf. Side by
/// side, with 16 calls in flight, the process's CPU per call fell by about 10%.
pub trait JsText {
    fn write_js(&self, out: &mut Vec<u8>);

    /// About how many bytes its text takes.
    fn text_size(&self) -> usize {
        RECORD_TEXT_SIZE
    }
}

/// `"name":value,`: a field of a JS object (`key` is `"name":`).
#[inline]
pub fn field<T: JsText + ?Sized>(out: &mut Vec<u8>, key: &[u8], value: &T) {
    out.extend_from_slice(key);
    value.write_js(out);
    out.push(b',');
}

/// A [`field`] left out when absent (the property reads `undefined`).
#[inline]
pub fn optional_field<T: JsText>(out: &mut Vec<u8>, key: &[u8], value: Option<&T>) {
    if let Some(value) = value {
        field(out, key, value);
    }
}

/// `"extra":{…}}`: a JS object's last field, and its end.
#[inline]
pub fn extra_and_end<T: JsText + ?Sized>(out: &mut Vec<u8>, extra: &T) {
    out.extend_from_slice(b"\"extra\":");
    extra.write_js(out);
    out.push(b'}');
}

/// `value`'s JS object as JSON text (a model, a list of them, a view).
pub fn js_text<T: JsText + ?Sized>(value: &T) -> String {
    let mut out = Vec::with_capacity(value.text_size());
    value.write_js(&mut out);
    into_text(out)
}

impl JsText for String {
    fn write_js(&self, out: &mut Vec<u8>) {
        write_str(out, self);
    }
}

impl JsText for Cow<'_, str> {
    fn write_js(&self, out: &mut Vec<u8>) {
        write_str(out, self);
    }
}

impl JsText for bool {
    fn write_js(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(if *self { b"true" } else { b"false" });
    }
}

impl JsText for u64 {
    fn write_js(&self, out: &mut Vec<u8>) {
        write_number(out, *self);
    }
}

/// Milliseconds since the Unix epoch, as serde writes an `f64`: the JS layer makes it a `Date`.
impl JsText for SystemTime {
    fn write_js(&self, out: &mut Vec<u8>) {
        let since = self.duration_since(UNIX_EPOCH).unwrap_or_default();
        write_value(out, &(since.as_secs_f64() * 1000.0));
    }
}

/// `extra` of a model: the decoded values.
impl JsText for Map<String, Value> {
    fn write_js(&self, out: &mut Vec<u8>) {
        write_value(out, self);
    }
}

/// `extra` of a view: the raw fields copied as they came, in order: a name
/// sent twice is written twice, and `JSON.parse` keeps the last, as the
/// model's map does.
impl JsText for RawFields<'_> {
    fn write_js(&self, out: &mut Vec<u8>) {
        out.push(b'{');
        for (i, (name, value)) in self.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            write_str(out, name);
            out.push(b':');
            out.extend_from_slice(value.get().as_bytes());
        }
        out.push(b'}');
    }
}

impl<T: JsText> JsText for [T] {
    fn write_js(&self, out: &mut Vec<u8>) {
        out.push(b'[');
        for (i, item) in self.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            item.write_js(out);
        }
        out.push(b']');
    }

    fn text_size(&self) -> usize {
        2 + RECORD_TEXT_SIZE * self.len()
    }
}

impl<T: JsText> JsText for Vec<T> {
    fn write_js(&self, out: &mut Vec<u8>) {
        self.as_slice().write_js(out);
    }

    fn text_size(&self) -> usize {
        self.as_slice().text_size()
    }
}

fn write_number(out: &mut Vec<u8>, n: u64) {
    use std::io::Write as _;
    // Writing into memory cannot fail.
    let _ = write!(out, "{n}");
}

/// A JSON string: as serde_json writes it (the same escapes), with one
/// scan and one copy for text that needs none.
fn write_str(out: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    out.push(b'"');
    if !bytes.iter().any(|&b| b < 0x20 || b == b'"' || b == b'\\') {
        out.extend_from_slice(bytes);
    } else {
        // Rare (quotes, backslashes, control characters): serde_json's own escaping.
        let quoted = serde_json::to_vec(s).unwrap_or_default();
        out.extend_from_slice(
            quoted
                .get(1..quoted.len().saturating_sub(1))
                .unwrap_or_default(),
        );
    }
    out.push(b'"');
}

fn write_value<T: Serialize>(out: &mut Vec<u8>, value: &T) {
    // Serializing maps of JSON values into memory cannot fail.
    if serde_json::to_writer(&mut *out, value).is_err() {
        out.extend_from_slice(b"null");
    }
}

fn into_text(out: Vec<u8>) -> String {
    // Only whole UTF-8 strings and ASCII were written.
    String::from_utf8(out).unwrap_or_else(|_| "null".to_owned())
}

pub fn raw_response(r: &RawResponse) -> String {
    text(&JsRawResponse {
        status: r.status,
        headers: &r.headers,
        body: &r.body,
    })
}

pub fn json(value: &Value) -> String {
    text(value)
}

/// A record of a generated operation's answer, as declared (`records.rs`, generated).
pub struct RecordShape {
    pub fields: &'static [FieldShape],
}

/// A listing that pages, as its lazy iterators write it (`records.rs`, generated).
pub struct Paging {
    /// Its page (`MessagePage`).
    pub page: &'static RecordShape,
    /// The items of a page (`ChatMessage`).
    pub item: &'static RecordShape,
}

/// A declared field of a record.
pub struct FieldShape {
    /// Its name on the wire (`_id`).
    pub wire: &'static str,
    /// Its name in JS (`id`).
    pub js: &'static str,
    /// The record it holds (one, or a list of them), if it holds one.
    pub record: Option<&'static RecordShape>,
}

/// A generated operation's answer (core's JSON of its record, wire names, the
/// unknown fields flattened in) as `{<declared fields by their JS names>, extra}`:
/// the declared fields in declared order, those the service left out absent,
/// every other field under `extra` as it came. Records nested in it likewise.
pub fn record(value: &Value, shape: &RecordShape) -> String {
    let mut out = Vec::with_capacity(256);
    write_record(&mut out, value, shape);
    into_text(out)
}

/// An answer that is a list of declared records (`[Room]`), each as [`record`] writes one.
pub fn records(value: &Value, shape: &RecordShape) -> String {
    let mut out = Vec::with_capacity(256);
    write_records(&mut out, value, shape);
    into_text(out)
}

/// Core's records (`items`) as the JSON list of `shape`'s records, written to
/// `out`: each record becomes a JSON value (its wire names) only while it is
/// written, so a page's records never all exist twice at once.
pub fn write_items<T: Serialize>(out: &mut Vec<u8>, items: &[T], shape: &RecordShape) {
    out.push(b'[');
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        // Core's records are strings, numbers and maps of JSON values: they always serialize.
        let value = serde_json::to_value(item).unwrap_or(Value::Null);
        write_record(out, &value, shape);
    }
    out.push(b']');
}

fn write_records(out: &mut Vec<u8>, value: &Value, shape: &RecordShape) {
    let Value::Array(items) = value else {
        // Core decoded the answer into a list of the record: not reached.
        write_value(out, value);
        return;
    };
    out.push(b'[');
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_record(out, item, shape);
    }
    out.push(b']');
}

fn write_record(out: &mut Vec<u8>, value: &Value, shape: &RecordShape) {
    let Value::Object(fields) = value else {
        // Core decoded the answer into the declared record: not reached.
        write_value(out, value);
        return;
    };
    out.push(b'{');
    for field in shape.fields {
        let Some(value) = fields.get(field.wire) else {
            continue;
        };
        write_str(out, field.js);
        out.push(b':');
        match (field.record, value) {
            (Some(inner), Value::Array(_)) => write_records(out, value, inner),
            (Some(inner), _) => write_record(out, value, inner),
            (None, _) => write_value(out, value),
        }
        out.push(b',');
    }
    out.extend_from_slice(b"\"extra\":{");
    let unknown = fields
        .iter()
        .filter(|(name, _)| !shape.fields.iter().any(|f| f.wire == name.as_str()));
    for (i, (name, value)) in unknown.enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_str(out, name);
        out.push(b':');
        write_value(out, value);
    }
    out.extend_from_slice(b"}}");
}

/// `{"data": <result>, "response": {status, headers, requestId?, attempts}}`: a call
/// made with `withResponse`. `data` is the result's JSON text as it is (not parsed again);
/// `headers` has lower-case names, a repeated header's values joined with ", ".
pub fn with_response(data: &str, meta: &ResponseMeta) -> String {
    let mut headers = Map::new();
    for (name, value) in &meta.headers {
        let name = name.to_ascii_lowercase();
        let joined = match headers.get(&name).and_then(Value::as_str) {
            Some(previous) => format!("{previous}, {value}"),
            None => value.clone(),
        };
        headers.insert(name, joined.into());
    }
    let mut response = Map::new();
    response.insert("status".into(), meta.status.into());
    response.insert("headers".into(), headers.into());
    if let Some(id) = meta.request_id() {
        response.insert("requestId".into(), id.into());
    }
    response.insert("attempts".into(), meta.attempts.into());
    format!("{{\"data\":{data},\"response\":{}}}", text(&response))
}

fn millis(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

pub fn rate_limit_state(s: &RateLimitState) -> String {
    let mut out = serde_json::json!({
        "limit": s.limit,
        "windowMs": millis(s.window),
        "used": s.used,
        "remaining": s.remaining,
        "nextFreeInMs": millis(s.next_free_in),
        "backend": s.backend.name(),
        "degraded": s.degraded,
    });
    if let Some(blocked) = s.blocked_for {
        out["blockedForMs"] = millis(blocked).into();
    }
    text(&out)
}

/// How a Node program spells a setting an error names as the way past a refusal
/// (a `Client` option).
fn remedy_name(remedy: Remedy) -> &'static str {
    match remedy {
        Remedy::AllowInsecureHttp => "allowInsecureHttp: true",
        _ => remedy.rust_name(),
    }
}

/// An error as `{kind, message, detail, status?, method?, path?, eventId?, retryAfterMs?,
/// serviceMessage?, serviceError?, serviceErrorMessage?}`: `message` is core's one-line
/// rendering (kind, text, request with the key redacted), `detail` the text alone, the
/// `service…` fields the texts of the service's error body as they came.
pub fn error(e: &Error) -> String {
    // A setting the message names is named as a Node program spells it.
    let named;
    let e = match e.remedy() {
        Some(remedy) => {
            named = e.clone().name_remedy(remedy_name(remedy));
            &named
        }
        None => e,
    };
    let mut out = Map::new();
    out.insert("kind".into(), e.kind().name().into());
    out.insert("message".into(), e.to_string().into());
    out.insert("detail".into(), e.message().into());
    if let Some(status) = e.status() {
        out.insert("status".into(), status.into());
    }
    if let Some(method) = e.method() {
        out.insert("method".into(), method.into());
    }
    if let Some(path) = e.path() {
        out.insert("path".into(), path.into());
    }
    if let Some(id) = e.event_id() {
        out.insert("eventId".into(), id.into());
    }
    if let Some(wait) = e.retry_after() {
        out.insert("retryAfterMs".into(), (wait.as_millis() as u64).into());
    }
    for (name, value) in [
        ("serviceMessage", e.service_message()),
        ("serviceError", e.service_error()),
        ("serviceErrorMessage", e.service_error_message()),
    ] {
        if let Some(value) = value {
            out.insert(name.into(), value.into());
        }
    }
    text(&out)
}
