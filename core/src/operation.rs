//! The operations by name, with JSON parameters and JSON results: the form the
//! shared conformance vectors use, and what the Python and Node `wire` modules
//! expose to users who bring their own HTTP stack. One place decides how a
//! JSON parameter object becomes a request, for every language.

use serde_json::{json, Map, Value};

use crate::error::{Error, Result};
use crate::models::{
    ConversationMessages, CreateUser, DeactivateUser, ListUsers, PathForm, RawAuth, RawRequest,
    ReactivateUser,
};
use crate::wire::{self, WireRequest, WireResponse};

/// An operation of the service, by its stable name.
///
/// ```
/// use roomchat::wire::Operation;
/// use serde_json::json;
///
/// let op = Operation::from_name("list_users").unwrap();
/// let request = op.build(&json!({"limit": 10, "skip": 20}))?;
/// assert_eq!(request.url("https://api.example.com", Some("REDACTED")),
///            "https://api.example.com/consumer/api/v2/users?auth=REDACTED&limit=10&skip=20");
/// # Ok::<(), roomchat::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Operation {
    /// `list_users`: params `limit`?, `skip`?.
    ListUsers,
    /// `deactivate_user`: params exactly one of `userId`, `uniqueUserIdentifier`.
    DeactivateUser,
    /// `conversation_messages`: params `roomId`, `conversationId`, `pathForm`? (`room` | `chatroom`).
    ConversationMessages,
    /// `create_user`: params `username`, `role`? (`regular` | `moderator` | `room_moderator`),
    /// `chatRoom` (room moderators), `extra`? (an object of fields sent as they are).
    CreateUser,
    /// `list_chat_rooms`: no params.
    ListChatRooms,
    /// `raw`: params `method`, `path`, `query`? (pairs of strings), `body`?, `auth`?
    /// (`private_key` | `public_key` | `none`).
    Raw,
    /// `reactivate_user`: params exactly one of `userId`, `uniqueUserIdentifier`.
    ReactivateUser,
    /// `validate_access_token`: params `accessToken` (sent with the public key).
    ValidateAccessToken,
    /// `invalidate_access_token`: params `accessToken`.
    InvalidateAccessToken,
}

impl Operation {
    /// Every operation.
    pub const ALL: [Operation; 9] = [
        Operation::ListUsers,
        Operation::DeactivateUser,
        Operation::ConversationMessages,
        Operation::CreateUser,
        Operation::ListChatRooms,
        Operation::Raw,
        Operation::ReactivateUser,
        Operation::ValidateAccessToken,
        Operation::InvalidateAccessToken,
    ];

    /// The stable snake_case name.
    pub fn name(self) -> &'static str {
        match self {
            Operation::ListUsers => "list_users",
            Operation::DeactivateUser => "deactivate_user",
            Operation::ConversationMessages => "conversation_messages",
            Operation::CreateUser => "create_user",
            Operation::ListChatRooms => "list_chat_rooms",
            Operation::Raw => "raw",
            Operation::ReactivateUser => "reactivate_user",
            Operation::ValidateAccessToken => "validate_access_token",
            Operation::InvalidateAccessToken => "invalidate_access_token",
        }
    }

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

    /// The wire request for `params` (a JSON object, or null for none), checked
    /// as the typed builders check it: unknown parameters and wrong types are
    /// validation errors, and nothing is sent.
    pub fn build(self, params: &Value) -> Result<WireRequest> {
        let p = Params::new(self, params)?;
        match self {
            Operation::ListUsers => {
                p.only(&["limit", "skip"])?;
                let limit = match p.whole("limit")? {
                    Some(n) => Some(u32::try_from(n).map_err(|_| {
                        p.invalid(format!("limit must be between 1 and 200, not {n}"))
                    })?),
                    None => None,
                };
                wire::list_users(&ListUsers {
                    limit,
                    skip: p.whole("skip")?,
                })
            }
            Operation::DeactivateUser => wire::deactivate_user(&match p.user_identifier()? {
                UserIdentifier::UserId(id) => DeactivateUser::UserId(id),
                UserIdentifier::Unique(id) => DeactivateUser::UniqueUserIdentifier(id),
            }),
            Operation::ReactivateUser => wire::reactivate_user(&match p.user_identifier()? {
                UserIdentifier::UserId(id) => ReactivateUser::UserId(id),
                UserIdentifier::Unique(id) => ReactivateUser::UniqueUserIdentifier(id),
            }),
            Operation::ValidateAccessToken => {
                p.only(&["accessToken"])?;
                wire::validate_access_token(&p.required("accessToken")?)
            }
            Operation::InvalidateAccessToken => {
                p.only(&["accessToken"])?;
                wire::invalidate_access_token(&p.required("accessToken")?)
            }
            Operation::ConversationMessages => {
                p.only(&["roomId", "conversationId", "pathForm"])?;
                let form = match p.text("pathForm")?.as_deref() {
                    None | Some("room") => PathForm::Room,
                    Some("chatroom") => PathForm::ChatRoom,
                    Some(other) => {
                        return Err(Error::validation(format!(
                            "pathForm must be \"room\" or \"chatroom\", not {other:?}"
                        )))
                    }
                };
                wire::conversation_messages(
                    &ConversationMessages::new(
                        p.required("roomId")?,
                        p.required("conversationId")?,
                    )
                    .path_form(form),
                )
            }
            Operation::CreateUser => {
                p.only(&["username", "role", "chatRoom", "extra"])?;
                let username = p.required("username")?;
                let chat_room = p.text("chatRoom")?;
                let mut request = match (p.text("role")?.as_deref(), chat_room) {
                    (None | Some("regular"), None) => CreateUser::regular(username),
                    (Some("moderator"), None) => CreateUser::moderator(username),
                    (Some("room_moderator"), Some(room)) => {
                        CreateUser::room_moderator(username, room)
                    }
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
                wire::create_user(&request)
            }
            Operation::ListChatRooms => {
                p.only(&[])?;
                Ok(wire::list_chat_rooms())
            }
            Operation::Raw => {
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
                let mut request =
                    RawRequest::new(p.required("method")?, p.required("path")?).auth(auth);
                request.query = p.pairs("query")?;
                request.body = p.get("body").cloned();
                wire::raw(&request)
            }
        }
    }

    /// The result of `response` as JSON with the service's field names (fields
    /// that were absent stay absent, unknown ones are kept); `raw` gives
    /// `{"status", "body"}`. A non-2xx answer is the error it stands for.
    pub fn decode(self, response: &WireResponse) -> Result<Value> {
        fn to_json<T: serde::Serialize>(value: Result<T>) -> Result<Value> {
            // Serializing the crate's own models cannot fail: they are maps, strings, numbers.
            value.map(|v| serde_json::to_value(v).unwrap_or(Value::Null))
        }
        match self {
            Operation::ListUsers => to_json(wire::decode_list_users(response)),
            Operation::DeactivateUser => to_json(wire::decode_deactivate_user(response)),
            Operation::ConversationMessages => {
                to_json(wire::decode_conversation_messages(response))
            }
            Operation::CreateUser => to_json(wire::decode_create_user(response)),
            Operation::ListChatRooms => wire::decode_chat_rooms(response),
            Operation::Raw => wire::decode_raw(response)
                .map(|raw| json!({"status": raw.status, "body": raw.body})),
            Operation::ReactivateUser => to_json(wire::decode_reactivate_user(response)),
            Operation::ValidateAccessToken => to_json(wire::decode_validate_access_token(response)),
            Operation::InvalidateAccessToken => {
                to_json(wire::decode_invalidate_access_token(response))
            }
        }
    }
}

impl Operation {
    /// Whether a request of `method` to `path` (under the base URL) is this
    /// operation: what names a call's span (feature `tracing`). Never true of
    /// [`Operation::Raw`], which is whatever the caller sends.
    #[cfg_attr(not(feature = "tracing"), allow(dead_code))]
    pub(crate) fn is_sent_as(self, method: &str, path: &str) -> bool {
        let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
        match self {
            Operation::ListUsers => method == "GET" && path == "/consumer/api/v2/users",
            Operation::DeactivateUser => {
                method == "DELETE" && path == "/consumer/api/v2/user/deactivate"
            }
            Operation::ConversationMessages => {
                method == "GET"
                    && matches!(
                        segments.as_slice(),
                        [
                            "consumer",
                            "api",
                            "v2",
                            "room" | "chatroom",
                            _,
                            "conversation",
                            _,
                            "messages"
                        ]
                    )
            }
            Operation::CreateUser => method == "POST" && path == "/consumer/api/v1/user",
            Operation::ListChatRooms => method == "GET" && path == "/consumer/api/v1/chatrooms",
            Operation::ReactivateUser => method == "POST" && path == wire::REACTIVATE_USER_PATH,
            Operation::ValidateAccessToken => {
                method == "POST" && path == wire::VALIDATE_ACCESS_TOKEN_PATH
            }
            Operation::InvalidateAccessToken => {
                method == "POST" && path == wire::INVALIDATE_ACCESS_TOKEN_PATH
            }
            Operation::Raw => false,
        }
    }
}

impl std::fmt::Display for Operation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The one identifier of deactivate and reactivate user.
enum UserIdentifier {
    UserId(String),
    Unique(String),
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

    /// Exactly one of `userId` and `uniqueUserIdentifier`, and nothing else.
    fn user_identifier(&self) -> Result<UserIdentifier> {
        self.only(&["userId", "uniqueUserIdentifier"])?;
        match (self.text("userId")?, self.text("uniqueUserIdentifier")?) {
            (Some(id), None) => Ok(UserIdentifier::UserId(id)),
            (None, Some(id)) => Ok(UserIdentifier::Unique(id)),
            (Some(_), Some(_)) => Err(Error::validation(
                "give exactly one of userId and uniqueUserIdentifier, not both",
            )),
            (None, None) => Err(Error::validation(
                "give exactly one of userId and uniqueUserIdentifier",
            )),
        }
    }

    fn whole(&self, name: &str) -> Result<Option<u64>> {
        match self.get(name) {
            None => Ok(None),
            Some(v) => v
                .as_u64()
                .map(Some)
                .ok_or_else(|| self.invalid(format!("{name} must be a whole number ≥ 0"))),
        }
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
