//! The pure layer: typed requests to wire requests, wire responses to typed
//! results or errors. No I/O, no clock (time is passed in), so a user with
//! their own HTTP stack can use the builders and decoders alone.
//!
//! ```
//! use roomchat::wire::{self, WireResponse};
//! use roomchat::{ErrorKind, ListUsers};
//!
//! let request = wire::list_users(&ListUsers::page(10, 20)).unwrap();
//! assert_eq!(request.method, "GET");
//! assert_eq!(request.path, "/consumer/api/v2/users");
//! assert_eq!(request.url("https://api.example.com", Some("sk_1")),
//!            "https://api.example.com/consumer/api/v2/users?auth=sk_1&limit=10&skip=20");
//!
//! let answer = WireResponse::new(401, vec![], br#"{"message":"invalid auth token"}"#.to_vec());
//! let error = wire::decode_list_users(&answer).unwrap_err();
//! assert_eq!(error.kind(), ErrorKind::InvalidAuth);
//! ```

use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

pub(crate) mod decode;
pub(crate) mod models;
pub(crate) mod operation;
pub(crate) mod signin;
pub mod view;

pub use crate::percent::{encode_path_segment, encode_query_component};
pub use crate::wire::operation::requests::*;
pub use crate::wire::operation::{
    DeclaredError, Operation, OperationSpec, Paging, ParamKind, ParamLocation, ParamSpec,
    RetryClass,
};

use crate::error::{Error, ErrorKind, Result, ServiceTexts};
use crate::percent::encode_into;
use crate::wire::models::{check_non_empty, CreateUser, RawAuth, RawRequest, RawResponse, Role};
use crate::wire::view::UserPageView;

/// A request as it goes on the wire, before the key is added. Its `Debug`
/// shows any access token in the query or the body as `REDACTED`.
#[derive(Clone, PartialEq, Eq)]
pub struct WireRequest {
    /// The HTTP method, upper case.
    pub method: String,
    /// The path under the base URL, already percent-encoded.
    pub path: String,
    /// Query parameters (not encoded; [`WireRequest::url`] encodes them), without the key.
    pub query: Vec<(String, String)>,
    /// The JSON body, serialized.
    pub body: Option<String>,
    /// Which key authenticates it.
    pub auth: RawAuth,
}

impl WireRequest {
    fn new(method: &str, path: String) -> WireRequest {
        WireRequest {
            method: method.into(),
            path,
            query: Vec::new(),
            body: None,
            auth: RawAuth::PrivateKey,
        }
    }

    /// The name of the key's query parameter: `auth`, `publicKey`, or none.
    pub fn auth_param(&self) -> Option<&'static str> {
        match self.auth {
            RawAuth::PrivateKey => Some("auth"),
            RawAuth::PublicKey => Some("publicKey"),
            RawAuth::None => None,
        }
    }

    /// The full URL: `base_url` (no trailing slash needed), the path, the key
    /// (when both a key parameter and `key` are given) and the query, all encoded.
    pub fn url(&self, base_url: &str, key: Option<&str>) -> String {
        self.build_url(base_url, key, false)
    }

    /// [`WireRequest::url`]; with `hide_tokens`, every credential in the query
    /// ([`is_credential_query_name`]: an access token, a key, as a raw request
    /// may carry them) shown as `REDACTED`.
    fn build_url(&self, base_url: &str, key: Option<&str>, hide_tokens: bool) -> String {
        let mut url = String::with_capacity(base_url.len() + self.path.len() + 64);
        url.push_str(base_url.trim_end_matches('/'));
        url.push_str(&self.path);
        let mut separator = '?';
        if let (Some(name), Some(key)) = (self.auth_param(), key) {
            url.push(separator);
            url.push_str(name);
            url.push('=');
            encode_into(key, &mut url);
            separator = '&';
        }
        for (name, value) in &self.query {
            url.push(separator);
            encode_into(name, &mut url);
            url.push('=');
            if hide_tokens && is_credential_query_name(name) {
                url.push_str("REDACTED");
            } else {
                encode_into(value, &mut url);
            }
            separator = '&';
        }
        url
    }

    /// The absolute URL under `base_url` with the key and any credential in
    /// the query shown as `REDACTED`, as [`WireRequest::redacted_target`] shows them.
    pub fn redacted_url(&self, base_url: &str) -> String {
        self.build_url(base_url, Some("REDACTED"), true)
    }

    /// The access tokens this request carries (the values of its query
    /// parameters and top-level body fields named as an access token,
    /// [`is_access_token_name`]): secrets of this call, which a service may
    /// quote back in an error (`invalid accessToken <token>`), scrubbed from
    /// the call's error as the keys are.
    pub(crate) fn access_tokens(&self) -> Vec<String> {
        let mut tokens: Vec<String> = self
            .query
            .iter()
            .filter(|(name, value)| is_access_token_name(name) && !value.is_empty())
            .map(|(_, value)| value.clone())
            .collect();
        if let Some(serde_json::Value::Object(fields)) = self
            .body
            .as_deref()
            .and_then(|body| serde_json::from_str::<serde_json::Value>(body).ok())
        {
            for (name, value) in fields {
                if let serde_json::Value::String(token) = value {
                    if is_access_token_name(&name) && !token.is_empty() {
                        tokens.push(token);
                    }
                }
            }
        }
        tokens
    }

    /// The path and query with the key shown as `REDACTED`, and any
    /// credential in the query too ([`is_credential_query_name`]): safe for
    /// errors, logs and spans.
    pub fn redacted_target(&self) -> String {
        self.build_url("", Some("REDACTED"), true)
    }

    /// The body with the value of every access token in it (a string field
    /// named as [`is_access_token_name`] says, at any depth) replaced by
    /// `mark`; the body as it is when it holds none.
    pub fn body_hiding_access_tokens(&self, mark: &str) -> Option<std::borrow::Cow<'_, str>> {
        // Whether it hid one: every one is hidden (no stop at the first).
        fn hide(value: &mut Value, mark: &str) -> bool {
            let mut hid = false;
            match value {
                Value::Object(fields) => {
                    for (name, value) in fields {
                        if is_access_token_name(name) && value.is_string() {
                            *value = Value::from(mark);
                            hid = true;
                        } else {
                            hid |= hide(value, mark);
                        }
                    }
                }
                Value::Array(items) => {
                    for item in items {
                        hid |= hide(item, mark);
                    }
                }
                _ => {}
            }
            hid
        }
        let body = self.body.as_deref()?;
        if let Ok(mut value) = serde_json::from_str::<Value>(body) {
            // Written from a `Value`: written again, it is the same text but the tokens.
            if hide(&mut value, mark) {
                return Some(std::borrow::Cow::Owned(value.to_string()));
            }
        }
        Some(std::borrow::Cow::Borrowed(body))
    }

    /// Whether it may be sent again after a 5xx, a timeout or a lost answer
    /// without creating or posting anything twice: a declared operation's
    /// retry class says ([`Operation::spec`], [`RetryClass`]);
    /// for any other request, GET, HEAD, PUT, DELETE and OPTIONS may be, POST
    /// and PATCH may not.
    pub fn is_idempotent(&self) -> bool {
        match Operation::sent_as(&self.method, &self.path).and_then(Operation::spec) {
            Some(spec) => spec.retry == crate::wire::RetryClass::Repeatable,
            None => matches!(
                self.method.as_str(),
                "GET" | "HEAD" | "PUT" | "DELETE" | "OPTIONS"
            ),
        }
    }
}

impl fmt::Debug for WireRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let query: Vec<(&str, &str)> = self
            .query
            .iter()
            .map(|(name, value)| {
                let shown = if is_credential_query_name(name) {
                    "REDACTED"
                } else {
                    value
                };
                (name.as_str(), shown)
            })
            .collect();
        f.debug_struct("WireRequest")
            .field("method", &self.method)
            .field("path", &self.path)
            .field("query", &query)
            .field("body", &self.body_hiding_access_tokens("REDACTED"))
            .field("auth", &self.auth)
            .finish()
    }
}

/// Whether a query parameter or a body field holds an access token
/// (`accessToken`, `userAccessToken`, any case): it signs a user in, a secret
/// like the keys, shown in no output.
pub fn is_access_token_name(name: &str) -> bool {
    // Bytes, not a str slice: a non-ASCII name has no character boundary there.
    let name = name.as_bytes();
    name.len() >= b"accesstoken".len()
        && name[name.len() - b"accesstoken".len()..].eq_ignore_ascii_case(b"accesstoken")
}

/// Whether a query parameter of this name carries a credential, shown as
/// `REDACTED` wherever a URL is shown (errors, logs, spans' `url.full`): the
/// keys' own names (`auth`, `publicKey`), an access token
/// ([`is_access_token_name`]), and any other name of a token, key, password,
/// secret, credential, session, signature or code a raw request may carry
/// (`access_token`, `accessTokens`, `apiKey`, `Password`, `pwd`, `jwt`, `sig`),
/// compared without case, `_` or `-`.
pub fn is_credential_query_name(name: &str) -> bool {
    let folded: String = name
        .chars()
        .filter(|c| !matches!(c, '_' | '-'))
        .map(|c| c.to_ascii_lowercase())
        .collect();
    const WHOLE: [&str; 6] = ["auth", "sig", "pwd", "code", "jwt", "bearer"];
    const WITHIN: [&str; 8] = [
        "token",
        "secret",
        "passw",
        "credential",
        "session",
        "signature",
        "jwt",
        "bearer",
    ];
    WHOLE.contains(&folded.as_str())
        || WITHIN.iter().any(|part| folded.contains(part))
        || folded.ends_with("key")
        || folded.ends_with("keys")
}

// ---- builders -----------------------------------------------------------------------

/// The path of reactivate user.
pub const REACTIVATE_USER_PATH: &str = "/consumer/api/v2/user/reactivate";
/// The path of validate access token (`accessToken` in camel case, unlike invalidate's).
pub const VALIDATE_ACCESS_TOKEN_PATH: &str = "/consumer/api/v1/user/accessToken/validate";
/// The path of invalidate access token (`accesstoken` in lower case, unlike validate's).
pub const INVALIDATE_ACCESS_TOKEN_PATH: &str = "/consumer/api/v1/user/accesstoken/invalidate";

/// POST /consumer/api/v1/user (section 4.4).
pub fn create_user(params: &CreateUser) -> Result<WireRequest> {
    if params.username.trim().is_empty() {
        return Err(Error::validation("username must not be empty"));
    }
    let mut body = Map::new();
    body.insert("username".into(), Value::String(params.username.clone()));
    match &params.role {
        Role::Regular => {
            body.insert("isModerator".into(), Value::Bool(false));
        }
        Role::ModeratorOfAllRooms => {
            body.insert("isModerator".into(), Value::Bool(true));
        }
        Role::ModeratorOfRoom(room) => {
            check_non_empty("chat room of a room moderator", room)?;
            body.insert("isModerator".into(), Value::Bool(true));
            body.insert("chatRoom".into(), Value::String(room.clone()));
        }
    }
    for (name, value) in &params.extra {
        if body.contains_key(name) {
            return Err(Error::validation(format!(
                "extra field {name:?} would override what the role and username set; use them instead"
            )));
        }
        body.insert(name.clone(), value.clone());
    }
    let mut request = WireRequest::new("POST", "/consumer/api/v1/user".into());
    request.body = Some(Value::Object(body).to_string());
    Ok(request)
}

/// A request of section 4.7's shapeless operations. The path must start with
/// `/`, and holds no query, fragment, space or control character.
pub fn raw(params: &RawRequest) -> Result<WireRequest> {
    let method = params.method.to_ascii_uppercase();
    if !matches!(method.as_str(), "GET" | "POST" | "PUT" | "PATCH" | "DELETE") {
        return Err(Error::validation(format!(
            "method {:?} is not one of GET, POST, PUT, PATCH, DELETE",
            params.method
        )));
    }
    let path = &params.path;
    if !path.starts_with('/') || path.starts_with("//") {
        return Err(Error::validation("path must start with a single '/'"));
    }
    if let Some(bad) = path
        .chars()
        .find(|c| matches!(c, '?' | '#') || c.is_whitespace() || c.is_control())
    {
        return Err(Error::validation(format!(
            "path must not contain {bad:?}: put parameters in `query` and percent-encode ids"
        )));
    }
    // `%2e` is a dot to every server that normalises paths: `/a/%2e%2e/b` is `/b`.
    let is_dots = |segment: &str| {
        let decoded = segment.to_ascii_lowercase().replace("%2e", ".");
        decoded == "." || decoded == ".."
    };
    if path.split('/').any(is_dots) {
        return Err(Error::validation(
            "path must not contain '.' or '..' segments",
        ));
    }
    let mut request = WireRequest::new(&method, path.clone());
    request.query = params.query.clone();
    request.body = params.body.as_ref().map(Value::to_string);
    request.auth = params.auth;
    // The key's own parameter (and `auth` in any case) is the client's to add.
    let auth_param = request.auth_param();
    if let Some((name, _)) = request
        .query
        .iter()
        .find(|(n, _)| Some(n.as_str()) == auth_param || n.eq_ignore_ascii_case("auth"))
    {
        return Err(Error::validation(format!(
            "query must not carry {name:?}: the client adds the key itself"
        )));
    }
    Ok(request)
}

// ---- responses -------------------------------------------------------------------

/// A response as it came off the wire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WireResponse {
    /// The HTTP status.
    pub status: u16,
    /// The headers, in order (names compared case-insensitively).
    pub headers: Vec<(String, String)>,
    /// The body's bytes.
    pub body: Vec<u8>,
}

impl WireResponse {
    /// A response of `status`, `headers` and `body`.
    pub fn new(status: u16, headers: Vec<(String, String)>, body: Vec<u8>) -> WireResponse {
        WireResponse {
            status,
            headers,
            body,
        }
    }

    /// The first header called `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }
}

/// Decodes the users listing into a view borrowed from `response`'s body
/// (see [`crate::wire::view`]): the same decode as [`decode_list_users`], with the
/// same errors, and a few allocations instead of one per field.
pub fn decode_list_users_view(response: &WireResponse) -> Result<UserPageView<'_>> {
    if response.is_success() {
        if let Ok(text) = std::str::from_utf8(&response.body) {
            if let Ok(page) = serde_json::from_str::<UserPageView<'_>>(text) {
                // As the model's map: the last `success` sent counts.
                let reports_failure = page
                    .extra
                    .iter()
                    .rev()
                    .find(|(name, _)| name == "success")
                    .is_some_and(|(_, value)| value.get() == "false");
                if !reports_failure {
                    return Ok(page);
                }
            }
        }
    }
    // Everything else (an error status, a `"success": false` answer, a body
    // that does not decode) takes the model's path, which says why.
    match decode_list_users(response) {
        Err(e) => Err(e),
        Ok(_) => Err(Error::new(
            ErrorKind::Decode,
            "the users page decoded as a model but not as a view",
        )
        .with_status(response.status)),
    }
}

/// Decodes the chat-room list as JSON, whatever its shape (the older form of
/// [`decode_list_chat_rooms`], which gives typed rooms).
pub fn decode_chat_rooms(response: &WireResponse) -> Result<Value> {
    decode_json(response)
}

/// Decodes the answer to a raw request: any 2xx with a JSON (or empty) body.
pub fn decode_raw(response: &WireResponse) -> Result<RawResponse> {
    let body = decode_json::<Value>(response)?;
    let headers = response
        .headers
        .iter()
        .map(|(n, v)| (n.to_ascii_lowercase(), v.clone()))
        .collect();
    Ok(RawResponse {
        status: response.status,
        headers,
        body,
    })
}

/// A record an operation's answer decodes into ([`Client::call_declared`](crate::Client::call_declared)):
/// the crate's models and records, and [`Value`] for any JSON. A success body
/// may still say it failed (`"success": false`): that answer is the error it
/// stands for, not a record.
pub trait Decoded: DeserializeOwned {
    /// True when the body may be a `{"success": false, …}` answer: the slow path decides.
    #[doc(hidden)]
    fn may_report_failure(&self) -> bool;
}

// A JSON array cannot say `"success": false`: an object in its place does not
// decode as a list, and goes the slow way.
impl<T: Decoded> Decoded for Vec<T> {
    fn may_report_failure(&self) -> bool {
        false
    }
}

impl Decoded for Value {
    fn may_report_failure(&self) -> bool {
        self.get("success") == Some(&Value::Bool(false))
    }
}

pub(crate) fn decode_json<T: Decoded>(response: &WireResponse) -> Result<T> {
    if !response.is_success() {
        return Err(decode_error(response, SystemTime::now()));
    }
    let body = &response.body;
    let empty = body.iter().all(u8::is_ascii_whitespace);
    // Fast path: straight into `T`, the common case. JSON is UTF-8: checked
    // once for the whole body, which spares serde_json a check per string.
    if !empty {
        let parsed = match std::str::from_utf8(body) {
            Ok(text) => serde_json::from_str::<T>(text),
            Err(_) => serde_json::from_slice::<T>(body),
        };
        if let Ok(value) = parsed {
            if !value.may_report_failure() {
                return Ok(value);
            }
        }
    }
    let value: Value = if empty {
        Value::Null
    } else {
        serde_json::from_slice(body).map_err(|e| not_json(response, &e))?
    };
    // A 2xx that says it failed (`{"success": false, "message": …}`) is an error.
    if value.get("success") == Some(&Value::Bool(false)) {
        let service = service_texts(&value);
        let (kind, mut message) = classify(response.status, &service);
        if message.is_empty() {
            message = format!(
                "the service answered HTTP {} with \"success\": false",
                response.status
            );
        }
        return Err(Error::new(kind, message)
            .with_status(response.status)
            .with_service_texts(service));
    }
    T::deserialize(&value).map_err(|e| {
        Error::new(
            ErrorKind::Decode,
            format!("the response does not have the expected shape: {e}"),
        )
        .with_status(response.status)
    })
}

fn not_json(response: &WireResponse, e: &serde_json::Error) -> Error {
    let what = match response.header("content-type") {
        Some(ct) => format!("a {ct} body"),
        None => "a body without content type".to_owned(),
    };
    let detail = if e.is_eof() {
        "it is cut off"
    } else {
        "it is not JSON"
    };
    Error::new(
        ErrorKind::Decode,
        format!(
            "HTTP {} came with {what} that cannot be decoded: {detail} ({e})",
            response.status
        ),
    )
    .with_status(response.status)
}

/// Turns a non-2xx response into the error it stands for (section 7 and the
/// field notes' variants). `now` turns an HTTP-date `Retry-After` into a wait.
pub fn decode_error(response: &WireResponse, now: SystemTime) -> Error {
    let json: Option<Value> = serde_json::from_slice(&response.body).ok();
    let status = response.status;
    let service = json.as_ref().map(service_texts).unwrap_or_default();
    let (mut kind, message) = classify(status, &service);
    // The service's 404 for an unknown room is an empty object: JSON, so the
    // service's own answer, not a proxy's page.
    // The reference pages print room validation failures (the object with
    // `details`) under a 404 too: those are invalid requests.
    let validation = json
        .as_ref()
        .and_then(|j| j.get("error"))
        .is_some_and(|e| e.get("details").is_some());
    if status == 404 && validation {
        kind = ErrorKind::InvalidRequest;
    } else if status == 404 && matches!(&json, Some(Value::Object(_))) {
        kind = ErrorKind::NotFound;
    }
    let message = if message.is_empty() {
        let body = if json.is_some() || response.body.is_empty() {
            ""
        } else {
            " and a body that is not JSON"
        };
        format!("the service answered HTTP {status}{body}")
    } else {
        message
    };
    let event_id = json
        .as_ref()
        .and_then(|j| j.get("eventId"))
        .and_then(|v| match v {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        });
    let retry_after = response
        .header("retry-after")
        .and_then(|v| parse_retry_after(v, now));
    Error::new(kind, message)
        .with_status(status)
        .with_event_id(event_id)
        .with_retry_after(retry_after)
        .with_service_texts(service)
}

/// The texts of an error body: `message`, `errorMessage`, and `error` as a
/// string or a validation object's `message` or `details[].message` joined by `"; "`.
fn service_texts(body: &Value) -> ServiceTexts {
    let text = |v: Option<&Value>| {
        v.and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    let error = match body.get("error") {
        Some(Value::String(s)) => Some(s.clone()).filter(|s| !s.is_empty()),
        Some(Value::Object(o)) => text(o.get("message")).or_else(|| {
            let details: Vec<&str> = o
                .get("details")
                .and_then(Value::as_array)
                .map(|d| {
                    d.iter()
                        .filter_map(|x| x.get("message").and_then(Value::as_str))
                        .collect()
                })
                .unwrap_or_default();
            Some(details.join("; ")).filter(|s| !s.is_empty())
        }),
        _ => None,
    };
    ServiceTexts {
        message: text(body.get("message")),
        error,
        error_message: text(body.get("errorMessage")),
    }
}

/// The kind of an error answer, read from its status and the body's first
/// text (`message`, else `errorMessage`, else `error`), and the message to show
/// (every distinct text: [`ServiceTexts::shown`]).
fn classify(status: u16, service: &ServiceTexts) -> (ErrorKind, String) {
    let lower = service.primary().to_ascii_lowercase();
    // The public key too: validate access token is authenticated by it.
    let mentions_key = lower.contains("auth token")
        || lower.contains("api key")
        || lower.contains("auth key")
        || lower.contains("publickey")
        || lower.contains("public key");
    let asks_for_key = mentions_key
        && (lower.contains("pass")
            || lower.contains("specify")
            || lower.contains("missing")
            || lower.contains("required"));
    // "invalid chatroom id", "channel not found", "bot not found, or customer
    // does not have permission…" (a 401), "user is not a member of the chat room".
    let names_missing = !mentions_key
        && (lower.contains("not found")
            || lower.contains("invalid chatroom id")
            || lower.contains("not a member"));
    let kind = match status {
        400 | 401 | 404 if names_missing && lower.contains("user not found") => {
            ErrorKind::UserNotFound
        }
        400 | 401 | 404 if names_missing => ErrorKind::NotFound,
        401 if asks_for_key => ErrorKind::MissingAuth,
        401 => ErrorKind::InvalidAuth,
        400 | 403 if asks_for_key => ErrorKind::MissingAuth,
        400 | 403 if mentions_key && lower.contains("invalid") => ErrorKind::InvalidAuth,
        400 | 403 if lower.contains("upgrade") => ErrorKind::PlanUpgradeRequired,
        400 | 422 => ErrorKind::InvalidRequest,
        429 => ErrorKind::RateLimited,
        500..=599 => ErrorKind::ServerError,
        200..=299 => ErrorKind::InvalidRequest,
        _ => ErrorKind::UnexpectedStatus,
    };
    let shown = service.shown();
    let message = match (kind, shown.is_empty()) {
        (_, false) => shown,
        (ErrorKind::RateLimited, true) => "rate limit exceeded".to_owned(),
        _ => String::new(),
    };
    (kind, message)
}

/// The longest wait read from `Retry-After` or `X-RateLimit-Reset` (10^9 s,
/// about 31 years): a longer one is cut to it, so that a caller can always add
/// it to an `Instant`.
const LONGEST_WAIT: Duration = Duration::from_secs(1_000_000_000);

/// `X-RateLimit-*` headers, when the service sends them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimitHeaders {
    /// `X-RateLimit-Limit`.
    pub limit: Option<u32>,
    /// `X-RateLimit-Remaining`.
    pub remaining: Option<u32>,
    /// `X-RateLimit-Reset`, read as seconds until the window frees a slot
    /// (a Unix timestamp, when larger than a day's seconds, is turned into a wait using `now`),
    /// at most 10^9 s.
    pub reset: Option<Duration>,
}

/// Reads the `X-RateLimit-*` headers; `None` when none is there.
pub fn rate_limit_headers(response: &WireResponse, now: SystemTime) -> Option<RateLimitHeaders> {
    let number = |name: &str| {
        response
            .header(name)
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|n| *n >= 0.0)
    };
    let limit = number("x-ratelimit-limit").map(|n| n as u32);
    let remaining = number("x-ratelimit-remaining").map(|n| n as u32);
    let reset = number("x-ratelimit-reset").map(|n| {
        let seconds = if n > 86_400.0 {
            let now = now
                .duration_since(UNIX_EPOCH)
                .unwrap_or_default()
                .as_secs_f64();
            (n - now).max(0.0)
        } else {
            n
        };
        // `inf` and `1e300` parse too: cut before converting (it panics on overflow).
        Duration::from_secs_f64(seconds.min(LONGEST_WAIT.as_secs_f64()))
    });
    (limit.is_some() || remaining.is_some() || reset.is_some()).then_some(RateLimitHeaders {
        limit,
        remaining,
        reset,
    })
}

/// Parses `Retry-After`: delay-seconds, or an HTTP date (IMF-fixdate, e.g.
/// `Wed, 21 Oct 2015 07:28:00 GMT`) turned into a wait from `now`. A wait
/// longer than 10^9 s is cut to that.
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds).min(LONGEST_WAIT));
    }
    if let Ok(seconds) = value.parse::<f64>() {
        return (seconds.is_finite() && seconds >= 0.0)
            .then(|| Duration::from_secs_f64(seconds.min(LONGEST_WAIT.as_secs_f64())));
    }
    let at = parse_http_date(value)?;
    Some(at.duration_since(now).unwrap_or_default().min(LONGEST_WAIT))
}

/// IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT`.
fn parse_http_date(text: &str) -> Option<SystemTime> {
    let parts: Vec<&str> = text.split_whitespace().collect();
    let [_weekday, day, month, year, time, "GMT"] = parts.as_slice() else {
        return None;
    };
    let day: u64 = day.parse().ok()?;
    let month = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ]
    .iter()
    .position(|m| m == month)? as u64
        + 1;
    let year: u64 = year.parse().ok()?;
    let hms: Vec<u64> = time
        .split(':')
        .map(|p| p.parse().ok())
        .collect::<Option<_>>()?;
    let [h, m, s] = hms.as_slice() else {
        return None;
    };
    // IMF-fixdate has a four-digit year; a larger one would overflow below.
    if !(1..=31).contains(&day) || !(1970..=9999).contains(&year) || *h > 23 || *m > 59 || *s > 60 {
        return None;
    }
    // Days from the civil date (Howard Hinnant's algorithm), for years >= 1970.
    let (y, mo) = if month <= 2 {
        (year - 1, month + 9)
    } else {
        (year, month - 3)
    };
    let era = y / 400;
    let yoe = y - era * 400;
    let doy = (153 * mo + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(UNIX_EPOCH + Duration::from_secs(days * 86_400 + h * 3600 + m * 60 + s))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::models::{ConversationMessages, ListUsers};

    fn answer(status: u16, body: &str) -> WireResponse {
        WireResponse::new(status, vec![], body.as_bytes().to_vec())
    }

    /// Access tokens sign a user in: a request's `Debug` (a log line, a panic
    /// message) shows none, in the body at any depth or in the query.
    #[test]
    fn a_requests_debug_shows_no_access_token() {
        let secret = "tok-\u{e9}-0123456789";
        let mut requests = vec![
            crate::wire::validate_access_token(secret).unwrap(),
            crate::wire::invalidate_access_token(secret).unwrap(),
            Operation::SendRoomMessage
                .build(&serde_json::json!({
                    "roomId": "r", "userAccessToken": secret, "message": "hi"
                }))
                .unwrap(),
        ];
        let mut raw = WireRequest::new("GET", "/x".into());
        raw.query.push(("ACCESSTOKEN".into(), secret.into()));
        // Not a credential's name, non-ASCII in it.
        raw.query.push(("\u{e9}ccess".into(), "shown".into()));
        raw.body = Some(serde_json::json!({"a": [{"b": {"AccessToken": secret}}]}).to_string());
        requests.push(raw);
        for request in &requests {
            let shown = format!("{request:?} {request:#?}");
            assert!(!shown.contains(secret), "{shown}");
            assert!(shown.contains("REDACTED"), "{shown}");
        }
        // The body keeps everything else; a name that only ends alike is not a token.
        let body = requests[2].body_hiding_access_tokens("X").unwrap();
        assert!(
            body.contains(r#""message":"hi""#) && body.contains(r#""userAccessToken":"X""#),
            "{body}"
        );
        assert!(format!("{:?}", requests[3]).contains("shown"));
    }

    #[test]
    fn credential_query_names_are_told_without_case_underscores_or_dashes() {
        for name in [
            "auth",
            "Auth",
            "publicKey",
            "PUBLIC_KEY",
            "accessToken",
            "access_token",
            "user-access-token",
            "apiKey",
            "password",
            "client_secret",
            "key",
            "keys",
            "tokens",
            "accessTokens",
            "jwt",
            "passwd",
            "pwd",
            "credential",
            "sig",
            "signature",
            "bearer",
            "session_id",
            "code",
        ] {
            assert!(is_credential_query_name(name), "{name}");
        }
        for name in [
            "limit",
            "skip",
            "onlyAttachments",
            "author",
            "roomId",
            "doNotDeletePrivateMessages",
            "",
        ] {
            assert!(!is_credential_query_name(name), "{name}");
        }
    }

    #[test]
    fn hostile_ids_stay_one_segment() {
        let r = conversation_messages(&ConversationMessages::new("../users", "a?b#c")).unwrap();
        assert_eq!(
            r.path,
            "/consumer/api/v2/room/..%2Fusers/conversation/a%3Fb%23c/messages"
        );
        let r = conversation_messages(&ConversationMessages::new("..", "%41")).unwrap();
        assert_eq!(
            r.path,
            "/consumer/api/v2/room/%2E%2E/conversation/%2541/messages"
        );
        assert_eq!(
            conversation_messages(&ConversationMessages::new("", "x"))
                .unwrap_err()
                .kind(),
            ErrorKind::Validation
        );
    }

    #[test]
    fn access_tokens_in_a_query_are_redacted_too() {
        let raw = RawRequest::new("GET", "/consumer/api/v1/validate")
            .query("accessToken", "eyJ.secret+/=")
            .query("AccessToken", "eyJ.other")
            .query("limit", "5");
        let r = super::raw(&raw).unwrap();
        assert_eq!(
            r.redacted_target(),
            "/consumer/api/v1/validate?auth=REDACTED&accessToken=REDACTED&AccessToken=REDACTED&limit=5"
        );
        assert!(r
            .url("", Some("k"))
            .contains("accessToken=eyJ.secret%2B%2F%3D"));
    }

    #[test]
    fn key_is_encoded_and_redacted() {
        let r = list_users(&ListUsers::default()).unwrap();
        assert_eq!(
            r.url("http://h/", Some("a&b=c")),
            "http://h/consumer/api/v2/users?auth=a%26b%3Dc"
        );
        assert_eq!(r.redacted_target(), "/consumer/api/v2/users?auth=REDACTED");
    }

    #[test]
    fn limits_are_checked() {
        assert!(list_users(&ListUsers::page(200, 0)).is_ok());
        assert_eq!(
            list_users(&ListUsers::page(201, 0)).unwrap_err().kind(),
            ErrorKind::Validation
        );
        assert_eq!(
            list_users(&ListUsers::page(0, 0)).unwrap_err().kind(),
            ErrorKind::Validation
        );
    }

    #[test]
    fn error_shapes() {
        let now = SystemTime::now();
        let kind = |status, body| decode_error(&answer(status, body), now).kind();
        assert_eq!(
            kind(401, r#"{"message":"Please pass the auth token"}"#),
            ErrorKind::MissingAuth
        );
        assert_eq!(
            kind(400, r#"{"error":"Please specify API Key"}"#),
            ErrorKind::MissingAuth
        );
        assert_eq!(
            kind(401, r#"{"error":"Invalid API Key"}"#),
            ErrorKind::InvalidAuth
        );
        assert_eq!(
            kind(400, r#"{"message":"user not found"}"#),
            ErrorKind::UserNotFound
        );
        assert_eq!(
            kind(
                400,
                r#"{"error":true,"errorMessage":"limit should be less than 200"}"#
            ),
            ErrorKind::InvalidRequest
        );
        assert_eq!(
            kind(400, r#"{"message":"Please upgrade your plan"}"#),
            ErrorKind::PlanUpgradeRequired
        );
        assert_eq!(
            kind(502, "<html>bad gateway</html>"),
            ErrorKind::ServerError
        );
        // The service's JSON 404 names something missing; a proxy's page does not.
        assert_eq!(kind(404, "{}"), ErrorKind::NotFound);
        assert_eq!(
            kind(404, r#"{"message":"invalid chatroom id"}"#),
            ErrorKind::NotFound
        );
        assert_eq!(
            kind(
                401,
                r#"{"success":false,"message":"bot not found, or customer does not have permission to modify the bot"}"#
            ),
            ErrorKind::NotFound
        );
        assert_eq!(
            kind(401, r#"{"message":"invalid auth token"}"#),
            ErrorKind::InvalidAuth
        );
        assert_eq!(
            kind(404, "<html>Not Found</html>"),
            ErrorKind::UnexpectedStatus
        );
        assert_eq!(
            kind(
                404,
                r#"{"error":{"details":[{"message":"\"roomPassword\" is required"}]}}"#
            ),
            ErrorKind::InvalidRequest
        );
        let nested = decode_error(
            &answer(
                400,
                r#"{"error":{"details":[{"message":"\"roomPassword\" is required","path":["roomPassword"]}]}}"#,
            ),
            now,
        );
        assert_eq!(nested.message(), "\"roomPassword\" is required");
        let e = decode_error(&answer(500, r#"{"message":"oops","eventId":"ev-9"}"#), now);
        assert_eq!(
            (e.kind(), e.event_id(), e.status()),
            (ErrorKind::ServerError, Some("ev-9"), Some(500))
        );
    }

    #[test]
    fn retry_after_forms() {
        let now = UNIX_EPOCH + Duration::from_secs(1_445_412_400); // 2015-10-21 07:26:40 UTC
        assert_eq!(parse_retry_after("7", now), Some(Duration::from_secs(7)));
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now),
            Some(Duration::from_secs(80))
        );
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:20:00 GMT", now),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_retry_after("soon", now), None);
        assert_eq!(parse_retry_after("-3", now), None);
    }

    #[test]
    fn success_false_is_an_error_and_shapes_are_checked() {
        let e = decode_conversation_messages(&answer(
            200,
            r#"{"success":false,"message":"no such room"}"#,
        ))
        .unwrap_err();
        assert_eq!(
            (e.kind(), e.message()),
            (ErrorKind::InvalidRequest, "no such room")
        );
        assert_eq!(
            decode_list_users(&answer(200, "{}")).unwrap_err().kind(),
            ErrorKind::Decode
        );
        assert_eq!(
            decode_list_users(&answer(200, r#"{"total":1,"da"#))
                .unwrap_err()
                .kind(),
            ErrorKind::Decode
        );
    }
}
