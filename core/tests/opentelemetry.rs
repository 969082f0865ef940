//! The feature `opentelemetry`, against the SDK's in-memory exporters: the
//! application's span → the call's span → its attempts' CLIENT spans, the HTTP
//! client conventions' attributes, retries, rate-limit waits, errors, the
//! metrics and their values, W3C trace context as the emulator received it,
//! propagation off, extra headers, and no credential in anything exported.
//!
//! `cargo test -p roomchat --features opentelemetry --test opentelemetry`.

mod common;

use std::sync::Once;
use std::time::Duration;

use common::*;
use opentelemetry::baggage::BaggageExt;
use opentelemetry::propagation::TextMapCompositePropagator;
use opentelemetry::trace::{SpanKind, Status, TraceContextExt, Tracer, TracerProvider as _};
use opentelemetry::{global, Context, KeyValue, Value};
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData, ResourceMetrics};
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::propagation::{BaggagePropagator, TraceContextPropagator};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use roomchat::{
    ClientBuilder, CreateUser, ErrorKind, ListUsers, OpenTelemetry, RateLimitConfig, RawAuth,
    RawRequest,
};
use roomchat_emulator::{Emulator, JournalEntry};

/// The conventions' buckets of `http.client.request.duration`, in seconds.
const HTTP_BUCKETS: [f64; 14] = [
    0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
];

/// The W3C trace context and baggage propagators, as an application sets them.
fn set_propagator() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        global::set_text_map_propagator(TextMapCompositePropagator::new(vec![
            Box::new(TraceContextPropagator::new()),
            Box::new(BaggagePropagator::new()),
        ]));
    });
}

/// An SDK of the test's own: in-memory spans and metrics.
struct Sdk {
    spans: InMemorySpanExporter,
    tracer_provider: SdkTracerProvider,
    metrics: InMemoryMetricExporter,
    meter_provider: SdkMeterProvider,
}

impl Sdk {
    fn new() -> Sdk {
        set_propagator();
        let spans = InMemorySpanExporter::default();
        let metrics = InMemoryMetricExporter::default();
        Sdk {
            tracer_provider: SdkTracerProvider::builder()
                .with_simple_exporter(spans.clone())
                .build(),
            spans,
            meter_provider: SdkMeterProvider::builder()
                .with_reader(PeriodicReader::builder(metrics.clone()).build())
                .build(),
            metrics,
        }
    }

    /// `builder` sending its spans and metrics here.
    fn client(&self, builder: ClientBuilder) -> roomchat::Client {
        builder
            .opentelemetry(OpenTelemetry::with_providers(
                &self.tracer_provider,
                &self.meter_provider,
            ))
            .build()
            .unwrap()
    }

    /// The spans ended so far, in the order they ended.
    fn spans(&self) -> Vec<SpanData> {
        self.spans.get_finished_spans().unwrap()
    }

    /// The metrics recorded so far (cumulative).
    fn metrics(&self) -> ResourceMetrics {
        self.meter_provider.force_flush().unwrap();
        self.metrics.get_finished_metrics().unwrap().pop().unwrap()
    }

    /// Runs `f` in an application span of its own; returns the span's context.
    fn in_app_span<R>(
        &self,
        name: &'static str,
        f: impl FnOnce() -> R,
    ) -> (R, opentelemetry::trace::SpanContext) {
        let tracer = self.tracer_provider.tracer("app");
        tracer.in_span(name, |cx| (f(), cx.span().span_context().clone()))
    }
}

fn named<'a>(spans: &'a [SpanData], name: &str) -> Vec<&'a SpanData> {
    spans.iter().filter(|s| s.name == name).collect()
}

fn attr(span: &SpanData, key: &str) -> Option<Value> {
    span.attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| kv.value.clone())
}

fn header<'a>(entry: &'a JournalEntry, name: &str) -> Option<&'a str> {
    entry
        .headers
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

/// The `traceparent` an attempt's span puts on the wire.
fn traceparent(span: &SpanData) -> String {
    let cx = &span.span_context;
    format!("00-{}-{}-01", cx.trace_id(), cx.span_id())
}

fn server(emu: &Emulator) -> (String, i64) {
    let base = emu.base_url();
    let (address, port) = base.split("://").nth(1).unwrap().rsplit_once(':').unwrap();
    (address.to_owned(), port.parse().unwrap())
}

/// Each data point of the histogram `name`: (attributes, count, bounds).
fn histogram(metrics: &ResourceMetrics, name: &str) -> Vec<(Vec<KeyValue>, u64, Vec<f64>)> {
    let metric = metrics
        .scope_metrics()
        .flat_map(|s| s.metrics())
        .find(|m| m.name() == name)
        .unwrap_or_else(|| panic!("no metric {name}"));
    let AggregatedMetrics::F64(MetricData::Histogram(h)) = metric.data() else {
        panic!("{name} is not an f64 histogram")
    };
    h.data_points()
        .map(|p| {
            (
                p.attributes().cloned().collect(),
                p.count(),
                p.bounds().collect(),
            )
        })
        .collect()
}

/// Each data point of the sum or gauge `name`: (attributes, value).
fn values(metrics: &ResourceMetrics, name: &str) -> Vec<(Vec<KeyValue>, i64)> {
    let metric = metrics
        .scope_metrics()
        .flat_map(|s| s.metrics())
        .find(|m| m.name() == name)
        .unwrap_or_else(|| panic!("no metric {name}"));
    match metric.data() {
        AggregatedMetrics::U64(MetricData::Sum(s)) => s
            .data_points()
            .map(|p| (p.attributes().cloned().collect(), p.value() as i64))
            .collect(),
        AggregatedMetrics::I64(MetricData::Sum(s)) => s
            .data_points()
            .map(|p| (p.attributes().cloned().collect(), p.value()))
            .collect(),
        AggregatedMetrics::I64(MetricData::Gauge(g)) => g
            .data_points()
            .map(|p| (p.attributes().cloned().collect(), p.value()))
            .collect(),
        _ => panic!("{name}: not a sum or gauge"),
    }
}

fn has(attributes: &[KeyValue], key: &str, value: impl Into<Value>) -> bool {
    let value = value.into();
    attributes
        .iter()
        .any(|kv| kv.key.as_str() == key && kv.value == value)
}

#[test]
fn the_application_span_over_the_call_span_over_its_attempt_with_the_http_client_conventions() {
    let emu = emulator("otel_parentage");
    emu.seed_users(3);
    let sdk = Sdk::new();
    let client = sdk.client(builder(&emu));
    let (page, app) = sdk.in_app_span("handle request", || {
        client.list_users(&ListUsers::page(5, 0)).unwrap()
    });
    assert_eq!(page.total, 3);
    let spans = sdk.spans();
    assert_eq!(spans.len(), 3, "{spans:#?}");
    let (attempt, call) = (&spans[0], &spans[1]);
    assert_eq!(spans[2].name, "handle request");

    assert_eq!(call.name, "roomchat list_users");
    assert_eq!(call.span_kind, SpanKind::Internal);
    assert_eq!(call.parent_span_id, app.span_id());
    assert_eq!(call.span_context.trace_id(), app.trace_id());
    assert_eq!(attr(call, "roomchat.operation"), Some("list_users".into()));
    assert_eq!(attr(call, "roomchat.attempts"), Some(1i64.into()));
    assert_eq!(attr(call, "roomchat.retry.wait.duration"), Some(0.0.into()));
    assert_eq!(call.status, Status::Unset);

    assert_eq!(attempt.name, "GET /consumer/api/v2/users");
    assert_eq!(attempt.span_kind, SpanKind::Client);
    assert_eq!(attempt.parent_span_id, call.span_context.span_id());
    let (address, port) = server(&emu);
    for (key, value) in [
        ("http.request.method", Value::from("GET")),
        ("server.address", address.into()),
        ("server.port", port.into()),
        (
            "url.full",
            format!(
                "{}/consumer/api/v2/users?auth=REDACTED&limit=5&skip=0",
                emu.base_url()
            )
            .into(),
        ),
        ("url.template", USERS.into()),
        ("network.protocol.version", "1.1".into()),
        ("http.response.status_code", 200i64.into()),
    ] {
        assert_eq!(attr(attempt, key), Some(value), "{key}");
    }
    assert_eq!(attr(attempt, "error.type"), None);
    assert_eq!(attr(attempt, "http.request.resend_count"), None);
    assert_eq!(attempt.status, Status::Unset);
    assert!(call.start_time <= attempt.start_time && attempt.start_time < attempt.end_time);
    assert!(attempt.end_time <= call.end_time);

    // What the emulator received: the attempt's own span context.
    let journal = emu.journal();
    assert_eq!(
        header(&journal[0], "traceparent"),
        Some(traceparent(attempt).as_str())
    );
}

#[test]
fn a_429_then_a_200_is_two_attempts_the_second_resent_once() {
    let emu = emulator("otel_retry");
    let sdk = Sdk::new();
    let client = sdk.client(builder(&emu));
    emu.add_fault(once(
        "GET",
        USERS,
        respond(429, r#"{"message":"slow down"}"#, &[("Retry-After", "0")]),
    ));
    sdk.in_app_span("job", || client.list_users(&ListUsers::page(5, 0)).unwrap());
    let spans = sdk.spans();
    let attempts = named(&spans, "GET /consumer/api/v2/users");
    let call = named(&spans, "roomchat list_users")[0];
    assert_eq!(attempts.len(), 2);
    assert_eq!(
        attr(attempts[0], "http.response.status_code"),
        Some(429i64.into())
    );
    // As the HTTP instrumentations put it: the status as text; roomchat's kind beside it.
    assert_eq!(attr(attempts[0], "error.type"), Some("429".into()));
    assert_eq!(
        attr(attempts[0], "roomchat.error.kind"),
        Some("rate_limited".into())
    );
    assert!(matches!(attempts[0].status, Status::Error { .. }));
    assert_eq!(attr(attempts[0], "http.request.resend_count"), None);
    assert_eq!(
        attr(attempts[1], "http.response.status_code"),
        Some(200i64.into())
    );
    assert_eq!(
        attr(attempts[1], "http.request.resend_count"),
        Some(1i64.into())
    );
    assert_eq!(attempts[1].status, Status::Unset);
    assert!(attempts
        .iter()
        .all(|a| a.parent_span_id == call.span_context.span_id()));
    assert!(attempts[0].end_time <= attempts[1].start_time);
    assert_eq!(attr(call, "roomchat.attempts"), Some(2i64.into()));
    assert_eq!(call.status, Status::Unset, "the call succeeded");
    let retries: Vec<_> = call
        .events
        .iter()
        .filter(|e| e.name == "roomchat.retry")
        .collect();
    assert_eq!(retries.len(), 1);
    assert!(retries[0]
        .attributes
        .iter()
        .any(|kv| kv.key.as_str() == "roomchat.retry.reason" && kv.value == "429".into()));
    assert_eq!(retries[0].timestamp, attempts[0].end_time);

    // Each request carried its own attempt's context.
    let journal = emu.journal();
    let sent: Vec<_> = journal
        .iter()
        .map(|e| header(e, "traceparent").unwrap().to_owned())
        .collect();
    assert_eq!(sent, [traceparent(attempts[0]), traceparent(attempts[1])]);

    // The metrics: one duration per attempt, by status; one retry, for a 429; nothing in flight.
    let metrics = sdk.metrics();
    let durations = histogram(&metrics, "http.client.request.duration");
    assert_eq!(durations.len(), 2, "{durations:?}");
    for (attributes, count, bounds) in &durations {
        assert_eq!(*count, 1);
        assert_eq!(bounds, &HTTP_BUCKETS);
        assert!(has(attributes, "http.request.method", "GET"));
        assert!(has(attributes, "url.template", USERS));
        assert!(has(attributes, "network.protocol.version", "1.1"));
        assert!(
            !attributes.iter().any(|kv| kv.key.as_str() == "url.full"),
            "low cardinality"
        );
    }
    assert!(durations.iter().any(
        |(a, _, _)| has(a, "http.response.status_code", 429i64) && has(a, "error.type", "429")
    ));
    assert!(durations
        .iter()
        .any(|(a, _, _)| has(a, "http.response.status_code", 200i64)));
    let retries = values(&metrics, "roomchat.client.retries");
    assert_eq!(retries.len(), 1);
    assert!(has(&retries[0].0, "roomchat.retry.reason", "429") && retries[0].1 == 1);
    let calls = histogram(&metrics, "roomchat.client.call.duration");
    assert_eq!((calls.len(), calls[0].1), (1, 1));
    assert!(has(&calls[0].0, "roomchat.operation", "list_users"));
    let active = values(&metrics, "roomchat.client.active_calls");
    assert!(active.iter().all(|(_, v)| *v == 0), "{active:?}");
}

#[test]
fn a_rate_limit_wait_is_an_event_of_the_call_and_a_metric() {
    let emu = emulator("otel_wait");
    let sdk = Sdk::new();
    // 1 start per ~315 ms: the second call waits.
    let client =
        sdk.client(builder(&emu).rate_limit(RateLimitConfig::new(1, Duration::from_millis(300))));
    client.list_chat_rooms().unwrap();
    client.list_chat_rooms().unwrap();
    let spans = sdk.spans();
    let calls = named(&spans, "roomchat list_chat_rooms");
    assert_eq!(calls.len(), 2);
    let waits: Vec<_> = calls[1]
        .events
        .iter()
        .filter(|e| e.name == "roomchat.rate_limit.wait")
        .collect();
    assert_eq!(waits.len(), 1, "{:?}", calls[1].events);
    assert!(
        has(&waits[0].attributes, "roomchat.attempt", 1),
        "{:?}",
        waits[0]
    );
    let Some(Value::F64(waited)) = attr(calls[1], "roomchat.rate_limit.wait.duration") else {
        panic!("{calls:?}")
    };
    assert!(waited > 0.1 && waited < 2.0, "{waited}");
    let metrics = sdk.metrics();
    let wait = histogram(&metrics, "roomchat.rate_limit.wait.duration");
    assert_eq!((wait.len(), wait[0].1), (1, 1));
    assert!(has(&wait[0].0, "roomchat.operation", "list_chat_rooms"));
    // The budget's gauge: one series for this client.
    let remaining = values(&metrics, "roomchat.rate_limit.remaining");
    assert_eq!(remaining.len(), 1, "{remaining:?}");
    assert!(remaining[0]
        .0
        .iter()
        .any(|kv| kv.key.as_str() == "roomchat.client.id"));
}

#[test]
fn a_failed_call_is_an_error_of_its_type_as_are_its_attempts() {
    let emu = emulator("otel_errors");
    let sdk = Sdk::new();
    let client = sdk.client(builder(&emu));
    emu.add_fault(once("POST", CREATE, respond(500, "", &[])));
    let e = client.create_user(&CreateUser::regular("jon")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ServerError);
    // Nothing listens: a connection failure, no status.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let nowhere = sdk.client(builder(&emu).base_url(url).max_retries(0));
    let e = nowhere.list_chat_rooms().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Connection);
    let spans = sdk.spans();
    let call = named(&spans, "roomchat create_user")[0];
    assert_eq!(attr(call, "error.type"), Some("server_error".into()));
    assert!(
        matches!(&call.status, Status::Error { description } if description.contains("HTTP 500"))
    );
    let attempt = named(&spans, "POST /consumer/api/v1/user")[0];
    assert_eq!(
        attr(attempt, "http.response.status_code"),
        Some(500i64.into())
    );
    assert_eq!(attr(attempt, "error.type"), Some("500".into()));
    assert_eq!(
        attr(attempt, "roomchat.error.kind"),
        Some("server_error".into())
    );
    assert!(matches!(attempt.status, Status::Error { .. }));
    let attempt = named(&spans, "GET /consumer/api/v1/chatrooms")[0];
    assert_eq!(attr(attempt, "http.response.status_code"), None);
    assert_eq!(attr(attempt, "error.type"), Some("connection".into()));
    assert_eq!(
        attr(attempt, "roomchat.error.kind"),
        Some("connection".into())
    );
    let call = named(&spans, "roomchat list_chat_rooms")[0];
    assert_eq!(attr(call, "error.type"), Some("connection".into()));
    let metrics = sdk.metrics();
    let calls = histogram(&metrics, "roomchat.client.call.duration");
    assert!(calls
        .iter()
        .any(|(a, _, _)| has(a, "error.type", "server_error")));
    assert!(calls
        .iter()
        .any(|(a, _, _)| has(a, "error.type", "connection")));
}

#[test]
fn each_page_of_an_iterator_is_a_call_of_the_context_next_is_called_in() {
    let emu = emulator("otel_pages");
    emu.seed_users(5);
    let sdk = Sdk::new();
    let client = sdk.client(builder(&emu));
    let mut pages = client.user_pages(2);
    let (_, first) = sdk.in_app_span("first page", || pages.next().unwrap().unwrap());
    let (_, second) = sdk.in_app_span("second page", || pages.next().unwrap().unwrap());
    let spans = sdk.spans();
    let calls = named(&spans, "roomchat list_users");
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].parent_span_id, first.span_id());
    assert_eq!(calls[1].parent_span_id, second.span_id());
    assert_ne!(first.trace_id(), second.trace_id());
}

#[test]
fn trace_context_and_baggage_on_the_wire_unless_turned_off_and_extra_headers_either_way() {
    let emu = emulator("otel_propagation");
    let sdk = Sdk::new();
    let on = sdk.client(builder(&emu).header("x-team", "payments"));
    let off = sdk.client(
        builder(&emu)
            .header("x-team", "payments")
            .header(
                "traceparent",
                "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            )
            .propagate_trace_context(false),
    );
    let tracer = sdk.tracer_provider.tracer("app");
    let app = tracer.start("handle request");
    let cx = Context::current_with_span(app).with_baggage([KeyValue::new("tenant", "acme")]);
    {
        let _attached = cx.clone().attach();
        on.list_chat_rooms().unwrap();
        off.list_chat_rooms().unwrap();
    }
    cx.span().end();
    let journal = emu.journal();
    let spans = sdk.spans();
    let attempts = named(&spans, "GET /consumer/api/v1/chatrooms");
    assert_eq!(attempts.len(), 2, "spans are made either way");
    assert_eq!(
        header(&journal[0], "traceparent"),
        Some(traceparent(attempts[0]).as_str())
    );
    assert_eq!(header(&journal[0], "baggage"), Some("tenant=acme"));
    for name in ["traceparent", "tracestate", "baggage"] {
        assert_eq!(header(&journal[1], name), None, "{name} was sent");
    }
    assert!(journal
        .iter()
        .all(|e| header(e, "x-team") == Some("payments")));
}

#[test]
fn no_credential_in_any_exported_span_event_or_metric() {
    // Keys with the characters URLs treat apart, as the Redis password tests use.
    let private = "sk_live_S3cr?t#9/x@y+&=%";
    let public = "pk_live_Pub?l#c/k@y+&=%";
    let emu = emulator_with("otel_secrets", |c| {
        c.private_key = private.into();
        c.public_key = public.into();
    });
    let sdk = Sdk::new();
    #[allow(unused_mut)]
    let mut builder = builder_with_key(&emu, private)
        .public_key(public)
        .base_backoff(Duration::from_millis(1));
    // A shared budget whose Redis is not there, its password odd too: the
    // client falls back, and says so in an event.
    #[cfg(feature = "redis")]
    let redis_password = "R3d?s#9/p@ss";
    #[cfg(feature = "redis")]
    {
        let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = closed.local_addr().unwrap().port();
        drop(closed);
        builder = builder.redis_budget(roomchat::RedisBudget::new(format!(
            "redis://:{redis_password}@127.0.0.1:{port}/0"
        )));
    }
    let client = sdk.client(builder);
    let jon = client.create_user(&CreateUser::regular("jon")).unwrap();
    client.validate_access_token(&jon.access_token).unwrap();
    let raw = RawRequest::new("GET", "/consumer/api/v1/user/accessToken/validate")
        .query("accessToken", jon.access_token.clone())
        .auth(RawAuth::PublicKey);
    let _ = client.raw_request(&raw);
    // Credentials a raw request carries by hand: the public key in its own
    // parameter (the client adds none), an access token and a key under
    // other names, the private key under a name of no credential.
    let by_hand = RawRequest::new("GET", "/consumer/api/v2/users")
        .query("publicKey", public)
        .query("access_token", jon.access_token.clone())
        .query("apiKey", private)
        .query("q", private)
        .auth(RawAuth::None);
    let _ = client.raw_request(&by_hand);
    emu.add_fault(once(
        "GET",
        USERS,
        respond(
            500,
            &format!(r#"{{"message":"bad key {private} / {public}"}}"#),
            &[],
        ),
    ));
    client.list_users(&ListUsers::page(1, 0)).unwrap();
    emu.add_fault(once(
        "GET",
        USERS,
        respond(
            400,
            &format!(r#"{{"message":"bad token {}"}}"#, jon.access_token),
            &[],
        ),
    ));
    let _ = client.list_users(&ListUsers::page(1, 0));
    let spans = sdk.spans();
    let exported = format!("{spans:?} {:?}", sdk.metrics());
    #[allow(unused_mut)]
    let mut secrets = vec![private, public, jon.access_token.as_str()];
    #[cfg(feature = "redis")]
    {
        secrets.push(redis_password);
        assert!(
            exported.contains("roomchat.budget.degraded"),
            "the fallback was told"
        );
        // The event names the attempt it came before, as the guide says.
        let degraded = spans
            .iter()
            .flat_map(|s| s.events.iter())
            .find(|e| e.name == "roomchat.budget.degraded")
            .expect("a roomchat.budget.degraded event");
        assert!(
            has(&degraded.attributes, "roomchat.attempt", 1),
            "{degraded:?}"
        );
    }
    for secret in secrets {
        for form in [
            secret.to_owned(),
            roomchat::wire::encode_query_component(secret),
        ] {
            assert!(!exported.contains(&form), "{form} leaked: {exported}");
        }
    }
    assert!(exported.contains("publicKey=REDACTED&accessToken=REDACTED"));
    assert!(
        exported.contains("publicKey=REDACTED&access_token=REDACTED&apiKey=REDACTED&q=REDACTED"),
        "{exported}"
    );
    assert!(exported.contains("bad key REDACTED / REDACTED") || !exported.contains("bad key"));
}

#[test]
fn a_client_built_without_settings_uses_the_global_providers() {
    let emu = emulator("otel_global");
    set_propagator();
    let spans = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(spans.clone())
        .build();
    global::set_tracer_provider(provider.clone());
    // Built before or after the provider is set: the provider of the call's start counts.
    let client = builder(&emu).build().unwrap();
    let tracer = global::tracer("app");
    tracer.in_span("handle request", |_cx| client.list_chat_rooms().unwrap());
    let off = builder(&emu)
        .opentelemetry(OpenTelemetry::disabled())
        .build()
        .unwrap();
    tracer.in_span("handle request", |_cx| off.list_chat_rooms().unwrap());
    let names: Vec<_> = spans
        .get_finished_spans()
        .unwrap()
        .into_iter()
        .map(|s| s.name.into_owned())
        .collect();
    assert_eq!(
        names,
        [
            "GET /consumer/api/v1/chatrooms",
            "roomchat list_chat_rooms",
            "handle request",
            "handle request"
        ]
    );
    let journal = emu.journal();
    assert!(header(&journal[0], "traceparent").is_some());
    assert!(
        header(&journal[1], "traceparent").is_none(),
        "disabled: no context, nothing sent"
    );
}

#[test]
fn an_upper_case_host_is_one_lowercased_server_address_on_spans_and_the_gauge() {
    let emu = emulator("otel_host_case");
    let sdk = Sdk::new();
    let (_, port) = server(&emu);
    // The emulator listens on loopback; `LOCALHOST` is the same host.
    let client = sdk.client(builder(&emu).base_url(format!("http://LOCALHOST:{port}")));
    assert_eq!(client.server_address(), "localhost");
    client.list_chat_rooms().unwrap();
    let spans = sdk.spans();
    let attempt = named(&spans, "GET /consumer/api/v1/chatrooms")[0];
    assert_eq!(attr(attempt, "server.address"), Some("localhost".into()));
    let metrics = sdk.metrics();
    let duration = histogram(&metrics, "http.client.request.duration");
    assert!(duration.iter().all(|(attributes, _, _)| has(
        attributes,
        "server.address",
        "localhost"
    )));
    let remaining = values(&metrics, "roomchat.rate_limit.remaining");
    assert_eq!(remaining.len(), 1, "{remaining:?}");
    assert!(
        has(&remaining[0].0, "server.address", "localhost"),
        "{remaining:?}"
    );
}
