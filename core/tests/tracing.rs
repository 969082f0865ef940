//! The feature `tracing`: a `roomchat.call` span per call and a
//! `roomchat.attempt` span per attempt, with the fields a
//! `tracing-opentelemetry` user needs to see what the feature `opentelemetry`
//! makes (`otel.name`, `otel.kind`, the HTTP client conventions' attributes),
//! and the observer's events inside the call's span; the key in none of them.
//! Recorded by a subscriber of the test's own.

mod common;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use common::*;
use roomchat::{CreateUser, ErrorKind, ListUsers, RawRequest};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Subscriber};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::Layer;

type Fields = BTreeMap<String, String>;

struct Visitor<'a>(&'a mut Fields);

impl Visit for Visitor<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

/// What the layer saw: closed spans (name, fields) and events (level, fields, span).
#[derive(Default)]
struct Seen {
    spans: Vec<(String, Fields)>,
    events: Vec<(tracing::Level, Fields, Option<String>)>,
}

#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Seen>>);

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Recorder {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut fields = Fields::new();
        attrs.record(&mut Visitor(&mut fields));
        ctx.span(id).unwrap().extensions_mut().insert(fields);
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        let span = ctx.span(id).unwrap();
        let mut extensions = span.extensions_mut();
        values.record(&mut Visitor(extensions.get_mut::<Fields>().unwrap()));
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        let mut fields = Fields::new();
        event.record(&mut Visitor(&mut fields));
        let parent = ctx.event_span(event).map(|s| s.name().to_owned());
        self.0
            .lock()
            .unwrap()
            .events
            .push((*event.metadata().level(), fields, parent));
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let span = ctx.span(&id).unwrap();
        let fields = span.extensions().get::<Fields>().cloned().unwrap();
        self.0
            .lock()
            .unwrap()
            .spans
            .push((span.name().to_owned(), fields));
    }
}

/// Runs `f` with the recorder as this thread's subscriber.
fn recording(f: impl FnOnce()) -> Seen {
    let recorder = Recorder::default();
    let subscriber = tracing_subscriber::registry().with(recorder.clone());
    tracing::subscriber::with_default(subscriber, f);
    let seen = std::mem::take(&mut *recorder.0.lock().unwrap());
    seen
}

fn assert_no_key(seen: &Seen, key: &str) {
    for (_, fields) in &seen.spans {
        assert!(fields.values().all(|v| !v.contains(key)), "{fields:?}");
    }
    for (_, fields, _) in &seen.events {
        assert!(fields.values().all(|v| !v.contains(key)), "{fields:?}");
    }
}

/// The spans named `name`, in the order they closed.
fn spans<'a>(seen: &'a Seen, name: &str) -> Vec<&'a Fields> {
    seen.spans
        .iter()
        .filter(|(n, _)| n == name)
        .map(|(_, f)| f)
        .collect()
}

#[test]
fn a_call_span_over_an_attempt_span_each_as_the_opentelemetry_conventions_name_them() {
    let emu = emulator("trace_retry");
    let client = client(&emu);
    emu.add_fault(once("GET", USERS, respond(503, "", &[])));
    let seen = recording(|| {
        client.list_users(&ListUsers::page(5, 0)).unwrap();
    });
    let calls = spans(&seen, "roomchat.call");
    assert_eq!(calls.len(), 1);
    let call = calls[0];
    assert_eq!(call["otel.name"], "roomchat list_users");
    assert_eq!(call["otel.kind"], "internal");
    assert_eq!(call["roomchat.operation"], "list_users");
    assert_eq!(call["roomchat.attempts"], "2");
    let wait: f64 = call["roomchat.retry.wait.duration"].parse().unwrap();
    assert!(wait > 0.005, "the backoff before the retry: {wait} s");
    assert!(!call.contains_key("error.type") && !call.contains_key("otel.status_code"));

    let attempts = spans(&seen, "roomchat.attempt");
    assert_eq!(attempts.len(), 2);
    let base = emu.base_url();
    let (address, port) = base.split("://").nth(1).unwrap().rsplit_once(':').unwrap();
    for (n, attempt) in attempts.iter().enumerate() {
        assert_eq!(attempt["otel.name"], "GET /consumer/api/v2/users");
        assert_eq!(attempt["otel.kind"], "client");
        assert_eq!(attempt["http.request.method"], "GET");
        assert_eq!(
            attempt["url.full"],
            format!("{base}/consumer/api/v2/users?auth=REDACTED&limit=5&skip=0")
        );
        assert_eq!(attempt["url.template"], "/consumer/api/v2/users");
        assert_eq!(
            (
                attempt["server.address"].as_str(),
                attempt["server.port"].as_str()
            ),
            (address, port)
        );
        assert_eq!(attempt["network.protocol.version"], "1.1");
        assert_eq!(
            attempt.get("http.request.resend_count").map(String::as_str),
            [None, Some("1")][n]
        );
    }
    assert_eq!(attempts[0]["http.response.status_code"], "503");
    assert_eq!(attempts[0]["error.type"], "503");
    assert_eq!(attempts[0]["roomchat.error.kind"], "server_error");
    assert_eq!(attempts[0]["otel.status_code"], "error");
    assert_eq!(attempts[1]["http.response.status_code"], "200");
    assert!(!attempts[1].contains_key("error.type"));

    // The observer's events, inside the call's span: attempt, retry, attempt.
    let levels: Vec<_> = seen.events.iter().map(|(l, _, _)| *l).collect();
    assert_eq!(
        levels,
        [
            tracing::Level::DEBUG,
            tracing::Level::WARN,
            tracing::Level::DEBUG
        ]
    );
    assert!(seen
        .events
        .iter()
        .all(|(_, _, parent)| parent.as_deref() == Some("roomchat.call")));
    let (_, first, _) = &seen.events[0];
    assert!(first["message"].starts_with("GET /consumer/api/v2/users?auth=REDACTED&limit=5"));
    assert_eq!(first["http.response.status_code"], "503");
    let (_, retry, _) = &seen.events[1];
    assert_eq!(retry["roomchat.attempt"], "1");
    assert_eq!(retry["roomchat.retry.reason"], "5xx");
    assert_eq!(retry["http.response.status_code"], "503");
    // Its message is its name: what `tracing-opentelemetry` names the span
    // event, and what a `fmt` subscriber prints before the fields.
    assert_eq!(retry["message"], "roomchat.retry", "{retry:?}");
    assert_no_key(&seen, &emu.private_key());
}

#[test]
fn a_failed_call_names_its_error_and_raw_requests_are_raw() {
    let emu = emulator("trace_fail");
    let client = client(&emu);
    emu.add_fault(once("POST", CREATE, respond(500, "", &[])));
    let seen = recording(|| {
        let e = client.create_user(&CreateUser::regular("jon")).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::ServerError);
        client.raw_request(&RawRequest::new("GET", USERS)).unwrap();
        client.list_chat_rooms().unwrap();
        let jon = client.create_user(&CreateUser::regular("jon")).unwrap();
        client.validate_access_token(&jon.access_token).unwrap();
    });
    let calls = spans(&seen, "roomchat.call");
    assert_eq!(calls.len(), 5);
    assert_eq!(calls[0]["roomchat.operation"], "create_user");
    assert_eq!(
        calls[0]["roomchat.attempts"], "1",
        "a POST is not resent after a 500"
    );
    assert_eq!(calls[0]["error.type"], "server_error");
    assert_eq!(calls[0]["otel.status_code"], "error");
    assert_eq!(
        calls[0]["otel.status_description"],
        "server_error (HTTP 500)"
    );
    assert_eq!(calls[1]["roomchat.operation"], "raw");
    assert_eq!(calls[1]["otel.name"], "roomchat raw");
    assert_eq!(calls[2]["roomchat.operation"], "list_chat_rooms");
    assert_eq!(calls[4]["roomchat.operation"], "validate_access_token");
    let attempts = spans(&seen, "roomchat.attempt");
    assert_eq!(attempts[0]["http.response.status_code"], "500");
    // A raw request to a declared path has its template.
    assert_eq!(attempts[1]["otel.name"], "GET /consumer/api/v2/users");
    assert!(attempts[4]["url.full"]
        .ends_with("/consumer/api/v1/user/accessToken/validate?publicKey=REDACTED"));
    assert_no_key(&seen, &emu.private_key());
}

#[test]
fn nothing_is_built_without_a_subscriber_that_wants_it() {
    let emu = emulator("trace_off");
    let client = client(&emu);
    // A subscriber that takes only errors: no span, no event reaches the recorder.
    let recorder = Recorder::default();
    let subscriber = tracing_subscriber::registry().with(
        recorder
            .clone()
            .with_filter(tracing_subscriber::filter::LevelFilter::ERROR),
    );
    tracing::subscriber::with_default(subscriber, || {
        client.list_users(&ListUsers::default()).unwrap();
    });
    let seen = recorder.0.lock().unwrap();
    assert!(seen.spans.is_empty() && seen.events.is_empty());
}

// ---------------------------------------------------------------------------
// Through `tracing-opentelemetry` (0.34, for opentelemetry 0.33) into the SDK,
// with the layer's defaults, as a user of that route collects the spans: the
// same spans, attributes and events as the feature `opentelemetry` makes.

mod through_tracing_opentelemetry {
    use std::collections::BTreeMap;
    use std::time::Duration;

    use super::common::*;
    use opentelemetry::trace::{SpanKind, Status, TracerProvider as _};
    use opentelemetry::{global, Value};
    use opentelemetry_sdk::propagation::TraceContextPropagator;
    use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
    use roomchat::{CreateUser, ListUsers, RateLimitConfig};
    use tracing_subscriber::layer::SubscriberExt;

    /// The attributes `tracing-opentelemetry` adds of its own (the code's
    /// place, the thread, busy and idle time, the target and level): not roomchat's.
    const THE_LAYERS: [&str; 9] = [
        "target",
        "level",
        "code.file.path",
        "code.module.name",
        "code.line.number",
        "thread.id",
        "thread.name",
        "busy_ns",
        "idle_ns",
    ];

    /// Runs `f` under a subscriber whose one layer is `tracing-opentelemetry`'s,
    /// exporting to memory; the W3C propagator set globally, as an application
    /// sets it. Returns the spans, in the order they ended.
    fn exported(f: impl FnOnce()) -> Vec<SpanData> {
        global::set_text_map_propagator(TraceContextPropagator::new());
        let spans = InMemorySpanExporter::default();
        let provider = SdkTracerProvider::builder()
            .with_simple_exporter(spans.clone())
            .build();
        let layer = tracing_opentelemetry::layer().with_tracer(provider.tracer("app"));
        let subscriber = tracing_subscriber::registry().with(layer);
        tracing::subscriber::with_default(subscriber, f);
        provider.force_flush().unwrap();
        spans.get_finished_spans().unwrap()
    }

    /// roomchat's attributes of `attributes`, each key with every value it has.
    fn ours(attributes: &[opentelemetry::KeyValue]) -> BTreeMap<String, Vec<Value>> {
        let mut keys = BTreeMap::<String, Vec<Value>>::new();
        for kv in attributes {
            if !THE_LAYERS.contains(&kv.key.as_str()) {
                keys.entry(kv.key.to_string())
                    .or_default()
                    .push(kv.value.clone());
            }
        }
        keys
    }

    /// `span`'s roomchat attributes, each of which it must carry once.
    fn once_each(span: &SpanData) -> BTreeMap<String, Value> {
        ours(&span.attributes)
            .into_iter()
            .map(|(key, mut values)| {
                assert_eq!(values.len(), 1, "{} carries {key} {values:?}", span.name);
                (key, values.pop().unwrap())
            })
            .collect()
    }

    fn keys(attributes: &BTreeMap<String, Value>) -> Vec<&str> {
        attributes.keys().map(String::as_str).collect()
    }

    fn seconds(value: &Value) -> f64 {
        match value {
            Value::F64(seconds) => *seconds,
            other => panic!("seconds as a double, not {other:?}"),
        }
    }

    #[test]
    fn integers_are_integers_each_key_once_and_a_retry_is_a_roomchat_retry_event() {
        let emu = emulator("trace_otel_retry");
        let client = client(&emu);
        emu.add_fault(once("GET", USERS, respond(503, "", &[])));
        let spans = exported(|| {
            client.list_users(&ListUsers::page(5, 0)).unwrap();
        });
        let names: Vec<&str> = spans.iter().map(|s| s.name.as_ref()).collect();
        assert_eq!(
            names,
            [
                "GET /consumer/api/v2/users",
                "GET /consumer/api/v2/users",
                "roomchat list_users"
            ]
        );
        let (attempts, call) = (&spans[..2], &spans[2]);

        // The call: INTERNAL, its totals once each, typed as the feature
        // `opentelemetry` types them.
        assert_eq!(call.span_kind, SpanKind::Internal);
        assert_eq!(call.status, Status::Unset);
        let attributes = once_each(call);
        assert_eq!(
            keys(&attributes),
            [
                "roomchat.attempts",
                "roomchat.operation",
                "roomchat.rate_limit.wait.duration",
                "roomchat.retry.wait.duration"
            ]
        );
        assert_eq!(attributes["roomchat.operation"], Value::from("list_users"));
        assert_eq!(attributes["roomchat.attempts"], Value::I64(2));
        assert_eq!(
            seconds(&attributes["roomchat.rate_limit.wait.duration"]),
            0.0
        );
        let retry_wait = seconds(&attributes["roomchat.retry.wait.duration"]);
        assert!(retry_wait > 0.0, "the backoff: {retry_wait} s");

        // Its events: the retry, named and filled as the feature
        // `opentelemetry`'s; the attempts' DEBUG lines beside it.
        let retries: Vec<_> = call
            .events
            .iter()
            .filter(|e| e.name == "roomchat.retry")
            .collect();
        assert_eq!(retries.len(), 1, "{:?}", call.events);
        let retry: BTreeMap<String, Value> = ours(&retries[0].attributes)
            .into_iter()
            .map(|(key, mut values)| {
                assert_eq!(values.len(), 1, "the retry event carries {key} {values:?}");
                (key, values.pop().unwrap())
            })
            .collect();
        assert_eq!(
            keys(&retry),
            [
                "http.response.status_code",
                "roomchat.attempt",
                "roomchat.retry.reason",
                "roomchat.wait.duration"
            ]
        );
        assert_eq!(retry["roomchat.attempt"], Value::I64(1));
        assert_eq!(retry["roomchat.retry.reason"], Value::from("5xx"));
        assert_eq!(retry["http.response.status_code"], Value::I64(503));
        assert_eq!(seconds(&retry["roomchat.wait.duration"]), retry_wait);
        let lines: Vec<&str> = call
            .events
            .iter()
            .filter(|e| e.name != "roomchat.retry")
            .map(|e| e.name.as_ref())
            .collect();
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(lines
            .iter()
            .all(|l| l.starts_with("GET /consumer/api/v2/users?auth=REDACTED")));

        // The attempts: CLIENT spans under the call, integers as integers.
        let base = emu.base_url();
        let (address, port) = base.split("://").nth(1).unwrap().rsplit_once(':').unwrap();
        for (n, attempt) in attempts.iter().enumerate() {
            assert_eq!(attempt.span_kind, SpanKind::Client);
            assert_eq!(attempt.parent_span_id, call.span_context.span_id());
            let attributes = once_each(attempt);
            assert_eq!(
                attributes["server.address"],
                Value::from(address.to_owned())
            );
            assert_eq!(attributes["server.port"], Value::I64(port.parse().unwrap()));
            assert_eq!(
                attributes["url.template"],
                Value::from("/consumer/api/v2/users")
            );
            assert_eq!(attributes["http.request.method"], Value::from("GET"));
            assert_eq!(attributes["network.protocol.version"], Value::from("1.1"));
            assert_eq!(
                attributes.get("http.request.resend_count"),
                [None, Some(&Value::I64(1))][n]
            );
        }
        let failed = once_each(&attempts[0]);
        assert_eq!(failed["http.response.status_code"], Value::I64(503));
        assert_eq!(failed["error.type"], Value::from("503"));
        assert_eq!(failed["roomchat.error.kind"], Value::from("server_error"));
        assert!(matches!(attempts[0].status, Status::Error { .. }));
        let answered = once_each(&attempts[1]);
        assert_eq!(answered["http.response.status_code"], Value::I64(200));
        assert!(!answered.contains_key("error.type"));
        assert_eq!(attempts[1].status, Status::Unset);

        // No trace context leaves this route (the guide says so): no
        // traceparent, although a W3C propagator is set.
        let journal = emu.journal();
        assert_eq!(journal.len(), 2);
        for entry in &journal {
            assert!(
                entry.headers.iter().all(|(name, _)| name != "traceparent"),
                "{:?}",
                entry.headers
            );
        }
    }

    #[test]
    fn a_failed_call_has_its_status_description_and_a_rate_limit_wait_its_event() {
        let emu = emulator("trace_otel_fail");
        let client = client(&emu);
        emu.add_fault(once(
            "POST",
            CREATE,
            respond(500, "the body says a secret", &[]),
        ));
        // A key of its own (the budget is the key's, in the whole process).
        let other = emulator("trace_otel_wait");
        let limited = builder(&other)
            .rate_limit(RateLimitConfig::new(1, Duration::from_millis(300)))
            .build()
            .unwrap();
        let spans = exported(|| {
            client.create_user(&CreateUser::regular("jon")).unwrap_err();
            limited.list_users(&ListUsers::page(5, 0)).unwrap();
            limited.list_users(&ListUsers::page(5, 0)).unwrap();
        });
        let calls: Vec<&SpanData> = spans
            .iter()
            .filter(|s| s.span_kind == SpanKind::Internal)
            .collect();
        assert_eq!(calls.len(), 3);

        let failed = calls[0];
        assert_eq!(failed.name, "roomchat create_user");
        assert_eq!(failed.status, Status::error("server_error (HTTP 500)"));
        let attributes = once_each(failed);
        assert_eq!(attributes["error.type"], Value::from("server_error"));
        assert_eq!(attributes["roomchat.attempts"], Value::I64(1));

        // The second call of the limited client waited for its budget: a
        // `roomchat.rate_limit.wait` event, and the total on the call.
        let waited = calls[2];
        let attributes = once_each(waited);
        assert!(seconds(&attributes["roomchat.rate_limit.wait.duration"]) > 0.0);
        let waits: Vec<_> = waited
            .events
            .iter()
            .filter(|e| e.name == "roomchat.rate_limit.wait")
            .collect();
        assert_eq!(waits.len(), 1, "{:?}", waited.events);
        let wait = ours(&waits[0].attributes);
        assert_eq!(wait["roomchat.attempt"], [Value::I64(1)]);
        assert!(seconds(&wait["roomchat.wait.duration"][0]) > 0.0);
        assert!(calls[1]
            .events
            .iter()
            .all(|e| e.name != "roomchat.rate_limit.wait"));
    }
}
