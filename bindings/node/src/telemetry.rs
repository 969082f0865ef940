//! What the JS layer's OpenTelemetry (`telemetry.js`) learns of each call,
//! through core's instrumentation (`roomchat::instrument`).
//!
//! The spans and metrics are the application's JS objects, so they are made on
//! the JS thread; core's calls run on the pool's threads. A call the JS layer
//! observes runs inside a [`CallScope`] whose headers are what the JS layer
//! injected at dispatch (the `traceparent` of the attempt span it made there,
//! [`PREMADE`]) and whose observer writes down each attempt's and the call's
//! timings, outcome and events. That record goes back with the call's outcome,
//! in the same message: the JS layer ends the spans with core's times and
//! records the metrics before it settles the promise.
//!
//! An attempt whose span the JS layer could not make at dispatch (a retry, the
//! first attempt of an iterator's page, or the first attempt after a wait for
//! the rate limit, whose span starts after the wait) is made through the hook
//! ([`HOOK`]): the pool thread asks the JS thread for it, through a
//! thread-safe function, and waits for the headers to send (the span's
//! context must be on the wire). That costs one round trip through the event
//! loop, so it is kept to what the dispatch cannot know.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc::{sync_channel, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use roomchat::instrument::{
    AttemptEnd, AttemptStart, CallEnd, CallEvent, CallEventKind, CallInfo, CallObserver, CallScope,
    Instrumentation, RequestHeaders,
};
use serde::Serialize;

use crate::Payload;

/// The JS layer made the span of the job's first call and of its first
/// attempt at dispatch; their context is in the scope's headers.
pub const PREMADE: u32 = 1;
/// Attempts whose span the JS layer has not made are made through the hook,
/// before they are sent.
pub const HOOK: u32 = 2;

/// How often a pool thread waiting for the hook's answer checks that the JS
/// environment is still there (a worker thread that ended never answers).
const HOOK_POLL: Duration = Duration::from_millis(200);

/// A question to the JS thread: the headers of an attempt about to be sent.
pub struct Hop {
    id: u32,
    payload: String,
}

/// The hook's channel of one JS environment: `(callId, what)` → the headers,
/// flattened (`[name, value, …]`), or `null`. Weak, as the outcomes' channel:
/// a call waiting on it is in flight, and that keeps the loop alive.
pub type HookTsfn =
    ThreadsafeFunction<Hop, Option<Vec<String>>, FnArgs<(u32, Payload)>, Status, false, true, 0>;

/// The hook's channel: `callback(id, what)` returns the attempt's headers.
pub fn hook_channel(
    callback: Function<FnArgs<(u32, Payload)>, Option<Vec<String>>>,
) -> Result<HookTsfn> {
    callback
        .build_threadsafe_function::<Hop>()
        .weak::<true>()
        .callee_handled::<false>()
        .build_callback(
            |ctx: napi::threadsafe_function::ThreadsafeCallContext<Hop>| {
                Ok(FnArgs::from((ctx.value.id, Payload(ctx.value.payload))))
            },
        )
}

/// The observation of one job (a call, or an iterator's step, which makes a
/// call or none): run it with [`JobTrace::run`], then take its record.
pub struct JobTrace {
    shared: Arc<JobShared>,
    /// Whether its calls are observed (else the scope only sends `headers`).
    observe: bool,
    /// Flattened `[name, value, …]`: the scope's headers.
    headers: Vec<String>,
}

struct JobShared {
    /// The job's call id (the hook names it).
    id: u32,
    flags: u32,
    hook: Arc<HookTsfn>,
    /// The JSON record of each call made, in order.
    calls: Mutex<Vec<String>>,
    /// Calls started so far.
    started: AtomicU32,
}

impl JobTrace {
    /// The job `id`'s: observed when `flags` are given ([`PREMADE`], [`HOOK`]),
    /// its attempts sending `headers` (flattened `[name, value, …]`).
    pub fn new(
        id: u32,
        flags: Option<u32>,
        headers: Option<Vec<String>>,
        hook: &Arc<HookTsfn>,
    ) -> Self {
        JobTrace {
            observe: flags.is_some(),
            shared: Arc::new(JobShared {
                id,
                flags: flags.unwrap_or(0),
                hook: Arc::clone(hook),
                calls: Mutex::new(Vec::new()),
                started: AtomicU32::new(0),
            }),
            headers: headers.unwrap_or_default(),
        }
    }

    /// Runs `f` (on the pool thread) with the job's scope around its calls.
    pub fn run<R>(&self, f: impl FnOnce() -> R) -> R {
        let mut headers = RequestHeaders::new();
        for pair in self.headers.chunks_exact(2) {
            // A propagator's header the client refuses is left out, as core's
            // own OpenTelemetry layer does, rather than failing the call.
            let _ = headers.insert(&pair[0], &pair[1]);
        }
        let mut scope = CallScope::new().headers(headers);
        if self.observe {
            scope = scope.instrumentation(Arc::new(Observe(Arc::clone(&self.shared))));
        }
        scope.run(f)
    }

    /// The JSON list of the records of the calls made, or `None` for none.
    pub fn record(&self) -> Option<String> {
        let calls = self.shared.calls.lock().unwrap_or_else(|p| p.into_inner());
        (!calls.is_empty()).then(|| format!("[{}]", calls.join(",")))
    }
}

struct Observe(Arc<JobShared>);

impl Instrumentation for Observe {
    fn start_call(&self, call: &CallInfo<'_>) -> Option<Box<dyn CallObserver>> {
        let index = self.0.started.fetch_add(1, Ordering::Relaxed);
        Some(Box::new(NodeCall {
            job: Arc::clone(&self.0),
            index,
            premade: index == 0 && self.0.flags & PREMADE != 0,
            common: Common::of(call),
            attempts: Vec::new(),
            events: Vec::new(),
        }))
    }
}

/// Wall-clock time as milliseconds since the epoch (what the OpenTelemetry
/// API takes as a time): sub-microsecond exact at today's dates.
fn millis(at: SystemTime) -> f64 {
    at.duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
}

/// The wall clock now, as [`millis`] gives it: the start of the spans the JS
/// layer makes at dispatch, on the clock core's own times are read from.
pub fn now_millis() -> f64 {
    millis(SystemTime::now())
}

/// The attributes every attempt span of a call starts with (the HTTP client
/// conventions'); `http.request.resend_count` is added per attempt.
#[derive(Serialize)]
struct AttemptAttributes {
    #[serde(rename = "http.request.method")]
    method: &'static str,
    #[serde(rename = "server.address")]
    server_address: String,
    #[serde(rename = "server.port")]
    server_port: u16,
    #[serde(rename = "url.full")]
    url_full: String,
    #[serde(rename = "network.protocol.version")]
    protocol_version: &'static str,
    #[serde(rename = "url.template", skip_serializing_if = "Option::is_none")]
    url_template: Option<String>,
}

/// What is the same for every attempt of a call.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Common {
    operation: &'static str,
    /// The call span's name.
    name: String,
    /// Each attempt span's name.
    attempt_name: String,
    /// When the call started.
    start: f64,
    attributes: AttemptAttributes,
}

impl Common {
    fn of(call: &CallInfo<'_>) -> Common {
        Common {
            operation: call.operation,
            name: call.call_span_name(),
            attempt_name: call.attempt_span_name(),
            start: millis(call.started_at),
            attributes: AttemptAttributes {
                method: call.request_method(),
                server_address: call.server_address.to_owned(),
                server_port: call.server_port,
                url_full: call.url_full().to_owned(),
                protocol_version: call.protocol_version,
                url_template: call.url_template.map(str::to_owned),
            },
        }
    }
}

/// The hook's question: make the span of attempt `attempt` of the job's call
/// `index` (and the call's span, if it has none yet).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct HopQuestion<'a> {
    index: u32,
    attempt: u32,
    start: f64,
    call: &'a Common,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct AttemptRecord {
    attempt: u32,
    start: f64,
    end: f64,
    /// Seconds, by the monotonic clock.
    duration: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<u16>,
    /// `error.type`: the status as text for an answer (`"429"`), else the kind.
    #[serde(skip_serializing_if = "Option::is_none")]
    error_type: Option<&'static str>,
    /// `roomchat.error.kind`: roomchat's kind of the failure (`rate_limited`, `timeout`, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    error_kind: Option<&'static str>,
}

/// A span event of the call, with its attributes as core's feature
/// `opentelemetry` names them.
#[derive(Serialize)]
struct EventRecord {
    name: &'static str,
    at: f64,
    attributes: EventAttributes,
}

#[derive(Serialize)]
struct EventAttributes {
    #[serde(rename = "roomchat.attempt")]
    attempt: u32,
    #[serde(
        rename = "roomchat.retry.reason",
        skip_serializing_if = "Option::is_none"
    )]
    reason: Option<&'static str>,
    #[serde(
        rename = "roomchat.wait.duration",
        skip_serializing_if = "Option::is_none"
    )]
    wait: Option<f64>,
    #[serde(
        rename = "http.response.status_code",
        skip_serializing_if = "Option::is_none"
    )]
    status: Option<u16>,
    #[serde(rename = "error.type", skip_serializing_if = "Option::is_none")]
    error_type: Option<&'static str>,
    #[serde(rename = "error.message", skip_serializing_if = "Option::is_none")]
    error_message: Option<String>,
}

/// The record of one call, as `telemetry.js` reads it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CallRecord<'a> {
    index: u32,
    #[serde(flatten)]
    common: &'a Common,
    end: f64,
    duration: f64,
    /// Attempts made (`roomchat.attempts`).
    attempts: u32,
    attempt_records: &'a [AttemptRecord],
    #[serde(skip_serializing_if = "Option::is_none")]
    error_type: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    status_description: Option<String>,
    rate_limit_wait: f64,
    retry_wait: f64,
    events: &'a [EventRecord],
}

struct NodeCall {
    job: Arc<JobShared>,
    /// The call's place among the job's calls.
    index: u32,
    /// The JS layer made this call's span and its first attempt's.
    premade: bool,
    common: Common,
    attempts: Vec<AttemptRecord>,
    events: Vec<EventRecord>,
}

impl NodeCall {
    fn record_events(&mut self, events: &[CallEvent]) {
        for event in events {
            let mut attributes = EventAttributes {
                attempt: event.attempt,
                reason: None,
                wait: None,
                status: None,
                error_type: None,
                error_message: None,
            };
            match event.kind {
                CallEventKind::RateLimitWait => attributes.wait = Some(event.wait.as_secs_f64()),
                CallEventKind::Retry => {
                    attributes.reason = Some(event.retry_reason.map_or("other", |r| r.as_str()));
                    attributes.wait = Some(event.wait.as_secs_f64());
                    attributes.status = event.status;
                }
                CallEventKind::BudgetDegraded => {
                    if let Some(error) = &event.error {
                        attributes.error_type = Some(error.kind().name());
                        attributes.error_message = Some(error.message().to_owned());
                    }
                }
                // A kind core adds later: its name, and the attempt.
                _ => {}
            }
            self.events.push(EventRecord {
                name: event.kind.event_name(),
                at: millis(event.at),
                attributes,
            });
        }
    }

    /// Asks the JS thread for the headers of attempt `attempt`, starting at
    /// `start`, and waits for them; `None` when the JS layer has none or its
    /// environment is gone.
    fn hop(&self, attempt: u32, start: SystemTime) -> Option<Vec<String>> {
        let question = HopQuestion {
            index: self.index,
            attempt,
            start: millis(start),
            call: &self.common,
        };
        let payload = serde_json::to_string(&question).ok()?;
        let (answer, answered) = sync_channel(1);
        let status = self.job.hook.call_with_return_value(
            Hop {
                id: self.job.id,
                payload,
            },
            ThreadsafeFunctionCallMode::NonBlocking,
            move |headers: Result<Option<Vec<String>>>, _env| {
                // A hook that threw: the attempt goes without.
                let _ = answer.send(headers.ok().flatten());
                Ok(())
            },
        );
        if status != Status::Ok {
            return None;
        }
        loop {
            match answered.recv_timeout(HOOK_POLL) {
                Ok(headers) => return headers,
                Err(RecvTimeoutError::Disconnected) => return None,
                // The environment ended with the question queued: its data is
                // never freed, so the channel never closes.
                Err(RecvTimeoutError::Timeout) if self.job.hook.aborted() => return None,
                Err(RecvTimeoutError::Timeout) => {}
            }
        }
    }
}

impl CallObserver for NodeCall {
    fn attempt_start(
        &mut self,
        _call: &CallInfo<'_>,
        attempt: &AttemptStart<'_>,
        headers: &mut RequestHeaders,
    ) {
        self.record_events(attempt.events);
        // The span made at dispatch stands for the first attempt unless the
        // call waited for the rate limit first (it would hold the wait).
        let premade = self.premade
            && attempt.attempt == 1
            && !attempt
                .events
                .iter()
                .any(|e| e.kind == CallEventKind::RateLimitWait);
        // The hook also makes the span (and counts an iterator's page in
        // flight) when no trace context is sent: the JS layer then answers
        // no headers.
        if self.job.flags & HOOK != 0 && !premade {
            let answer = self.hop(attempt.attempt, attempt.started_at);
            if attempt.propagate_trace_context {
                for pair in answer.unwrap_or_default().chunks_exact(2) {
                    let _ = headers.insert(&pair[0], &pair[1]);
                }
            }
        }
    }

    fn attempt_end(&mut self, _call: &CallInfo<'_>, attempt: &AttemptEnd<'_>) {
        self.attempts.push(AttemptRecord {
            attempt: attempt.attempt,
            start: millis(attempt.started_at),
            end: millis(attempt.ended_at),
            duration: attempt.duration.as_secs_f64(),
            status: attempt.status,
            error_type: attempt.error_type(),
            error_kind: attempt.error_kind(),
        });
        self.record_events(attempt.events);
    }

    fn call_end(&mut self, _call: &CallInfo<'_>, end: &CallEnd<'_>) {
        self.record_events(end.events);
        let record = CallRecord {
            index: self.index,
            common: &self.common,
            end: millis(end.ended_at),
            duration: end.duration.as_secs_f64(),
            attempts: end.attempts,
            attempt_records: &self.attempts,
            error_type: end.error_type(),
            status_description: end.status_description(),
            rate_limit_wait: end.rate_limit_wait.as_secs_f64(),
            retry_wait: end.retry_wait.as_secs_f64(),
            events: &self.events,
        };
        if let Ok(json) = serde_json::to_string(&record) {
            self.job
                .calls
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(json);
        }
    }
}
