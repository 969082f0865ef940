//! Borrowed views of a users page: for code that reads a page once and turns
//! it into something else (JSON text for another language, a row in a
//! database) without keeping it.
//!
//! A view is decoded by the same code as the model ([`crate::UserPage`]): the
//! same wire names, types and required fields, the same errors. It differs in
//! what it holds: text borrowed from the response body (owned only when the
//! JSON escaped something in it), and each field the service sent beyond the
//! known ones as its raw JSON text, in the order it came, instead of a
//! [`serde_json::Value`]. A page of 50 users decodes with a few allocations
//! instead of several hundred.
//!
//! Get one with [`crate::Client::list_users_with`] or
//! [`crate::wire::decode_list_users_view`]. Its `Serialize` writes the same
//! wire fields as the model's. Its `Deserialize` and `Serialize` are made
//! with the model's from the model's declared fields (`api/operations.toml`,
//! `[[model]]` with `view`, in the generated `wire/models/records.rs`).

use std::borrow::Cow;

use serde_json::value::RawValue;

/// Fields the service sent that the model does not name: each name with its
/// raw JSON text, in the order they came (a name sent twice appears twice;
/// the model keeps the last).
pub type RawFields<'a> = Vec<(Cow<'a, str>, &'a RawValue)>;

/// A user record of a page (section 2.2), borrowed from the response body.
/// Fields as in [`crate::User`].
#[derive(Debug, Clone, Default)]
pub struct UserView<'a> {
    /// `_id`: the user's id, as it appears in listings and message records.
    pub id: Option<Cow<'a, str>>,
    /// `userId`: the same id, as the create-user response names it.
    pub user_id: Option<Cow<'a, str>>,
    /// Display name.
    pub username: Option<Cow<'a, str>>,
    /// URL of the profile picture.
    pub profile_pic: Option<Cow<'a, str>>,
    /// E-mail address, when known.
    pub email: Option<Cow<'a, str>>,
    /// The customer-chosen unique identifier.
    pub unique_user_identifier: Option<Cow<'a, str>>,
    /// True for a moderator.
    pub is_moderator: Option<bool>,
    /// The room a moderator is limited to.
    pub chat_room: Option<Cow<'a, str>>,
    /// Every other field the service sent, as raw JSON.
    pub extra: RawFields<'a>,
}

impl UserView<'_> {
    /// The user's id: `_id`, or `userId` when only that was sent.
    pub fn id(&self) -> Option<&str> {
        self.id.as_deref().or(self.user_id.as_deref())
    }
}

/// One page of the users listing (section 2.4), borrowed from the response
/// body. Fields as in [`crate::UserPage`].
#[derive(Debug, Clone, Default)]
pub struct UserPageView<'a> {
    /// Total number of (active) users of the account.
    pub total: u64,
    /// The limit the service applied.
    pub limit: u64,
    /// The offset the service applied.
    pub skip: u64,
    /// This page's users.
    pub data: Vec<UserView<'a>>,
    /// Every other field the service sent, as raw JSON.
    pub extra: RawFields<'a>,
}
