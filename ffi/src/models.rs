//! Results as C sees them: opaque objects with typed accessors. Every string
//! accessor returns a borrowed pointer valid until the object is freed, or
//! NULL when the service did not send that field (so absent and empty differ).
//!
//! The handles of core's models that C reads field by field (`roomchat_user`,
//! `roomchat_user_page`, `roomchat_created_user`, `roomchat_token_user`) are
//! generated from api/operations.toml (`[[model]]` and its `[model.c]`) into
//! the modules below; what they share is here. Written here by hand is what
//! no declaration describes: the users iterator (core's `Users`, made by
//! `roomchat_client_list_all_users`), and a conversation's messages, which C
//! reads through one function and an enum of fields (the author's flattened
//! in), as 0.1.0 published them.

use std::ffi::{c_char, CString};
use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::error::c_string;
use crate::glue::{text, text_ptr};

// One module per run of the header: cbindgen lists a module's functions after
// its parent's and in the order the modules are declared here, so the exported
// functions all live in these modules, in the header's order. The generated
// ones (`cargo xtask codegen` fails when one is not declared here) are files.
mod user;
mod user_page;
mod listing {
    //! The users iterator and a conversation's messages (hand-written: see above).

    use std::ffi::{c_char, CString};
    use std::ptr;

    use roomchat::{Message, Users};

    use super::user::roomchat_user;
    use crate::boundary::{free_box, mut_arg};
    use crate::error::{enum_from_u32, guard, roomchat_error, roomchat_result};
    use crate::glue::{next_item, read, text, text_ptr};

    /// A lazy iteration over every user. Use it from one thread at a time.
    #[allow(non_camel_case_types)]
    pub struct roomchat_users_iter {
        pub(crate) users: Users,
    }

    /// Fetches the next user (a page at a time, lazily). On `ROOMCHAT_RESULT_OK`
    /// writes an owned user to `*user_out` (free with `roomchat_user_free`); returns
    /// `ROOMCHAT_RESULT_ITERATION_DONE` at the end, never after an error: the
    /// next call after an error fetches the failed page again.
    #[no_mangle]
    pub extern "C" fn roomchat_users_iter_next(
        iter: *mut roomchat_users_iter,
        user_out: *mut *mut roomchat_user,
        err_out: *mut *mut roomchat_error,
    ) -> roomchat_result {
        next_item(iter, user_out, "user_out", err_out, |iter| {
            iter.users.next().map(|user| user.map(roomchat_user::from))
        })
    }

    /// Does nothing (but check `iter`): the next call after an error retries the
    /// failed page by itself. Kept for code written when an error ended the iteration.
    #[no_mangle]
    pub extern "C" fn roomchat_users_iter_resume(
        iter: *mut roomchat_users_iter,
    ) -> roomchat_result {
        guard(ptr::null_mut(), || {
            mut_arg(iter, "iter")?;
            Ok(())
        })
    }

    /// Frees an iterator. NULL does nothing. When it held the last hold of a log
    /// callback (or observer), the callback's destroy notifier runs now, on this
    /// thread (see `roomchat_client_options_set_log_callback_with_destroy`,
    /// `roomchat_client_options_set_observer_with_destroy`).
    #[no_mangle]
    pub extern "C" fn roomchat_users_iter_free(iter: *mut roomchat_users_iter) {
        free_box(iter)
    }

    /// A message record.
    #[allow(non_camel_case_types)]
    pub struct roomchat_message {
        id: Option<CString>,
        conversation: Option<CString>,
        text: Option<CString>,
        created: Option<CString>,
        author_id: Option<CString>,
        author_username: Option<CString>,
        author_email: Option<CString>,
        author_unique_user_identifier: Option<CString>,
    }

    impl From<Message> for roomchat_message {
        fn from(m: Message) -> Self {
            let author = m.user.unwrap_or_default();
            roomchat_message {
                id: text(m.id),
                conversation: text(m.conversation),
                text: text(m.text),
                created: text(m.created),
                author_id: text(author.id),
                author_username: text(author.username),
                author_email: text(author.email),
                author_unique_user_identifier: text(author.unique_user_identifier),
            }
        }
    }

    /// The messages of a conversation, oldest first. Free with `roomchat_messages_free`.
    #[allow(non_camel_case_types)]
    pub struct roomchat_messages {
        messages: Vec<roomchat_message>,
    }

    impl From<Vec<Message>> for roomchat_messages {
        fn from(messages: Vec<Message>) -> Self {
            roomchat_messages {
                messages: messages.into_iter().map(roomchat_message::from).collect(),
            }
        }
    }

    /// How many messages (0 for NULL).
    #[no_mangle]
    pub extern "C" fn roomchat_messages_len(messages: *const roomchat_messages) -> usize {
        read(messages, 0, |m| m.messages.len())
    }

    /// The `index`th message, borrowed (valid until the list is freed), or NULL when out of range.
    #[no_mangle]
    pub extern "C" fn roomchat_messages_get(
        messages: *const roomchat_messages,
        index: usize,
    ) -> *const roomchat_message {
        read(messages, ptr::null(), |m| {
            m.messages.get(index).map_or(ptr::null(), |m| m as *const _)
        })
    }

    /// Frees a message list and every message borrowed from it. NULL does nothing.
    #[no_mangle]
    pub extern "C" fn roomchat_messages_free(messages: *mut roomchat_messages) {
        free_box(messages)
    }

    /// Which field of a message `roomchat_message_get_field` reads.
    #[allow(non_camel_case_types)]
    #[repr(u32)]
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum roomchat_message_field {
        /// `_id`
        Id = 0,
        /// `conversation`
        Conversation = 1,
        /// The text (wire field `messages`).
        Text = 2,
        /// `created`, ISO 8601 UTC.
        Created = 3,
        /// The author's `_id`.
        AuthorId = 4,
        /// The author's `username`.
        AuthorUsername = 5,
        /// The author's `email`.
        AuthorEmail = 6,
        /// The author's `uniqueUserIdentifier`.
        AuthorUniqueUserIdentifier = 7,
    }
    enum_from_u32!(roomchat_message_field {
        Id,
        Conversation,
        Text,
        Created,
        AuthorId,
        AuthorUsername,
        AuthorEmail,
        AuthorUniqueUserIdentifier,
    });

    /// A field of a message, borrowed (valid until its list is freed), or NULL when
    /// absent. `field` is a `roomchat_message_field` value; another number (the
    /// message has no such field) also gives NULL.
    #[no_mangle]
    pub extern "C" fn roomchat_message_get_field(
        message: *const roomchat_message,
        field: u32,
    ) -> *const c_char {
        use roomchat_message_field as F;
        read(message, ptr::null(), |m| {
            let Some(field) = F::from_u32(field) else {
                return ptr::null();
            };
            text_ptr(match field {
                F::Id => &m.id,
                F::Conversation => &m.conversation,
                F::Text => &m.text,
                F::Created => &m.created,
                F::AuthorId => &m.author_id,
                F::AuthorUsername => &m.author_username,
                F::AuthorEmail => &m.author_email,
                F::AuthorUniqueUserIdentifier => &m.author_unique_user_identifier,
            })
        })
    }
}
mod created_user;
mod token_user;

pub use created_user::*;
pub use listing::*;
pub use token_user::*;
pub use user::*;
pub use user_page::*;

/// A text field's C string, made on its first access (most callers read few
/// fields), borrowed from its handle; NULL when absent.
fn lazy_text(
    cell: &OnceLock<Option<CString>>,
    value: impl FnOnce() -> Option<String>,
) -> *const c_char {
    text_ptr(cell.get_or_init(|| text(value())))
}

/// The whole record as JSON text, made on first access, borrowed from its handle.
fn lazy_json(
    cell: &OnceLock<CString>,
    json: impl FnOnce() -> serde_json::Result<String>,
) -> *const c_char {
    cell.get_or_init(|| c_string(json().unwrap_or_default()))
        .as_ptr()
}

/// Whole seconds since the Unix epoch (a `time_t`), or -1 when absent (or
/// before the epoch).
fn epoch_seconds(time: Option<SystemTime>) -> i64 {
    time.and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(-1, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}
