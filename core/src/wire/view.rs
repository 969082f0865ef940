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
//! wire fields as the model's. The views are declared with their models
//! (`api/operations.toml`, `[[model]]` with `view`) and generated (in
//! `view/models.rs`); their `Deserialize` and `Serialize` are made with the
//! model's from the same fields (in the generated `wire/models/records.rs`).

use std::borrow::Cow;

use serde_json::value::RawValue;

mod models;
pub use models::*;

/// Fields the service sent that the model does not name: each name with its
/// raw JSON text, in the order they came (a name sent twice appears twice;
/// the model keeps the last).
pub type RawFields<'a> = Vec<(Cow<'a, str>, &'a RawValue)>;

impl UserView<'_> {
    /// The user's id: `_id`, or `userId` when only that was sent.
    pub fn id(&self) -> Option<&str> {
        self.id.as_deref().or(self.user_id.as_deref())
    }
}
