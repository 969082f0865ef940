//! The observer callback (issue 45): core's report of each attempt and call
//! (`roomchat::instrument`) as C reads it, the headers an observer adds to one
//! attempt, and the client's own headers and trace-context switch.

use std::ffi::{c_char, c_void, CString};
use std::ptr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use roomchat::instrument::{
    AttemptEnd, AttemptStart, CallEnd, CallEvent, CallEventKind, CallInfo, CallObserver,
    Instrumentation, RequestHeaders, RetryReason,
};

use crate::boundary::{mut_arg, text_arg};
use crate::client::roomchat_client_options;
use crate::error::{c_string, guard, guard_value, roomchat_error, roomchat_result, Failure};
use crate::view::{roomchat_destroy_notify, UserData};

/// What a `roomchat_observation` reports.
#[allow(non_camel_case_types)]
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum roomchat_observation_kind {
    /// An attempt is about to be sent: the callback's `headers` is not NULL,
    /// and what it sets goes on this attempt's request.
    AttemptStart = 0,
    /// The attempt ended: answered (any status) or failed.
    AttemptEnd = 1,
    /// The call ended, with its result (after its last attempt, or with none).
    CallEnd = 2,
}

/// What happened between two observations (see `roomchat_call_event`).
#[allow(non_camel_case_types)]
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum roomchat_call_event_kind {
    /// The call waited `wait_ns` for a slot of the key's rate-limit budget.
    RateLimitWait = 0,
    /// The shared budget in Redis failed (`error_kind`, `error_message`); the
    /// client follows its Redis policy until Redis answers again.
    BudgetDegraded = 1,
    /// The attempt failed and the call sends again after `wait_ns` (`retry_reason` says why).
    Retry = 2,
}

/// One thing that happened between two observations: a rate-limit wait, a
/// failure of the shared budget in Redis, or a retry. Read-only, owned by the
/// library, valid only during the callback that received it (copy what you
/// keep). Fields are only ever added at the end: `struct_size` is the size the
/// library filled in, so a field at `offsetof(roomchat_call_event, f)` below
/// `struct_size` is there (`ROOMCHAT_HAS_FIELD(event, roomchat_call_event, f)`).
#[allow(non_camel_case_types)]
#[repr(C)]
pub struct roomchat_call_event {
    /// `sizeof(roomchat_call_event)` as the library was built: fields past it are absent.
    pub struct_size: usize,
    /// What happened.
    pub kind: roomchat_call_event_kind,
    /// The attempt it belongs to: the one about to start (a wait, a budget
    /// failure) or the one that failed (a retry).
    pub attempt: u32,
    /// Its name on a span: `roomchat.rate_limit.wait`, `roomchat.budget.degraded`, `roomchat.retry`.
    pub name: *const c_char,
    /// When it happened (a wait: when it began), in nanoseconds since the Unix epoch.
    pub at_unix_ns: u64,
    /// A rate-limit wait: the time waited; a retry: the time slept before
    /// sending again; 0 for a budget failure. Nanoseconds.
    pub wait_ns: u64,
    /// A retry's reason, `429`, `5xx`, `connection`, `timeout` or `other`; NULL otherwise.
    pub retry_reason: *const c_char,
    /// A retry's: the failed attempt's HTTP status, 0 when no answer came.
    pub status: u16,
    /// A budget failure's error (`ROOMCHAT_RESULT_OK` otherwise).
    pub error_kind: roomchat_result,
    /// Its name (`roomchat_result_name`, e.g. `connection`), NULL when none.
    pub error_type: *const c_char,
    /// A budget failure's message, every password shown as `REDACTED`; NULL otherwise.
    pub error_message: *const c_char,
}

/// One report of a call, given to a `roomchat_observer_callback`: an attempt's
/// start, an attempt's end, or the call's end (`kind`). Read-only, owned by the
/// library, valid only during the callback (copy what you keep; every string is
/// NUL-terminated UTF-8). No key, access token or password appears in any of
/// its strings: `url_full` shows them as `REDACTED`, error texts are scrubbed.
///
/// Extensible: later versions only add fields at the end, and `struct_size`
/// is the size the library filled in, so a program built against a newer
/// header checks a field with `ROOMCHAT_HAS_FIELD(observation,
/// roomchat_observation, field)` before reading it from an older library.
/// The library allocates it: never allocate or copy one to pass back.
#[allow(non_camel_case_types)]
#[repr(C)]
pub struct roomchat_observation {
    /// `sizeof(roomchat_observation)` as the library was built: fields past it are absent.
    pub struct_size: usize,
    /// Which report this is.
    pub kind: roomchat_observation_kind,
    /// At an attempt's start or end: the attempt's number, from 1. At the
    /// call's end: the attempts the call made (0 when none was sent).
    pub attempt: u32,
    /// This call's number, unique in the process and the same in each of its
    /// reports: the key for what you keep between them (a span).
    pub call_id: u64,
    /// The client's number, unique in the process (its views share it) (`roomchat.client.id`).
    pub client_id: u64,
    /// The operation's name (`create_chat_room`, `list_users`; `raw` for a raw request) (`roomchat.operation`).
    pub operation: *const c_char,
    /// The HTTP method, upper case (`http.request.method`).
    pub method: *const c_char,
    /// The path's template, `/consumer/api/v1/chatroom/{roomId}`, never an id
    /// (`url.template`); NULL for a raw request to an undeclared path.
    pub url_template: *const c_char,
    /// The request's absolute URL, every credential (`auth`, `publicKey`,
    /// `accessToken`) shown as `REDACTED` (`url.full`).
    pub url_full: *const c_char,
    /// `https` or `http` (`url.scheme`).
    pub url_scheme: *const c_char,
    /// The base URL's host (`server.address`).
    pub server_address: *const c_char,
    /// The HTTP version, `1.1` (`network.protocol.version`).
    pub protocol_version: *const c_char,
    /// The base URL's port, or its scheme's (`server.port`).
    pub server_port: u16,
    /// The answer's HTTP status (`http.response.status_code`): at an attempt's
    /// end, its own; at the call's end, the last answer's; 0 when none came
    /// (and at an attempt's start).
    pub status: u16,
    /// `attempt - 1` at an attempt's start or end (`http.request.resend_count`,
    /// set on a span when above 0); at the call's end, the attempts made minus one (0 for none).
    pub resend_count: u32,
    /// When the call started, in nanoseconds since the Unix epoch (the same in each of its reports).
    pub call_start_unix_ns: u64,
    /// When what is reported started, nanoseconds since the Unix epoch: the
    /// attempt (its slot of the rate budget taken), or at the call's end the call.
    pub start_unix_ns: u64,
    /// When it ended (the answer read, or the failure), nanoseconds since the
    /// Unix epoch; 0 at an attempt's start.
    pub end_unix_ns: u64,
    /// How long it took, by the monotonic clock, in nanoseconds; 0 at an attempt's start.
    pub duration_ns: u64,
    /// At the call's end: the time waited for the rate-limit budget, all attempts together, in nanoseconds; else 0.
    pub rate_limit_wait_ns: u64,
    /// At the call's end: the time slept before retries, in nanoseconds; else 0.
    pub retry_wait_ns: u64,
    /// At an attempt's or the call's end: the error, as the library's result
    /// code (`ROOMCHAT_RESULT_SERVER_ERROR`, …; any 4xx or 5xx, or no answer);
    /// `ROOMCHAT_RESULT_OK` when it succeeded.
    pub error_kind: roomchat_result,
    /// The error's name (`server_error`, `timeout`, … as `roomchat_result_name`)
    /// (`error.type`); NULL when it succeeded.
    pub error_type: *const c_char,
    /// At an attempt's end, when the call sends again: why (`429`, `5xx`,
    /// `connection`, `timeout`, `other`; `roomchat.retry.reason`); else NULL.
    pub retry_reason: *const c_char,
    /// At an attempt's start: whether trace context may be sent (false when
    /// `roomchat_client_options_set_propagate_trace_context(options, false)`:
    /// `traceparent`, `tracestate` and `baggage` set now are dropped anyway).
    pub propagate_trace_context: bool,
    /// What happened since the previous report of the call, oldest first: at
    /// an attempt's start, its rate-limit waits and budget failures; at an
    /// attempt's end, the retry that follows; at the call's end, those before
    /// an attempt that never started. NULL when `event_count` is 0.
    pub events: *const *const roomchat_call_event,
    /// How many `events`.
    pub event_count: usize,
}

/// The headers of one attempt, given to the observer callback at the
/// attempt's start: set them with `roomchat_attempt_headers_set`. Valid only
/// during that callback; never freed by you.
#[allow(non_camel_case_types)]
pub struct roomchat_attempt_headers {
    headers: *mut RequestHeaders,
}

/// Receives each report of each call of a client (see `roomchat_observation`):
/// `user_data` as given to `roomchat_client_options_set_observer_with_destroy`
/// (or `roomchat_client_options_set_observer`), the report, and at an attempt's
/// start the attempt's headers (NULL for the other reports). Both pointers are
/// valid only during the call. For each call, in order: an attempt's start and
/// end for each attempt, then the call's end, all on the thread making the
/// call (an iterator's step included), never while a request is on the wire
/// and with no lock of the client held; a call's reports never interleave with
/// another call's on the same thread. Calls on several threads report at
/// once: it must be thread-safe, quick, must not call the same client, and
/// must not unwind (a C++ exception, `longjmp`) out of the call. It is never
/// called once its destroy notifier has run.
#[allow(non_camel_case_types)]
pub type roomchat_observer_callback = Option<
    extern "C" fn(
        user_data: *mut c_void,
        observation: *const roomchat_observation,
        headers: *mut roomchat_attempt_headers,
    ),
>;

/// The callback and its data. Shared (in an `Arc`) by the options, every
/// client, view and iterator made from them, and each call in flight; the
/// last of them to go drops it, and with it `data`.
struct ObserverCallback {
    callback:
        extern "C" fn(*mut c_void, *const roomchat_observation, *mut roomchat_attempt_headers),
    data: UserData,
}

// SAFETY: the caller promises (documented) that the callback may be called, and
// the destroy notifier called, from any thread with this `user_data`.
unsafe impl Send for ObserverCallback {}
// SAFETY: as above: concurrent calls are the callback's to handle.
unsafe impl Sync for ObserverCallback {}

/// Numbers the calls of every client in the process.
static NEXT_CALL_ID: AtomicU64 = AtomicU64::new(1);

/// The observer callback as core's instrumentation.
struct ObserverInstrumentation(Arc<ObserverCallback>);

impl Instrumentation for ObserverInstrumentation {
    fn start_call(&self, call: &CallInfo<'_>) -> Option<Box<dyn CallObserver>> {
        // A bug here must neither fail the call nor unwind through core.
        guard_value(None, || {
            Some(Box::new(ObservedCall::new(Arc::clone(&self.0), call)) as Box<dyn CallObserver>)
        })
    }
}

/// One call's observer: the texts that stay the same for all its reports,
/// made once.
struct ObservedCall {
    callback: Arc<ObserverCallback>,
    call_id: u64,
    operation: CString,
    method: CString,
    url_template: Option<CString>,
    url_full: CString,
    url_scheme: CString,
    server_address: CString,
    protocol_version: CString,
    call_start_unix_ns: u64,
}

impl ObservedCall {
    fn new(callback: Arc<ObserverCallback>, call: &CallInfo<'_>) -> ObservedCall {
        let text = |s: &str| c_string(s.to_owned());
        ObservedCall {
            callback,
            call_id: NEXT_CALL_ID.fetch_add(1, Ordering::Relaxed),
            operation: text(call.operation),
            method: text(call.method),
            url_template: call.url_template.map(text),
            url_full: text(call.url_full()),
            url_scheme: text(call.url_scheme),
            server_address: text(call.server_address),
            protocol_version: text(call.protocol_version),
            call_start_unix_ns: unix_ns(call.started_at),
        }
    }

    /// A report with the call's fields filled in and nothing else.
    fn observation(
        &self,
        call: &CallInfo<'_>,
        kind: roomchat_observation_kind,
    ) -> roomchat_observation {
        roomchat_observation {
            struct_size: std::mem::size_of::<roomchat_observation>(),
            kind,
            attempt: 0,
            call_id: self.call_id,
            client_id: call.client_id,
            operation: self.operation.as_ptr(),
            method: self.method.as_ptr(),
            url_template: self
                .url_template
                .as_ref()
                .map_or(ptr::null(), |t| t.as_ptr()),
            url_full: self.url_full.as_ptr(),
            url_scheme: self.url_scheme.as_ptr(),
            server_address: self.server_address.as_ptr(),
            protocol_version: self.protocol_version.as_ptr(),
            server_port: call.server_port,
            status: 0,
            resend_count: 0,
            call_start_unix_ns: self.call_start_unix_ns,
            start_unix_ns: 0,
            end_unix_ns: 0,
            duration_ns: 0,
            rate_limit_wait_ns: 0,
            retry_wait_ns: 0,
            error_kind: roomchat_result::Ok,
            error_type: ptr::null(),
            retry_reason: ptr::null(),
            propagate_trace_context: false,
            events: ptr::null(),
            event_count: 0,
        }
    }

    /// Hands `observation` (with `events`) to the callback. A panic (of a Rust
    /// callback) must not unwind into core, nor a C callback's failure.
    fn report(
        &self,
        mut observation: roomchat_observation,
        events: &Events,
        headers: Option<&mut RequestHeaders>,
    ) {
        if !events.pointers.is_empty() {
            observation.events = events.pointers.as_ptr();
            observation.event_count = events.pointers.len();
        }
        let mut handle = headers.map(|headers| roomchat_attempt_headers { headers });
        let handle_ptr = handle.as_mut().map_or(ptr::null_mut(), |h| h as *mut _);
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            (self.callback.callback)(self.callback.data.pointer, &observation, handle_ptr)
        }));
    }
}

impl CallObserver for ObservedCall {
    fn attempt_start(
        &mut self,
        call: &CallInfo<'_>,
        attempt: &AttemptStart<'_>,
        headers: &mut RequestHeaders,
    ) {
        guard_value((), || {
            let mut observation = self.observation(call, roomchat_observation_kind::AttemptStart);
            observation.attempt = attempt.attempt;
            observation.resend_count = attempt.resend_count;
            observation.start_unix_ns = unix_ns(attempt.started_at);
            observation.propagate_trace_context = attempt.propagate_trace_context;
            self.report(observation, &Events::new(attempt.events), Some(headers));
        })
    }

    fn attempt_end(&mut self, call: &CallInfo<'_>, attempt: &AttemptEnd<'_>) {
        guard_value((), || {
            let mut observation = self.observation(call, roomchat_observation_kind::AttemptEnd);
            observation.attempt = attempt.attempt;
            observation.resend_count = attempt.resend_count;
            observation.start_unix_ns = unix_ns(attempt.started_at);
            observation.end_unix_ns = unix_ns(attempt.ended_at);
            observation.duration_ns = nanos(attempt.duration);
            observation.status = attempt.status.unwrap_or(0);
            let error = ErrorTexts::new(attempt.error);
            error.fill(&mut observation.error_kind, &mut observation.error_type);
            observation.retry_reason = attempt
                .retry()
                .and_then(|retry| retry.retry_reason)
                .map_or(ptr::null(), reason_text);
            self.report(observation, &Events::new(attempt.events), None);
        })
    }

    fn call_end(&mut self, call: &CallInfo<'_>, end: &CallEnd<'_>) {
        guard_value((), || {
            let mut observation = self.observation(call, roomchat_observation_kind::CallEnd);
            observation.attempt = end.attempts;
            observation.resend_count = end.attempts.saturating_sub(1);
            observation.start_unix_ns = self.call_start_unix_ns;
            observation.end_unix_ns = unix_ns(end.ended_at);
            observation.duration_ns = nanos(end.duration);
            observation.rate_limit_wait_ns = nanos(end.rate_limit_wait);
            observation.retry_wait_ns = nanos(end.retry_wait);
            observation.status = end.status.unwrap_or(0);
            let error = ErrorTexts::new(end.error);
            error.fill(&mut observation.error_kind, &mut observation.error_type);
            self.report(observation, &Events::new(end.events), None);
        })
    }
}

/// An error's code and texts as C reads them.
struct ErrorTexts {
    kind: roomchat_result,
    name: Option<CString>,
    message: Option<CString>,
}

impl ErrorTexts {
    fn new(error: Option<&roomchat::Error>) -> ErrorTexts {
        match error {
            None => ErrorTexts {
                kind: roomchat_result::Ok,
                name: None,
                message: None,
            },
            Some(e) => ErrorTexts {
                kind: roomchat_result::from(e.kind()),
                name: Some(c_string(e.kind().name().to_owned())),
                message: Some(c_string(e.message().to_owned())),
            },
        }
    }

    fn fill(&self, kind: &mut roomchat_result, name: &mut *const c_char) {
        *kind = self.kind;
        *name = self.name.as_ref().map_or(ptr::null(), |n| n.as_ptr());
    }
}

/// A report's events as C reads them: the records, their texts, and the
/// array of pointers to the records (built last, once the records stay put).
struct Events {
    _texts: Vec<ErrorTexts>,
    _records: Vec<roomchat_call_event>,
    pointers: Vec<*const roomchat_call_event>,
}

impl Events {
    fn new(events: &[CallEvent]) -> Events {
        if events.is_empty() {
            return Events {
                _texts: Vec::new(),
                _records: Vec::new(),
                pointers: Vec::new(),
            };
        }
        let texts: Vec<ErrorTexts> = events
            .iter()
            .map(|e| ErrorTexts::new(e.error.as_ref()))
            .collect();
        let records: Vec<roomchat_call_event> = events
            .iter()
            .zip(&texts)
            .map(|(event, error)| {
                let mut record = roomchat_call_event {
                    struct_size: std::mem::size_of::<roomchat_call_event>(),
                    kind: match event.kind {
                        CallEventKind::RateLimitWait => roomchat_call_event_kind::RateLimitWait,
                        CallEventKind::BudgetDegraded => roomchat_call_event_kind::BudgetDegraded,
                        _ => roomchat_call_event_kind::Retry,
                    },
                    attempt: event.attempt,
                    name: event_name(event.kind),
                    at_unix_ns: unix_ns(event.at),
                    wait_ns: nanos(event.wait),
                    retry_reason: event.retry_reason.map_or(ptr::null(), reason_text),
                    status: event.status.unwrap_or(0),
                    error_kind: roomchat_result::Ok,
                    error_type: ptr::null(),
                    error_message: error.message.as_ref().map_or(ptr::null(), |m| m.as_ptr()),
                };
                error.fill(&mut record.error_kind, &mut record.error_type);
                record
            })
            .collect();
        let pointers = records.iter().map(|r| r as *const _).collect();
        Events {
            _texts: texts,
            _records: records,
            pointers,
        }
    }
}

/// An event's name, static and NUL-terminated.
fn event_name(kind: CallEventKind) -> *const c_char {
    let name: &'static [u8] = match kind {
        CallEventKind::RateLimitWait => b"roomchat.rate_limit.wait\0",
        CallEventKind::BudgetDegraded => b"roomchat.budget.degraded\0",
        _ => b"roomchat.retry\0",
    };
    debug_assert_eq!(&name[..name.len() - 1], kind.event_name().as_bytes());
    name.as_ptr().cast()
}

/// A retry's reason as the metrics name it, static and NUL-terminated.
fn reason_text(reason: RetryReason) -> *const c_char {
    let text: &'static [u8] = match reason {
        RetryReason::RateLimited => b"429\0",
        RetryReason::ServerError => b"5xx\0",
        RetryReason::Connection => b"connection\0",
        RetryReason::Timeout => b"timeout\0",
        _ => b"other\0",
    };
    debug_assert_eq!(&text[..text.len() - 1], reason.as_str().as_bytes());
    text.as_ptr().cast()
}

fn nanos(d: Duration) -> u64 {
    d.as_nanos().min(u128::from(u64::MAX)) as u64
}

fn unix_ns(at: SystemTime) -> u64 {
    at.duration_since(UNIX_EPOCH).map_or(0, nanos)
}

// ---- the setters ------------------------------------------------------------------------

/// Sends each report of each call of the clients made from `options` to
/// `callback` with `user_data` (see `roomchat_observer_callback` and
/// `roomchat_observation`): an attempt's start (where `headers` may be set),
/// its end, and the call's end. NULL `callback` turns it off. `user_data`
/// stays the caller's (this is `roomchat_client_options_set_observer_with_destroy`
/// with a NULL `destroy`), so it must stay valid until every client, view and
/// iterator made from the options is freed.
#[no_mangle]
pub extern "C" fn roomchat_client_options_set_observer(
    options: *mut roomchat_client_options,
    callback: roomchat_observer_callback,
    user_data: *mut c_void,
) -> roomchat_result {
    roomchat_client_options_set_observer_with_destroy(options, callback, user_data, None)
}

/// `roomchat_client_options_set_observer` with the library owning `user_data`,
/// exactly as `roomchat_client_options_set_log_callback_with_destroy` does:
/// `destroy(user_data)` (NULL `destroy`: nothing to call) runs exactly once,
/// when the library no longer holds the callback, and `callback` is never
/// called after that: inside whichever of `roomchat_client_options_free`,
/// `roomchat_client_free` and an iterator's `_free` lets go of the last hold
/// of the options and of every client, view and iterator made from them, on
/// that call's thread (so `destroy` must be callable from any thread); inside
/// a later call of either setter that replaces the callback when nothing else
/// holds it; or before this call returns when the options do not keep the
/// callback (NULL `callback`, NULL `options`). It must not unwind out of the call.
#[no_mangle]
pub extern "C" fn roomchat_client_options_set_observer_with_destroy(
    options: *mut roomchat_client_options,
    callback: roomchat_observer_callback,
    user_data: *mut c_void,
    destroy: roomchat_destroy_notify,
) -> roomchat_result {
    // Owned before anything can fail or panic: wherever `data` is dropped,
    // `destroy` runs exactly once (as for the log callback).
    let data = UserData {
        pointer: user_data,
        destroy,
    };
    guard(ptr::null_mut(), move || {
        let options = mut_arg(options, "options")?;
        options.set_instrumentation(callback.map(|callback| {
            Arc::new(ObserverInstrumentation(Arc::new(ObserverCallback {
                callback,
                data,
            }))) as Arc<dyn Instrumentation>
        }));
        Ok(())
    })
}

/// Puts the header `name: value` (both copied) on every request of the
/// clients made from `options`, replacing an earlier one of the same name (any
/// case); an observer's header of the same name wins for its attempt. A name
/// that is not an HTTP token or is the client's own (`Host`, `Content-Length`,
/// `Content-Type`, `User-Agent`, `Accept`, `Accept-Encoding`, `Authorization`,
/// …), or a value with a control character (CR, LF) or a character beyond
/// ASCII, is refused: `ROOMCHAT_RESULT_VALIDATION`, nothing kept, and
/// `roomchat_client_new` then fails with `ROOMCHAT_RESULT_INVALID_ARGUMENT`
/// and the reason (a header is never silently left out). NULL or non-UTF-8
/// text: `ROOMCHAT_RESULT_INVALID_ARGUMENT`, recorded the same way.
#[no_mangle]
pub extern "C" fn roomchat_client_options_add_header(
    options: *mut roomchat_client_options,
    name: *const c_char,
    value: *const c_char,
) -> roomchat_result {
    let mut code = roomchat_result::Ok;
    let guarded = guard(ptr::null_mut(), || {
        let options = mut_arg(options, "options")?;
        match checked_header(name, value) {
            Ok((name, value)) => options.add_header(&name, &value),
            Err(failure) => {
                code = failure.code();
                options.record_refused("header", failure);
            }
        }
        Ok(())
    });
    if guarded == roomchat_result::Ok {
        code
    } else {
        guarded
    }
}

/// A header's name and value from C, as core checks them.
fn checked_header(name: *const c_char, value: *const c_char) -> Result<(String, String), Failure> {
    let name = text_arg(name, "name")?;
    let value = text_arg(value, "value")?;
    RequestHeaders::new().insert(name, value)?;
    Ok((name.to_owned(), value.to_owned()))
}

/// Whether the clients made from `options` send trace context (default true).
/// With `false`, no request carries `traceparent`, `tracestate` or `baggage`,
/// whoever set it (`roomchat_client_options_add_header` or the observer's
/// `roomchat_attempt_headers_set`): for teams that send no trace ids to a
/// third party. The observer is called as before (its attempt-start reports
/// say `propagate_trace_context` false).
#[no_mangle]
pub extern "C" fn roomchat_client_options_set_propagate_trace_context(
    options: *mut roomchat_client_options,
    propagate: bool,
) -> roomchat_result {
    guard(ptr::null_mut(), || {
        mut_arg(options, "options")?.set_propagate_trace_context(propagate);
        Ok(())
    })
}

/// Sets the header `name: value` (both copied) on the attempt whose start is
/// being reported, over a client's header of the same name (any case) and an
/// earlier call's. `headers` is the observer callback's, valid during that
/// callback only. Refused as by `roomchat_client_options_add_header`:
/// `ROOMCHAT_RESULT_VALIDATION` with the reason in `*err_out` (when not NULL),
/// and nothing is changed; NULL `headers`, `name` or `value`, or non-UTF-8
/// text: `ROOMCHAT_RESULT_INVALID_ARGUMENT`. A `traceparent`, `tracestate` or
/// `baggage` set while the client does not propagate trace context is
/// accepted and dropped.
#[no_mangle]
pub extern "C" fn roomchat_attempt_headers_set(
    headers: *mut roomchat_attempt_headers,
    name: *const c_char,
    value: *const c_char,
    err_out: *mut *mut roomchat_error,
) -> roomchat_result {
    guard(err_out, || {
        let handle = mut_arg(headers, "headers")?;
        // SAFETY: the handle lives only during the callback, while core's headers do (documented).
        let headers = unsafe { handle.headers.as_mut() }
            .ok_or_else(|| Failure::invalid("headers is not an attempt's"))?;
        headers.insert(text_arg(name, "name")?, text_arg(value, "value")?)?;
        Ok(())
    })
}
