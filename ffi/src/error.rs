//! Result codes, the error object, and the panic boundary.

use std::ffi::{c_char, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;

use roomchat::{ErrorKind, Remedy};

/// The result of every fallible function. 0 is success; 1 to 18 mirror the
/// core library's error kinds with the same numbers. A value never changes
/// meaning; new codes get new numbers.
#[allow(non_camel_case_types)]
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum roomchat_result {
    /// Success.
    Ok = 0,
    /// The service said the key is missing.
    MissingAuth = 1,
    /// The service rejected the key.
    InvalidAuth = 2,
    /// The service rejected a parameter or body (400); the message names it.
    InvalidRequest = 3,
    /// The user does not exist or is already deactivated.
    UserNotFound = 4,
    /// The endpoint is not part of the account's plan.
    PlanUpgradeRequired = 5,
    /// Over the rate limit; see `roomchat_error_retry_after_ms`.
    RateLimited = 6,
    /// The service failed (5xx); see `roomchat_error_event_id`.
    ServerError = 7,
    /// A status the contract does not describe for this call.
    UnexpectedStatus = 8,
    /// The connect or overall timeout ran out.
    Timeout = 9,
    /// No connection could be made, or it broke before an answer.
    Connection = 10,
    /// The answer could not be decoded (not JSON, cut off, wrong shape).
    Decode = 11,
    /// The answer was larger than the configured cap.
    ResponseTooLarge = 12,
    /// The library refused to send the request: an argument is invalid.
    Validation = 13,
    /// The client is misconfigured (empty or padded key, bad URL, plain http to a remote host).
    Configuration = 14,
    /// The call was cancelled by its caller (`roomchat_cancel_token_cancel`).
    Cancelled = 15,
    /// The shared rate-limit budget (Redis) could not be consulted, and the client fails closed.
    BudgetUnavailable = 16,
    /// The TLS handshake failed: the server's certificate was rejected (unknown issuer,
    /// expired, a name mismatch; the message says which). Never retried.
    Tls = 17,
    /// The room, channel, message, bot or membership the call names does not exist (an
    /// unknown user is `ROOMCHAT_RESULT_USER_NOT_FOUND`).
    NotFound = 18,
    /// A NULL pointer where one is not allowed, a string that is not UTF-8, malformed JSON
    /// text, or an enum parameter holding a value its enum does not have.
    InvalidArgument = 100,
    /// A bug inside the library was caught at the boundary; nothing crossed into C.
    Panic = 101,
    /// An iterator has no more items (not an error).
    IterationDone = 102,
    /// An error kind newer than this header.
    Unknown = 103,
}

impl From<ErrorKind> for roomchat_result {
    fn from(kind: ErrorKind) -> Self {
        use roomchat_result as R;
        match kind {
            ErrorKind::MissingAuth => R::MissingAuth,
            ErrorKind::InvalidAuth => R::InvalidAuth,
            ErrorKind::InvalidRequest => R::InvalidRequest,
            ErrorKind::UserNotFound => R::UserNotFound,
            ErrorKind::PlanUpgradeRequired => R::PlanUpgradeRequired,
            ErrorKind::RateLimited => R::RateLimited,
            ErrorKind::ServerError => R::ServerError,
            ErrorKind::UnexpectedStatus => R::UnexpectedStatus,
            ErrorKind::Timeout => R::Timeout,
            ErrorKind::Connection => R::Connection,
            ErrorKind::Decode => R::Decode,
            ErrorKind::ResponseTooLarge => R::ResponseTooLarge,
            ErrorKind::Validation => R::Validation,
            ErrorKind::Configuration => R::Configuration,
            ErrorKind::Cancelled => R::Cancelled,
            ErrorKind::BudgetUnavailable => R::BudgetUnavailable,
            ErrorKind::Tls => R::Tls,
            ErrorKind::NotFound => R::NotFound,
            _ => R::Unknown,
        }
    }
}

/// The details of one failure. Made by a failing call when its `err_out` is
/// not NULL; owned by the caller, freed with `roomchat_error_free`. Strings
/// it returns live as long as it does. The private key never appears in it.
#[allow(non_camel_case_types)]
pub struct roomchat_error {
    code: roomchat_result,
    message: CString,
    status: u16,
    event_id: Option<CString>,
    retry_after_ms: i64,
    method: Option<CString>,
    path: Option<CString>,
    /// Boxed: most errors have none, and a failure stays small to return.
    service: Option<Box<ServiceTexts>>,
    remedy: roomchat_remedy,
    never_sent: bool,
}

/// A client setting that an error's message names as the way past a refusal
/// (`roomchat_error_remedy`), so that a wrapper can recognise the refusal, and
/// name the setting in its own words, without reading the message's.
#[allow(non_camel_case_types)]
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum roomchat_remedy {
    /// The message names no setting.
    None = 0,
    /// A base URL over plain `http://` to a host that is not loopback was
    /// refused (it would send the private key unencrypted): the message names
    /// `roomchat_client_options_set_allow_insecure_http(options, true)`.
    AllowInsecureHttp = 1,
}

/// The texts of the service's error body (see `roomchat::Error::service_message`).
struct ServiceTexts {
    message: Option<CString>,
    error: Option<CString>,
    error_message: Option<CString>,
}

/// A failure inside a call, before it is handed to C.
pub(crate) struct Failure {
    code: roomchat_result,
    error: roomchat_error,
}

impl Failure {
    pub(crate) fn new(code: roomchat_result, message: impl Into<String>) -> Failure {
        Failure {
            code,
            error: roomchat_error {
                code,
                message: c_string(message.into()),
                status: 0,
                event_id: None,
                retry_after_ms: -1,
                method: None,
                path: None,
                service: None,
                remedy: roomchat_remedy::None,
                // Refused at the boundary: nothing was sent.
                never_sent: true,
            },
        }
    }

    pub(crate) fn invalid(message: impl Into<String>) -> Failure {
        Failure::new(roomchat_result::InvalidArgument, message)
    }

    pub(crate) fn code(&self) -> roomchat_result {
        self.code
    }
}

/// How a C program spells a setting an error names as the way past a refusal,
/// and its `roomchat_remedy`.
fn remedy_of(remedy: Remedy) -> (&'static str, roomchat_remedy) {
    match remedy {
        Remedy::AllowInsecureHttp => (
            "roomchat_client_options_set_allow_insecure_http(options, true)",
            roomchat_remedy::AllowInsecureHttp,
        ),
        _ => (remedy.rust_name(), roomchat_remedy::None),
    }
}

impl From<roomchat::Error> for Failure {
    fn from(e: roomchat::Error) -> Failure {
        // A setting the message names is named as a C program spells it.
        let (e, remedy) = match e.remedy().map(remedy_of) {
            Some((name, remedy)) => (e.name_remedy(name), remedy),
            None => (e, roomchat_remedy::None),
        };
        let code = roomchat_result::from(e.kind());
        Failure {
            code,
            error: roomchat_error {
                code,
                message: c_string(e.message().to_owned()),
                status: e.status().unwrap_or(0),
                event_id: e.event_id().map(|s| c_string(s.to_owned())),
                retry_after_ms: e
                    .retry_after()
                    .map(|d| d.as_millis().min(i64::MAX as u128) as i64)
                    .unwrap_or(-1),
                method: e.method().map(|s| c_string(s.to_owned())),
                path: e.path().map(|s| c_string(s.to_owned())),
                service: service_texts(&e),
                remedy,
                never_sent: e.never_sent(),
            },
        }
    }
}

fn service_texts(e: &roomchat::Error) -> Option<Box<ServiceTexts>> {
    let text = |t: Option<&str>| t.map(|s| c_string(s.to_owned()));
    let texts = ServiceTexts {
        message: text(e.service_message()),
        error: text(e.service_error()),
        error_message: text(e.service_error_message()),
    };
    let any = texts.message.is_some() || texts.error.is_some() || texts.error_message.is_some();
    any.then(|| Box::new(texts))
}

/// The message a failure carries.
pub(crate) fn failure_text(failure: &Failure) -> String {
    failure.error.message.to_string_lossy().into_owned()
}

/// A C string of `text`; an interior NUL (possible in JSON text) becomes U+FFFD.
pub(crate) fn c_string(text: String) -> CString {
    CString::new(text).unwrap_or_else(|e| {
        let cleaned = String::from_utf8_lossy(&e.into_vec()).replace('\0', "\u{FFFD}");
        CString::new(cleaned).unwrap_or_default()
    })
}

/// Runs `body` behind the panic boundary: a panic becomes `Panic`, a failure
/// its code, with the details written to `err_out` when it is not NULL.
pub(crate) fn guard(
    err_out: *mut *mut roomchat_error,
    body: impl FnOnce() -> Result<(), Failure>,
) -> roomchat_result {
    let outcome = catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|_| {
        Err(Failure::new(
            roomchat_result::Panic,
            "internal error: a bug in roomchat was caught at the C boundary",
        ))
    });
    match outcome {
        Ok(()) => roomchat_result::Ok,
        Err(failure) => {
            if !err_out.is_null() {
                // SAFETY: the caller gave a writable `roomchat_error **` (documented).
                unsafe { *err_out = Box::into_raw(Box::new(failure.error)) };
            }
            failure.code
        }
    }
}

/// Runs `body`, which returns a value, behind the panic boundary; a panic gives `fallback`.
pub(crate) fn guard_value<T>(fallback: T, body: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or(fallback)
}

fn borrow<'a>(error: *const roomchat_error) -> Option<&'a roomchat_error> {
    // SAFETY: a non-NULL pointer came from this library and is not yet freed (documented).
    unsafe { error.as_ref() }
}

/// One text of `error`'s service body, borrowed as `opt_ptr` does; NULL without one.
fn service_text(
    error: *const roomchat_error,
    text: impl Fn(&ServiceTexts) -> &Option<CString>,
) -> *const c_char {
    borrow(error)
        .and_then(|e| e.service.as_deref())
        .map_or(ptr::null(), |s| opt_ptr(text(s)))
}

fn opt_ptr(s: &Option<CString>) -> *const c_char {
    s.as_ref().map_or(ptr::null(), |s| s.as_ptr())
}

/// The result code of `error` (`ROOMCHAT_RESULT_INVALID_ARGUMENT` for NULL).
#[no_mangle]
pub extern "C" fn roomchat_error_code(error: *const roomchat_error) -> roomchat_result {
    guard_value(roomchat_result::Panic, || {
        borrow(error).map_or(roomchat_result::InvalidArgument, |e| e.code)
    })
}

/// The message of `error`: the service's own text when it sent one. Never
/// NULL for a non-NULL `error`; borrowed, valid until `roomchat_error_free`.
/// When the service's error body held more than one text (`message`,
/// `errorMessage`, `error`) and they differ, it shows each once: the first, then
/// `": "` and the others joined by `"; "` (`invalid request: "actionButtons[0].type"
/// must be one of [link, action]`); `roomchat_error_service_message` and its
/// neighbours give each alone.
#[no_mangle]
pub extern "C" fn roomchat_error_message(error: *const roomchat_error) -> *const c_char {
    guard_value(ptr::null(), || {
        borrow(error).map_or(ptr::null(), |e| e.message.as_ptr())
    })
}

/// The client setting `error`'s message names as the way past a refusal
/// (`ROOMCHAT_REMEDY_NONE` when it names none, and for NULL). A wrapper
/// recognises the refusal by it, never by the message's words.
#[no_mangle]
pub extern "C" fn roomchat_error_remedy(error: *const roomchat_error) -> roomchat_remedy {
    guard_value(roomchat_remedy::None, || {
        borrow(error).map_or(roomchat_remedy::None, |e| e.remedy)
    })
}

/// Whether no request of the call may have reached the service (`roomchat::Error::never_sent`):
/// true for a call refused before sending (an invalid argument, a validation error) or cancelled
/// before its first request left the client; then it had no effect, and a create need not be
/// looked up. False when a request may have been sent, and for NULL: a create cancelled with its
/// request on the wire (`ROOMCHAT_RESULT_CANCELLED`) has an unknown outcome.
#[no_mangle]
pub extern "C" fn roomchat_error_never_sent(error: *const roomchat_error) -> bool {
    guard_value(false, || borrow(error).is_some_and(|e| e.never_sent))
}

/// The HTTP status of the answer, or 0 when there was none.
#[no_mangle]
pub extern "C" fn roomchat_error_status(error: *const roomchat_error) -> u16 {
    guard_value(0, || borrow(error).map_or(0, |e| e.status))
}

/// The service's `eventId` of a server failure, or NULL. Borrowed, valid until `roomchat_error_free`.
#[no_mangle]
pub extern "C" fn roomchat_error_event_id(error: *const roomchat_error) -> *const c_char {
    guard_value(ptr::null(), || {
        borrow(error).map_or(ptr::null(), |e| opt_ptr(&e.event_id))
    })
}

/// How long to wait before trying again, in milliseconds, or -1 when unknown.
#[no_mangle]
pub extern "C" fn roomchat_error_retry_after_ms(error: *const roomchat_error) -> i64 {
    guard_value(-1, || borrow(error).map_or(-1, |e| e.retry_after_ms))
}

/// The request's method, or NULL when no request was made. Borrowed, valid until `roomchat_error_free`.
#[no_mangle]
pub extern "C" fn roomchat_error_method(error: *const roomchat_error) -> *const c_char {
    guard_value(ptr::null(), || {
        borrow(error).map_or(ptr::null(), |e| opt_ptr(&e.method))
    })
}

/// The request's path and query with the key shown as `REDACTED`, or NULL.
/// Borrowed, valid until `roomchat_error_free`.
#[no_mangle]
pub extern "C" fn roomchat_error_path(error: *const roomchat_error) -> *const c_char {
    guard_value(ptr::null(), || {
        borrow(error).map_or(ptr::null(), |e| opt_ptr(&e.path))
    })
}

/// The `message` of the service's error body, as it came, or NULL when the
/// body had none (nor any answer came). Borrowed: owned by `error`, valid until
/// `roomchat_error_free(error)`; never free it.
#[no_mangle]
pub extern "C" fn roomchat_error_service_message(error: *const roomchat_error) -> *const c_char {
    guard_value(ptr::null(), || service_text(error, |s| &s.message))
}

/// The `error` of the service's error body when it is text (a validation
/// detail such as `"actionButtons[0].type" must be one of [link, action]`, or
/// a validation object's messages joined by `"; "`), or NULL: no such text, or
/// `"error": true`, a flag and not a detail. Borrowed: owned by `error`, valid
/// until `roomchat_error_free(error)`; never free it.
#[no_mangle]
pub extern "C" fn roomchat_error_service_error(error: *const roomchat_error) -> *const c_char {
    guard_value(ptr::null(), || service_text(error, |s| &s.error))
}

/// The `errorMessage` of the service's error body (older endpoints' form), as
/// it came, or NULL when the body had none. Borrowed: owned by `error`, valid
/// until `roomchat_error_free(error)`; never free it.
#[no_mangle]
pub extern "C" fn roomchat_error_service_error_message(
    error: *const roomchat_error,
) -> *const c_char {
    guard_value(ptr::null(), || service_text(error, |s| &s.error_message))
}

/// Frees an error. `roomchat_error_free(NULL)` does nothing.
#[no_mangle]
pub extern "C" fn roomchat_error_free(error: *mut roomchat_error) {
    guard_value((), || {
        if !error.is_null() {
            // SAFETY: it came from `Box::into_raw` in `guard` and is freed once (documented).
            drop(unsafe { Box::from_raw(error) });
        }
    })
}

/// Gives a C enum `from_u32`, mapping a number back to the variant it is, for
/// enum parameters taken as `u32` (any number C passes is then safe: a Rust enum
/// holding a value it does not have is undefined behaviour).
macro_rules! enum_from_u32 {
    ($name:ident { $($variant:ident),+ $(,)? }) => {
        impl $name {
            /// The variant numbered `value`, if the enum has one.
            pub(crate) fn from_u32(value: u32) -> Option<$name> {
                // Exhaustive, so that a new variant cannot be left out of the list.
                let _ = |v: $name| match v {
                    $($name::$variant => ()),+
                };
                [$($name::$variant),+].into_iter().find(|v| *v as u32 == value)
            }
        }
    };
}
pub(crate) use enum_from_u32;

/// An enum parameter `name` taken as `u32`: its variant, or an invalid-argument
/// failure naming the parameter and the value.
pub(crate) fn enum_arg<T>(
    value: u32,
    name: &str,
    enum_name: &str,
    from_u32: fn(u32) -> Option<T>,
) -> Result<T, Failure> {
    from_u32(value).ok_or_else(|| {
        Failure::invalid(format!(
            "{name} is {value}, which is not a {enum_name} value"
        ))
    })
}

enum_from_u32!(roomchat_result {
    Ok,
    MissingAuth,
    InvalidAuth,
    InvalidRequest,
    UserNotFound,
    PlanUpgradeRequired,
    RateLimited,
    ServerError,
    UnexpectedStatus,
    Timeout,
    Connection,
    Decode,
    ResponseTooLarge,
    Validation,
    Configuration,
    Cancelled,
    BudgetUnavailable,
    Tls,
    NotFound,
    InvalidArgument,
    Panic,
    IterationDone,
    Unknown,
});

impl roomchat_result {
    fn name(self) -> &'static [u8] {
        use roomchat_result as R;
        match self {
            R::Ok => b"ok\0",
            R::MissingAuth => b"missing_auth\0",
            R::InvalidAuth => b"invalid_auth\0",
            R::InvalidRequest => b"invalid_request\0",
            R::UserNotFound => b"user_not_found\0",
            R::PlanUpgradeRequired => b"plan_upgrade_required\0",
            R::RateLimited => b"rate_limited\0",
            R::ServerError => b"server_error\0",
            R::UnexpectedStatus => b"unexpected_status\0",
            R::Timeout => b"timeout\0",
            R::Connection => b"connection\0",
            R::Decode => b"decode\0",
            R::ResponseTooLarge => b"response_too_large\0",
            R::Validation => b"validation\0",
            R::Configuration => b"configuration\0",
            R::Cancelled => b"cancelled\0",
            R::BudgetUnavailable => b"budget_unavailable\0",
            R::Tls => b"tls\0",
            R::NotFound => b"not_found\0",
            R::InvalidArgument => b"invalid_argument\0",
            R::Panic => b"panic\0",
            R::IterationDone => b"iteration_done\0",
            R::Unknown => b"unknown\0",
        }
    }
}

/// A static, NUL-terminated name of a result code, e.g. `"user_not_found"`; never NULL.
/// `code` is a `roomchat_result` value, taken as `uint32_t` so that any number is
/// safe to pass: a number that is not a `roomchat_result` gives `"unknown"` (the
/// name of `ROOMCHAT_RESULT_UNKNOWN`).
#[no_mangle]
pub extern "C" fn roomchat_result_name(code: u32) -> *const c_char {
    roomchat_result::from_u32(code)
        .unwrap_or(roomchat_result::Unknown)
        .name()
        .as_ptr()
        .cast()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_mirror_core_kinds_by_number() {
        for kind in ErrorKind::ALL {
            assert_eq!(roomchat_result::from(kind) as u32, kind.code(), "{kind}");
        }
    }

    #[test]
    fn a_panic_becomes_a_code_and_an_error() {
        let mut err: *mut roomchat_error = ptr::null_mut();
        let code = guard(&mut err, || panic!("boom"));
        assert_eq!(code, roomchat_result::Panic);
        assert_eq!(roomchat_error_code(err), roomchat_result::Panic);
        roomchat_error_free(err);
        assert_eq!(
            guard(ptr::null_mut(), || Err(Failure::invalid("x"))),
            roomchat_result::InvalidArgument
        );
    }

    /// The shared error vectors (`tests/conformance/responses.json`) read back
    /// through the C accessors: the C ABI has no pure decoder, so core decodes
    /// each answer and the failure a C caller would get is read as C reads it.
    #[test]
    fn error_vectors_read_the_same_through_the_c_accessors() {
        use roomchat::wire::{Operation, WireResponse};
        use serde_json::Value;
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../tests/conformance/responses.json"
        );
        let text = std::fs::read_to_string(path).unwrap();
        let vectors: Vec<Value> = serde_json::from_str(&text).unwrap();
        let read = |p: *const c_char| {
            // SAFETY: a string the error owns, alive until it is freed below.
            (!p.is_null()).then(|| {
                unsafe { std::ffi::CStr::from_ptr(p) }
                    .to_str()
                    .unwrap()
                    .to_owned()
            })
        };
        let mut checked = 0;
        for v in &vectors {
            let Some(want) = v["expect"].get("error") else {
                continue;
            };
            let name = v["name"].as_str().unwrap();
            let operation = Operation::from_name(v["operation"].as_str().unwrap()).unwrap();
            let headers = v["headers"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| {
                    (
                        p[0].as_str().unwrap().to_owned(),
                        p[1].as_str().unwrap().to_owned(),
                    )
                })
                .collect();
            let response = WireResponse::new(
                v["status"].as_u64().unwrap() as u16,
                headers,
                v["body"].as_str().unwrap().as_bytes().to_vec(),
            );
            let e = operation.decode(&response).unwrap_err();
            let mut err: *mut roomchat_error = ptr::null_mut();
            let code = guard(&mut err, || Err(Failure::from(e)));
            assert_eq!(roomchat_error_code(err), code, "{name}");
            // SAFETY: the name is a static NUL-terminated string.
            let kind = unsafe { std::ffi::CStr::from_ptr(roomchat_result_name(code as u32)) };
            assert_eq!(
                kind.to_str().unwrap(),
                want["kind"].as_str().unwrap(),
                "{name}"
            );
            assert_eq!(
                u64::from(roomchat_error_status(err)),
                want["status"].as_u64().unwrap_or(0),
                "{name}"
            );
            if let Some(message) = want["message"].as_str() {
                assert_eq!(
                    read(roomchat_error_message(err)).as_deref(),
                    Some(message),
                    "{name}"
                );
            }
            assert_eq!(
                read(roomchat_error_event_id(err)).as_deref(),
                want["event_id"].as_str(),
                "{name}"
            );
            assert_eq!(
                roomchat_error_retry_after_ms(err),
                want["retry_after_ms"].as_i64().unwrap_or(-1),
                "{name}"
            );
            let service = &want["service"];
            assert_eq!(
                (
                    read(roomchat_error_service_message(err)),
                    read(roomchat_error_service_error(err)),
                    read(roomchat_error_service_error_message(err)),
                ),
                (
                    service["message"].as_str().map(str::to_owned),
                    service["error"].as_str().map(str::to_owned),
                    service["errorMessage"].as_str().map(str::to_owned),
                ),
                "{name}: the service's texts"
            );
            roomchat_error_free(err);
            checked += 1;
        }
        assert!(checked >= 60, "only {checked} error vectors");
        println!("{checked} error vectors read through the C accessors");
    }

    #[test]
    fn every_code_has_a_name_and_other_numbers_are_unknown() {
        let name = |code: u32| {
            // SAFETY: the names are static NUL-terminated strings.
            unsafe { std::ffi::CStr::from_ptr(roomchat_result_name(code)) }
                .to_str()
                .unwrap()
        };
        for number in (0..=18).chain(100..=103) {
            let code = roomchat_result::from_u32(number).unwrap();
            assert_eq!(code as u32, number);
        }
        assert_eq!(name(4), "user_not_found");
        assert_eq!(name(17), "tls");
        assert_eq!(name(18), "not_found");
        assert_eq!(name(103), "unknown");
        for unknown in [19, 99, 104, u32::MAX] {
            assert_eq!(name(unknown), "unknown");
        }
    }
}
