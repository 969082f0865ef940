//! What observability costs a call, one call at a time, against a client
//! without instrumentation (with the feature, `OpenTelemetry::disabled()`: the
//! path of a client built without it), in paired rounds, calls alternating:
//!
//! * an observer that does nothing (the hook API the languages use);
//! * with the feature `opentelemetry`: the global providers with no SDK set
//!   (the API's no-op: the bound is +1 % per call), and an SDK (a
//!   batch span processor to an exporter that drops the spans, and a meter
//!   provider).
//!
//! Each for the users listing (50 a page, from the emulator) and for a call
//! refused at connect (no server work: the instrumentation's own cost stands
//! out). Wall time and the calling thread's CPU time per call, both printed:
//! on a shared machine the wall time is mostly the other processes' noise
//! (the first line compares a client with itself to show how much). Run it
//! on the previous revision too for a before/after of the plain call. Idle,
//! then loaded: one busy-loop process per core beside it. Printed, never
//! asserted.
//!
//! `cargo bench -p roomchat --bench observability [--features opentelemetry]`
//! (`ROOMCHAT_BENCH_N`: calls per side, default 3000).

use std::sync::Arc;
use std::time::{Duration, Instant};

use roomchat::instrument::{CallInfo, CallObserver};

use roomchat::{Client, ClientBuilder, ListUsers, RateLimitConfig};
use roomchat_emulator::bench::{calls_from_env, idle_and_loaded, unthrottled_emulator};

fn builder(base_url: &str, key: &str) -> ClientBuilder {
    let builder = Client::builder(key)
        .base_url(base_url)
        .rate_limit(RateLimitConfig::new(u32::MAX, Duration::from_secs(60)))
        .max_retries(0);
    // The path of a client without the feature: nothing but what is added below.
    #[cfg(feature = "opentelemetry")]
    let builder = builder.opentelemetry(roomchat::OpenTelemetry::disabled());
    builder
}

/// An observer that does nothing with what it is told: the hook API's own cost.
struct Nothing;

impl CallObserver for Nothing {}

/// The clients compared, by name: first the one without instrumentation.
fn clients(base_url: &str, key: &str, #[allow(unused)] sdk: &Sdk) -> Vec<(&'static str, Client)> {
    #[allow(unused_mut)]
    let mut clients = vec![
        ("none", builder(base_url, key).build().expect("client")),
        // Another client without instrumentation: what two clients differ by
        // when nothing differs (each has its own pool; both sides alternate).
        (
            "none, another",
            builder(base_url, key).build().expect("client"),
        ),
        (
            "no-op observer",
            builder(base_url, key)
                .instrumentation(Arc::new(|_: &CallInfo<'_>| {
                    Some(Box::new(Nothing) as Box<dyn CallObserver>)
                }))
                .build()
                .expect("client"),
        ),
    ];
    #[cfg(feature = "opentelemetry")]
    {
        use roomchat::OpenTelemetry;
        // The default: the global providers, none set (the API's no-op).
        clients.push((
            "API, no SDK",
            builder(base_url, key)
                .opentelemetry(OpenTelemetry::global())
                .build()
                .expect("client"),
        ));
        clients.push((
            "SDK + batch",
            builder(base_url, key)
                .opentelemetry(OpenTelemetry::with_providers(
                    &sdk.tracer_provider,
                    &sdk.meter_provider,
                ))
                .build()
                .expect("client"),
        ));
    }
    clients
}

/// The calling thread's CPU time: what the client itself spends on a call,
/// whatever else the machine runs (wall time on a shared machine is mostly
/// the other processes' noise).
fn thread_cpu() -> Duration {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid out-pointer; this clock exists on every Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// Wall and calling-thread CPU time of one `call`.
fn timed(call: &dyn Fn()) -> (Duration, Duration) {
    let (wall, cpu) = (Instant::now(), thread_cpu());
    call();
    (wall.elapsed(), thread_cpu().saturating_sub(cpu))
}

/// Paired rounds of `a` and `b`, calls alternating; prints µs per call (wall
/// and calling-thread CPU) and the ratios, medians of 9 rounds.
fn compare(
    title: &str,
    calls: usize,
    (a_name, a): (&str, &dyn Fn()),
    (b_name, b): (&str, &dyn Fn()),
) {
    for _ in 0..50 {
        a();
        b();
    }
    let per_round = (calls / 9).max(1);
    let mut rounds = Vec::new();
    let mut totals = [Duration::ZERO; 4];
    for _ in 0..9 {
        let mut round = [Duration::ZERO; 4];
        for call in 0..per_round {
            let order: [(usize, &dyn Fn()); 2] = if call % 2 == 0 {
                [(0, a), (2, b)]
            } else {
                [(2, b), (0, a)]
            };
            for (slot, f) in order {
                let (wall, cpu) = timed(f);
                round[slot] += wall;
                round[slot + 1] += cpu;
            }
        }
        for (total, part) in totals.iter_mut().zip(round) {
            *total += part;
        }
        rounds.push(round);
    }
    let median = |f: &dyn Fn(&[Duration; 4]) -> f64| {
        let mut v: Vec<f64> = rounds.iter().map(f).collect();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let n = (per_round * 9) as f64;
    let us = |d: Duration| d.as_secs_f64() * 1e6 / n;
    println!("{title} x {} calls:", per_round * 9);
    for (name, wall, cpu) in [
        (a_name, totals[0], totals[1]),
        (b_name, totals[2], totals[3]),
    ] {
        println!(
            "  {name:<14} {:>8.1} us/call wall, {:>7.2} us/call calling-thread CPU",
            us(wall),
            us(cpu)
        );
    }
    let extra_ns = (totals[1].as_secs_f64() - totals[3].as_secs_f64()) * 1e9 / n;
    println!(
        "  {a_name} / {b_name}: wall {:.3} (median of rounds), calling-thread CPU {:.3}; {extra_ns:+.0} ns of CPU per call = {:+.2} % of the call's wall time",
        median(&|r| r[0].as_secs_f64() / r[2].as_secs_f64()),
        median(&|r| r[1].as_secs_f64() / r[3].as_secs_f64()),
        extra_ns / (us(totals[2]) * 1e3) * 100.0,
    );
}

fn main() {
    let calls = calls_from_env(3000);
    let emulator = unthrottled_emulator(50);
    let sdk = Sdk::new();
    let served = clients(emulator.base_url(), &emulator.private_key(), &sdk);
    // Nothing listens there: each call is one attempt refused at connect, with
    // no server work, so what differs is the client's own.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("port");
    let nowhere = format!("http://{}", closed.local_addr().expect("address"));
    drop(closed);
    let refused = clients(&nowhere, "sk_live_bench_refused", &sdk);
    let list_users = |client: &Client| {
        let page = client
            .list_users(&ListUsers::page(50, 0))
            .expect("list users");
        assert_eq!(page.data.len(), 50);
    };
    let refused_call = |client: &Client| {
        let e = client.list_chat_rooms().expect_err("nothing listens");
        assert_eq!(e.kind(), roomchat::ErrorKind::Connection);
    };
    idle_and_loaded(calls, (calls / 3).max(300), |label, calls| {
        let none = &served[0].1;
        for (name, client) in &served[1..] {
            compare(
                &format!("{label}: list_users (50 users), {name} vs no instrumentation"),
                calls,
                (name, &|| list_users(client)),
                ("none", &|| list_users(none)),
            );
        }
        let none = &refused[0].1;
        for (name, client) in &refused[1..] {
            compare(
                &format!("{label}: a call refused at connect, {name} vs no instrumentation"),
                calls,
                (name, &|| refused_call(client)),
                ("none", &|| refused_call(none)),
            );
        }
    });
}

#[cfg(not(feature = "opentelemetry"))]
struct Sdk;

#[cfg(not(feature = "opentelemetry"))]
impl Sdk {
    fn new() -> Sdk {
        Sdk
    }
}

#[cfg(feature = "opentelemetry")]
use with_sdk::Sdk;

#[cfg(feature = "opentelemetry")]
mod with_sdk {
    use opentelemetry_sdk::error::OTelSdkResult;
    use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
    use opentelemetry_sdk::trace::{BatchSpanProcessor, SdkTracerProvider, SpanData, SpanExporter};

    /// Takes the batches and drops them: the SDK's cost without an exporter's I/O.
    #[derive(Debug)]
    struct Discard;

    impl SpanExporter for Discard {
        async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
            drop(batch);
            Ok(())
        }
    }

    /// An SDK: a batch span processor, and a meter provider whose reader
    /// exports every 60 s (so never during the benchmark).
    pub struct Sdk {
        pub tracer_provider: SdkTracerProvider,
        pub meter_provider: SdkMeterProvider,
    }

    impl Sdk {
        pub fn new() -> Sdk {
            Sdk {
                tracer_provider: SdkTracerProvider::builder()
                    .with_span_processor(BatchSpanProcessor::builder(Discard).build())
                    .build(),
                meter_provider: SdkMeterProvider::builder()
                    .with_reader(PeriodicReader::builder(InMemoryMetricExporter::default()).build())
                    .build(),
            }
        }
    }
}
