//! Plain data: what the service returns, and what a call takes, for the
//! operations older than the declarations.
//!
//! Both are declared (`api/operations.toml`) and generated, under the shapes
//! they were published with: what the service returns (`[[model]]`) in
//! `models/records.rs`, what a call takes (`[operation.rust]`, an enum for
//! "exactly one of", a role instead of two flags: `[operation.enums]`) in
//! `models/params.rs`. Written here: the constructors and methods of those
//! types, and the raw request, which no declaration describes.

use serde_json::{Map, Value};

use crate::error::{Error, Result};

mod params;
mod records;
pub use params::*;
pub use records::*;

impl User {
    /// The user's id: `_id`, or `userId` when only that was sent.
    pub fn id(&self) -> Option<&str> {
        self.id.as_deref().or(self.user_id.as_deref())
    }
}

// ---- what calls take ------------------------------------------------------------

// The parameters types and their `declared_params()` are declared and generated
// (`[operation.rust]`, `[operation.enums]`, in `models/params.rs`); their
// constructors, the published API's own names, are these.

impl ListUsers {
    /// A page of `limit` users after skipping `skip`.
    pub fn page(limit: u32, skip: u64) -> ListUsers {
        ListUsers {
            limit: Some(limit),
            skip: Some(skip),
        }
    }
}

impl ConversationMessages {
    /// The messages of `conversation_id` in `room_id`, by the `room` path form.
    pub fn new(room_id: impl Into<String>, conversation_id: impl Into<String>) -> Self {
        ConversationMessages {
            room_id: room_id.into(),
            conversation_id: conversation_id.into(),
            path_form: PathForm::Room,
        }
    }

    /// The same, by another path form.
    pub fn path_form(mut self, form: PathForm) -> Self {
        self.path_form = form;
        self
    }
}

impl CreateUser {
    /// A regular user.
    pub fn regular(username: impl Into<String>) -> Self {
        CreateUser::with_role(username, Role::Regular)
    }

    /// A moderator of every room.
    pub fn moderator(username: impl Into<String>) -> Self {
        CreateUser::with_role(username, Role::ModeratorOfAllRooms)
    }

    /// A moderator of `room_id` only.
    pub fn room_moderator(username: impl Into<String>, room_id: impl Into<String>) -> Self {
        CreateUser::with_role(username, Role::ModeratorOfRoom(room_id.into()))
    }

    fn with_role(username: impl Into<String>, role: Role) -> Self {
        CreateUser {
            username: username.into(),
            role,
            extra: Map::new(),
        }
    }

    /// Adds a field sent as is (see [`CreateUser::extra`]).
    pub fn field(mut self, name: impl Into<String>, value: impl Into<Value>) -> Self {
        self.extra.insert(name.into(), value.into());
        self
    }
}

/// Which key authenticates a [`RawRequest`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RawAuth {
    /// The private key, as the `auth` query parameter (every documented endpoint).
    #[default]
    PrivateKey,
    /// The public key, as the `publicKey` query parameter (Validate Access Token).
    PublicKey,
    /// No key.
    None,
}

/// A request to an endpoint the contract names without a shape (section 4.7),
/// sent through the same limits, retries and error decoding.
#[derive(Debug, Clone, PartialEq)]
pub struct RawRequest {
    /// `GET`, `POST`, `PUT`, `PATCH` or `DELETE`.
    pub method: String,
    /// The path under the base URL, starting with `/consumer/api/`, e.g. `/consumer/api/v1/chatroom`.
    /// Sent as given: percent-encode any ids in it yourself ([`crate::wire::encode_path_segment`]).
    pub path: String,
    /// Query parameters (besides the key), encoded by the client.
    pub query: Vec<(String, String)>,
    /// A JSON body, if any.
    pub body: Option<Value>,
    /// Which key to send.
    pub auth: RawAuth,
}

impl RawRequest {
    /// A request with `method` to `path`, authenticated by the private key.
    pub fn new(method: impl Into<String>, path: impl Into<String>) -> Self {
        RawRequest {
            method: method.into(),
            path: path.into(),
            query: Vec::new(),
            body: None,
            auth: RawAuth::PrivateKey,
        }
    }

    /// Adds a query parameter.
    pub fn query(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.query.push((name.into(), value.into()));
        self
    }

    /// Sets the JSON body.
    pub fn body(mut self, body: Value) -> Self {
        self.body = Some(body);
        self
    }

    /// Sets the key that authenticates it.
    pub fn auth(mut self, auth: RawAuth) -> Self {
        self.auth = auth;
        self
    }
}

/// The answer to a [`RawRequest`] that succeeded (2xx).
#[derive(Debug, Clone, PartialEq)]
pub struct RawResponse {
    /// The HTTP status.
    pub status: u16,
    /// The headers, names in lower case.
    pub headers: Vec<(String, String)>,
    /// The body, parsed as JSON (`Null` when empty).
    pub body: Value,
}

pub(crate) fn check_non_empty(what: &str, value: &str) -> Result<()> {
    if value.is_empty() {
        return Err(Error::validation(format!("{what} must not be empty")));
    }
    Ok(())
}
