//! The operations by name, with JSON parameters and JSON results: the form the
//! shared conformance vectors use, and what the Python and Node `wire` modules
//! expose to users who bring their own HTTP stack. One place decides how a
//! JSON parameter object becomes a request, for every language.

use once_cell::sync::Lazy;
use serde_json::{json, Map, Value};

use crate::error::{Error, Result};
use crate::wire::models::{CreateUser, RawAuth, RawRequest};
use crate::wire::{self, WireRequest, WireResponse};

mod catalog;
pub(crate) mod params;
pub(crate) mod records;
pub(crate) mod requests;
mod spec;

pub use catalog::Operation;
pub use spec::{
    DeclaredError, OperationSpec, Paging, ParamKind, ParamLocation, ParamSpec, RetryClass,
};

impl Operation {
    /// The operation called `name`.
    pub fn from_name(name: &str) -> Option<Operation> {
        Operation::ALL.into_iter().find(|op| op.name() == name)
    }

    /// The operation called `name`, or a validation error listing the names.
    pub fn parse(name: &str) -> Result<Operation> {
        Operation::from_name(name).ok_or_else(|| {
            let names: Vec<&str> = Operation::ALL.iter().map(|op| op.name()).collect();
            Error::validation(format!(
                "unknown operation {name:?}: expected one of {}",
                names.join(", ")
            ))
        })
    }

    /// The declared operation a request of `method` to `path` (under the base
    /// URL, without the query) is sent as, if any: what names a call's span
    /// (feature `tracing`) and gives a request its retry class.
    pub fn sent_as(method: &str, path: &str) -> Option<Operation> {
        // Every declared path split once: a call with an observer asks this
        // on each call, so it is read segment by segment, no text split again.
        static DECLARED: Lazy<Vec<(Operation, &'static str, Vec<Segment>)>> = Lazy::new(|| {
            Operation::ALL
                .into_iter()
                .filter_map(|op| {
                    let spec = op.spec()?;
                    let segments = spec
                        .path
                        .split('/')
                        .map(|declared| {
                            match declared.strip_prefix('{').and_then(|d| d.strip_suffix('}')) {
                                None => Segment::Literal(declared),
                                Some(name) => {
                                    Segment::Param(spec.param(name).map_or(&[][..], |p| p.choices))
                                }
                            }
                        })
                        .collect();
                    Some((op, spec.method, segments))
                })
                .collect()
        });
        // The path's segments, once (no declared path has more than these).
        let mut sent = [""; 12];
        let mut count = 0;
        for segment in path.split('/') {
            if count == sent.len() {
                return None;
            }
            sent[count] = segment;
            count += 1;
        }
        let sent = &sent[..count];
        DECLARED
            .iter()
            .find(|(_, declared_method, segments)| {
                segments.len() == count
                    && *declared_method == method
                    && segments
                        .iter()
                        .zip(sent)
                        .all(|(declared, sent)| match declared {
                            Segment::Literal(literal) => literal == sent,
                            Segment::Param(choices) => {
                                !sent.is_empty() && (choices.is_empty() || choices.contains(sent))
                            }
                        })
            })
            .map(|(op, _, _)| *op)
    }
}

/// A segment of a declared path: written as is, or a parameter (with its
/// choices, when it has some).
enum Segment {
    Literal(&'static str),
    Param(&'static [&'static str]),
}

/// The form a declared operation's answer is given in: a JSON value
/// ([`Operation::decode`]) or JSON text ([`Operation::decode_text`]).
trait Answer: Sized {
    /// `record` in this form; `size` is the answer's body length, about the
    /// size of its JSON text.
    fn from_record<T: serde::Serialize>(record: &T, size: usize) -> Self;
    fn from_value(value: Value) -> Self;
}

// Serializing the crate's own models cannot fail: they are maps, strings, numbers.
impl Answer for Value {
    fn from_record<T: serde::Serialize>(record: &T, _size: usize) -> Self {
        serde_json::to_value(record).unwrap_or(Value::Null)
    }
    fn from_value(value: Value) -> Self {
        value
    }
}

/// The text is written from the typed record at once: building the JSON value
/// first and writing it out cost the C ABI's calls (`roomchat_client_call_operation`)
/// a third of their CPU time for a page of 50 users (issue 52, item 7).
///
/// Into a buffer of about the body's size, and one byte more, the NUL of the C
/// string it becomes: grown from serde_json's 128 bytes by doubling, a page of
/// 50 users took seven reallocations (each a copy, and from 1 KiB on a
/// consolidation of glibc's small free chunks), a tenth of the C ABI call's
/// CPU time with 16 threads calling (issue 52, item 7).
impl Answer for String {
    fn from_record<T: serde::Serialize>(record: &T, size: usize) -> Self {
        let mut text = Vec::with_capacity(size.saturating_add(size / 8).saturating_add(1));
        match serde_json::to_writer(&mut text, record) {
            // serde_json writes UTF-8 only.
            Ok(()) => String::from_utf8(text).unwrap_or_else(|_| "null".to_owned()),
            Err(_) => "null".to_owned(),
        }
    }
    fn from_value(value: Value) -> Self {
        serde_json::to_string(&value).unwrap_or_else(|_| "null".to_owned())
    }
}

/// The answer of an operation whose result is a `T`, in the form `F`.
fn answer<T, F>(response: &WireResponse) -> Result<F>
where
    T: wire::Decoded + serde::Serialize,
    F: Answer,
{
    wire::decode_json::<T>(response).map(|record| F::from_record(&record, response.body.len()))
}

/// `create_user`'s JSON params (hand-written: they predate the declarations):
/// `username`, `role`? (`regular` | `moderator` | `room_moderator`),
/// `chatRoom` (room moderators), `extra`? (an object of fields sent as they are).
/// The declaration's shape is taken too, as the command line builds it from
/// the declaration: `isModerator`? (a boolean instead of `role`: true is a
/// moderator, of the room `chatRoom` when given) and other fields at the top
/// level, sent as they are (as `extra`'s).
fn build_create_user(params: &Value) -> Result<WireRequest> {
    let p = Params::new(Operation::CreateUser, params)?;
    let known = ["username", "role", "chatRoom", "extra", "isModerator"];
    let username = p.required("username")?;
    let chat_room = p.text("chatRoom")?;
    let role = match (p.text("role")?, p.get("isModerator")) {
        (Some(role), None) => Some(role),
        (None, None) => None,
        (None, Some(Value::Bool(true))) if chat_room.is_some() => Some("room_moderator".into()),
        (None, Some(Value::Bool(true))) => Some("moderator".into()),
        (None, Some(Value::Bool(false))) => Some("regular".into()),
        (None, Some(_)) => return Err(p.invalid("isModerator must be true or false".into())),
        (Some(_), Some(_)) => return Err(p.invalid("give role or isModerator, not both".into())),
    };
    let mut request = match (role.as_deref(), chat_room) {
        (None | Some("regular"), None) => CreateUser::regular(username),
        (Some("moderator"), None) => CreateUser::moderator(username),
        (Some("room_moderator"), Some(room)) => CreateUser::room_moderator(username, room),
        (Some("room_moderator"), None) => {
            return Err(Error::validation("a room_moderator needs chatRoom"))
        }
        (None | Some("regular" | "moderator"), Some(_)) => {
            return Err(Error::validation(
                "chatRoom is only for role \"room_moderator\"",
            ))
        }
        (Some(other), _) => {
            return Err(Error::validation(format!(
                "role must be \"regular\", \"moderator\" or \"room_moderator\", not {other:?}"
            )))
        }
    };
    match p.get("extra") {
        None => {}
        Some(Value::Object(extra)) => request.extra = extra.clone(),
        Some(_) => return Err(Error::validation("extra must be an object")),
    }
    for (name, value) in p.fields.into_iter().flatten() {
        if !known.contains(&name.as_str()) && !value.is_null() {
            request.extra.insert(name.clone(), value.clone());
        }
    }
    wire::create_user(&request)
}

/// The raw request's JSON params: `method`, `path`, `query`? (pairs of strings),
/// `body`?, `auth`? (`private_key` | `public_key` | `none`).
fn build_raw(params: &Value) -> Result<WireRequest> {
    let p = Params::new(Operation::Raw, params)?;
    p.only(&["method", "path", "query", "body", "auth"])?;
    let auth = match p.text("auth")?.as_deref() {
        None | Some("private_key") => RawAuth::PrivateKey,
        Some("public_key") => RawAuth::PublicKey,
        Some("none") => RawAuth::None,
        Some(other) => {
            return Err(Error::validation(format!(
                "auth must be \"private_key\", \"public_key\" or \"none\", not {other:?}"
            )))
        }
    };
    let mut request = RawRequest::new(p.required("method")?, p.required("path")?).auth(auth);
    request.query = p.pairs("query")?;
    request.body = p.get("body").cloned();
    wire::raw(&request)
}

/// The raw request's result: `{"status", "body"}`.
fn decode_raw(response: &WireResponse) -> Result<Value> {
    wire::decode_raw(response).map(|raw| json!({"status": raw.status, "body": raw.body}))
}

impl std::fmt::Display for Operation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A parameter object, read with the operation's name in every error.
struct Params<'a> {
    operation: Operation,
    fields: Option<&'a Map<String, Value>>,
}

impl<'a> Params<'a> {
    fn new(operation: Operation, params: &'a Value) -> Result<Params<'a>> {
        let fields = match params {
            Value::Null => None,
            Value::Object(fields) => Some(fields),
            _ => {
                return Err(Error::validation(format!(
                    "the params of {operation} must be an object"
                )))
            }
        };
        Ok(Params { operation, fields })
    }

    fn get(&self, name: &str) -> Option<&'a Value> {
        self.fields
            .and_then(|f| f.get(name))
            .filter(|v| !v.is_null())
    }

    fn invalid(&self, message: String) -> Error {
        Error::validation(format!("{}: {message}", self.operation))
    }

    /// Refuses parameters the operation does not take.
    fn only(&self, known: &[&str]) -> Result<()> {
        if let Some(unknown) = self
            .fields
            .into_iter()
            .flat_map(|f| f.keys())
            .find(|k| !known.contains(&k.as_str()))
        {
            return Err(self.invalid(format!(
                "unknown parameter {unknown:?} (takes {})",
                if known.is_empty() {
                    "none".to_owned()
                } else {
                    known.join(", ")
                }
            )));
        }
        Ok(())
    }

    fn text(&self, name: &str) -> Result<Option<String>> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(self.invalid(format!("{name} must be a string"))),
        }
    }

    fn required(&self, name: &str) -> Result<String> {
        self.text(name)?
            .ok_or_else(|| self.invalid(format!("{name} is required")))
    }

    fn pairs(&self, name: &str) -> Result<Vec<(String, String)>> {
        let Some(value) = self.get(name) else {
            return Ok(Vec::new());
        };
        let bad = || {
            self.invalid(format!(
                "{name} must be a list of [name, value] string pairs"
            ))
        };
        value
            .as_array()
            .ok_or_else(bad)?
            .iter()
            .map(|pair| match pair.as_array().map(Vec::as_slice) {
                Some([Value::String(n), Value::String(v)]) => Ok((n.clone(), v.clone())),
                _ => Err(bad()),
            })
            .collect()
    }
}

impl WireRequest {
    /// The request as JSON: `{"method", "path", "query": [[name, value]…], "body": <JSON or null>, "auth": "private_key" | "public_key" | "none"}`.
    pub fn to_json(&self) -> Value {
        let body = self
            .body
            .as_deref()
            .map(|b| serde_json::from_str(b).unwrap_or(Value::String(b.to_owned())))
            .unwrap_or(Value::Null);
        let auth = match self.auth {
            RawAuth::PrivateKey => "private_key",
            RawAuth::PublicKey => "public_key",
            RawAuth::None => "none",
        };
        json!({
            "method": self.method,
            "path": self.path,
            "query": self.query.iter().map(|(n, v)| json!([n, v])).collect::<Vec<_>>(),
            "body": body,
            "auth": auth,
        })
    }
}

#[cfg(test)]
mod sent_as_tests {
    use super::*;

    /// The declarations' own reading: the first operation whose spec says so.
    fn by_spec(method: &str, path: &str) -> Option<Operation> {
        Operation::ALL
            .into_iter()
            .find(|op| op.spec().is_some_and(|spec| spec.is_sent_as(method, path)))
    }

    #[test]
    fn reads_every_path_as_the_declarations_do() {
        let fills = ["x", "", "room", "chatroom", "a/b"];
        let mut paths = Vec::new();
        for op in Operation::ALL {
            let Some(spec) = op.spec() else { continue };
            paths.push(spec.path.to_owned());
            for fill in fills {
                let mut path = String::new();
                for (i, declared) in spec.path.split('/').enumerate() {
                    if i > 0 {
                        path.push('/');
                    }
                    path.push_str(if declared.starts_with('{') {
                        fill
                    } else {
                        declared
                    });
                }
                paths.push(path.clone());
                paths.push(format!("{path}/"));
                paths.push(path.to_ascii_uppercase());
            }
        }
        paths.extend(["/", "", "/consumer", "//consumer/api/v2/users"].map(String::from));
        let methods = ["GET", "POST", "PUT", "PATCH", "DELETE", "get"];
        let mut found = 0;
        for path in &paths {
            for method in methods {
                let expected = by_spec(method, path);
                assert_eq!(
                    Operation::sent_as(method, path),
                    expected,
                    "{method} {path}"
                );
                found += usize::from(expected.is_some());
            }
        }
        assert!(
            found > Operation::ALL.len(),
            "the paths reach the operations: {found}"
        );
    }
}
