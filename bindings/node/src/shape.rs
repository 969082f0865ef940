//! Results and errors as the JSON text of the JavaScript objects the package
//! returns: camelCase fields, absent fields left out (so they read
//! `undefined`), the fields the service sent beyond the known ones under
//! `extra`. Made on the pool thread; the event loop only runs `JSON.parse`,
//! which is much cheaper than building objects property by property through
//! Node-API.

use roomchat::view::{RawFields, UserPageView, UserView};
use roomchat::{
    CreatedUser, Deactivated, Error, Invalidated, Message, MessageAuthor, RateLimitState,
    RawResponse, Reactivated, ResponseMeta, TokenUser, User, UserPage,
};
use serde::Serialize;
use serde_json::{Map, Value};

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct JsAuthor<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    username: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    email: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    unique_user_identifier: Option<&'a str>,
    extra: &'a Map<String, Value>,
}

impl<'a> From<&'a MessageAuthor> for JsAuthor<'a> {
    fn from(a: &'a MessageAuthor) -> Self {
        JsAuthor {
            id: a.id.as_deref(),
            username: a.username.as_deref(),
            email: a.email.as_deref(),
            unique_user_identifier: a.unique_user_identifier.as_deref(),
            extra: &a.extra,
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct JsMessage<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    conversation: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    created: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    user: Option<JsAuthor<'a>>,
    extra: &'a Map<String, Value>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct JsCreatedUser<'a> {
    access_token: &'a str,
    username: &'a str,
    user_id: &'a str,
    is_moderator: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    chat_room: Option<&'a str>,
    extra: &'a Map<String, Value>,
}

#[derive(Serialize)]
struct JsDeactivated<'a> {
    success: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<&'a str>,
    extra: &'a Map<String, Value>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct JsTokenUser<'a> {
    id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    username: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    chat_room: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    is_moderator: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    external_user_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    created: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    updated: Option<&'a str>,
    /// Milliseconds since the Unix epoch: the JS layer makes it a `Date`.
    #[serde(skip_serializing_if = "Option::is_none")]
    iat: Option<f64>,
    extra: &'a Map<String, Value>,
}

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

/// Bytes a listed user takes as JSON, about: a page's text is sized once
/// instead of grown by doubling.
const USER_TEXT_SIZE: usize = 192;

/// A user as `{id?, userId?, username?, profilePic?, email?,
/// uniqueUserIdentifier?, isModerator?, chatRoom?, extra}`.
pub fn user(u: &User) -> String {
    let mut out = Vec::with_capacity(USER_TEXT_SIZE);
    write_user(&mut out, &UserText::from(u));
    into_text(out)
}

/// A page as `{total, limit, skip, data: [user, ...], extra}`.
pub fn user_page(page: &UserPage) -> String {
    let users = page.data.iter().map(UserText::from);
    write_page(
        page.total,
        page.limit,
        page.skip,
        users,
        Extra::Values(&page.extra),
    )
}

/// A page borrowed from the response body, written as [`user_page`] writes a
/// page: listings decode into views, which skip an allocation per field and
/// copy the fields beyond the known ones as the raw JSON they came as.
pub fn user_page_view(page: &UserPageView<'_>) -> String {
    let users = page.data.iter().map(UserText::from);
    write_page(
        page.total,
        page.limit,
        page.skip,
        users,
        Extra::Raw(&page.extra),
    )
}

/// A user's fields, from a model or a view.
struct UserText<'a> {
    id: Option<&'a str>,
    user_id: Option<&'a str>,
    username: Option<&'a str>,
    profile_pic: Option<&'a str>,
    email: Option<&'a str>,
    unique_user_identifier: Option<&'a str>,
    is_moderator: Option<bool>,
    chat_room: Option<&'a str>,
    extra: Extra<'a>,
}

/// The fields beyond the known ones: decoded values, or raw JSON text.
enum Extra<'a> {
    Values(&'a Map<String, Value>),
    Raw(&'a RawFields<'a>),
}

/// `UserText` from a model or a view: the same fields, borrowed.
macro_rules! user_text_from {
    ($model:ty, $extra:ident) => {
        impl<'a> From<&'a $model> for UserText<'a> {
            fn from(u: &'a $model) -> Self {
                UserText {
                    id: u.id.as_deref(),
                    user_id: u.user_id.as_deref(),
                    username: u.username.as_deref(),
                    profile_pic: u.profile_pic.as_deref(),
                    email: u.email.as_deref(),
                    unique_user_identifier: u.unique_user_identifier.as_deref(),
                    is_moderator: u.is_moderator,
                    chat_room: u.chat_room.as_deref(),
                    extra: Extra::$extra(&u.extra),
                }
            }
        }
    };
}

user_text_from!(User, Values);
user_text_from!(UserView<'a>, Raw);

fn write_page<'a>(
    total: u64,
    limit: u64,
    skip: u64,
    users: impl ExactSizeIterator<Item = UserText<'a>>,
    extra: Extra<'_>,
) -> String {
    let mut out = Vec::with_capacity(64 + USER_TEXT_SIZE * users.len());
    out.extend_from_slice(b"{\"total\":");
    write_number(&mut out, total);
    out.extend_from_slice(b",\"limit\":");
    write_number(&mut out, limit);
    out.extend_from_slice(b",\"skip\":");
    write_number(&mut out, skip);
    out.extend_from_slice(b",\"data\":[");
    for (i, u) in users.enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_user(&mut out, &u);
    }
    out.extend_from_slice(b"],\"extra\":");
    write_extra(&mut out, &extra);
    out.push(b'}');
    into_text(out)
}

// Users are written directly rather than through serde: a listing is the
// largest result and the most frequent, serde escapes every key of every user
// again, and its string escaping was the addon's costliest function in perf.
// Side by side, with 16 calls in flight, the process's CPU per call fell by
// about 10%.
fn write_user(out: &mut Vec<u8>, u: &UserText<'_>) {
    out.push(b'{');
    let fields = [
        ("\"id\":", u.id),
        ("\"userId\":", u.user_id),
        ("\"username\":", u.username),
        ("\"profilePic\":", u.profile_pic),
        ("\"email\":", u.email),
        ("\"uniqueUserIdentifier\":", u.unique_user_identifier),
    ];
    for (key, value) in fields {
        if let Some(value) = value {
            out.extend_from_slice(key.as_bytes());
            write_str(out, value);
            out.push(b',');
        }
    }
    if let Some(moderator) = u.is_moderator {
        out.extend_from_slice(b"\"isModerator\":");
        out.extend_from_slice(if moderator { b"true," } else { b"false," });
    }
    if let Some(room) = u.chat_room {
        out.extend_from_slice(b"\"chatRoom\":");
        write_str(out, room);
        out.push(b',');
    }
    out.extend_from_slice(b"\"extra\":");
    write_extra(out, &u.extra);
    out.push(b'}');
}

/// `extra` as an object. Raw fields are copied as they came, in order: a
/// name sent twice is written twice, and `JSON.parse` keeps the last, as the
/// model's map does.
fn write_extra(out: &mut Vec<u8>, extra: &Extra<'_>) {
    match extra {
        Extra::Values(map) => write_value(out, map),
        Extra::Raw(fields) => {
            out.push(b'{');
            for (i, (name, value)) in fields.iter().enumerate() {
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

pub fn messages(messages: &[Message]) -> String {
    let list: Vec<JsMessage<'_>> = messages
        .iter()
        .map(|m| JsMessage {
            id: m.id.as_deref(),
            conversation: m.conversation.as_deref(),
            text: m.text.as_deref(),
            created: m.created.as_deref(),
            user: m.user.as_ref().map(JsAuthor::from),
            extra: &m.extra,
        })
        .collect();
    text(&list)
}

pub fn created_user(c: &CreatedUser) -> String {
    text(&JsCreatedUser {
        access_token: &c.access_token,
        username: &c.username,
        user_id: &c.user_id,
        is_moderator: c.is_moderator,
        chat_room: c.chat_room.as_deref(),
        extra: &c.extra,
    })
}

pub fn deactivated(d: &Deactivated) -> String {
    text(&JsDeactivated {
        success: d.success,
        message: d.message.as_deref(),
        extra: &d.extra,
    })
}

/// Reactivate user's answer, as deactivate's: `{success, message?, extra}`.
pub fn reactivated(r: &Reactivated) -> String {
    text(&JsDeactivated {
        success: r.success,
        message: r.message.as_deref(),
        extra: &r.extra,
    })
}

/// Invalidate access token's answer: `{success, message?, extra}`.
pub fn invalidated(r: &Invalidated) -> String {
    text(&JsDeactivated {
        success: r.success,
        message: r.message.as_deref(),
        extra: &r.extra,
    })
}

/// A validated token's user as `{id, username?, chatRoom?, isModerator?,
/// externalUserId?, created?, updated?, iat? (ms since the epoch), extra}`.
pub fn token_user(u: &TokenUser) -> String {
    text(&JsTokenUser {
        id: &u.id,
        username: u.username.as_deref(),
        chat_room: u.chat_room.as_deref(),
        is_moderator: u.is_moderator,
        external_user_id: u.external_user_id.as_deref(),
        created: u.created.as_deref(),
        updated: u.updated.as_deref(),
        iat: u.iat.map(|t| {
            t.duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default()
                .as_secs_f64()
                * 1000.0
        }),
        extra: &u.extra,
    })
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

/// An error as `{kind, message, detail, status?, method?, path?, eventId?, retryAfterMs?,
/// serviceMessage?, serviceError?, serviceErrorMessage?}`: `message` is core's one-line
/// rendering (kind, text, request with the key redacted), `detail` the text alone, the
/// `service…` fields the texts of the service's error body as they came.
pub fn error(e: &Error) -> String {
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
