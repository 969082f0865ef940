//! Plain data: what the service returns, and what a call takes, for the
//! operations older than the declarations.
//!
//! What the service returns is declared (`api/operations.toml`, `[[model]]`)
//! and generated in `models/records.rs`; What a call takes is written here: the
//! parameters types keep the shapes they were published with (an enum for
//! "exactly one of", constructors, a role instead of two flags), and the raw
//! request, which no declaration describes.

use serde_json::{Map, Value};

use crate::error::{Error, Result};

mod records;
pub use records::*;

impl User {
    /// The user's id: `_id`, or `userId` when only that was sent.
    pub fn id(&self) -> Option<&str> {
        self.id.as_deref().or(self.user_id.as_deref())
    }
}

// ---- what calls take ------------------------------------------------------------

/// Parameters of the users listing (section 4.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ListUsers {
    /// Users per page, 1 to 200 ([`MAX_PAGE_SIZE`]); the service's default (50) when `None`.
    pub limit: Option<u32>,
    /// Users to skip; 0 when `None`.
    pub skip: Option<u64>,
}

/// The largest page the users listing gives (section 4.1).
pub const MAX_PAGE_SIZE: u32 = 200;

impl ListUsers {
    /// A page of `limit` users after skipping `skip`.
    pub fn page(limit: u32, skip: u64) -> ListUsers {
        ListUsers {
            limit: Some(limit),
            skip: Some(skip),
        }
    }
}

impl ListUsers {
    /// The declaration's JSON params (`api/operations.toml`).
    pub(crate) fn declared_params(&self) -> Value {
        let mut params = Map::new();
        if let Some(limit) = self.limit {
            params.insert("limit".into(), limit.into());
        }
        if let Some(skip) = self.skip {
            params.insert("skip".into(), skip.into());
        }
        Value::Object(params)
    }
}

/// The JSON params naming one user by exactly one identifier.
fn user_params(by_user_id: bool, id: &str) -> Value {
    let field = if by_user_id {
        "userId"
    } else {
        "uniqueUserIdentifier"
    };
    let mut params = Map::new();
    params.insert(field.into(), id.into());
    Value::Object(params)
}

/// Which user to deactivate (section 4.2): exactly one identifier, so that
/// "both" and "neither" cannot be expressed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeactivateUser {
    /// By the service's user id (`userId`).
    UserId(String),
    /// By the customer-chosen `uniqueUserIdentifier`.
    UniqueUserIdentifier(String),
}

/// Which user to reactivate (the inverse of [`DeactivateUser`]): exactly one
/// identifier, so that "both" and "neither" cannot be expressed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReactivateUser {
    /// By the service's user id (`userId`).
    UserId(String),
    /// By the customer-chosen `uniqueUserIdentifier`.
    UniqueUserIdentifier(String),
}

impl DeactivateUser {
    /// The declaration's JSON params (`api/operations.toml`).
    pub(crate) fn declared_params(&self) -> Value {
        match self {
            DeactivateUser::UserId(id) => user_params(true, id),
            DeactivateUser::UniqueUserIdentifier(id) => user_params(false, id),
        }
    }
}

impl ReactivateUser {
    /// The declaration's JSON params (`api/operations.toml`).
    pub(crate) fn declared_params(&self) -> Value {
        match self {
            ReactivateUser::UserId(id) => user_params(true, id),
            ReactivateUser::UniqueUserIdentifier(id) => user_params(false, id),
        }
    }
}

/// Which form of the conversation-messages path to use (section 4.3): both are given by the contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PathForm {
    /// `/consumer/api/v2/room/:roomId/conversation/:conversationId/messages` (default).
    #[default]
    Room,
    /// `/consumer/api/v2/chatroom/:roomId/conversation/:conversationId/messages`.
    ChatRoom,
}

/// Parameters of get conversation messages (section 4.3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConversationMessages {
    /// The chat room's id.
    pub room_id: String,
    /// The conversation's id.
    pub conversation_id: String,
    /// Which path form to send.
    pub path_form: PathForm,
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

    /// The declaration's JSON params (`api/operations.toml`).
    pub(crate) fn declared_params(&self) -> Value {
        let form = match self.path_form {
            PathForm::Room => "room",
            PathForm::ChatRoom => "chatroom",
        };
        serde_json::json!({
            "roomId": self.room_id,
            "conversationId": self.conversation_id,
            "pathForm": form,
        })
    }
}

/// What kind of user to create (section 4.4 and the scope rule of section 3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Role {
    /// A regular user (`isModerator: false`).
    Regular,
    /// A moderator of every room (`isModerator: true`, no `chatRoom`).
    ModeratorOfAllRooms,
    /// A moderator of one room only (`isModerator: true`, `chatRoom`): a regular user in any other.
    ModeratorOfRoom(String),
}

/// A create-user request (section 4.4).
///
/// ```
/// use roomchat::CreateUser;
/// let regular = CreateUser::regular("jon");
/// let everywhere = CreateUser::moderator("ann");
/// let one_room = CreateUser::room_moderator("bob", "bbNiVFoXm")
///     .field("uniqueUserIdentifier", "crm-42")
///     .field("email", "bob@example.com");
/// # let _ = (regular, everywhere, one_room);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct CreateUser {
    /// Display name (required, not empty).
    pub username: String,
    /// Regular user, moderator of every room, or of one room.
    pub role: Role,
    /// Other fields, sent unchanged (`uniqueUserIdentifier`, `email`, `profilePic`,
    /// `externalUserId`, `meta`, …). They may not override `username`, `isModerator` or `chatRoom`.
    pub extra: Map<String, Value>,
}

impl CreateUser {
    /// A regular user.
    pub fn regular(username: impl Into<String>) -> Self {
        CreateUser {
            username: username.into(),
            role: Role::Regular,
            extra: Map::new(),
        }
    }

    /// A moderator of every room.
    pub fn moderator(username: impl Into<String>) -> Self {
        CreateUser {
            username: username.into(),
            role: Role::ModeratorOfAllRooms,
            extra: Map::new(),
        }
    }

    /// A moderator of `room_id` only.
    pub fn room_moderator(username: impl Into<String>, room_id: impl Into<String>) -> Self {
        CreateUser {
            username: username.into(),
            role: Role::ModeratorOfRoom(room_id.into()),
            extra: Map::new(),
        }
    }

    /// Adds a field sent as is (see [`CreateUser::extra`]).
    pub fn field(mut self, name: impl Into<String>, value: impl Into<Value>) -> Self {
        self.extra.insert(name.into(), value.into());
        self
    }

    /// The JSON params of create user's hand-written builder
    /// (`crate::wire::Operation::CreateUser`).
    pub(crate) fn declared_params(&self) -> Value {
        let mut params = Map::new();
        params.insert("username".into(), self.username.clone().into());
        let role = match &self.role {
            Role::Regular => "regular",
            Role::ModeratorOfAllRooms => "moderator",
            Role::ModeratorOfRoom(room) => {
                params.insert("chatRoom".into(), room.clone().into());
                "room_moderator"
            }
        };
        params.insert("role".into(), role.into());
        if !self.extra.is_empty() {
            params.insert("extra".into(), Value::Object(self.extra.clone()));
        }
        Value::Object(params)
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
