//! Results as C sees them: opaque objects with typed accessors. Every string
//! accessor returns a borrowed pointer valid until the object is freed, or
//! NULL when the service did not send that field (so absent and empty differ).

use std::ffi::{c_char, CString};
use std::ptr;
use std::sync::OnceLock;

use roomchat::{CreatedUser, Message, TokenUser, User, UserPage, Users};

use crate::boundary::{borrow_arg, free_box, mut_arg, out_arg, write_out};
use crate::error::{
    c_string, enum_from_u32, guard, guard_value, roomchat_error, roomchat_result, Failure,
};

fn opt(text: Option<String>) -> Option<CString> {
    text.map(c_string)
}

fn ptr_of(text: &Option<CString>) -> *const c_char {
    text.as_ref().map_or(ptr::null(), |t| t.as_ptr())
}

fn get<'a, T>(object: *const T) -> Option<&'a T> {
    // SAFETY: a non-NULL pointer is a live object of this library (documented).
    unsafe { object.as_ref() }
}

/// A user record. Owned when returned by `roomchat_users_iter_next` (free with
/// `roomchat_user_free`); borrowed from its page when returned by `roomchat_user_page_get`.
#[allow(non_camel_case_types)]
pub struct roomchat_user {
    user: User,
    /// C strings of the fields, made on first access (most callers read few fields).
    texts: [OnceLock<Option<CString>>; 6],
    json: OnceLock<CString>,
}

#[derive(Clone, Copy)]
enum UserText {
    Id,
    Username,
    ProfilePic,
    Email,
    UniqueUserIdentifier,
    ChatRoom,
}

impl roomchat_user {
    fn text(&self, which: UserText) -> *const c_char {
        let u = &self.user;
        let text = self.texts[which as usize].get_or_init(|| {
            let value = match which {
                UserText::Id => u.id(),
                UserText::Username => u.username.as_deref(),
                UserText::ProfilePic => u.profile_pic.as_deref(),
                UserText::Email => u.email.as_deref(),
                UserText::UniqueUserIdentifier => u.unique_user_identifier.as_deref(),
                UserText::ChatRoom => u.chat_room.as_deref(),
            };
            value.map(|v| c_string(v.to_owned()))
        });
        ptr_of(text)
    }

    fn json(&self) -> &CString {
        self.json
            .get_or_init(|| c_string(serde_json::to_string(&self.user).unwrap_or_default()))
    }
}

impl From<User> for roomchat_user {
    fn from(user: User) -> Self {
        roomchat_user {
            user,
            texts: Default::default(),
            json: OnceLock::new(),
        }
    }
}

fn user_text(user: *const roomchat_user, which: UserText) -> *const c_char {
    guard_value(ptr::null(), || {
        get(user).map_or(ptr::null(), |u| u.text(which))
    })
}

/// The user's id (`_id`, or `userId`), or NULL.
#[no_mangle]
pub extern "C" fn roomchat_user_id(user: *const roomchat_user) -> *const c_char {
    user_text(user, UserText::Id)
}

/// The display name, or NULL.
#[no_mangle]
pub extern "C" fn roomchat_user_username(user: *const roomchat_user) -> *const c_char {
    user_text(user, UserText::Username)
}

/// The profile picture URL, or NULL.
#[no_mangle]
pub extern "C" fn roomchat_user_profile_pic(user: *const roomchat_user) -> *const c_char {
    user_text(user, UserText::ProfilePic)
}

/// The e-mail, or NULL.
#[no_mangle]
pub extern "C" fn roomchat_user_email(user: *const roomchat_user) -> *const c_char {
    user_text(user, UserText::Email)
}

/// The `uniqueUserIdentifier`, or NULL.
#[no_mangle]
pub extern "C" fn roomchat_user_unique_user_identifier(
    user: *const roomchat_user,
) -> *const c_char {
    user_text(user, UserText::UniqueUserIdentifier)
}

/// The room a moderator is limited to, or NULL.
#[no_mangle]
pub extern "C" fn roomchat_user_chat_room(user: *const roomchat_user) -> *const c_char {
    user_text(user, UserText::ChatRoom)
}

/// 1 for a moderator, 0 for a regular user, -1 when the service did not say (or `user` is NULL).
#[no_mangle]
pub extern "C" fn roomchat_user_is_moderator(user: *const roomchat_user) -> i32 {
    guard_value(-1, || {
        get(user)
            .and_then(|u| u.user.is_moderator)
            .map_or(-1, i32::from)
    })
}

/// The whole record as JSON text with the service's field names, unknown fields included.
#[no_mangle]
pub extern "C" fn roomchat_user_json(user: *const roomchat_user) -> *const c_char {
    guard_value(ptr::null(), || {
        get(user).map_or(ptr::null(), |u| u.json().as_ptr())
    })
}

/// Frees a user returned by `roomchat_users_iter_next`. NULL does nothing.
/// Never call it on a user borrowed from a page.
#[no_mangle]
pub extern "C" fn roomchat_user_free(user: *mut roomchat_user) {
    free_box(user)
}

/// One page of the users listing. Free with `roomchat_user_page_free`.
#[allow(non_camel_case_types)]
pub struct roomchat_user_page {
    total: u64,
    limit: u64,
    skip: u64,
    users: Vec<roomchat_user>,
}

impl From<UserPage> for roomchat_user_page {
    fn from(page: UserPage) -> Self {
        roomchat_user_page {
            total: page.total,
            limit: page.limit,
            skip: page.skip,
            users: page.data.into_iter().map(roomchat_user::from).collect(),
        }
    }
}

/// The total number of users of the account (0 for NULL).
#[no_mangle]
pub extern "C" fn roomchat_user_page_total(page: *const roomchat_user_page) -> u64 {
    guard_value(0, || get(page).map_or(0, |p| p.total))
}

/// The limit the service applied (0 for NULL).
#[no_mangle]
pub extern "C" fn roomchat_user_page_limit(page: *const roomchat_user_page) -> u64 {
    guard_value(0, || get(page).map_or(0, |p| p.limit))
}

/// The offset the service applied (0 for NULL).
#[no_mangle]
pub extern "C" fn roomchat_user_page_skip(page: *const roomchat_user_page) -> u64 {
    guard_value(0, || get(page).map_or(0, |p| p.skip))
}

/// How many users this page holds (0 for NULL).
#[no_mangle]
pub extern "C" fn roomchat_user_page_len(page: *const roomchat_user_page) -> usize {
    guard_value(0, || get(page).map_or(0, |p| p.users.len()))
}

/// The `index`th user of the page, borrowed (valid until the page is freed), or NULL when out of range.
#[no_mangle]
pub extern "C" fn roomchat_user_page_get(
    page: *const roomchat_user_page,
    index: usize,
) -> *const roomchat_user {
    guard_value(ptr::null(), || {
        get(page)
            .and_then(|p| p.users.get(index))
            .map_or(ptr::null(), |u| u as *const _)
    })
}

/// Frees a page and every user borrowed from it. NULL does nothing.
#[no_mangle]
pub extern "C" fn roomchat_user_page_free(page: *mut roomchat_user_page) {
    free_box(page)
}

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
    let mut done = false;
    let code = guard(err_out, || {
        out_arg(user_out, "user_out")?;
        let iter = mut_arg(iter, "iter")?;
        match iter.users.next() {
            None => done = true,
            Some(Err(e)) => return Err(Failure::from(e)),
            Some(Ok(user)) => write_out(user_out, roomchat_user::from(user)),
        }
        Ok(())
    });
    if done {
        roomchat_result::IterationDone
    } else {
        code
    }
}

/// Does nothing (but check `iter`): the next call after an error retries the
/// failed page by itself. Kept for code written when an error ended the iteration.
#[no_mangle]
pub extern "C" fn roomchat_users_iter_resume(iter: *mut roomchat_users_iter) -> roomchat_result {
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
            id: opt(m.id),
            conversation: opt(m.conversation),
            text: opt(m.text),
            created: opt(m.created),
            author_id: opt(author.id),
            author_username: opt(author.username),
            author_email: opt(author.email),
            author_unique_user_identifier: opt(author.unique_user_identifier),
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
    guard_value(0, || get(messages).map_or(0, |m| m.messages.len()))
}

/// The `index`th message, borrowed (valid until the list is freed), or NULL when out of range.
#[no_mangle]
pub extern "C" fn roomchat_messages_get(
    messages: *const roomchat_messages,
    index: usize,
) -> *const roomchat_message {
    guard_value(ptr::null(), || {
        get(messages)
            .and_then(|m| m.messages.get(index))
            .map_or(ptr::null(), |m| m as *const _)
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
    guard_value(ptr::null(), || {
        let (Some(m), Some(field)) = (get(message), F::from_u32(field)) else {
            return ptr::null();
        };
        ptr_of(match field {
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

/// A newly created user. Free with `roomchat_created_user_free`.
#[allow(non_camel_case_types)]
pub struct roomchat_created_user {
    access_token: CString,
    username: CString,
    user_id: CString,
    is_moderator: bool,
    chat_room: Option<CString>,
}

impl From<CreatedUser> for roomchat_created_user {
    fn from(u: CreatedUser) -> Self {
        roomchat_created_user {
            access_token: c_string(u.access_token),
            username: c_string(u.username),
            user_id: c_string(u.user_id),
            is_moderator: u.is_moderator,
            chat_room: opt(u.chat_room),
        }
    }
}

fn created<'a>(user: *const roomchat_created_user) -> Result<&'a roomchat_created_user, Failure> {
    borrow_arg(user, "user")
}

/// The access token that signs the user in to a room (a secret of that user). Borrowed.
#[no_mangle]
pub extern "C" fn roomchat_created_user_access_token(
    user: *const roomchat_created_user,
) -> *const c_char {
    guard_value(ptr::null(), || {
        created(user).map_or(ptr::null(), |u| u.access_token.as_ptr())
    })
}

/// The display name. Borrowed.
#[no_mangle]
pub extern "C" fn roomchat_created_user_username(
    user: *const roomchat_created_user,
) -> *const c_char {
    guard_value(ptr::null(), || {
        created(user).map_or(ptr::null(), |u| u.username.as_ptr())
    })
}

/// The new user's id. Borrowed.
#[no_mangle]
pub extern "C" fn roomchat_created_user_user_id(
    user: *const roomchat_created_user,
) -> *const c_char {
    guard_value(ptr::null(), || {
        created(user).map_or(ptr::null(), |u| u.user_id.as_ptr())
    })
}

/// True for a moderator (false for NULL).
#[no_mangle]
pub extern "C" fn roomchat_created_user_is_moderator(user: *const roomchat_created_user) -> bool {
    guard_value(false, || created(user).is_ok_and(|u| u.is_moderator))
}

/// The room a moderator is limited to, or NULL. Borrowed.
#[no_mangle]
pub extern "C" fn roomchat_created_user_chat_room(
    user: *const roomchat_created_user,
) -> *const c_char {
    guard_value(ptr::null(), || {
        created(user).map_or(ptr::null(), |u| ptr_of(&u.chat_room))
    })
}

/// Frees a created user. NULL does nothing.
#[no_mangle]
pub extern "C" fn roomchat_created_user_free(user: *mut roomchat_created_user) {
    free_box(user)
}

/// The user an access token signs in, as `roomchat_client_validate_access_token`
/// returns it. Free with `roomchat_token_user_free`.
#[allow(non_camel_case_types)]
pub struct roomchat_token_user {
    user: TokenUser,
    id: CString,
    username: Option<CString>,
    chat_room: Option<CString>,
    external_user_id: Option<CString>,
    created: Option<CString>,
    updated: Option<CString>,
    json: OnceLock<CString>,
}

impl From<TokenUser> for roomchat_token_user {
    fn from(user: TokenUser) -> Self {
        roomchat_token_user {
            id: c_string(user.id.clone()),
            username: opt(user.username.clone()),
            chat_room: opt(user.chat_room.clone()),
            external_user_id: opt(user.external_user_id.clone()),
            created: opt(user.created.clone()),
            updated: opt(user.updated.clone()),
            json: OnceLock::new(),
            user,
        }
    }
}

/// The fields of a `roomchat_token_user` that are text.
#[derive(Clone, Copy)]
enum TokenUserText {
    Username,
    ChatRoom,
    ExternalUserId,
    Created,
    Updated,
}

fn token_user_text(user: *const roomchat_token_user, which: TokenUserText) -> *const c_char {
    guard_value(ptr::null(), || {
        get(user).map_or(ptr::null(), |u| {
            ptr_of(match which {
                TokenUserText::Username => &u.username,
                TokenUserText::ChatRoom => &u.chat_room,
                TokenUserText::ExternalUserId => &u.external_user_id,
                TokenUserText::Created => &u.created,
                TokenUserText::Updated => &u.updated,
            })
        })
    })
}

/// The user's id (`_id`; never NULL for a user). Borrowed.
#[no_mangle]
pub extern "C" fn roomchat_token_user_id(user: *const roomchat_token_user) -> *const c_char {
    guard_value(ptr::null(), || {
        get(user).map_or(ptr::null(), |u| u.id.as_ptr())
    })
}

/// The display name, or NULL. Borrowed.
#[no_mangle]
pub extern "C" fn roomchat_token_user_username(user: *const roomchat_token_user) -> *const c_char {
    token_user_text(user, TokenUserText::Username)
}

/// The room a moderator is limited to, or NULL. Borrowed.
#[no_mangle]
pub extern "C" fn roomchat_token_user_chat_room(user: *const roomchat_token_user) -> *const c_char {
    token_user_text(user, TokenUserText::ChatRoom)
}

/// The customer's own id of the user (`externalUserId`), or NULL. Borrowed.
#[no_mangle]
pub extern "C" fn roomchat_token_user_external_user_id(
    user: *const roomchat_token_user,
) -> *const c_char {
    token_user_text(user, TokenUserText::ExternalUserId)
}

/// When the user was created (ISO 8601, as sent), or NULL. Borrowed.
#[no_mangle]
pub extern "C" fn roomchat_token_user_created(user: *const roomchat_token_user) -> *const c_char {
    token_user_text(user, TokenUserText::Created)
}

/// When the user's record last changed (ISO 8601, as sent), or NULL. Borrowed.
#[no_mangle]
pub extern "C" fn roomchat_token_user_updated(user: *const roomchat_token_user) -> *const c_char {
    token_user_text(user, TokenUserText::Updated)
}

/// 1 for a moderator, 0 for a regular user, -1 when the service did not say (or `user` is NULL).
#[no_mangle]
pub extern "C" fn roomchat_token_user_is_moderator(user: *const roomchat_token_user) -> i32 {
    guard_value(-1, || {
        get(user)
            .and_then(|u| u.user.is_moderator)
            .map_or(-1, i32::from)
    })
}

/// When the token was issued (`iat`), in whole seconds since the Unix epoch (a
/// `time_t`), or -1 when the service did not say (or `user` is NULL).
#[no_mangle]
pub extern "C" fn roomchat_token_user_iat(user: *const roomchat_token_user) -> i64 {
    guard_value(-1, || {
        get(user)
            .and_then(|u| u.user.iat)
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(-1, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
    })
}

/// The whole record as JSON text with the service's field names, unknown fields
/// included (`iat` as seconds since the Unix epoch). Borrowed.
#[no_mangle]
pub extern "C" fn roomchat_token_user_json(user: *const roomchat_token_user) -> *const c_char {
    guard_value(ptr::null(), || {
        get(user).map_or(ptr::null(), |u| {
            u.json
                .get_or_init(|| c_string(serde_json::to_string(&u.user).unwrap_or_default()))
                .as_ptr()
        })
    })
}

/// Frees a validated token's user. NULL does nothing.
#[no_mangle]
pub extern "C" fn roomchat_token_user_free(user: *mut roomchat_token_user) {
    free_box(user)
}
