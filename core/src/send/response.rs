//! The answer's status and headers beside a call's typed result
//! ([`Client::with_response`](crate::Client::with_response)).

use std::sync::{Arc, Mutex};

/// The HTTP answer a call's typed result was decoded from: its status, its
/// headers and how many attempts the call made.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ResponseMeta {
    /// The HTTP status (2xx: a call that failed returns its error instead).
    pub status: u16,
    /// Every header of the answer, in the order it came, names in lower case
    /// (`x-ratelimit-remaining`, `x-request-id`, `date`, …).
    pub headers: Vec<(String, String)>,
    /// The attempts the call made: 1 when the first was answered, more after retries.
    pub attempts: u32,
}

impl ResponseMeta {
    /// The first header called `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The id the service gave the request (`X-Request-Id`), when it sent one:
    /// the one to quote to support.
    pub fn request_id(&self) -> Option<&str> {
        self.header("x-request-id")
    }
}

/// A call's typed result and the answer it came from, made by
/// [`Client::with_response`](crate::Client::with_response).
#[derive(Debug, Clone, PartialEq)]
pub struct WithResponse<T> {
    /// What the call returns without [`with_response`](crate::Client::with_response).
    pub value: T,
    /// The answer's status, headers and attempts.
    pub meta: ResponseMeta,
}

impl<T> WithResponse<T> {
    /// The value and the answer, apart.
    pub fn into_parts(self) -> (T, ResponseMeta) {
        (self.value, self.meta)
    }

    /// The same answer with the value changed by `f`.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> WithResponse<U> {
        WithResponse {
            value: f(self.value),
            meta: self.meta,
        }
    }
}

/// Where a view made by `with_response` puts the answer of each call it makes.
#[derive(Clone, Default)]
pub(crate) struct Capture(Arc<Mutex<Option<ResponseMeta>>>);

impl Capture {
    pub(crate) fn put(&self, meta: ResponseMeta) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = Some(meta);
    }

    pub(crate) fn take(&self) -> Option<ResponseMeta> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}
