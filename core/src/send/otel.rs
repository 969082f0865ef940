//! The cargo feature `opentelemetry`: each call a span, each attempt a CLIENT
//! span under it, the HTTP client metrics, and W3C trace context on every
//! attempt, through the `opentelemetry` API (no SDK: the application brings
//! its own, or nothing is recorded).
//!
//! Built on [`crate::instrument`], as the other languages' layers are: one
//! [`Instrumentation`] whose observer turns core's timings into spans.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{Arc, Mutex, PoisonError, RwLock, Weak};
use std::time::Duration;

use once_cell::sync::Lazy;
use opentelemetry::global::{self, BoxedTracer};
use opentelemetry::metrics::{Counter, Histogram, Meter, MeterProvider, UpDownCounter};
use opentelemetry::propagation::Injector;
use opentelemetry::trace::{
    Span, SpanBuilder, SpanKind, Status, TraceContextExt, Tracer, TracerProvider,
};
use opentelemetry::{Context, InstrumentationScope, KeyValue, StringValue, Value};

use crate::error::Error;
use crate::send::instrument::{
    AttemptEnd, AttemptStart, CallEnd, CallEvent, CallEventKind, CallInfo, CallObserver,
    Instrumentation, RequestHeaders,
};
use crate::send::observed::ClientFacts;
use crate::send::telemetry_names::{
    ATTR_ERROR_MESSAGE, ATTR_ERROR_TYPE, ATTR_HTTP_REQUEST_METHOD, ATTR_HTTP_REQUEST_RESEND_COUNT,
    ATTR_HTTP_RESPONSE_STATUS_CODE, ATTR_NETWORK_PROTOCOL_VERSION, ATTR_ROOMCHAT_ATTEMPT,
    ATTR_ROOMCHAT_ATTEMPTS, ATTR_ROOMCHAT_CLIENT_ID, ATTR_ROOMCHAT_ERROR_KIND,
    ATTR_ROOMCHAT_OPERATION, ATTR_ROOMCHAT_RATE_LIMIT_WAIT_DURATION, ATTR_ROOMCHAT_RETRY_REASON,
    ATTR_ROOMCHAT_RETRY_WAIT_DURATION, ATTR_ROOMCHAT_WAIT_DURATION, ATTR_SERVER_ADDRESS,
    ATTR_SERVER_PORT, ATTR_URL_FULL, ATTR_URL_TEMPLATE, METRIC_HTTP_CLIENT_REQUEST_DURATION,
    METRIC_ROOMCHAT_BUDGET_DEGRADED, METRIC_ROOMCHAT_CLIENT_ACTIVE_CALLS,
    METRIC_ROOMCHAT_CLIENT_CALL_DURATION, METRIC_ROOMCHAT_CLIENT_RETRIES,
    METRIC_ROOMCHAT_RATE_LIMIT_REMAINING, METRIC_ROOMCHAT_RATE_LIMIT_WAIT_DURATION,
};

/// The histogram buckets of the HTTP client conventions, in seconds
/// (`http.client.request.duration`); also `roomchat.client.call.duration`'s.
pub(crate) const DURATION_BUCKETS: [f64; 14] = [
    0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
];

/// `roomchat.rate_limit.wait.duration`'s buckets, in seconds: a wait lasts up
/// to the rate limit's window (60 s by default) or a 429's hold.
pub(crate) const WAIT_BUCKETS: [f64; 14] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0,
];

/// What a client gives the budget gauge: its budget's free slots now.
pub(crate) trait RemainingSlots: Send + Sync {
    fn remaining(&self) -> u64;
}

/// The spans and metrics of the clients built with it (cargo feature
/// `opentelemetry`). Every client uses [`OpenTelemetry::global`] unless its
/// builder is given another
/// ([`ClientBuilder::opentelemetry`](crate::ClientBuilder::opentelemetry)).
///
/// **Spans.** A call is a span named `roomchat {operation}` (`roomchat
/// create_chat_room`), of kind INTERNAL, child of the [`Context`] current on
/// the thread when the call starts (a page of an iterator: when `next()` is
/// called). Each attempt is a span of kind CLIENT under it, named `{method}
/// {url.template}` (`POST /consumer/api/v1/chatroom`), with the stable HTTP
/// client conventions' attributes, the start and end core measured, and
/// status ERROR when it failed (any 4xx or 5xx, or no answer). The call's
/// span carries `roomchat.operation`, `roomchat.attempts`,
/// `roomchat.rate_limit.wait.duration` and `roomchat.retry.wait.duration`
/// (seconds), the events `roomchat.retry`, `roomchat.rate_limit.wait` and
/// `roomchat.budget.degraded`, and `error.type` with status ERROR when the
/// call fails.
///
/// **Trace context.** Each attempt's span context is injected into its
/// request's headers by the global text-map propagator
/// ([`opentelemetry::global::set_text_map_propagator`]): `traceparent` and
/// `tracestate` with the W3C propagator, `baggage` with the baggage one.
/// [`ClientBuilder::propagate_trace_context`](crate::ClientBuilder::propagate_trace_context)`(false)`
/// turns that off.
///
/// **Metrics** (meter `roomchat`): `http.client.request.duration` (s, per
/// attempt), `roomchat.client.call.duration` (s, per call),
/// `roomchat.rate_limit.wait.duration` (s, per wait), `roomchat.client.retries`
/// (by `roomchat.retry.reason`: `429`, `5xx`, `connection`, `timeout`,
/// `other`), `roomchat.budget.degraded`, `roomchat.client.active_calls`
/// (up-down counter) and `roomchat.rate_limit.remaining` (observable gauge,
/// one series per client by `roomchat.client.id`). Their attributes name the
/// operation and the path's template, never an id.
///
/// The crate's README has the table of every span attribute and metric.
#[derive(Clone)]
pub struct OpenTelemetry {
    /// `None`: turned off.
    shared: Option<Arc<Shared>>,
}

impl std::fmt::Debug for OpenTelemetry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = match self.shared.as_deref().map(|s| &s.providers) {
            None => "disabled",
            Some(Providers::Global { .. }) => "global",
            Some(Providers::Explicit { .. }) => "explicit providers",
        };
        f.debug_tuple("OpenTelemetry").field(&what).finish()
    }
}

struct Shared {
    providers: Providers,
    /// The clients whose budgets the gauge reports.
    clients: Arc<Mutex<Vec<Registered>>>,
}

enum Providers {
    /// The global providers as they are at each call: the meter provider's
    /// instruments, made once per provider (the gauge's callback is
    /// registered once with each).
    Global {
        metrics: Mutex<Option<(GlobalMeterProvider, Arc<Metrics>)>>,
    },
    Explicit {
        tracer: Arc<BoxedTracer>,
        metrics: Arc<Metrics>,
    },
}

/// What `opentelemetry::global::meter_provider` gives.
type GlobalMeterProvider = Arc<dyn MeterProvider + Send + Sync>;

/// A client the gauge reports.
struct Registered {
    client_id: u64,
    server_address: StringValue,
    slots: Weak<dyn RemainingSlots>,
}

/// The instrumentation scope of every span and instrument: `roomchat`, this crate's version.
fn scope() -> InstrumentationScope {
    static SCOPE: Lazy<InstrumentationScope> = Lazy::new(|| {
        InstrumentationScope::builder("roomchat")
            .with_version(crate::VERSION)
            .build()
    });
    SCOPE.clone()
}

impl OpenTelemetry {
    /// Through the application's global providers
    /// ([`opentelemetry::global::set_tracer_provider`],
    /// [`set_meter_provider`](opentelemetry::global::set_meter_provider)) and
    /// propagator, as they are when each call starts: with none set, nothing
    /// is recorded and nothing is sent. Every client's default.
    pub fn global() -> OpenTelemetry {
        static GLOBAL: Lazy<OpenTelemetry> = Lazy::new(|| OpenTelemetry {
            shared: Some(Arc::new(Shared {
                providers: Providers::Global {
                    metrics: Mutex::new(None),
                },
                clients: Arc::default(),
            })),
        });
        GLOBAL.clone()
    }

    /// Through these providers instead of the global ones (trace context is
    /// still injected by the global propagator).
    pub fn with_providers<T, S, M>(tracer_provider: &T, meter_provider: &M) -> OpenTelemetry
    where
        T: TracerProvider,
        T::Tracer: Tracer<Span = S> + Send + Sync + 'static,
        S: Span + Send + Sync + 'static,
        M: MeterProvider,
    {
        let clients = Arc::default();
        let tracer = Arc::new(BoxedTracer::new(Box::new(
            tracer_provider.tracer_with_scope(scope()),
        )));
        let metrics = Arc::new(Metrics::new(
            &meter_provider.meter_with_scope(scope()),
            &clients,
            records(meter_provider),
        ));
        OpenTelemetry {
            shared: Some(Arc::new(Shared {
                providers: Providers::Explicit { tracer, metrics },
                clients,
            })),
        }
    }

    /// No spans, no metrics, no trace context from this feature.
    pub fn disabled() -> OpenTelemetry {
        OpenTelemetry { shared: None }
    }

    /// `Some(self)` unless disabled.
    pub(crate) fn enabled(self) -> Option<OpenTelemetry> {
        self.shared.is_some().then_some(self)
    }

    /// Adds a client to the gauge of remaining budget slots (reported while it lives).
    pub(crate) fn register_client(&self, facts: &ClientFacts, slots: Weak<dyn RemainingSlots>) {
        let Some(shared) = &self.shared else { return };
        let mut clients = shared
            .clients
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        clients.retain(|c| c.slots.strong_count() > 0);
        clients.push(Registered {
            client_id: facts.client_id,
            server_address: StringValue::from(facts.server_address.clone()),
            slots,
        });
    }

    /// The tracer and instruments for a call starting now.
    fn now(shared: &Shared) -> (CallTracer, Arc<Metrics>) {
        match &shared.providers {
            Providers::Explicit { tracer, metrics } => {
                (CallTracer::Shared(tracer.clone()), metrics.clone())
            }
            Providers::Global { metrics } => {
                let tracer = global::tracer_provider().tracer_with_scope(scope());
                let provider = global::meter_provider();
                let mut cached = metrics.lock().unwrap_or_else(PoisonError::into_inner);
                let same = cached.as_ref().is_some_and(|(p, _)| {
                    std::ptr::addr_eq(Arc::as_ptr(p), Arc::as_ptr(&provider))
                });
                if !same {
                    let made = Arc::new(Metrics::new(
                        &provider.meter_with_scope(scope()),
                        &shared.clients,
                        records(&*provider),
                    ));
                    *cached = Some((provider, made));
                }
                let metrics = cached
                    .as_ref()
                    .map(|(_, m)| m.clone())
                    .unwrap_or_else(|| unreachable!("the instruments were just made"));
                (CallTracer::Own(tracer), metrics)
            }
        }
    }
}

impl Instrumentation for OpenTelemetry {
    fn start_call(&self, call: &CallInfo<'_>) -> Option<Box<dyn CallObserver>> {
        let shared = self.shared.as_deref()?;
        let (tracer, metrics) = OpenTelemetry::now(shared);
        let parent = Context::current();
        let span = tracer.build_with_context(
            SpanBuilder::from_name(call.call_span_name())
                .with_kind(SpanKind::Internal)
                .with_start_time(call.started_at)
                .with_attributes([KeyValue::new(ATTR_ROOMCHAT_OPERATION, call.operation)]),
            &parent,
        );
        // A span that records nothing and has no context to pass on (no SDK,
        // no parent): the attempts need no span either, only the propagator's
        // pass over the parent's context (its baggage).
        let traced = span.is_recording() || span.span_context().is_valid();
        // The API with no SDK (the default of every client built with the
        // feature): nothing to record and nothing a propagator would send, so
        // the call is not observed at all (the bound: +1 % per call).
        if !traced && !metrics.records && !propagates() {
            return None;
        }
        let observer = OtelCall {
            tracer,
            metrics,
            call: if traced {
                parent.with_span(span)
            } else {
                parent
            },
            traced,
            attempt: None,
            method: call.request_method(),
            server_address: Value::String(interned(call.server_address)),
            url_template: call.url_template.map(|t| Value::String(interned(t))),
        };
        observer
            .metrics
            .active_calls
            .add(1, &observer.call_attributes(call, None));
        Some(Box::new(observer))
    }
}

/// `text` as an attribute value shared by every call: the few server
/// addresses and path templates of a process, made once each (the first
/// thousand; past that, made per call).
fn interned(text: &str) -> StringValue {
    type Table = HashMap<Box<str>, StringValue, BuildHasherDefault<Fx>>;
    static TABLE: Lazy<RwLock<Table>> = Lazy::new(RwLock::default);
    if let Some(value) = TABLE
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .get(text)
    {
        return value.clone();
    }
    let value = StringValue::from(Arc::<str>::from(text));
    let mut table = TABLE.write().unwrap_or_else(PoisonError::into_inner);
    if table.len() < 1000 {
        table.insert(text.into(), value.clone());
    }
    value
}

/// A quick hash for the few short texts [`interned`] holds (not exposed to
/// anything a remote party chooses: the client's own addresses and templates).
#[derive(Default)]
struct Fx(u64);

impl Hasher for Fx {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.0 = (self.0.rotate_left(5) ^ u64::from_le_bytes(word))
                .wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// The tracer of one call: the global provider's at its start, or the explicit one.
enum CallTracer {
    Own(BoxedTracer),
    Shared(Arc<BoxedTracer>),
}

impl std::ops::Deref for CallTracer {
    type Target = BoxedTracer;
    fn deref(&self) -> &BoxedTracer {
        match self {
            CallTracer::Own(tracer) => tracer,
            CallTracer::Shared(tracer) => tracer,
        }
    }
}

/// One call's spans.
struct OtelCall {
    tracer: CallTracer,
    metrics: Arc<Metrics>,
    /// The parent's context with the call's span (when `traced`).
    call: Context,
    /// Whether the call's span records or has a context to pass on.
    traced: bool,
    /// The call's context with the attempt's span, while one is under way.
    attempt: Option<Context>,
    method: &'static str,
    server_address: Value,
    url_template: Option<Value>,
}

impl OtelCall {
    /// The attributes of the call's metrics.
    fn call_attributes(&self, call: &CallInfo<'_>, error: Option<&Error>) -> Attributes<4> {
        let mut attributes = Attributes::new();
        attributes.push(KeyValue::new(ATTR_ROOMCHAT_OPERATION, call.operation));
        attributes.push(KeyValue::new(
            ATTR_SERVER_ADDRESS,
            self.server_address.clone(),
        ));
        attributes.push(KeyValue::new(ATTR_SERVER_PORT, i64::from(call.server_port)));
        if let Some(error) = error {
            attributes.push(KeyValue::new(ATTR_ERROR_TYPE, error.kind().name()));
        }
        attributes
    }

    /// The call span's event and the metric of each of `events`.
    fn record_events(&self, call: &CallInfo<'_>, events: &[CallEvent]) {
        let span = self.call.span();
        for event in events {
            let traced = self.traced;
            let mut attributes = vec![KeyValue::new(
                ATTR_ROOMCHAT_ATTEMPT,
                i64::from(event.attempt),
            )];
            let metric_attributes = [
                KeyValue::new(ATTR_ROOMCHAT_OPERATION, call.operation),
                KeyValue::new(ATTR_SERVER_ADDRESS, self.server_address.clone()),
            ];
            match event.kind {
                CallEventKind::RateLimitWait => {
                    attributes.push(KeyValue::new(
                        ATTR_ROOMCHAT_WAIT_DURATION,
                        seconds(event.wait),
                    ));
                    self.metrics
                        .rate_limit_wait
                        .record(seconds(event.wait), &metric_attributes);
                }
                CallEventKind::Retry => {
                    let reason = event.retry_reason.map_or("other", |r| r.as_str());
                    attributes.push(KeyValue::new(ATTR_ROOMCHAT_RETRY_REASON, reason));
                    attributes.push(KeyValue::new(
                        ATTR_ROOMCHAT_WAIT_DURATION,
                        seconds(event.wait),
                    ));
                    if let Some(status) = event.status {
                        attributes.push(KeyValue::new(
                            ATTR_HTTP_RESPONSE_STATUS_CODE,
                            i64::from(status),
                        ));
                    }
                    let [operation, address] = metric_attributes;
                    self.metrics.retries.add(
                        1,
                        &[
                            operation,
                            address,
                            KeyValue::new(ATTR_ROOMCHAT_RETRY_REASON, reason),
                        ],
                    );
                }
                CallEventKind::BudgetDegraded => {
                    if let Some(error) = &event.error {
                        attributes.push(KeyValue::new(ATTR_ERROR_TYPE, error.kind().name()));
                        attributes.push(KeyValue::new(
                            ATTR_ERROR_MESSAGE,
                            error.message().to_owned(),
                        ));
                    }
                    self.metrics.degraded.add(1, &metric_attributes);
                }
            }
            if traced {
                span.add_event_with_timestamp(event.kind.event_name(), event.at, attributes);
            }
        }
    }
}

impl CallObserver for OtelCall {
    fn attempt_start(
        &mut self,
        call: &CallInfo<'_>,
        attempt: &AttemptStart<'_>,
        headers: &mut RequestHeaders,
    ) {
        self.record_events(call, attempt.events);
        if !self.traced {
            if attempt.propagate_trace_context {
                global::get_text_map_propagator(|propagator| {
                    propagator.inject_context(&self.call, &mut HeaderInjector(headers));
                });
            }
            return;
        }
        let mut attributes = vec![
            KeyValue::new(ATTR_HTTP_REQUEST_METHOD, self.method),
            KeyValue::new(ATTR_SERVER_ADDRESS, self.server_address.clone()),
            KeyValue::new(ATTR_SERVER_PORT, i64::from(call.server_port)),
            KeyValue::new(ATTR_URL_FULL, call.url_full().to_owned()),
            KeyValue::new(ATTR_NETWORK_PROTOCOL_VERSION, call.protocol_version),
        ];
        if let Some(template) = &self.url_template {
            attributes.push(KeyValue::new(ATTR_URL_TEMPLATE, template.clone()));
        }
        if attempt.resend_count > 0 {
            attributes.push(KeyValue::new(
                ATTR_HTTP_REQUEST_RESEND_COUNT,
                i64::from(attempt.resend_count),
            ));
        }
        let span = self.tracer.build_with_context(
            SpanBuilder::from_name(call.attempt_span_name())
                .with_kind(SpanKind::Client)
                .with_start_time(attempt.started_at)
                .with_attributes(attributes),
            &self.call,
        );
        let context = self.call.with_span(span);
        if attempt.propagate_trace_context {
            global::get_text_map_propagator(|propagator| {
                propagator.inject_context(&context, &mut HeaderInjector(headers));
            });
        }
        self.attempt = Some(context);
    }

    fn attempt_end(&mut self, call: &CallInfo<'_>, attempt: &AttemptEnd<'_>) {
        if let Some(context) = self.attempt.take() {
            let span = context.span();
            if let Some(status) = attempt.status {
                span.set_attribute(KeyValue::new(
                    ATTR_HTTP_RESPONSE_STATUS_CODE,
                    i64::from(status),
                ));
            }
            if let Some(error_type) = attempt.error_type() {
                span.set_attribute(KeyValue::new(ATTR_ERROR_TYPE, error_type));
                span.set_status(Status::error(""));
            }
            if let Some(kind) = attempt.error_kind() {
                span.set_attribute(KeyValue::new(ATTR_ROOMCHAT_ERROR_KIND, kind));
            }
            span.end_with_timestamp(attempt.ended_at);
        }
        let mut attributes = Attributes::<7>::new();
        attributes.push(KeyValue::new(ATTR_HTTP_REQUEST_METHOD, self.method));
        attributes.push(KeyValue::new(
            ATTR_SERVER_ADDRESS,
            self.server_address.clone(),
        ));
        attributes.push(KeyValue::new(ATTR_SERVER_PORT, i64::from(call.server_port)));
        attributes.push(KeyValue::new(
            ATTR_NETWORK_PROTOCOL_VERSION,
            call.protocol_version,
        ));
        if let Some(template) = &self.url_template {
            attributes.push(KeyValue::new(ATTR_URL_TEMPLATE, template.clone()));
        }
        if let Some(status) = attempt.status {
            attributes.push(KeyValue::new(
                ATTR_HTTP_RESPONSE_STATUS_CODE,
                i64::from(status),
            ));
        }
        if let Some(error_type) = attempt.error_type() {
            attributes.push(KeyValue::new(ATTR_ERROR_TYPE, error_type));
        }
        self.metrics
            .request_duration
            .record(seconds(attempt.duration), &attributes);
        self.record_events(call, attempt.events);
    }

    fn call_end(&mut self, call: &CallInfo<'_>, end: &CallEnd<'_>) {
        self.record_events(call, end.events);
        let span = self.call.span();
        if self.traced {
            span.set_attributes([
                KeyValue::new(ATTR_ROOMCHAT_ATTEMPTS, i64::from(end.attempts)),
                KeyValue::new(
                    ATTR_ROOMCHAT_RATE_LIMIT_WAIT_DURATION,
                    seconds(end.rate_limit_wait),
                ),
                KeyValue::new(ATTR_ROOMCHAT_RETRY_WAIT_DURATION, seconds(end.retry_wait)),
            ]);
            if let Some(error) = end.error {
                span.set_attribute(KeyValue::new(ATTR_ERROR_TYPE, error.kind().name()));
                span.set_status(Status::error(end.status_description().unwrap_or_default()));
            }
            span.end_with_timestamp(end.ended_at);
        }
        let attributes = self.call_attributes(call, end.error);
        self.metrics
            .call_duration
            .record(seconds(end.duration), &attributes);
        self.metrics
            .active_calls
            .add(-1, &self.call_attributes(call, None));
    }
}

/// A metric's attributes, at most `N`: one allocation of the right size.
struct Attributes<const N: usize>(Vec<KeyValue>);

impl<const N: usize> Attributes<N> {
    fn new() -> Attributes<N> {
        Attributes(Vec::with_capacity(N))
    }

    fn push(&mut self, attribute: KeyValue) {
        self.0.push(attribute);
    }
}

impl<const N: usize> std::ops::Deref for Attributes<N> {
    type Target = [KeyValue];
    fn deref(&self) -> &[KeyValue] {
        &self.0
    }
}

fn seconds(duration: Duration) -> f64 {
    duration.as_secs_f64()
}

/// Whether a meter provider records anything: the API's no-op provider
/// (`NoopMeterProvider`, what the global one is until an SDK is set) is the
/// only one without state, since a provider that records keeps its pipeline
/// somewhere. The API offers no other way to ask, and asking this way costs
/// nothing per call.
fn records<M: MeterProvider + ?Sized>(provider: &M) -> bool {
    std::mem::size_of_val(provider) != 0
}

/// Whether the global propagator injects anything (the API's no-op one, the
/// default, names no field).
fn propagates() -> bool {
    global::get_text_map_propagator(|propagator| propagator.fields().next().is_some())
}

/// Puts what the propagator injects into an attempt's headers.
struct HeaderInjector<'a>(&'a mut RequestHeaders);

impl Injector for HeaderInjector<'_> {
    fn set(&mut self, key: &str, value: String) {
        // A propagator's header the client refuses (a reserved name, a bad
        // value) is left out rather than failing the call.
        let _ = self.0.insert(key, &value);
    }
}

/// The instruments of one meter.
struct Metrics {
    /// Whether its provider records anything (see [`records`]).
    records: bool,
    request_duration: Histogram<f64>,
    call_duration: Histogram<f64>,
    rate_limit_wait: Histogram<f64>,
    retries: Counter<u64>,
    degraded: Counter<u64>,
    active_calls: UpDownCounter<i64>,
}

impl Metrics {
    /// The instruments of `meter`, and its gauge of the budgets of `clients`.
    fn new(meter: &Meter, clients: &Arc<Mutex<Vec<Registered>>>, records: bool) -> Metrics {
        let clients = Arc::clone(clients);
        // The gauge lives as long as the meter's provider: it is not kept.
        let _remaining = meter
            .i64_observable_gauge(METRIC_ROOMCHAT_RATE_LIMIT_REMAINING)
            .with_unit("{request}")
            .with_description("Requests the key's rate-limit budget allows now, per client.")
            .with_callback(move |observer| {
                // Read without the list's lock: a budget takes its own.
                let live: Vec<(u64, StringValue, Arc<dyn RemainingSlots>)> = {
                    let mut list = clients.lock().unwrap_or_else(PoisonError::into_inner);
                    list.retain(|c| c.slots.strong_count() > 0);
                    list.iter()
                        .filter_map(|c| {
                            let slots = c.slots.upgrade()?;
                            Some((c.client_id, c.server_address.clone(), slots))
                        })
                        .collect()
                };
                for (client_id, address, slots) in live {
                    let remaining = i64::try_from(slots.remaining()).unwrap_or(i64::MAX);
                    observer.observe(
                        remaining,
                        &[
                            KeyValue::new(ATTR_ROOMCHAT_CLIENT_ID, client_id as i64),
                            KeyValue::new(ATTR_SERVER_ADDRESS, address),
                        ],
                    );
                }
            })
            .build();
        Metrics {
            records,
            request_duration: meter
                .f64_histogram(METRIC_HTTP_CLIENT_REQUEST_DURATION)
                .with_unit("s")
                .with_description("Duration of HTTP client requests.")
                .with_boundaries(DURATION_BUCKETS.to_vec())
                .build(),
            call_duration: meter
                .f64_histogram(METRIC_ROOMCHAT_CLIENT_CALL_DURATION)
                .with_unit("s")
                .with_description(
                    "Duration of roomchat calls, from the call to its result: every attempt, rate-limit wait and backoff.",
                )
                .with_boundaries(DURATION_BUCKETS.to_vec())
                .build(),
            rate_limit_wait: meter
                .f64_histogram(METRIC_ROOMCHAT_RATE_LIMIT_WAIT_DURATION)
                .with_unit("s")
                .with_description("Time a call waited for a slot of the key's rate-limit budget.")
                .with_boundaries(WAIT_BUCKETS.to_vec())
                .build(),
            retries: meter
                .u64_counter(METRIC_ROOMCHAT_CLIENT_RETRIES)
                .with_unit("{retry}")
                .with_description("Attempts sent again, by reason.")
                .build(),
            degraded: meter
                .u64_counter(METRIC_ROOMCHAT_BUDGET_DEGRADED)
                .with_unit("{event}")
                .with_description(
                    "Times the shared rate-limit budget in Redis failed and the client followed its OnRedisError policy.",
                )
                .build(),
            active_calls: meter
                .i64_up_down_counter(METRIC_ROOMCHAT_CLIENT_ACTIVE_CALLS)
                .with_unit("{call}")
                .with_description("Calls in flight.")
                .build(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_api_meter_provider_records_nothing_an_sdk_one_does() {
        assert!(!records(&opentelemetry::metrics::NoopMeterProvider::new()));
        assert!(
            !records(&*global::meter_provider()),
            "the global one, none set"
        );
        assert!(records(
            &opentelemetry_sdk::metrics::SdkMeterProvider::builder().build()
        ));
    }
}
