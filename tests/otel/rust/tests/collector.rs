//! roomchat's spans and metrics through the official OTLP exporter
//! (opentelemetry-otlp, HTTP/protobuf) to a real OpenTelemetry Collector
//! (`scripts/otel-collector.sh`), end to end: what the collector received, as it
//! wrote it (OTLP JSON), is asserted here: the application's span → the call →
//! its attempts (one trace, parent ids), the HTTP client conventions'
//! attributes, a 429 resent once, the metrics' points, and no secret anywhere in
//! the file.
//!
//! `bash scripts/otel-collector.sh build`, then
//! `cargo test --workspace --features roomchat/opentelemetry,roomchat-otel-collector-test/collector --test collector`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use opentelemetry::trace::{TraceContextExt, Tracer, TracerProvider as _};
use opentelemetry_http::{Bytes, HttpClient, HttpError, Request, Response};
use opentelemetry_otlp::{
    MetricExporter, Protocol, SpanExporter, WithExportConfig, WithHttpConfig,
};
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::SdkTracerProvider;
use opentelemetry_sdk::Resource;
use roomchat::{
    Client, CreateUser, ListUsers, OpenTelemetry, Proxy, RateLimitConfig, RawAuth, RawRequest,
    RedisBudget,
};
use roomchat_emulator::{Emulator, EmulatorConfig, Fault, FaultAction};
use serde_json::Value;

// The secrets, with the characters URLs and JSON treat apart (as core's redaction
// tests use): none may reach the collector in any form.
const PRIVATE_KEY: &str = "sk_live_C0ll?ct#9/x@y+&=%";
const PUBLIC_KEY: &str = "pk_live_C0ll?ct#p/k@y+&=%";
const PROXY_PASSWORD: &str = "Pr0xy?#/p@ss&";
const REDIS_PASSWORD: &str = "R3d?s#9/c@ll&";

const USERS: &str = "/consumer/api/v2/users";
const SERVICE: &str = "roomchat-collector-e2e-rust";

/// OTLP/HTTP sent by ureq, blocking (the SDK's batch processor and periodic
/// reader export from threads of their own): no reqwest, hyper or tokio to build.
#[derive(Debug)]
struct UreqClient(ureq::Agent);

#[async_trait::async_trait]
impl HttpClient for UreqClient {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let (parts, body) = request.into_parts();
        let request = Request::from_parts(parts, body.to_vec());
        let response = self.0.run(request)?;
        let (parts, mut body) = response.into_parts();
        let bytes = body.read_to_vec()?;
        Ok(Response::from_parts(parts, Bytes::from(bytes)))
    }
}

fn agent() -> UreqClient {
    UreqClient(
        ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_secs(10)))
            .http_status_as_error(false)
            .proxy(None)
            .build()
            .new_agent(),
    )
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..")
}

/// A collector of the test's own (scripts/otel-collector.sh start), stopped on drop.
struct Collector {
    dir: PathBuf,
    http: String,
    output: PathBuf,
    stopped: bool,
}

impl Collector {
    fn start() -> Collector {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("otel-collector-rust");
        let _ = std::fs::remove_dir_all(&dir);
        let out = Command::new("bash")
            .arg(repo().join("scripts/otel-collector.sh"))
            .arg("start")
            .arg(&dir)
            .output()
            .expect("bash runs");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "the collector did not start: {}{stdout}",
            String::from_utf8_lossy(&out.stderr)
        );
        let var = |name: &str| {
            stdout
                .lines()
                .find_map(|l| l.strip_prefix(&format!("{name}=")))
                .unwrap_or_else(|| panic!("no {name} in {stdout}"))
                .to_owned()
        };
        Collector {
            http: var("ROOMCHAT_OTELCOL_HTTP_ENDPOINT"),
            output: var("ROOMCHAT_OTELCOL_OUTPUT").into(),
            dir,
            stopped: false,
        }
    }

    /// Stops it (what it accepted is then in the file) and returns the file's text.
    fn stop(&mut self) -> String {
        self.stopped = true;
        let status = Command::new("bash")
            .arg(repo().join("scripts/otel-collector.sh"))
            .arg("stop")
            .arg(&self.dir)
            .status()
            .expect("bash runs");
        assert!(status.success(), "the collector did not stop cleanly");
        std::fs::read_to_string(&self.output).unwrap()
    }
}

impl Drop for Collector {
    fn drop(&mut self) {
        if !self.stopped {
            let _ = Command::new("bash")
                .arg(repo().join("scripts/otel-collector.sh"))
                .arg("stop")
                .arg(&self.dir)
                .status();
        }
    }
}

/// A span as the collector wrote it.
struct Span {
    scope: String,
    name: String,
    kind: i64,
    trace_id: String,
    span_id: String,
    parent_span_id: String,
    status_code: i64,
    attributes: Vec<(String, Value)>,
    events: Vec<String>,
}

impl Span {
    /// An attribute's value in OTLP JSON's mapping (ints are strings there).
    fn attr(&self, key: &str) -> Option<Value> {
        self.attributes
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| {
                let (kind, value) = v.as_object().unwrap().iter().next().unwrap();
                match kind.as_str() {
                    "intValue" => Value::from(value.as_str().unwrap().parse::<i64>().unwrap()),
                    _ => value.clone(),
                }
            })
    }
}

fn attributes(v: &Value) -> Vec<(String, Value)> {
    v.as_array()
        .map(|a| {
            a.iter()
                .map(|kv| (kv["key"].as_str().unwrap().to_owned(), kv["value"].clone()))
                .collect()
        })
        .unwrap_or_default()
}

fn string_attr(attrs: &[(String, Value)], key: &str) -> Option<String> {
    attrs
        .iter()
        .find(|(k, _)| k == key)
        .and_then(|(_, v)| v["stringValue"].as_str().map(str::to_owned))
}

fn int_attr(attrs: &[(String, Value)], key: &str) -> Option<i64> {
    attrs
        .iter()
        .find(|(k, _)| k == key)
        .and_then(|(_, v)| v["intValue"].as_str())
        .map(|v| v.parse().unwrap())
}

/// Every batch (one JSON document a line), the resource's service.name checked.
fn batches(received: &str) -> Vec<Value> {
    received
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("a line of OTLP JSON"))
        .collect()
}

fn resources<'a>(batches: &'a [Value], field: &str) -> Vec<&'a Value> {
    let resources: Vec<&Value> = batches
        .iter()
        .filter_map(|b| b[field].as_array())
        .flatten()
        .collect();
    for r in &resources {
        assert_eq!(
            string_attr(&attributes(&r["resource"]["attributes"]), "service.name").as_deref(),
            Some(SERVICE)
        );
    }
    resources
}

fn spans(batches: &[Value]) -> Vec<Span> {
    resources(batches, "resourceSpans")
        .into_iter()
        .flat_map(|r| r["scopeSpans"].as_array().unwrap())
        .flat_map(|scope| {
            let name = scope["scope"]["name"].as_str().unwrap_or("");
            scope["spans"]
                .as_array()
                .unwrap()
                .iter()
                .map(move |s| (name, s))
        })
        .map(|(scope, s)| Span {
            scope: scope.to_owned(),
            name: s["name"].as_str().unwrap().to_owned(),
            kind: s["kind"].as_i64().unwrap_or(0),
            trace_id: s["traceId"].as_str().unwrap().to_owned(),
            span_id: s["spanId"].as_str().unwrap().to_owned(),
            parent_span_id: s["parentSpanId"].as_str().unwrap_or("").to_owned(),
            status_code: s["status"]["code"].as_i64().unwrap_or(0),
            attributes: attributes(&s["attributes"]),
            events: s["events"]
                .as_array()
                .map(|e| {
                    e.iter()
                        .map(|e| e["name"].as_str().unwrap().to_owned())
                        .collect()
                })
                .unwrap_or_default(),
        })
        .collect()
}

/// Each metric (the last batch's, the exporter's temporality being cumulative):
/// name → (unit, its data: histogram / sum / gauge as OTLP JSON).
fn metrics(batches: &[Value]) -> Vec<(String, String, Value)> {
    let mut last = Vec::new();
    for r in resources(batches, "resourceMetrics") {
        for scope in r["scopeMetrics"].as_array().unwrap() {
            for m in scope["metrics"].as_array().unwrap() {
                let name = m["name"].as_str().unwrap().to_owned();
                last.retain(|(n, _, _): &(String, String, Value)| *n != name);
                last.push((name, m["unit"].as_str().unwrap_or("").to_owned(), m.clone()));
            }
        }
    }
    last
}

/// The data points of `name`: (attributes, the point).
fn points(metrics: &[(String, String, Value)], name: &str) -> Vec<(Vec<(String, Value)>, Value)> {
    let (_, _, m) = metrics
        .iter()
        .find(|(n, _, _)| n == name)
        .unwrap_or_else(|| panic!("the collector received no metric {name}"));
    let data = ["histogram", "sum", "gauge"]
        .iter()
        .find_map(|kind| m[*kind]["dataPoints"].as_array())
        .unwrap_or_else(|| panic!("{name}: no data points: {m}"));
    data.iter()
        .map(|p| (attributes(&p["attributes"]), p.clone()))
        .collect()
}

/// An OTLP JSON 64-bit integer (a string in the JSON mapping).
fn int(v: &Value) -> i64 {
    v.as_str()
        .map(|s| s.parse().unwrap())
        .or_else(|| v.as_i64())
        .unwrap_or_else(|| panic!("not an integer: {v}"))
}

fn fault(method: &str, path: &str, status: u16, body: &str, headers: &[(&str, &str)]) -> Fault {
    Fault {
        method: Some(method.into()),
        path: path.into(),
        times: 1,
        action: FaultAction::Respond {
            status,
            headers: headers
                .iter()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect(),
            body: body.into(),
            content_type: None,
        },
    }
}

#[test]
fn spans_and_metrics_reach_a_real_collector_over_otlp_with_no_secret() {
    let mut collector = Collector::start();
    let resource = Resource::builder().with_service_name(SERVICE).build();
    let spans_out = SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(format!("{}/v1/traces", collector.http))
        .with_http_client(agent())
        .build()
        .unwrap();
    let metrics_out = MetricExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(format!("{}/v1/metrics", collector.http))
        .with_http_client(agent())
        .build()
        .unwrap();
    // As an application sets up its SDK: a batch span processor and a periodic reader.
    let tracer_provider = SdkTracerProvider::builder()
        .with_resource(resource.clone())
        .with_batch_exporter(spans_out)
        .build();
    let meter_provider = SdkMeterProvider::builder()
        .with_resource(resource)
        .with_reader(PeriodicReader::builder(metrics_out).build())
        .build();

    let emu = Emulator::start(EmulatorConfig {
        private_key: PRIVATE_KEY.into(),
        public_key: PUBLIC_KEY.into(),
        ..EmulatorConfig::default()
    })
    .expect("the emulator starts");
    // A proxy and a shared Redis budget, each with its password: the proxy is not
    // used for loopback, and no Redis listens there (the client falls back and
    // says so), but both passwords are in the client's settings.
    let no_redis = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let redis_port = no_redis.local_addr().unwrap().port();
    drop(no_redis);
    let encoded = roomchat::wire::encode_query_component;
    let client = Client::builder(PRIVATE_KEY)
        .base_url(emu.base_url())
        .chat_url(emu.chat_url())
        .public_key(PUBLIC_KEY)
        .base_backoff(Duration::from_millis(1))
        .rate_limit(RateLimitConfig::new(100_000, Duration::from_secs(60)))
        .proxy(Proxy::url(format!(
            "https://me:{}@127.0.0.1:9",
            encoded(PROXY_PASSWORD)
        )))
        .redis_budget(RedisBudget::new(format!(
            "redis://:{}@127.0.0.1:{redis_port}/0",
            encoded(REDIS_PASSWORD)
        )))
        .opentelemetry(OpenTelemetry::with_providers(
            &tracer_provider,
            &meter_provider,
        ))
        .build()
        .unwrap();

    let tracer = tracer_provider.tracer("app");
    let (token, app_span_id) = tracer.in_span("handle request", |cx| {
        let jon = client.create_user(&CreateUser::regular("jon")).unwrap();
        client.validate_access_token(&jon.access_token).unwrap();
        let raw = RawRequest::new("POST", "/consumer/api/v1/user/accessToken/validate")
            .query("accessToken", jon.access_token.clone())
            .body(serde_json::json!({ "accessToken": jon.access_token }))
            .auth(RawAuth::PublicKey);
        // The token in its query too: url.full must show it REDACTED.
        client.raw_request(&raw).unwrap();
        // A 429 then a 200: two attempts, the second resent once.
        emu.add_fault(fault(
            "GET",
            USERS,
            429,
            r#"{"message":"slow down"}"#,
            &[("Retry-After", "0")],
        ));
        client.list_users(&ListUsers::page(5, 0)).unwrap();
        // A failed call whose answer quotes the keys and the token.
        emu.add_fault(fault(
            "GET",
            USERS,
            400,
            &format!(
                r#"{{"message":"bad key {PRIVATE_KEY} / {PUBLIC_KEY} / {}"}}"#,
                jon.access_token
            ),
            &[],
        ));
        client.list_users(&ListUsers::page(1, 0)).unwrap_err();
        (
            jon.access_token,
            cx.span().span_context().span_id().to_string(),
        )
    });
    // Everything exported before the collector stops (the client still alive:
    // its budget's gauge is observed at the last collection).
    tracer_provider.shutdown().unwrap();
    meter_provider.shutdown().unwrap();
    drop(client);
    let received = collector.stop();
    let batches = batches(&received);

    // Spans: the application's → each call's → its attempts', one trace.
    let spans = spans(&batches);
    let app = spans.iter().find(|s| s.name == "handle request").unwrap();
    assert_eq!(app.span_id, app_span_id);
    assert!(spans.iter().all(|s| s.scope
        == if s.name == app.name {
            "app"
        } else {
            "roomchat"
        }));
    assert!(
        spans.iter().all(|s| s.trace_id == app.trace_id),
        "one trace"
    );
    let calls: Vec<&Span> = spans
        .iter()
        .filter(|s| s.name == "roomchat list_users")
        .collect();
    assert_eq!(calls.len(), 2, "two list_users calls");
    let (retried, failed) = (calls[0], calls[1]);
    for call in [retried, failed] {
        assert_eq!(call.parent_span_id, app.span_id);
        assert_eq!(call.kind, 1, "INTERNAL");
        assert_eq!(
            call.attr("roomchat.operation"),
            Some(Value::from("list_users"))
        );
    }
    let attempts_of = |call: &Span| -> Vec<&Span> {
        spans
            .iter()
            .filter(|s| s.parent_span_id == call.span_id)
            .collect()
    };
    let attempts = attempts_of(retried);
    assert_eq!(attempts.len(), 2);
    let (host, port) = emu
        .base_url()
        .split("://")
        .nth(1)
        .unwrap()
        .rsplit_once(':')
        .unwrap();
    for (attempt, status) in attempts.iter().zip([429, 200]) {
        assert_eq!(attempt.name, format!("GET {USERS}"));
        assert_eq!(attempt.kind, 3, "CLIENT");
        assert_eq!(attempt.attr("http.request.method"), Some("GET".into()));
        assert_eq!(attempt.attr("url.template"), Some(USERS.into()));
        assert_eq!(attempt.attr("server.address"), Some(host.into()));
        assert_eq!(
            attempt.attr("server.port"),
            Some(port.parse::<i64>().unwrap().into())
        );
        assert_eq!(attempt.attr("network.protocol.version"), Some("1.1".into()));
        assert_eq!(
            attempt.attr("http.response.status_code"),
            Some(status.into())
        );
    }
    // As HTTP client instrumentations put it: the status as text; roomchat's kind beside it.
    assert_eq!(attempts[0].attr("error.type"), Some("429".into()));
    assert_eq!(
        attempts[0].attr("roomchat.error.kind"),
        Some("rate_limited".into())
    );
    assert_eq!(attempts[0].status_code, 2, "ERROR");
    assert_eq!(attempts[0].attr("http.request.resend_count"), None);
    assert_eq!(
        attempts[1].attr("http.request.resend_count"),
        Some(1.into())
    );
    assert_eq!(attempts[1].status_code, 0, "UNSET");
    assert_eq!(retried.attr("roomchat.attempts"), Some(2.into()));
    assert!(retried.events.iter().any(|e| e == "roomchat.retry"));
    assert_eq!(failed.status_code, 2, "the failed call is an ERROR");
    assert_eq!(failed.attr("error.type"), Some("invalid_request".into()));
    let raw = spans.iter().find(|s| s.name == "roomchat raw").unwrap();
    let url = attempts_of(raw)[0].attr("url.full").unwrap();
    assert!(
        url.as_str()
            .unwrap()
            .ends_with("?publicKey=REDACTED&accessToken=REDACTED"),
        "{url}"
    );
    assert!(
        spans
            .iter()
            .any(|s| s.events.iter().any(|e| e == "roomchat.budget.degraded")),
        "the Redis budget's failure is an event"
    );

    // Metrics: a duration per attempt (the conventions' buckets), the retry by reason.
    let metrics = metrics(&batches);
    let (_, unit, _) = metrics
        .iter()
        .find(|(n, _, _)| n == "http.client.request.duration")
        .unwrap();
    assert_eq!(unit, "s");
    let durations = points(&metrics, "http.client.request.duration");
    let users = |attrs: &[(String, Value)], status: i64| {
        string_attr(attrs, "url.template").as_deref() == Some(USERS)
            && string_attr(attrs, "http.request.method").as_deref() == Some("GET")
            && int_attr(attrs, "http.response.status_code") == Some(status)
    };
    let count = |status: i64| -> i64 {
        durations
            .iter()
            .filter(|(a, _)| users(a, status))
            .map(|(_, p)| int(&p["count"]))
            .sum()
    };
    assert_eq!((count(429), count(200), count(400)), (1, 1, 1));
    for (attrs, point) in &durations {
        let bounds: Vec<f64> = point["explicitBounds"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b.as_f64().unwrap())
            .collect();
        assert_eq!(
            bounds,
            [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0]
        );
        assert!(string_attr(attrs, "url.full").is_none(), "low cardinality");
    }
    let attempts_made: i64 = durations.iter().map(|(_, p)| int(&p["count"])).sum();
    let attempt_spans = spans.iter().filter(|s| s.kind == 3).count() as i64;
    assert_eq!(attempts_made, attempt_spans, "a duration per attempt span");
    let retries = points(&metrics, "roomchat.client.retries");
    assert!(retries.iter().any(|(a, p)| {
        string_attr(a, "roomchat.retry.reason").as_deref() == Some("429") && int(&p["asInt"]) == 1
    }));
    let calls_made: i64 = points(&metrics, "roomchat.client.call.duration")
        .iter()
        .map(|(_, p)| int(&p["count"]))
        .sum();
    assert_eq!(calls_made, 5);
    let remaining = points(&metrics, "roomchat.rate_limit.remaining");
    assert_eq!(remaining.len(), 1, "one series per client");
    assert!(int_attr(&remaining[0].0, "roomchat.client.id").is_some());

    // No secret in any form, in the file as written or in its strings as decoded
    // (a JSON writer may escape a character: the check does not depend on how).
    let decoded: String = batches.iter().map(|b| b.to_string()).collect();
    for secret in [
        PRIVATE_KEY,
        PUBLIC_KEY,
        PROXY_PASSWORD,
        REDIS_PASSWORD,
        token.as_str(),
    ] {
        for form in [secret.to_owned(), encoded(secret)] {
            assert!(!received.contains(&form), "{form} reached the collector");
            assert!(!decoded.contains(&form), "{form} reached the collector");
        }
    }

    let points_received: usize = metrics
        .iter()
        .map(|(name, _, _)| points(&metrics, name).len())
        .sum();
    let names: BTreeSet<&str> = spans.iter().map(|s| s.name.as_str()).collect();
    println!(
        "otel e2e rust: the collector received {} spans ({}) and {} metric points ({} metrics) over OTLP/HTTP; \
         no key, token, proxy or Redis password in its {} bytes",
        spans.len(),
        names.into_iter().collect::<Vec<_>>().join(", "),
        points_received,
        metrics.len(),
        received.len()
    );
}
