//! The one error type of the crate, and its stable kinds.

use std::fmt;
use std::time::Duration;

/// What went wrong, in a form that does not change between releases.
///
/// The numeric values are part of the public contract: the C ABI returns them
/// as result codes and the Python and Node packages expose them as codes. A
/// value is never reused for another meaning; new kinds get new numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
#[repr(u32)]
pub enum ErrorKind {
    /// The service said the `auth` key is missing (401, or the older 400 "Please specify API Key").
    MissingAuth = 1,
    /// The service rejected the key (401): wrong, truncated, padded or regenerated.
    InvalidAuth = 2,
    /// The service rejected a parameter or body (400); the message names what is wrong.
    InvalidRequest = 3,
    /// The user named in the request does not exist or is already deactivated (400 "user not found").
    UserNotFound = 4,
    /// The endpoint is not part of the account's plan (400 telling to upgrade).
    PlanUpgradeRequired = 5,
    /// Over the rate limit: a 429 from the service, or the client's own budget
    /// could not give a slot within the allowed wait. [`Error::retry_after`] says how long to wait.
    RateLimited = 6,
    /// The service failed (5xx). [`Error::event_id`] carries the id to quote to support.
    ServerError = 7,
    /// A status the contract does not describe for this call (3xx, a 404 that is
    /// not the service's JSON, 413, …).
    UnexpectedStatus = 8,
    /// The connect or overall timeout ran out.
    Timeout = 9,
    /// No connection could be made, or it broke before an answer came.
    Connection = 10,
    /// The answer could not be decoded: not JSON (an HTML proxy page), cut off, or the wrong shape.
    Decode = 11,
    /// The answer was larger than the configured cap.
    ResponseTooLarge = 12,
    /// The client refused to send the request: an argument is invalid (nothing was sent).
    Validation = 13,
    /// The client is misconfigured: empty or padded key, bad base URL, plain `http://` to a remote host.
    Configuration = 14,
    /// The caller cancelled the call through its [`CancelToken`](crate::CancelToken)
    /// (an abandoned rate-limit wait or backoff, or a request given up mid-flight).
    Cancelled = 15,
    /// The shared rate-limit budget (Redis) could not be consulted and the
    /// client is set to fail closed rather than send unaccounted requests.
    BudgetUnavailable = 16,
    /// The TLS handshake failed: the server's certificate was rejected (unknown
    /// issuer, expired, a name mismatch) or the handshake broke. Never retried;
    /// the message names the reason.
    Tls = 17,
    /// The room, channel, message, conversation, bot or membership the request
    /// names does not exist: the service's 404 (`{}` or `invalid chatroom id`),
    /// or a 400 or 401 whose body says it was not found. A user that does not
    /// exist is [`UserNotFound`](ErrorKind::UserNotFound).
    NotFound = 18,
}

impl ErrorKind {
    /// Every kind, in numeric order.
    pub const ALL: [ErrorKind; 18] = [
        ErrorKind::MissingAuth,
        ErrorKind::InvalidAuth,
        ErrorKind::InvalidRequest,
        ErrorKind::UserNotFound,
        ErrorKind::PlanUpgradeRequired,
        ErrorKind::RateLimited,
        ErrorKind::ServerError,
        ErrorKind::UnexpectedStatus,
        ErrorKind::Timeout,
        ErrorKind::Connection,
        ErrorKind::Decode,
        ErrorKind::ResponseTooLarge,
        ErrorKind::Validation,
        ErrorKind::Configuration,
        ErrorKind::Cancelled,
        ErrorKind::BudgetUnavailable,
        ErrorKind::Tls,
        ErrorKind::NotFound,
    ];

    /// The stable numeric code (see the type's docs).
    pub fn code(self) -> u32 {
        self as u32
    }

    /// A stable snake_case name, e.g. `"user_not_found"`, used by the conformance vectors and bindings.
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::MissingAuth => "missing_auth",
            ErrorKind::InvalidAuth => "invalid_auth",
            ErrorKind::InvalidRequest => "invalid_request",
            ErrorKind::UserNotFound => "user_not_found",
            ErrorKind::PlanUpgradeRequired => "plan_upgrade_required",
            ErrorKind::RateLimited => "rate_limited",
            ErrorKind::ServerError => "server_error",
            ErrorKind::UnexpectedStatus => "unexpected_status",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Connection => "connection",
            ErrorKind::Decode => "decode",
            ErrorKind::ResponseTooLarge => "response_too_large",
            ErrorKind::Validation => "validation",
            ErrorKind::Configuration => "configuration",
            ErrorKind::Cancelled => "cancelled",
            ErrorKind::BudgetUnavailable => "budget_unavailable",
            ErrorKind::Tls => "tls",
            ErrorKind::NotFound => "not_found",
        }
    }

    /// The kind with this [`name`](Self::name), if any.
    pub fn from_name(name: &str) -> Option<ErrorKind> {
        ErrorKind::ALL.into_iter().find(|k| k.name() == name)
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An error from the client or the service.
///
/// It carries the [`ErrorKind`], a human-readable message (the service's own
/// text when it sent one), the HTTP status when there was an answer, the
/// method and the path of the request (with `auth` redacted), the `eventId` of
/// a server failure, how long to wait when rate limited, and each text the
/// service's error body held ([`service_message`](Self::service_message),
/// [`service_error`](Self::service_error),
/// [`service_error_message`](Self::service_error_message)). The private key
/// never appears in any of them.
#[derive(Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kind}: {message}{}", self.context())]
pub struct Error {
    kind: ErrorKind,
    message: String,
    status: Option<u16>,
    method: Option<String>,
    path: Option<String>,
    retry_after: Option<Duration>,
    /// What the service's body said (its texts, its `eventId`). Boxed: most
    /// errors have none, and the error stays small to return.
    service: Option<Box<ServiceParts>>,
    /// The client setting the message names as the way past the refusal.
    remedy: Option<Remedy>,
    /// No request of the call may have reached the service (see [`Error::never_sent`]).
    never_sent: bool,
}

/// A client setting that an error names as the way past a refusal, so that
/// each language can name the setting in its own words: Rust's
/// `allow_insecure_http(true)` is Python's `allow_insecure_http=True`, Node's
/// `allowInsecureHttp: true`, C's `roomchat_client_options_set_allow_insecure_http`.
///
/// [`Error::remedy`] says which setting an error names, and
/// [`Error::name_remedy`] words it as the caller's language spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Remedy {
    /// The client refused a base URL over plain `http://` to a host that is not
    /// loopback, which would send the private key unencrypted:
    /// [`ClientBuilder::allow_insecure_http`](crate::ClientBuilder::allow_insecure_http)
    /// lifts the refusal.
    AllowInsecureHttp,
}

impl Remedy {
    /// The setting as a Rust program writes it, as the error's message names it
    /// until [`Error::name_remedy`] names it otherwise: `allow_insecure_http(true)`.
    pub fn rust_name(self) -> &'static str {
        match self {
            Remedy::AllowInsecureHttp => "allow_insecure_http(true)",
        }
    }
}

/// What a service's error body said besides its status.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct ServiceParts {
    texts: ServiceTexts,
    event_id: Option<String>,
}

/// The texts of a service's error body, each as it came (see
/// [`Error::service_message`]). Empty strings, `"error": true` and other
/// non-text values are not texts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ServiceTexts {
    /// `message`.
    pub(crate) message: Option<String>,
    /// `error`: a string, or a validation object's `message` or `details[].message` joined by `"; "`.
    pub(crate) error: Option<String>,
    /// `errorMessage`.
    pub(crate) error_message: Option<String>,
}

impl ServiceTexts {
    /// The error's message: the distinct texts in the order `message`,
    /// `errorMessage`, `error` (the first is the one the kind is read from), the
    /// first followed by `": "` and the others joined by `"; "`; a text equal to
    /// an earlier one is shown once. Empty when the body held none.
    pub(crate) fn shown(&self) -> String {
        let mut texts: Vec<&str> = Vec::with_capacity(3);
        for text in [&self.message, &self.error_message, &self.error]
            .into_iter()
            .flatten()
        {
            if !texts.contains(&text.as_str()) {
                texts.push(text);
            }
        }
        match texts.split_first() {
            None => String::new(),
            Some((first, [])) => (*first).to_owned(),
            Some((first, rest)) => format!("{first}: {}", rest.join("; ")),
        }
    }

    /// The text the kind is read from: `message`, else `errorMessage`, else `error`.
    pub(crate) fn primary(&self) -> &str {
        self.message
            .as_deref()
            .or(self.error_message.as_deref())
            .or(self.error.as_deref())
            .unwrap_or_default()
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Error")
            .field("kind", &self.kind)
            .field("message", &self.message)
            .field("status", &self.status)
            .field("method", &self.method)
            .field("path", &self.path)
            .field("event_id", &self.event_id())
            .field("retry_after", &self.retry_after)
            .field("never_sent", &self.never_sent)
            .field("service_message", &self.service_message())
            .field("service_error", &self.service_error())
            .field("service_error_message", &self.service_error_message())
            .field("remedy", &self.remedy)
            .finish()
    }
}

impl Error {
    /// A new error of `kind` with `message` and no request context.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error {
            kind,
            message: message.into(),
            status: None,
            method: None,
            path: None,
            retry_after: None,
            service: None,
            remedy: None,
            never_sent: false,
        }
    }

    /// The refusal of a URL over plain `http://` to a host that is not
    /// loopback (`what` is e.g. `base URL`, `host` as it may be shown).
    pub(crate) fn insecure_http(what: &str, host: &str) -> Error {
        let remedy = Remedy::AllowInsecureHttp;
        let mut error = Error::configuration(format!(
            "the {what} uses plain http:// to {host:?}, which would send the private key \
             unencrypted; use https://, or {} if you really mean it",
            remedy.rust_name()
        ));
        error.remedy = Some(remedy);
        error
    }

    pub(crate) fn validation(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Validation, message)
    }

    pub(crate) fn configuration(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Configuration, message)
    }

    /// The stable kind.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The message: the service's own text when it sent one, otherwise the client's.
    ///
    /// A service's error body may carry its text in `message`, `errorMessage`
    /// and `error` (section 7 of the contract). When it holds more than one and
    /// they differ, the message shows each once: the first (in that order)
    /// followed by `": "`, then the others joined by `"; "`, e.g.
    /// `invalid request: "actionButtons[0].type" must be one of [link, action]`
    /// for `{"message": "invalid request", "error": "\"actionButtons[0].type\" must
    /// be one of [link, action]"}`. Each is also an accessor of its own
    /// ([`service_message`](Self::service_message) …).
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The service's error body's `message`, as it came; `None` when the body
    /// had none (or it was empty, or not a string), or when the service did not answer.
    pub fn service_message(&self) -> Option<&str> {
        self.service.as_ref()?.texts.message.as_deref()
    }

    /// The service's error body's `error` when it is text: a string (a
    /// validation detail such as `"actionButtons[0].type" must be one of
    /// [link, action]`), or the validation object's `message`, else its
    /// `details[].message` joined by `"; "`. `None` for `"error": true` (a flag,
    /// not a detail), an empty string, or no `error` at all.
    pub fn service_error(&self) -> Option<&str> {
        self.service.as_ref()?.texts.error.as_deref()
    }

    /// The service's error body's `errorMessage` (an older endpoints' form), as
    /// it came; `None` when the body had none (or it was empty, or not a string).
    pub fn service_error_message(&self) -> Option<&str> {
        self.service.as_ref()?.texts.error_message.as_deref()
    }

    /// The HTTP status, when the service answered.
    pub fn status(&self) -> Option<u16> {
        self.status
    }

    /// The request's method, when a request was made or built.
    pub fn method(&self) -> Option<&str> {
        self.method.as_deref()
    }

    /// The request's path and query, with the value of `auth` (or `publicKey`) replaced by `REDACTED`.
    pub fn path(&self) -> Option<&str> {
        self.path.as_deref()
    }

    /// The service's `eventId` of a server failure, to quote to support.
    pub fn event_id(&self) -> Option<&str> {
        self.service.as_ref()?.event_id.as_deref()
    }

    /// How long to wait before trying again, when known (rate limits, `Retry-After`).
    pub fn retry_after(&self) -> Option<Duration> {
        self.retry_after
    }

    /// The client setting the message names as the way past the refusal, if
    /// any: a binding recognises the refusal by it (never by the message's
    /// words), and names the setting in its own language with
    /// [`name_remedy`](Self::name_remedy).
    ///
    /// ```
    /// use roomchat::{ErrorKind, Remedy};
    /// let refused = roomchat::check_base_url("http://api.example.com", false).unwrap_err();
    /// assert_eq!(refused.kind(), ErrorKind::Configuration);
    /// assert_eq!(refused.remedy(), Some(Remedy::AllowInsecureHttp));
    /// assert!(refused.message().contains("allow_insecure_http(true)"));
    /// ```
    pub fn remedy(&self) -> Option<Remedy> {
        self.remedy
    }

    /// The error with its [`remedy`](Self::remedy) named `name` (how the
    /// caller's language spells the setting) where the message named Rust's
    /// [`Remedy::rust_name`]; the same error when it names no setting.
    ///
    /// ```
    /// let refused = roomchat::check_base_url("http://api.example.com", false).unwrap_err();
    /// let python = refused.name_remedy("allow_insecure_http=True");
    /// assert!(python.message().contains("or allow_insecure_http=True if you really mean it"));
    /// assert!(!python.to_string().contains("allow_insecure_http(true)"));
    /// ```
    pub fn name_remedy(mut self, name: &str) -> Error {
        if let Some(remedy) = self.remedy {
            // Its last occurrence: the setting is named after any quoted host.
            if let Some(at) = self.message.rfind(remedy.rust_name()) {
                self.message
                    .replace_range(at..at + remedy.rust_name().len(), name);
            }
        }
        self
    }

    /// Whether no request of the call may have reached the service: `true` for a call
    /// [cancelled](ErrorKind::Cancelled) before its first request left the client (while it
    /// waited for the rate budget, say) and after no request that may have been sent; then the
    /// call had no effect, and a create need not be looked up. `false` when a request may
    /// have been sent, and for every other error (where the kind and the status tell).
    pub fn never_sent(&self) -> bool {
        self.never_sent
    }

    /// This error, marked [`never_sent`](Self::never_sent) when `never_sent` is true.
    pub(crate) fn sent_unless(mut self, never_sent: bool) -> Error {
        self.never_sent |= never_sent;
        self
    }

    pub(crate) fn with_status(mut self, status: u16) -> Error {
        self.status = Some(status);
        self
    }

    pub(crate) fn with_event_id(mut self, event_id: Option<String>) -> Error {
        self.service_parts().event_id = event_id;
        self.drop_empty_service_parts()
    }

    pub(crate) fn with_retry_after(mut self, retry_after: Option<Duration>) -> Error {
        self.retry_after = retry_after;
        self
    }

    pub(crate) fn with_service_texts(mut self, texts: ServiceTexts) -> Error {
        self.service_parts().texts = texts;
        self.drop_empty_service_parts()
    }

    fn service_parts(&mut self) -> &mut ServiceParts {
        self.service.get_or_insert_with(Default::default)
    }

    fn drop_empty_service_parts(mut self) -> Error {
        if self.service.as_deref() == Some(&ServiceParts::default()) {
            self.service = None;
        }
        self
    }

    /// Sets the request context (method and redacted path) unless already set.
    pub(crate) fn with_request(mut self, method: &str, redacted_path: &str) -> Error {
        if self.method.is_none() {
            self.method = Some(method.to_owned());
            self.path = Some(redacted_path.to_owned());
        }
        self
    }

    /// Removes every occurrence of `secret` (and its percent-encoded form) from
    /// the error's texts: errors may quote URLs or bodies that echo it.
    pub(crate) fn scrub(mut self, secret: &str) -> Error {
        if secret.is_empty() {
            return self;
        }
        let forms = [
            secret.to_owned(),
            crate::percent::encode_query_component(secret),
        ];
        let scrub = |text: &mut String| *text = crate::secrets::scrub(text, &forms);
        scrub(&mut self.message);
        if let Some(path) = self.path.as_mut() {
            scrub(path);
        }
        if let Some(service) = self.service.as_deref_mut() {
            for text in [
                &mut service.event_id,
                &mut service.texts.message,
                &mut service.texts.error,
                &mut service.texts.error_message,
            ]
            .into_iter()
            .flatten()
            {
                scrub(text);
            }
        }
        self
    }

    /// [`scrub`](Self::scrub) for each of `secrets`.
    pub(crate) fn scrub_all(self, secrets: &[String]) -> Error {
        secrets.iter().fold(self, |e, s| e.scrub(s))
    }

    fn context(&self) -> String {
        let mut out = String::new();
        if let (Some(m), Some(p)) = (&self.method, &self.path) {
            out.push_str(&format!(" ({m} {p}"));
            if let Some(s) = self.status {
                out.push_str(&format!(", HTTP {s}"));
            }
            out.push(')');
        } else if let Some(s) = self.status {
            out.push_str(&format!(" (HTTP {s})"));
        }
        if let Some(e) = self.event_id() {
            out.push_str(&format!(" [eventId {e}]"));
        }
        if let Some(r) = self.retry_after {
            out.push_str(&format!(" [retry after {:.3}s]", r.as_secs_f64()));
        }
        out
    }
}

/// `Result<T, roomchat::Error>`.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_stable() {
        let codes: Vec<u32> = ErrorKind::ALL.iter().map(|k| k.code()).collect();
        assert_eq!(codes, (1..=18).collect::<Vec<_>>());
        for kind in ErrorKind::ALL {
            assert_eq!(ErrorKind::from_name(kind.name()), Some(kind));
        }
    }

    #[test]
    fn display_has_context_and_scrubs() {
        let e = Error::new(ErrorKind::ServerError, "boom sk_secret")
            .with_status(500)
            .with_event_id(Some("ev1".into()))
            .with_request("GET", "/x?auth=REDACTED")
            .scrub("sk_secret");
        let shown = e.to_string();
        assert_eq!(
            shown,
            "server_error: boom REDACTED (GET /x?auth=REDACTED, HTTP 500) [eventId ev1]"
        );
        assert!(!format!("{e:?}").contains("sk_secret"));
    }
}
