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
    assert_eq!(attempts[0]["error.type"], "server_error");
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
    let (_, retry, _) = &seen.events[1];
    assert_eq!(retry["event"], "retry");
    assert_eq!(retry["status"], "503");
    assert!(retry["message"].starts_with("retrying GET /consumer/api/v2/users?auth=REDACTED"));
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
