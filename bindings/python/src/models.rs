//! The result models: frozen classes that wrap core's values and make Python
//! objects only for the attributes that are read (a page of 50 users is 50 small
//! wrappers around shared Rust values, and a `username` becomes a `str` when read).

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::convert::{from_json, map_to_dict, to_json};
use crate::errors::validation;

fn hash_of(parts: &[Option<&str>]) -> u64 {
    let mut hasher = DefaultHasher::new();
    parts.hash(&mut hasher);
    hasher.finish()
}

/// A string field as Python shows it (single quotes), shortened.
fn show(value: Option<&str>) -> String {
    let Some(s) = value else {
        return "None".to_owned();
    };
    let long = s.chars().count() > 40;
    let mut out = String::from("'");
    for c in s.chars().take(if long { 37 } else { 40 }) {
        match c {
            '\'' => out.push_str("\\'"),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.extend(c.escape_default()),
            c => out.push(c),
        }
    }
    out.push('\'');
    if long {
        out.push_str("...");
    }
    out
}

fn wire_dict<'py, T: Serialize>(py: Python<'py>, value: &T) -> PyResult<Bound<'py, PyAny>> {
    // Serializing core's models cannot fail: they are maps, strings and numbers.
    let json = serde_json::to_value(value).unwrap_or(Value::Null);
    from_json(py, &json)
}

fn parse<T: DeserializeOwned>(py: Python<'_>, what: &str, data: &Bound<'_, PyAny>) -> PyResult<T> {
    let json = to_json("data", data)?;
    serde_json::from_value(json)
        .map_err(|e| validation(py, format!("not the wire form of {what}: {e}")))
}

/// `(cls.from_dict, (self.to_dict(),))`: models pickle as their wire form.
fn reduce<'py>(slf: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyTuple>> {
    let py = slf.py();
    let from_dict = slf.get_type().getattr(pyo3::intern!(py, "from_dict"))?;
    let data = slf.call_method0(pyo3::intern!(py, "to_dict"))?;
    PyTuple::new(py, [from_dict, PyTuple::new(py, [data])?.into_any()])
}

// ---- User ---------------------------------------------------------------------------

/// A user record of the listing. Attributes are `None` where the service left the field out.
#[pyclass(frozen, module = "roomchat")]
pub struct User {
    pub(crate) inner: Arc<roomchat::User>,
}

#[pymethods]
impl User {
    /// `_id`: the user's id (`user_id` holds the same id when the service sent `userId`).
    #[getter]
    fn id(&self) -> Option<&str> {
        self.inner.id.as_deref()
    }
    /// `userId`.
    #[getter]
    fn user_id(&self) -> Option<&str> {
        self.inner.user_id.as_deref()
    }
    /// Display name.
    #[getter]
    fn username(&self) -> Option<&str> {
        self.inner.username.as_deref()
    }
    /// `profilePic`: URL of the profile picture.
    #[getter]
    fn profile_pic(&self) -> Option<&str> {
        self.inner.profile_pic.as_deref()
    }
    /// E-mail address.
    #[getter]
    fn email(&self) -> Option<&str> {
        self.inner.email.as_deref()
    }
    /// `uniqueUserIdentifier`.
    #[getter]
    fn unique_user_identifier(&self) -> Option<&str> {
        self.inner.unique_user_identifier.as_deref()
    }
    /// `isModerator`.
    #[getter]
    fn is_moderator(&self) -> Option<bool> {
        self.inner.is_moderator
    }
    /// `chatRoom`: the room a moderator is limited to.
    #[getter]
    fn chat_room(&self) -> Option<&str> {
        self.inner.chat_room.as_deref()
    }
    /// Every other field the service sent (a new dict on each access).
    #[getter]
    fn extra<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        map_to_dict(py, &self.inner.extra)
    }
    /// The record with the service's field names.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        wire_dict(py, &*self.inner)
    }
    /// A user from its wire form (as `to_dict` gives it).
    #[classmethod]
    fn from_dict(cls: &Bound<'_, PyType>, data: &Bound<'_, PyAny>) -> PyResult<User> {
        Ok(User {
            inner: Arc::new(parse(cls.py(), "a user", data)?),
        })
    }
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        reduce(slf.as_any())
    }
    fn __eq__(&self, other: &Self) -> bool {
        self.inner == other.inner
    }
    fn __hash__(&self) -> u64 {
        hash_of(&[
            self.inner.id.as_deref(),
            self.inner.user_id.as_deref(),
            self.inner.username.as_deref(),
        ])
    }
    fn __repr__(&self) -> String {
        format!(
            "User(id={}, username={})",
            show(self.inner.id()),
            show(self.inner.username.as_deref())
        )
    }
}

// ---- UserPage -----------------------------------------------------------------------

/// One page of the users listing.
#[pyclass(frozen, module = "roomchat")]
pub struct UserPage {
    total: u64,
    limit: u64,
    skip: u64,
    users: Vec<Arc<roomchat::User>>,
    extra: Map<String, Value>,
    /// `data`, made on first access.
    data: PyOnceLock<Py<PyTuple>>,
}

impl From<roomchat::UserPage> for UserPage {
    fn from(page: roomchat::UserPage) -> UserPage {
        UserPage {
            total: page.total,
            limit: page.limit,
            skip: page.skip,
            users: page.data.into_iter().map(Arc::new).collect(),
            extra: page.extra,
            data: PyOnceLock::new(),
        }
    }
}

impl UserPage {
    fn to_core(&self) -> roomchat::UserPage {
        roomchat::UserPage {
            total: self.total,
            limit: self.limit,
            skip: self.skip,
            data: self.users.iter().map(|u| (**u).clone()).collect(),
            extra: self.extra.clone(),
        }
    }
}

#[pymethods]
impl UserPage {
    /// Total number of users of the account.
    #[getter]
    fn total(&self) -> u64 {
        self.total
    }
    /// The limit the service applied.
    #[getter]
    fn limit(&self) -> u64 {
        self.limit
    }
    /// The offset the service applied.
    #[getter]
    fn skip(&self) -> u64 {
        self.skip
    }
    /// This page's users.
    #[getter]
    fn data<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let data = self.data.get_or_try_init(py, || {
            let users = self
                .users
                .iter()
                .map(|u| Py::new(py, User { inner: u.clone() }))
                .collect::<PyResult<Vec<_>>>()?;
            PyTuple::new(py, users).map(Bound::unbind)
        })?;
        Ok(data.bind(py).clone())
    }
    /// Every other field the service sent.
    #[getter]
    fn extra<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        map_to_dict(py, &self.extra)
    }
    fn __len__(&self) -> usize {
        self.users.len()
    }
    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.data(py)?.as_any().try_iter().map(Bound::into_any)
    }
    /// The page with the service's field names.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        wire_dict(py, &self.to_core())
    }
    /// A page from its wire form.
    #[classmethod]
    fn from_dict(cls: &Bound<'_, PyType>, data: &Bound<'_, PyAny>) -> PyResult<UserPage> {
        parse::<roomchat::UserPage>(cls.py(), "a user page", data).map(UserPage::from)
    }
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        reduce(slf.as_any())
    }
    fn __eq__(&self, other: &Self) -> bool {
        (self.total, self.limit, self.skip) == (other.total, other.limit, other.skip)
            && self.users == other.users
            && self.extra == other.extra
    }
    fn __hash__(&self) -> u64 {
        let mut hasher = DefaultHasher::new();
        (self.total, self.limit, self.skip, self.users.len()).hash(&mut hasher);
        hasher.finish()
    }
    fn __repr__(&self) -> String {
        format!(
            "UserPage(total={}, limit={}, skip={}, data=<{} users>)",
            self.total,
            self.limit,
            self.skip,
            self.users.len()
        )
    }
}

// ---- MessageAuthor, Message -----------------------------------------------------------

/// The author of a message.
#[pyclass(frozen, module = "roomchat")]
pub struct MessageAuthor {
    inner: Arc<roomchat::MessageAuthor>,
}

#[pymethods]
impl MessageAuthor {
    /// `_id`: the author's user id.
    #[getter]
    fn id(&self) -> Option<&str> {
        self.inner.id.as_deref()
    }
    /// Display name.
    #[getter]
    fn username(&self) -> Option<&str> {
        self.inner.username.as_deref()
    }
    /// E-mail, when available.
    #[getter]
    fn email(&self) -> Option<&str> {
        self.inner.email.as_deref()
    }
    /// `uniqueUserIdentifier`, when available.
    #[getter]
    fn unique_user_identifier(&self) -> Option<&str> {
        self.inner.unique_user_identifier.as_deref()
    }
    /// Every other field the service sent.
    #[getter]
    fn extra<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        map_to_dict(py, &self.inner.extra)
    }
    /// The author with the service's field names.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        wire_dict(py, &*self.inner)
    }
    /// An author from its wire form.
    #[classmethod]
    fn from_dict(cls: &Bound<'_, PyType>, data: &Bound<'_, PyAny>) -> PyResult<MessageAuthor> {
        Ok(MessageAuthor {
            inner: Arc::new(parse(cls.py(), "a message author", data)?),
        })
    }
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        reduce(slf.as_any())
    }
    fn __eq__(&self, other: &Self) -> bool {
        self.inner == other.inner
    }
    fn __hash__(&self) -> u64 {
        hash_of(&[self.inner.id.as_deref(), self.inner.username.as_deref()])
    }
    fn __repr__(&self) -> String {
        format!(
            "MessageAuthor(id={}, username={})",
            show(self.inner.id.as_deref()),
            show(self.inner.username.as_deref())
        )
    }
}

/// A message of a conversation. Only the fields the service sent are set.
#[pyclass(frozen, module = "roomchat")]
pub struct Message {
    pub(crate) inner: Arc<roomchat::Message>,
}

#[pymethods]
impl Message {
    /// `_id`: the message id.
    #[getter]
    fn id(&self) -> Option<&str> {
        self.inner.id.as_deref()
    }
    /// The conversation's id.
    #[getter]
    fn conversation(&self) -> Option<&str> {
        self.inner.conversation.as_deref()
    }
    /// The text (the wire field is `messages`, plural).
    #[getter]
    fn text(&self) -> Option<&str> {
        self.inner.text.as_deref()
    }
    /// ISO 8601 UTC timestamp, as sent.
    #[getter]
    fn created(&self) -> Option<&str> {
        self.inner.created.as_deref()
    }
    /// The author.
    #[getter]
    fn user(&self) -> Option<MessageAuthor> {
        self.inner.user.as_ref().map(|u| MessageAuthor {
            inner: Arc::new(u.clone()),
        })
    }
    /// Every other field the service sent.
    #[getter]
    fn extra<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        map_to_dict(py, &self.inner.extra)
    }
    /// The message with the service's field names.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        wire_dict(py, &*self.inner)
    }
    /// A message from its wire form.
    #[classmethod]
    fn from_dict(cls: &Bound<'_, PyType>, data: &Bound<'_, PyAny>) -> PyResult<Message> {
        Ok(Message {
            inner: Arc::new(parse(cls.py(), "a message", data)?),
        })
    }
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        reduce(slf.as_any())
    }
    fn __eq__(&self, other: &Self) -> bool {
        self.inner == other.inner
    }
    fn __hash__(&self) -> u64 {
        hash_of(&[self.inner.id.as_deref(), self.inner.created.as_deref()])
    }
    fn __repr__(&self) -> String {
        format!(
            "Message(id={}, text={})",
            show(self.inner.id.as_deref()),
            show(self.inner.text.as_deref())
        )
    }
}

// ---- CreatedUser ------------------------------------------------------------------------

/// The answer to create user. Its `repr` never shows the access token.
#[pyclass(frozen, module = "roomchat")]
pub struct CreatedUser {
    pub(crate) inner: roomchat::CreatedUser,
}

#[pymethods]
impl CreatedUser {
    /// The signed token that signs this user in to a room (see `Client.sign_in_url`).
    #[getter]
    fn access_token(&self) -> &str {
        &self.inner.access_token
    }
    /// Display name.
    #[getter]
    fn username(&self) -> &str {
        &self.inner.username
    }
    /// The new user's id.
    #[getter]
    fn user_id(&self) -> &str {
        &self.inner.user_id
    }
    /// True for a moderator.
    #[getter]
    fn is_moderator(&self) -> bool {
        self.inner.is_moderator
    }
    /// The room a moderator is limited to.
    #[getter]
    fn chat_room(&self) -> Option<&str> {
        self.inner.chat_room.as_deref()
    }
    /// Every other field the service sent.
    #[getter]
    fn extra<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        map_to_dict(py, &self.inner.extra)
    }
    /// The answer with the service's field names (`accessToken` included).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        wire_dict(py, &self.inner)
    }
    /// An answer from its wire form.
    #[classmethod]
    fn from_dict(cls: &Bound<'_, PyType>, data: &Bound<'_, PyAny>) -> PyResult<CreatedUser> {
        Ok(CreatedUser {
            inner: parse(cls.py(), "a created user", data)?,
        })
    }
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        reduce(slf.as_any())
    }
    fn __eq__(&self, other: &Self) -> bool {
        self.inner == other.inner
    }
    fn __hash__(&self) -> u64 {
        hash_of(&[Some(&self.inner.user_id), Some(&self.inner.username)])
    }
    fn __repr__(&self) -> String {
        let room = match &self.inner.chat_room {
            Some(room) => format!(", chat_room={}", show(Some(room))),
            None => String::new(),
        };
        format!(
            "CreatedUser(user_id={}, username={}, is_moderator={}{room})",
            show(Some(&self.inner.user_id)),
            show(Some(&self.inner.username)),
            if self.inner.is_moderator {
                "True"
            } else {
                "False"
            },
        )
    }
}

// ---- Deactivated, Reactivated, Invalidated --------------------------------------------

/// A `{"success", "message"?}` answer's class: Deactivated, Reactivated, Invalidated.
macro_rules! success_answer {
    ($name:ident, $what:literal, $doc:literal) => {
        #[doc = $doc]
        #[pyclass(frozen, module = "roomchat")]
        pub struct $name {
            pub(crate) inner: roomchat::$name,
        }

        #[pymethods]
        impl $name {
            /// True on success.
            #[getter]
            fn success(&self) -> bool {
                self.inner.success
            }
            /// The service's text, when it sent one.
            #[getter]
            fn message(&self) -> Option<&str> {
                self.inner.message.as_deref()
            }
            /// Every other field the service sent.
            #[getter]
            fn extra<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
                map_to_dict(py, &self.inner.extra)
            }
            /// The answer with the service's field names.
            fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
                wire_dict(py, &self.inner)
            }
            /// An answer from its wire form.
            #[classmethod]
            fn from_dict(cls: &Bound<'_, PyType>, data: &Bound<'_, PyAny>) -> PyResult<$name> {
                Ok($name {
                    inner: parse(cls.py(), $what, data)?,
                })
            }
            fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
                reduce(slf.as_any())
            }
            fn __eq__(&self, other: &Self) -> bool {
                self.inner == other.inner
            }
            fn __hash__(&self) -> u64 {
                hash_of(&[self.inner.message.as_deref()])
            }
            fn __repr__(&self) -> String {
                format!(
                    "{}(success={}, message={})",
                    stringify!($name),
                    if self.inner.success { "True" } else { "False" },
                    show(self.inner.message.as_deref())
                )
            }
        }
    };
}

success_answer!(
    Deactivated,
    "a deactivate answer",
    "The answer to deactivate user."
);
success_answer!(
    Reactivated,
    "a reactivate answer",
    "The answer to reactivate user."
);
success_answer!(
    Invalidated,
    "an invalidate answer",
    "The answer to invalidate access token."
);

// ---- TokenUser ------------------------------------------------------------------------

/// The user an access token signs in, as validate access token answers it: the
/// stored record with the token's issue time. The token itself is not in it.
#[pyclass(frozen, module = "roomchat")]
pub struct TokenUser {
    pub(crate) inner: roomchat::TokenUser,
}

#[pymethods]
impl TokenUser {
    /// `_id`: the user's id.
    #[getter]
    fn id(&self) -> &str {
        &self.inner.id
    }
    /// Display name.
    #[getter]
    fn username(&self) -> Option<&str> {
        self.inner.username.as_deref()
    }
    /// `chatRoom`: the room a moderator is limited to.
    #[getter]
    fn chat_room(&self) -> Option<&str> {
        self.inner.chat_room.as_deref()
    }
    /// `isModerator`.
    #[getter]
    fn is_moderator(&self) -> Option<bool> {
        self.inner.is_moderator
    }
    /// `externalUserId`: the customer's own id of the user.
    #[getter]
    fn external_user_id(&self) -> Option<&str> {
        self.inner.external_user_id.as_deref()
    }
    /// When the user was created: ISO 8601, as sent.
    #[getter]
    fn created(&self) -> Option<&str> {
        self.inner.created.as_deref()
    }
    /// When the user's record last changed: ISO 8601, as sent.
    #[getter]
    fn updated(&self) -> Option<&str> {
        self.inner.updated.as_deref()
    }
    /// `iat`: when the token was issued, as an aware `datetime` in UTC.
    #[getter]
    fn iat<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let Some(at) = self.inner.iat else {
            return Ok(None);
        };
        let seconds = at
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs_f64();
        let datetime = py.import("datetime")?;
        let utc = datetime.getattr("timezone")?.getattr("utc")?;
        datetime
            .getattr("datetime")?
            .call_method1("fromtimestamp", (seconds, utc))
            .map(Some)
    }
    /// Every other field the service sent (`customer`, `createdUsingApi`, `__v`, …).
    #[getter]
    fn extra<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        map_to_dict(py, &self.inner.extra)
    }
    /// The record with the service's field names (`iat` as seconds since the epoch).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        wire_dict(py, &self.inner)
    }
    /// A record from its wire form.
    #[classmethod]
    fn from_dict(cls: &Bound<'_, PyType>, data: &Bound<'_, PyAny>) -> PyResult<TokenUser> {
        Ok(TokenUser {
            inner: parse(cls.py(), "a user record", data)?,
        })
    }
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        reduce(slf.as_any())
    }
    fn __eq__(&self, other: &Self) -> bool {
        self.inner == other.inner
    }
    fn __hash__(&self) -> u64 {
        hash_of(&[Some(&self.inner.id), self.inner.username.as_deref()])
    }
    fn __repr__(&self) -> String {
        format!(
            "TokenUser(id={}, username={})",
            show(Some(&self.inner.id)),
            show(self.inner.username.as_deref())
        )
    }
}

// ---- RawResponse, RateLimitState -----------------------------------------------------

/// The answer to `Client.raw_request` (any 2xx).
#[pyclass(frozen, module = "roomchat")]
pub struct RawResponse {
    pub(crate) inner: roomchat::RawResponse,
}

impl RawResponse {
    /// The headers by lower-case name, repeated ones joined with ", " (in order).
    fn joined_headers(&self) -> Vec<(String, String)> {
        let mut joined: Vec<(String, String)> = Vec::new();
        for (name, value) in &self.inner.headers {
            let name = name.to_ascii_lowercase();
            match joined.iter_mut().find(|(n, _)| *n == name) {
                Some((_, previous)) => {
                    previous.push_str(", ");
                    previous.push_str(value);
                }
                None => joined.push((name, value.clone())),
            }
        }
        joined
    }
}

#[pymethods]
impl RawResponse {
    /// The HTTP status.
    #[getter]
    fn status(&self) -> u16 {
        self.inner.status
    }
    /// The headers, names in lower case; a repeated header's values joined with ", ".
    #[getter]
    fn headers<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        for (name, value) in self.joined_headers() {
            dict.set_item(name, value)?;
        }
        Ok(dict)
    }
    /// The body as JSON (`None` when empty).
    #[getter]
    fn body<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        from_json(py, &self.inner.body)
    }
    /// `{"status", "headers", "body"}`.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        dict.set_item("status", self.inner.status)?;
        dict.set_item("headers", self.headers(py)?)?;
        dict.set_item("body", self.body(py)?)?;
        Ok(dict)
    }
    /// A response from `{"status", "headers", "body"}`.
    #[classmethod]
    fn from_dict(cls: &Bound<'_, PyType>, data: &Bound<'_, PyAny>) -> PyResult<RawResponse> {
        let py = cls.py();
        let json = to_json("data", data)?;
        let bad = || {
            validation(
                py,
                "not the form of a raw response: {status, headers, body}",
            )
        };
        let status = json
            .get("status")
            .and_then(Value::as_u64)
            .and_then(|s| u16::try_from(s).ok())
            .ok_or_else(bad)?;
        let mut headers = Vec::new();
        if let Some(given) = data.get_item("headers").ok().filter(|h| !h.is_none()) {
            let given = given.cast_into::<PyDict>().map_err(|_| bad())?;
            for (name, value) in given.iter() {
                let name = crate::convert::text("header name", &name)?;
                let value = crate::convert::text("header value", &value)?;
                headers.push((name.to_ascii_lowercase(), value));
            }
        }
        let body = json.get("body").cloned().unwrap_or(Value::Null);
        Ok(RawResponse {
            inner: roomchat::RawResponse {
                status,
                headers,
                body,
            },
        })
    }
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        reduce(slf.as_any())
    }
    fn __eq__(&self, other: &Self) -> bool {
        let sorted = |r: &Self| {
            let mut h = r.joined_headers();
            h.sort();
            h
        };
        self.inner.status == other.inner.status
            && self.inner.body == other.inner.body
            && sorted(self) == sorted(other)
    }
    fn __hash__(&self) -> u64 {
        let mut hasher = DefaultHasher::new();
        (self.inner.status, self.joined_headers().len()).hash(&mut hasher);
        hasher.finish()
    }
    fn __repr__(&self) -> String {
        format!("RawResponse(status={})", self.inner.status)
    }
}

/// Where a key's shared rate-limit budget stands (times in seconds).
#[pyclass(frozen, eq, hash, module = "roomchat")]
#[derive(PartialEq, Eq, Hash)]
pub struct RateLimitState {
    /// Requests the client allows itself per window.
    #[pyo3(get)]
    limit: u32,
    /// Requests started within the current window.
    #[pyo3(get)]
    used: u32,
    /// Requests that may start now.
    #[pyo3(get)]
    remaining: u32,
    window: std::time::Duration,
    next_free_in: std::time::Duration,
    blocked_for: Option<std::time::Duration>,
    /// Where the budget is kept: `"local"` (this process) or `"redis"` (shared).
    #[pyo3(get)]
    backend: &'static str,
    /// Redis is the backend but cannot be reached: the figures are the fallback's.
    #[pyo3(get)]
    degraded: bool,
}

impl From<roomchat::RateLimitState> for RateLimitState {
    fn from(s: roomchat::RateLimitState) -> RateLimitState {
        RateLimitState {
            limit: s.limit,
            used: s.used,
            remaining: s.remaining,
            window: s.window,
            next_free_in: s.next_free_in,
            blocked_for: s.blocked_for,
            backend: s.backend.name(),
            degraded: s.degraded,
        }
    }
}

#[pymethods]
impl RateLimitState {
    /// The window the client counts in, in seconds.
    #[getter]
    fn window(&self) -> f64 {
        self.window.as_secs_f64()
    }
    /// Seconds until the next request may start (0.0 when one may start now).
    #[getter]
    fn next_free_in(&self) -> f64 {
        self.next_free_in.as_secs_f64()
    }
    /// Seconds every caller is still held off after a 429, or `None`.
    #[getter]
    fn blocked_for(&self) -> Option<f64> {
        self.blocked_for.map(|d| d.as_secs_f64())
    }
    /// The state as a dict (seconds as floats).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        dict.set_item("limit", self.limit)?;
        dict.set_item("window", self.window())?;
        dict.set_item("used", self.used)?;
        dict.set_item("remaining", self.remaining)?;
        dict.set_item("next_free_in", self.next_free_in())?;
        dict.set_item("blocked_for", self.blocked_for())?;
        dict.set_item("backend", self.backend)?;
        dict.set_item("degraded", self.degraded)?;
        Ok(dict)
    }
    fn __repr__(&self) -> String {
        format!(
            "RateLimitState(limit={}, window={:.3}, used={}, remaining={}, next_free_in={:.3}, blocked_for={}, backend='{}', degraded={})",
            self.limit,
            self.window(),
            self.used,
            self.remaining,
            self.next_free_in(),
            match self.blocked_for() {
                Some(b) => format!("{b:.3}"),
                None => "None".to_owned(),
            },
            self.backend,
            if self.degraded { "True" } else { "False" }
        )
    }
}
