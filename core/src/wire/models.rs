//! Plain data: what the service returns, and what a call takes.
//!
//! Wire names are exactly the service's (`_id`, `userId`, `isModerator`, …).
//! Every field the service may leave out is an `Option`, and fields the
//! contract does not name are kept in `extra`, never dropped.

use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;
use serde_json::{Map, Value};

use crate::error::{Error, Result};

/// A user record, as listed by the service (section 2.2).
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct User {
    /// `_id`: the user's id, as it appears in listings and message records.
    #[serde(rename = "_id", default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// `userId`: the same id, as the create-user response names it.
    #[serde(rename = "userId", default, skip_serializing_if = "Option::is_none")]
    pub user_id: Option<String>,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
    /// URL of the profile picture.
    #[serde(
        rename = "profilePic",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub profile_pic: Option<String>,
    /// E-mail address, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    /// The customer-chosen unique identifier.
    #[serde(
        rename = "uniqueUserIdentifier",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub unique_user_identifier: Option<String>,
    /// True for a moderator.
    #[serde(
        rename = "isModerator",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub is_moderator: Option<bool>,
    /// The room a moderator is limited to.
    #[serde(rename = "chatRoom", default, skip_serializing_if = "Option::is_none")]
    pub chat_room: Option<String>,
    /// Every other field the service sent, as it came.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl User {
    /// The user's id: `_id`, or `userId` when only that was sent.
    pub fn id(&self) -> Option<&str> {
        self.id.as_deref().or(self.user_id.as_deref())
    }
}

/// One page of the users listing (section 2.4).
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct UserPage {
    /// Total number of (active) users of the account.
    pub total: u64,
    /// The limit the service applied.
    pub limit: u64,
    /// The offset the service applied.
    pub skip: u64,
    /// This page's users.
    pub data: Vec<User>,
    /// Every other field the service sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The author of a message (section 2.3).
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct MessageAuthor {
    /// `_id`: the author's user id.
    #[serde(rename = "_id", default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The author's display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
    /// The author's e-mail, when available.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    /// The author's unique identifier, when available.
    #[serde(
        rename = "uniqueUserIdentifier",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub unique_user_identifier: Option<String>,
    /// Every other field the service sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A message record of a conversation (section 2.3). Only the properties the
/// service had are present.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct Message {
    /// `_id`: the message id.
    #[serde(rename = "_id", default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The conversation's id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation: Option<String>,
    /// The message's text. On the wire this field is named `messages` (plural).
    #[serde(rename = "messages", default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// ISO 8601 UTC timestamp, as sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created: Option<String>,
    /// The author.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<MessageAuthor>,
    /// Every other field the service sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The answer to create user (section 4.4).
#[derive(Clone, PartialEq, Serialize, Default)]
pub struct CreatedUser {
    /// The signed token that signs this user in to a room ([`crate::sign_in_url`]).
    #[serde(rename = "accessToken")]
    pub access_token: String,
    /// Display name.
    #[serde(default)]
    pub username: String,
    /// The new user's id.
    #[serde(rename = "userId")]
    pub user_id: String,
    /// True for a moderator.
    #[serde(rename = "isModerator", default)]
    pub is_moderator: bool,
    /// The room a moderator is limited to; present only when created with one.
    #[serde(rename = "chatRoom", default, skip_serializing_if = "Option::is_none")]
    pub chat_room: Option<String>,
    /// Every other field the service sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl std::fmt::Debug for CreatedUser {
    // The access token signs the user in: shown only by its length.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CreatedUser")
            .field(
                "access_token",
                &format_args!("<{} bytes>", self.access_token.len()),
            )
            .field("username", &self.username)
            .field("user_id", &self.user_id)
            .field("is_moderator", &self.is_moderator)
            .field("chat_room", &self.chat_room)
            .field("extra", &self.extra)
            .finish()
    }
}

/// The answer to deactivate user (section 4.2).
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct Deactivated {
    /// `true` on success.
    #[serde(default)]
    pub success: bool,
    /// The service's text, e.g. "user deactivated".
    #[serde(default)]
    pub message: Option<String>,
    /// Every other field the service sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The answer to reactivate user (the inverse of deactivate user).
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct Reactivated {
    /// `true` on success.
    #[serde(default)]
    pub success: bool,
    /// The service's text, e.g. "user reactivated".
    #[serde(default)]
    pub message: Option<String>,
    /// Every other field the service sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The answer to invalidate access token.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct Invalidated {
    /// `true` on success.
    #[serde(default)]
    pub success: bool,
    /// The service's text, when it sent one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Every other field the service sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The user an access token belongs to, as validate access token answers it:
/// the user's record as the service stores it, with the token's issue time.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct TokenUser {
    /// `_id`: the user's id (required: an answer without it is not a user record).
    #[serde(rename = "_id")]
    pub id: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
    /// The room a moderator is limited to.
    #[serde(rename = "chatRoom", default, skip_serializing_if = "Option::is_none")]
    pub chat_room: Option<String>,
    /// True for a moderator.
    #[serde(
        rename = "isModerator",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub is_moderator: Option<bool>,
    /// The customer's own id of the user, given at creation: a number given
    /// there comes as its text (`7` → `"7"`).
    #[serde(
        rename = "externalUserId",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub external_user_id: Option<String>,
    /// When the user was created: ISO 8601, as sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created: Option<String>,
    /// When the user's record last changed: ISO 8601, as sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated: Option<String>,
    /// `iat`: when the token was issued (sent as seconds since the Unix epoch).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "epoch_seconds"
    )]
    pub iat: Option<SystemTime>,
    /// Every other field the service sent (`customer`, `parentCustomerAccount`,
    /// `createdUsingApi`, `__v`, …), as it came.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A time as the service writes `iat`: seconds since the Unix epoch, whole
/// when it is a whole second.
fn epoch_seconds<S: serde::Serializer>(
    time: &Option<SystemTime>,
    serializer: S,
) -> std::result::Result<S::Ok, S::Error> {
    let since = time
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .unwrap_or_default();
    if since.subsec_nanos() == 0 {
        serializer.serialize_u64(since.as_secs())
    } else {
        serializer.serialize_f64(since.as_secs_f64())
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
