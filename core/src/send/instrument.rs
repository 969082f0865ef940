//! Instrumentation: what each call tells the code that makes spans and metrics
//! of it, and the headers that code puts on each attempt.
//!
//! The data comes from the one send path, once, for every language: the
//! Rust feature `opentelemetry`, the Python and Node packages' OpenTelemetry
//! layers and the C ABI's observer callback are all built on these types.
//!
//! * An [`Instrumentation`] is asked, on the thread making the call, at the
//!   start of each call, for a [`CallObserver`] of that call: the moment to
//!   capture the caller's context (the current OpenTelemetry context, Python's
//!   contextvars, Node's active context). Give one to a client
//!   ([`ClientBuilder::instrumentation`](crate::ClientBuilder::instrumentation)),
//!   or to the calls of one closure ([`CallScope::run`]).
//! * The observer hears of each attempt twice, [`CallObserver::attempt_start`]
//!   (where it may add headers to the attempt's request: `traceparent`,
//!   `tracestate`, `baggage`) and [`CallObserver::attempt_end`], then once of
//!   the call's end ([`CallObserver::call_end`]). What happened between two of
//!   those (rate-limit waits, a budget in Redis that failed, the decision to
//!   retry) rides on the next one as [`CallEvent`]s, so a language that must
//!   take its interpreter's lock to make spans takes it at most twice per
//!   attempt, and never while a request is on the wire.
//! * Every time is given twice: as wall-clock [`SystemTime`] (span timestamps)
//!   and as monotonic [`Instant`] / [`Duration`] (durations), taken from one
//!   clock reading at the call's start so that the two agree.
//! * Extra headers ([`RequestHeaders`]) go on the requests of a client
//!   ([`ClientBuilder::headers`](crate::ClientBuilder::headers)), of the calls
//!   of a scope ([`CallScope::headers`]) and of one attempt (the observer's);
//!   [`ClientBuilder::propagate_trace_context`](crate::ClientBuilder::propagate_trace_context)`(false)`
//!   keeps every `traceparent`, `tracestate` and `baggage` off the wire,
//!   whoever added it.
//!
//! A client with no instrumentation, no extra headers and no scope around its
//! calls builds none of this: a call costs what it did before.
//!
//! ```
//! use std::sync::{Arc, Mutex};
//! use roomchat::instrument::{AttemptEnd, AttemptStart, CallEnd, CallInfo, CallObserver, CallScope, RequestHeaders};
//! # let emu = roomchat_emulator::Emulator::start(Default::default()).unwrap();
//! # let client = roomchat::Client::builder(emu.private_key()).base_url(emu.base_url()).build()?;
//!
//! /// Writes one line per attempt and per call, and tags each attempt.
//! struct Lines(Arc<Mutex<Vec<String>>>);
//!
//! impl CallObserver for Lines {
//!     fn attempt_start(&mut self, call: &CallInfo<'_>, attempt: &AttemptStart<'_>, headers: &mut RequestHeaders) {
//!         headers.insert("x-attempt", &attempt.attempt.to_string()).unwrap();
//!         self.0.lock().unwrap().push(format!("start {}", call.attempt_span_name()));
//!     }
//!     fn attempt_end(&mut self, _call: &CallInfo<'_>, attempt: &AttemptEnd<'_>) {
//!         self.0.lock().unwrap().push(format!("end {:?} in {:?}", attempt.status, attempt.duration));
//!     }
//!     fn call_end(&mut self, call: &CallInfo<'_>, end: &CallEnd<'_>) {
//!         self.0.lock().unwrap().push(format!("{} after {} attempt(s)", call.call_span_name(), end.attempts));
//!     }
//! }
//!
//! let lines = Arc::new(Mutex::new(Vec::new()));
//! let sink = lines.clone();
//! let scope = CallScope::new().instrumentation(Arc::new(move |_call: &CallInfo<'_>| {
//!     Some(Box::new(Lines(sink.clone())) as Box<dyn CallObserver>)
//! }));
//! scope.run(|| client.list_users(&roomchat::ListUsers::page(5, 0)))?;
//! let lines = lines.lock().unwrap();
//! assert_eq!(lines[0], "start GET /consumer/api/v2/users");
//! assert!(lines[1].starts_with("end Some(200)"));
//! assert_eq!(lines[2], "roomchat list_users after 1 attempt(s)");
//! assert_eq!(emu.journal()[0].headers.iter().find(|(n, _)| n == "x-attempt").unwrap().1, "1");
//! # Ok::<(), roomchat::Error>(())
//! ```

use std::cell::{Cell, OnceCell};
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use ureq::http::{HeaderName, HeaderValue};

use crate::error::{Error, ErrorKind, Result};
use crate::send::telemetry_names::{
    EVENT_ROOMCHAT_BUDGET_DEGRADED, EVENT_ROOMCHAT_RATE_LIMIT_WAIT, EVENT_ROOMCHAT_RETRY,
};
use crate::wire::WireRequest;

/// The HTTP version every request goes out in (`network.protocol.version`).
pub const PROTOCOL_VERSION: &str = "1.1";

/// The headers of W3C Trace Context and Baggage, which
/// [`ClientBuilder::propagate_trace_context`](crate::ClientBuilder::propagate_trace_context)`(false)`
/// keeps off the wire.
pub const TRACE_CONTEXT_HEADERS: [&str; 3] = ["traceparent", "tracestate", "baggage"];

/// The headers the client sets itself (or its HTTP stack does), which extra
/// headers may not set: the request's framing and host, the `User-Agent`
/// ([`ClientBuilder::sdk_identity`](crate::ClientBuilder::sdk_identity),
/// [`ClientBuilder::app_name`](crate::ClientBuilder::app_name)), the content
/// negotiation the decoders rely on, and credentials.
pub const RESERVED_HEADERS: [&str; 17] = [
    "host",
    "content-length",
    "content-type",
    "content-encoding",
    "transfer-encoding",
    "connection",
    "keep-alive",
    "proxy-connection",
    "upgrade",
    "te",
    "trailer",
    "expect",
    "user-agent",
    "accept",
    "accept-encoding",
    "authorization",
    "proxy-authorization",
];

/// Makes the observer of each call: given to a client
/// ([`ClientBuilder::instrumentation`](crate::ClientBuilder::instrumentation))
/// or to the calls of a [`CallScope`].
///
/// [`start_call`](Self::start_call) is called at the start of every call, on
/// the thread making it, before anything is waited for or sent: the moment to
/// capture the caller's context. A closure
/// `Fn(&CallInfo<'_>) -> Option<Box<dyn CallObserver>>` is an instrumentation.
pub trait Instrumentation: Send + Sync {
    /// The observer of the call `call`, or `None` to leave this call alone.
    fn start_call(&self, call: &CallInfo<'_>) -> Option<Box<dyn CallObserver>>;
}

impl<F> Instrumentation for F
where
    F: Fn(&CallInfo<'_>) -> Option<Box<dyn CallObserver>> + Send + Sync,
{
    fn start_call(&self, call: &CallInfo<'_>) -> Option<Box<dyn CallObserver>> {
        self(call)
    }
}

/// Hears of one call: each attempt's start and end, then the call's end.
///
/// Every method is called on the thread making the call, with no lock of the
/// client held, never while a request is on the wire, in this order:
/// `attempt_start`, `attempt_end` for each attempt (a call may make none:
/// one refused by the rate limit, or cancelled while it waited), then
/// `call_end` once. Keep them quick, and do not call back into the client.
pub trait CallObserver: Send {
    /// An attempt is about to be sent. `headers` starts empty: what is
    /// inserted goes on this attempt's request (over a client's or scope's
    /// header of the same name), unless it is refused (see [`RequestHeaders::insert`]).
    fn attempt_start(
        &mut self,
        call: &CallInfo<'_>,
        attempt: &AttemptStart<'_>,
        headers: &mut RequestHeaders,
    ) {
        let _ = (call, attempt, headers);
    }

    /// The attempt ended: answered (any status) or failed.
    fn attempt_end(&mut self, call: &CallInfo<'_>, attempt: &AttemptEnd<'_>) {
        let _ = (call, attempt);
    }

    /// The call ended, with its result.
    fn call_end(&mut self, call: &CallInfo<'_>, end: &CallEnd<'_>) {
        let _ = (call, end);
    }
}

/// What a call is, known when it starts; the same for all its attempts.
#[derive(Clone, Copy)]
#[non_exhaustive]
pub struct CallInfo<'a> {
    /// The operation's name (`create_chat_room`, `list_users`, …), `raw` for
    /// a raw request ([`Client::raw_request`](crate::Client::raw_request),
    /// [`Operation::Raw`](crate::wire::Operation::Raw)).
    pub operation: &'static str,
    /// The HTTP method, upper case (`http.request.method`).
    pub method: &'a str,
    /// The path's template, from the operation's declaration, after the base
    /// URL's own path if it has one: `/consumer/api/v1/chatroom/{roomId}`,
    /// never an id (`url.template`). A raw request to a declared path has
    /// that operation's template; `None` for a raw request to any other path.
    pub url_template: Option<&'a str>,
    /// The request's absolute URL, made on first use ([`CallInfo::url_full`]).
    pub(crate) url_full: &'a OnceCell<String>,
    /// The base URL, the request and the client's secrets (each as written
    /// and percent-encoded: `ClientFacts::secrets`), to make it from.
    pub(crate) url_parts: (&'a str, &'a WireRequest, &'a [String]),
    /// The base URL's host, lowercased, without brackets for IPv6
    /// (`server.address`): [`Client::server_address`](crate::Client::server_address).
    pub server_address: &'a str,
    /// The base URL's port, or its scheme's (443, 80) (`server.port`).
    pub server_port: u16,
    /// `https` or `http` (`url.scheme`).
    pub url_scheme: &'a str,
    /// [`PROTOCOL_VERSION`] (`network.protocol.version`).
    pub protocol_version: &'static str,
    /// When the call started, by the wall clock.
    pub started_at: SystemTime,
    /// When the call started, by the monotonic clock.
    pub started: Instant,
    /// The client's number, unique in this process; a client's views
    /// ([`Client::with_options`](crate::Client::with_options), …) share it.
    pub client_id: u64,
}

impl fmt::Debug for CallInfo<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The request itself stays out: its body may carry an access token.
        f.debug_struct("CallInfo")
            .field("operation", &self.operation)
            .field("method", &self.method)
            .field("url_template", &self.url_template)
            .field("url_full", &self.url_full())
            .field("server_address", &self.server_address)
            .field("server_port", &self.server_port)
            .field("started_at", &self.started_at)
            .field("client_id", &self.client_id)
            .finish_non_exhaustive()
    }
}

impl CallInfo<'_> {
    /// The request's absolute URL with every credential shown as `REDACTED`
    /// (`url.full`): the key's `auth` or `publicKey`, any parameter named as
    /// a credential ([`is_credential_query_name`](crate::wire::is_credential_query_name):
    /// `accessToken`, `access_token`, `apiKey`, …), and the client's keys
    /// wherever else a raw request put them. Made on the first call of this
    /// method for the call (a call whose observers never ask does not pay for it).
    pub fn url_full(&self) -> &str {
        let (base_url, request, secrets) = self.url_parts;
        self.url_full
            .get_or_init(|| crate::secrets::scrub(&request.redacted_url(base_url), secrets))
    }

    /// The name of the call's span: `roomchat {operation}` (`roomchat create_chat_room`).
    pub fn call_span_name(&self) -> String {
        format!("roomchat {}", self.operation)
    }

    /// The method as the HTTP conventions name it (`http.request.method`):
    /// one of the nine they know, else `_OTHER`. Every binding's spans and
    /// metrics take it from here.
    pub fn request_method(&self) -> &'static str {
        const KNOWN: [&str; 9] = [
            "GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "TRACE", "CONNECT",
        ];
        KNOWN
            .into_iter()
            .find(|known| *known == self.method)
            .unwrap_or("_OTHER")
    }

    /// The name of an attempt's span, as the HTTP client conventions make it:
    /// `{method} {url.template}` (`POST /consumer/api/v1/chatroom`), or the
    /// method alone without a template.
    pub fn attempt_span_name(&self) -> String {
        match self.url_template {
            Some(template) => format!("{} {template}", self.method),
            None => self.method.to_owned(),
        }
    }
}

/// An attempt about to be sent.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct AttemptStart<'a> {
    /// The attempt's number, from 1.
    pub attempt: u32,
    /// How many times the request was sent before: `attempt - 1`
    /// (`http.request.resend_count`, set when above 0).
    pub resend_count: u32,
    /// When it started (its slot of the rate-limit budget taken), by the wall clock.
    pub started_at: SystemTime,
    /// The same instant, by the monotonic clock.
    pub started: Instant,
    /// What happened before it since the previous call of the observer: the
    /// rate-limit waits and the failures of a budget in Redis ([`CallEventKind::RateLimitWait`],
    /// [`CallEventKind::BudgetDegraded`]).
    pub events: &'a [CallEvent],
    /// Whether trace context may be sent: `false` when the client was built
    /// with `propagate_trace_context(false)` (headers of
    /// [`TRACE_CONTEXT_HEADERS`] inserted now are dropped anyway).
    pub propagate_trace_context: bool,
}

/// An attempt that ended.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct AttemptEnd<'a> {
    /// The attempt's number, from 1.
    pub attempt: u32,
    /// `attempt - 1`.
    pub resend_count: u32,
    /// When it started, by the wall clock (as in [`AttemptStart`]).
    pub started_at: SystemTime,
    /// When it ended (the answer's body read, or the failure), by the wall clock.
    pub ended_at: SystemTime,
    /// How long it took, by the monotonic clock.
    pub duration: Duration,
    /// The answer's HTTP status, when one came (`http.response.status_code`).
    pub status: Option<u16>,
    /// Why it failed: an error status's error, or the transport's; `None` for
    /// a 2xx read whole. Scrubbed of every secret, as the call's error is.
    pub error: Option<&'a Error>,
    /// What followed it: a [`CallEventKind::Retry`] when the call will send
    /// again (after [`CallEvent::wait`]).
    pub events: &'a [CallEvent],
}

impl AttemptEnd<'_> {
    /// `error.type` of the attempt's span and of its `http.client.request.duration`
    /// point, as OpenTelemetry's HTTP client instrumentations set it (requests',
    /// httpx's, undici's): for an answer with an error status its code as text
    /// (`"429"`, `"500"`), so that a dashboard grouping every HTTP client's
    /// requests by `error.type` groups roomchat's with theirs; for an attempt that
    /// got no answer the error's [`ErrorKind`] name (`timeout`, `connection`, …).
    /// `None` when it succeeded. roomchat's kind of an answered failure is
    /// [`AttemptEnd::error_kind`] (`roomchat.error.kind`).
    pub fn error_type(&self) -> Option<&'static str> {
        Some(attempt_error_type(self.status, self.error?))
    }

    /// `roomchat.error.kind`: the error's [`ErrorKind`] name (`rate_limited`,
    /// `server_error`, `timeout`, …), if the attempt failed.
    pub fn error_kind(&self) -> Option<&'static str> {
        self.error.map(|e| e.kind().name())
    }

    /// The retry that follows, if any.
    pub fn retry(&self) -> Option<&CallEvent> {
        self.events.iter().find(|e| e.kind == CallEventKind::Retry)
    }
}

/// [`AttemptEnd::error_type`] of an attempt that failed with `error`, answered
/// with `status` if an answer came (the feature `tracing` sets it too).
pub(crate) fn attempt_error_type(status: Option<u16>, error: &Error) -> &'static str {
    match status {
        Some(status) => status_text(status),
        None => error.kind().name(),
    }
}

/// An HTTP status code as text (`"429"`), for `error.type`: a three-digit
/// code's text is made once per process; any other number (no valid HTTP answer
/// has one) is `_OTHER`, as the conventions name a value they do not know.
fn status_text(status: u16) -> &'static str {
    static TEXTS: once_cell::sync::Lazy<Vec<String>> =
        once_cell::sync::Lazy::new(|| (100..600).map(|code: u16| code.to_string()).collect());
    match status {
        100..=599 => &TEXTS[usize::from(status - 100)],
        _ => "_OTHER",
    }
}

/// The end of a call.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct CallEnd<'a> {
    /// When it ended, by the wall clock.
    pub ended_at: SystemTime,
    /// How long it took from its start, by the monotonic clock.
    pub duration: Duration,
    /// The attempts it made (0 when none was sent).
    pub attempts: u32,
    /// The last answer's HTTP status, if any came.
    pub status: Option<u16>,
    /// The call's error, as the caller gets it; `None` when it succeeded.
    pub error: Option<&'a Error>,
    /// The time spent waiting for the rate-limit budget, all attempts together.
    pub rate_limit_wait: Duration,
    /// The time slept before retries (the backoffs and `Retry-After` waits).
    pub retry_wait: Duration,
    /// What happened since the observer was last called and was not told yet:
    /// a rate-limit wait or budget failure before an attempt that never started.
    pub events: &'a [CallEvent],
}

impl CallEnd<'_> {
    /// `error.type`: the error's [`ErrorKind`] name, if the call failed.
    pub fn error_type(&self) -> Option<&'static str> {
        self.error.map(|e| e.kind().name())
    }

    /// A failed call's span status description, as every language shows it:
    /// the client's own message, or for an answer of the service its kind and
    /// status only (`server_error (HTTP 500)`): the service's text may quote
    /// what the request carried, and none of it leaves in a span.
    pub fn status_description(&self) -> Option<String> {
        self.error.map(status_description)
    }
}

/// [`CallEnd::status_description`] of a call that failed with `error` (the
/// feature `tracing` sets it too).
pub(crate) fn status_description(error: &Error) -> String {
    match error.status() {
        Some(status) => format!("{} (HTTP {status})", error.kind().name()),
        None => error.message().to_owned(),
    }
}

/// What happened between attempts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CallEventKind {
    /// The call waited [`CallEvent::wait`] for a slot of the key's rate-limit budget.
    RateLimitWait,
    /// The shared budget in Redis failed ([`CallEvent::error`]); the client
    /// follows its `OnRedisError` policy until Redis answers again.
    BudgetDegraded,
    /// The attempt failed and the call will be sent again after [`CallEvent::wait`]
    /// ([`CallEvent::retry_reason`] says why).
    Retry,
}

impl CallEventKind {
    /// The event's name on a span: `roomchat.rate_limit.wait`,
    /// `roomchat.budget.degraded`, `roomchat.retry`.
    pub fn event_name(self) -> &'static str {
        match self {
            CallEventKind::RateLimitWait => EVENT_ROOMCHAT_RATE_LIMIT_WAIT,
            CallEventKind::BudgetDegraded => EVENT_ROOMCHAT_BUDGET_DEGRADED,
            CallEventKind::Retry => EVENT_ROOMCHAT_RETRY,
        }
    }
}

/// Why a call is sent again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RetryReason {
    /// The service answered 429.
    RateLimited,
    /// The service answered 500, 502, 503 or 504.
    ServerError,
    /// The connection failed or broke.
    Connection,
    /// The attempt timed out.
    Timeout,
    /// Any other failure the call's retry class allows to retry (an answer
    /// cut off or not valid HTTP).
    Other,
}

impl RetryReason {
    /// The reason as the metrics and span events name it: `429`, `5xx`,
    /// `connection`, `timeout`, `other`.
    pub fn as_str(self) -> &'static str {
        match self {
            RetryReason::RateLimited => "429",
            RetryReason::ServerError => "5xx",
            RetryReason::Connection => "connection",
            RetryReason::Timeout => "timeout",
            RetryReason::Other => "other",
        }
    }

    /// The reason a failed attempt with `error` is retried for.
    pub(crate) fn of(error: &Error) -> RetryReason {
        match (error.status(), error.kind()) {
            (Some(429), _) => RetryReason::RateLimited,
            (Some(500..=599), _) => RetryReason::ServerError,
            (_, ErrorKind::Timeout) => RetryReason::Timeout,
            (_, ErrorKind::Connection) => RetryReason::Connection,
            _ => RetryReason::Other,
        }
    }
}

/// One thing that happened between attempts.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CallEvent {
    /// What happened.
    pub kind: CallEventKind,
    /// The attempt it belongs to: the one about to start (a wait, a budget
    /// failure), or the one that failed (a retry).
    pub attempt: u32,
    /// When it happened (a wait: when it began), by the wall clock.
    pub at: SystemTime,
    /// A rate-limit wait: the time waited. A retry: the time it sleeps before
    /// sending again. Zero for a budget failure.
    pub wait: Duration,
    /// A retry's reason.
    pub retry_reason: Option<RetryReason>,
    /// A retry's: the failed attempt's status, if an answer came.
    pub status: Option<u16>,
    /// A budget failure's error (Redis's; secrets scrubbed).
    pub error: Option<Error>,
}

/// Extra headers for the requests of a client, of the calls of a scope, or of
/// one attempt: each name at most once (an insert replaces), names in lower case.
///
/// Checked on insert: a name is an HTTP token, a value visible ASCII, spaces
/// and tabs (never CR or LF), and no name of [`RESERVED_HEADERS`] (`Host`,
/// `Content-Length`, `Authorization`, …). `Debug` shows the names only.
///
/// ```
/// use roomchat::instrument::RequestHeaders;
/// let mut headers = RequestHeaders::new();
/// headers.insert("X-Team", "payments")?;
/// headers.insert("x-team", "billing")?; // replaces
/// assert_eq!(headers.get("X-TEAM"), Some("billing"));
/// assert!(headers.insert("x-bad", "a\r\nHost: evil").is_err());
/// assert!(headers.insert("Content-Length", "0").is_err());
/// # Ok::<(), roomchat::Error>(())
/// ```
#[derive(Clone, Default, PartialEq, Eq)]
pub struct RequestHeaders {
    entries: Vec<(HeaderName, HeaderValue)>,
}

impl fmt::Debug for RequestHeaders {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Values may be credentials of the application's own.
        f.debug_list()
            .entries(self.entries.iter().map(|(n, _)| n.as_str()))
            .finish()
    }
}

/// The longest header (name and value together) [`RequestHeaders::insert`]
/// takes: W3C baggage's own limit, and well within what servers accept.
pub const MAX_HEADER_BYTES: usize = 8192;

impl RequestHeaders {
    /// No header.
    pub fn new() -> RequestHeaders {
        RequestHeaders::default()
    }

    /// Sets `name` to `value`, replacing a header of the same name (any case).
    /// Fails with [`ErrorKind::Validation`] on a name that is not an HTTP
    /// token or is reserved ([`RESERVED_HEADERS`]), a value with a control
    /// character (CR, LF, …) or a character beyond ASCII, or a name and value
    /// longer than [`MAX_HEADER_BYTES`] together; nothing is changed then.
    pub fn insert(&mut self, name: &str, value: &str) -> Result<()> {
        // Servers refuse longer ones (431) or the request cannot be written: a
        // propagator's huge baggage is left out rather than failing the call.
        if name.len() + value.len() > MAX_HEADER_BYTES {
            return Err(Error::validation(format!(
                "the header {name:?} is longer than {MAX_HEADER_BYTES} bytes with its value"
            )));
        }
        let name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
            Error::validation(format!("the header name {name:?} is not an HTTP token"))
        })?;
        if RESERVED_HEADERS.contains(&name.as_str()) {
            return Err(Error::validation(format!(
                "the header {name} is the client's own and cannot be set"
            )));
        }
        // Beyond ASCII is obsolete in HTTP, and would not read back as text.
        let value = Some(value)
            .filter(|v| v.is_ascii())
            .and_then(|v| HeaderValue::from_str(v).ok())
            .ok_or_else(|| {
                Error::validation(format!(
                    "the value of the header {name} has a control character or a character beyond ASCII"
                ))
            })?;
        match self.entries.iter_mut().find(|(n, _)| *n == name) {
            Some(entry) => entry.1 = value,
            None => self.entries.push((name, value)),
        }
        Ok(())
    }

    /// [`insert`](Self::insert), for a chain: `RequestHeaders::new().with("x-a", "1")?.with("x-b", "2")?`.
    pub fn with(mut self, name: &str, value: &str) -> Result<RequestHeaders> {
        self.insert(name, value)?;
        Ok(self)
    }

    /// The value of `name` (any case).
    pub fn get(&self, name: &str) -> Option<&str> {
        self.entries
            .iter()
            .find(|(n, _)| n.as_str().eq_ignore_ascii_case(name))
            .and_then(|(_, v)| v.to_str().ok())
    }

    /// Removes `name` (any case); whether it was there.
    pub fn remove(&mut self, name: &str) -> bool {
        let before = self.entries.len();
        self.entries
            .retain(|(n, _)| !n.as_str().eq_ignore_ascii_case(name));
        self.entries.len() != before
    }

    /// Each header, name (lower case) and value, in the order first inserted.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.entries
            .iter()
            .map(|(n, v)| (n.as_str(), v.to_str().unwrap_or_default()))
    }

    /// How many headers.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The parsed headers, for the request.
    pub(crate) fn entries(&self) -> &[(HeaderName, HeaderValue)] {
        &self.entries
    }
}

/// Instrumentation and headers for the calls made inside [`run`](Self::run),
/// on this thread, whatever client or view makes them: how a language gives
/// one call its own observer, in the caller's context, and its own headers.
///
/// A page of an iterator is a call too: run `next()` inside the scope of the
/// context it is asked for in. Scopes do not add up: inside an inner scope,
/// the outer one is not seen. A client's own instrumentation and headers apply
/// as well (a scope's headers replace a client's of the same name; an
/// observer's replace a scope's).
///
/// ```
/// use roomchat::instrument::{CallScope, RequestHeaders};
/// # let emu = roomchat_emulator::Emulator::start(Default::default()).unwrap();
/// # let client = roomchat::Client::builder(emu.private_key()).base_url(emu.base_url()).build()?;
/// let scope = CallScope::new().headers(RequestHeaders::new().with("x-request-origin", "nightly-job")?);
/// scope.run(|| client.list_chat_rooms())?;
/// assert!(emu.journal()[0].headers.contains(&("x-request-origin".into(), "nightly-job".into())));
/// # Ok::<(), roomchat::Error>(())
/// ```
#[derive(Clone, Default)]
pub struct CallScope {
    instrumentation: Option<Arc<dyn Instrumentation>>,
    headers: RequestHeaders,
}

impl fmt::Debug for CallScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallScope")
            .field("instrumentation", &self.instrumentation.is_some())
            .field("headers", &self.headers)
            .finish()
    }
}

thread_local! {
    /// The scope whose `run` is on this thread's stack, innermost; null when none.
    static CURRENT: Cell<*const CallScope> = const { Cell::new(std::ptr::null()) };
}

impl CallScope {
    /// A scope that adds nothing.
    pub fn new() -> CallScope {
        CallScope::default()
    }

    /// Asks `instrumentation` for the observer of each call made inside [`run`](Self::run).
    pub fn instrumentation(mut self, instrumentation: Arc<dyn Instrumentation>) -> CallScope {
        self.instrumentation = Some(instrumentation);
        self
    }

    /// Puts `headers` on every attempt of the calls made inside [`run`](Self::run).
    pub fn headers(mut self, headers: RequestHeaders) -> CallScope {
        self.headers = headers;
        self
    }

    /// Runs `f`; the calls it makes on this thread get this scope's
    /// instrumentation and headers.
    pub fn run<R>(&self, f: impl FnOnce() -> R) -> R {
        /// Puts the outer scope back, even when `f` panics.
        struct Restore(*const CallScope);
        impl Drop for Restore {
            fn drop(&mut self) {
                CURRENT.with(|c| c.set(self.0));
            }
        }
        let _restore = Restore(CURRENT.with(|c| c.replace(self)));
        f()
    }

    /// What the innermost scope on this thread gives a call starting now.
    pub(crate) fn current() -> Option<(Option<Arc<dyn Instrumentation>>, RequestHeaders)> {
        let scope = CURRENT.with(Cell::get);
        if scope.is_null() {
            return None;
        }
        // SAFETY: the pointer was set by `run` on this thread, from a reference
        // that outlives its `f` (the only code that can get here while it is
        // set): `Restore` resets it before `run` returns or unwinds.
        let scope = unsafe { &*scope };
        Some((scope.instrumentation.clone(), scope.headers.clone()))
    }
}

/// Whether `name` (lower case) is a trace-context header.
pub(crate) fn is_trace_context(name: &str) -> bool {
    TRACE_CONTEXT_HEADERS.contains(&name)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `http.request.method` of a call sending `method`.
    fn request_method_of(method: &str) -> &'static str {
        let request = WireRequest {
            method: method.to_owned(),
            path: "/consumer/api/v2/users".to_owned(),
            query: Vec::new(),
            body: None,
            auth: Default::default(),
        };
        let url_full = OnceCell::new();
        let info = CallInfo {
            operation: "raw",
            method: &request.method,
            url_template: None,
            url_full: &url_full,
            url_parts: ("http://127.0.0.1:1", &request, &[]),
            server_address: "127.0.0.1",
            server_port: 1,
            url_scheme: "http",
            protocol_version: PROTOCOL_VERSION,
            started_at: SystemTime::now(),
            started: Instant::now(),
            client_id: 1,
        };
        info.request_method()
    }

    #[test]
    fn a_header_longer_than_the_limit_is_refused_and_nothing_changes() {
        let mut headers = RequestHeaders::new().with("baggage", "a=1").unwrap();
        let long = "b".repeat(MAX_HEADER_BYTES);
        let e = headers.insert("baggage", &long).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Validation);
        assert!(e.message().contains("8192"), "{e}");
        assert_eq!(headers.get("baggage"), Some("a=1"));
        let fits = "b".repeat(MAX_HEADER_BYTES - "baggage".len());
        headers.insert("baggage", &fits).unwrap();
        assert_eq!(headers.get("baggage").map(str::len), Some(fits.len()));
    }

    #[test]
    fn the_request_method_is_one_the_conventions_know_or_other() {
        for known in [
            "GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "TRACE", "CONNECT",
        ] {
            assert_eq!(request_method_of(known), known);
        }
        // Case-sensitive, as the conventions are; anything else is `_OTHER`.
        for other in ["get", "PROPFIND", "", "GET "] {
            assert_eq!(request_method_of(other), "_OTHER", "{other:?}");
        }
    }
}
