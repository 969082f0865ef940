//! The rate budget shared through a real `redis-server` (feature `redis`):
//! several processes on one key, a 429 holding every process off, Redis dying
//! and coming back under each policy, a forked child's own connection, one
//! round trip per call, and no password or key in any output.
#![cfg(all(feature = "redis", target_os = "linux"))]

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant, SystemTime};

use common::redis_server::RedisServer;
use common::*;
use roomchat::{
    BudgetBackend, Client, ErrorKind, Event, EventKind, Level, ListUsers, Observer, OnRedisError,
    RateLimitConfig, RedisBudget,
};
use roomchat_emulator::{Emulator, RateLimit};

fn shared(redis: &RedisServer, policy: OnRedisError) -> RedisBudget {
    RedisBudget::new(redis.url())
        .on_error(policy)
        .connect_timeout(Duration::from_millis(200))
        .io_timeout(Duration::from_millis(200))
        .breaker_cooldown(Duration::from_millis(300))
}

fn emulator_limited(test: &str, requests: u32, window: Duration) -> Emulator {
    emulator_with(test, |c| {
        c.rate_limit = RateLimit { requests, window };
        c.journal_capacity = 100_000;
    })
}

/// An emulator with 2 users and a limit no test reaches, a fresh Redis, and a
/// client whose budget lives there under `fail_closed`.
fn unthrottled_fail_closed(test: &str) -> (Emulator, RedisServer, Client) {
    let emu = emulator_limited(test, 100_000, Duration::from_secs(60));
    emu.seed_users(2);
    let redis = RedisServer::start(None);
    let client = builder(&emu)
        .redis_budget(shared(&redis, OnRedisError::FailClosed))
        .build()
        .unwrap();
    (emu, redis, client)
}

#[test]
fn four_processes_of_four_threads_share_one_budget() {
    let window = Duration::from_secs(3);
    let emu = emulator_limited("redis-processes", 60, window);
    emu.seed_users(2);
    let redis = RedisServer::start(None);
    let run_for = Duration::from_secs(8);
    let began = Instant::now();
    let children: Vec<_> = (0..4)
        .map(|_| {
            fork_child(|| {
                let client = builder(&emu)
                    .rate_limit(RateLimitConfig::new(60, window))
                    .redis_budget(shared(&redis, OnRedisError::FailClosed))
                    .max_retries(0)
                    .build()
                    .unwrap();
                let failures = AtomicUsize::new(0);
                thread::scope(|scope| {
                    for _ in 0..4 {
                        scope.spawn(|| {
                            while began.elapsed() < run_for {
                                if client.list_users(&ListUsers::page(1, 0)).is_err() {
                                    failures.fetch_add(1, Ordering::SeqCst);
                                }
                            }
                        });
                    }
                });
                failures.load(Ordering::SeqCst).min(100) as i32
            })
        })
        .collect();
    let codes: Vec<i32> = children
        .into_iter()
        .map(|pid| wait_child(pid, Duration::from_secs(60)).unwrap_or(-2))
        .collect();
    let journal = emu.journal();
    let answered_429 = journal.iter().filter(|e| e.status == 429).count();
    let mut arrived: Vec<SystemTime> = journal.iter().map(|e| e.received_at).collect();
    arrived.sort();
    let most = busiest_window(&arrived, window);
    figure(format_args!(
        "redis budget: 4 processes x 4 threads for {run_for:?}: {} calls, {answered_429} answered 429, \
         busiest {window:?} window {most} of the service's 60 ({:.1}%); children exited {codes:?}",
        journal.len(),
        most as f64 * 100.0 / 60.0
    ));
    assert_eq!(
        codes,
        [0, 0, 0, 0],
        "a child's calls failed (exit code = failures)"
    );
    assert_eq!(answered_429, 0);
    assert!(most <= 60);
    assert!(
        most >= 57,
        "the busiest window used {most} of 60: under 95%"
    );
}

#[test]
fn a_429_in_one_process_holds_the_others_off() {
    let emu = emulator_limited("redis-429", 100_000, Duration::from_secs(60));
    emu.seed_users(2);
    let redis = RedisServer::start(None);
    let run_for = Duration::from_secs(4);
    let began = Instant::now();
    let calls_until = |client: &Client| {
        let mut failures = 0;
        while began.elapsed() < run_for {
            if client.list_users(&ListUsers::page(1, 0)).is_err() {
                failures += 1;
            }
            thread::sleep(Duration::from_millis(10));
        }
        failures
    };
    let make = || {
        builder(&emu)
            .redis_budget(shared(&redis, OnRedisError::FailClosed))
            .build()
            .unwrap()
    };
    let child = fork_child(|| calls_until(&make()).min(100));
    // Once the child calls (its first request arrived), the parent calls too; one of
    // them meets the 429.
    let deadline = Instant::now() + Duration::from_secs(30);
    while arrivals(&emu, "GET", USERS) == 0 {
        assert!(Instant::now() < deadline, "the child never called");
        thread::sleep(Duration::from_millis(2));
    }
    emu.add_fault(once(
        "GET",
        USERS,
        respond(
            429,
            r#"{"message":"Too many requests"}"#,
            &[("Retry-After", "2")],
        ),
    ));
    let parent_failures = calls_until(&make());
    assert_eq!(wait_child(child, Duration::from_secs(30)), Some(0));
    assert_eq!(parent_failures, 0);
    let journal = emu.journal();
    let hit = journal
        .iter()
        .find(|e| e.status == 429)
        .expect("the 429 fired");
    // A request admitted before the 429 came back may still arrive just after it.
    let in_flight = hit.received_at + Duration::from_millis(100);
    let held_until = hit.received_at + Duration::from_millis(1900);
    let during_hold = journal
        .iter()
        .filter(|e| e.received_at > in_flight && e.received_at < held_until)
        .count();
    let after_hold = journal
        .iter()
        .filter(|e| e.received_at >= held_until)
        .count();
    figure(format_args!(
        "redis budget: a 429 (Retry-After 2) held both processes off: {during_hold} arrivals from 0.1 s to 1.9 s after it, {after_hold} after"
    ));
    assert_eq!(during_hold, 0, "a process sent during the hold");
    assert!(after_hold > 10, "the calls resumed after the hold");
}

#[test]
fn redis_dying_and_coming_back_under_each_policy() {
    let emu = emulator_limited("redis-outage", 100_000, Duration::from_secs(60));
    emu.seed_users(2);
    for policy in [
        OnRedisError::LocalFallback,
        OnRedisError::FailOpen,
        OnRedisError::FailClosed,
    ] {
        let mut redis = RedisServer::start(None);
        let client = builder(&emu)
            .redis_budget(
                shared(&redis, policy)
                    .key_prefix(format!("outage-{}", policy.name()))
                    .breaker_cooldown(Duration::ZERO),
            )
            .max_retries(0)
            .build()
            .unwrap();
        client.list_users(&ListUsers::page(1, 0)).unwrap();
        let state = client.rate_limit_state();
        assert_eq!(
            (state.backend, state.degraded, state.used),
            (BudgetBackend::Redis, false, 1)
        );

        let expect = |when: &str| {
            for _ in 0..5 {
                let started = Instant::now();
                let result = client.list_users(&ListUsers::page(1, 0));
                let took = started.elapsed();
                assert!(
                    took < Duration::from_secs(1),
                    "{policy:?} {when}: a call took {took:?}"
                );
                match policy {
                    OnRedisError::FailClosed => {
                        assert_eq!(result.unwrap_err().kind(), ErrorKind::BudgetUnavailable)
                    }
                    _ => assert!(result.is_ok(), "{policy:?} {when}: {result:?}"),
                }
            }
            assert!(client.rate_limit_state().degraded, "{policy:?} {when}");
        };
        redis.kill();
        expect("with Redis dead");
        redis.restart();
        redis.freeze(true);
        // No cooldown (the client's breaker is shut at once): every call of these
        // tries Redis, so each meets the frozen server, and the first call after
        // the restart below reaches it, with no wait standing in for the breaker.
        expect("with Redis frozen");
        redis.freeze(false);
        redis.kill();
        redis.restart(); // empty, script cache gone (NOSCRIPT)
        client.list_users(&ListUsers::page(1, 0)).unwrap();
        let state = client.rate_limit_state();
        assert!(!state.degraded, "{policy:?}: the shared budget resumes");
        // Back from the local fallback, the 10 starts it admitted are entered
        // first, for each of the 4 expected processes (the default).
        let local = if policy == OnRedisError::LocalFallback {
            4 * 10
        } else {
            0
        };
        assert_eq!(
            state.used,
            1 + local,
            "{policy:?}: counted in the new Redis"
        );
        // The starts list and the hold key, made afresh.
        assert_eq!(redis.command(&["DBSIZE"]).as_deref(), Some(":2"));
    }
}

#[test]
fn a_forked_child_uses_its_own_connection() {
    let (_emu, redis, client) = unthrottled_fail_closed("redis-fork");
    client.list_users(&ListUsers::page(1, 0)).unwrap();
    assert!(redis.has_clients(1), "{} connections", redis.client_count());
    let child = fork_child(|| {
        // The parent's Redis socket is not the child's to hold (hardening round 2, defect 12).
        if sockets_to(redis.port) != 0 {
            return 3;
        }
        for _ in 0..3 {
            if client.list_users(&ListUsers::page(1, 0)).is_err() {
                return 1;
            }
        }
        // The parent's connection and the child's own.
        if !redis.has_clients(2) {
            return 2;
        }
        0
    });
    assert_eq!(wait_child(child, Duration::from_secs(30)), Some(0));
    client.list_users(&ListUsers::page(1, 0)).unwrap();
    assert_eq!(
        client.rate_limit_state().used,
        5,
        "parent and child counted in one budget"
    );
}

/// The commands the budget sent (the helper's own `AUTH`, `INFO` and `CLIENT`
/// left out), by name.
fn budget_commands(redis: &RedisServer) -> Vec<(String, u64)> {
    redis
        .command_calls()
        .into_iter()
        .filter(|(name, _)| !["auth", "info", "client"].contains(&name.split('|').next().unwrap()))
        .collect()
}

#[test]
fn one_redis_round_trip_per_call() {
    let (_emu, redis, client) = unthrottled_fail_closed("redis-round-trips");
    // The first call connects and loads the script; the steady state starts after it.
    client.list_users(&ListUsers::page(1, 0)).unwrap();
    let before = budget_commands(&redis);
    const CALLS: u64 = 200;
    for _ in 0..CALLS {
        client.list_users(&ListUsers::page(1, 0)).unwrap();
    }
    let after = budget_commands(&redis);
    let delta: Vec<(String, u64)> = after
        .iter()
        .map(|(name, calls)| {
            let was = before
                .iter()
                .find(|(n, _)| n == name)
                .map_or(0, |(_, c)| *c);
            (name.clone(), calls - was)
        })
        .filter(|(_, calls)| *calls > 0)
        .collect();
    let evalsha = delta
        .iter()
        .find(|(n, _)| n == "evalsha")
        .map_or(0, |(_, c)| *c);
    let inside: Vec<&(String, u64)> = delta.iter().filter(|(n, _)| n != "evalsha").collect();
    figure(format_args!(
        "redis budget: {CALLS} calls sent {evalsha} EVALSHA and no other command (the script ran {})",
        inside
            .iter()
            .map(|(name, calls)| format!("{} {calls}", name.to_uppercase()))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    // Redis counts the commands a script runs as well as the EVALSHA that ran
    // it: one EVALSHA per call, and every other command one the acquire
    // script itself calls (each at most once per run, but LINDEX, which finds
    // the window's starts by bisection: at most once per halving of the list,
    // which grows by one a call here), so none was a round trip of its own.
    let source = include_str!("../src/budget/shared_budget.rs");
    let script = &source[source.find("const ACQUIRE").unwrap()..];
    let script = &script[..script.find("\"#;").unwrap()];
    for (name, calls) in inside {
        assert!(
            script.contains(&format!("redis.call('{}'", name.to_uppercase())),
            "{name} is not a command of the acquire script: a round trip of its own ({delta:?})"
        );
        let halvings = u64::from(u64::BITS - (CALLS + 2).leading_zeros());
        let bound = if name == "lindex" {
            CALLS * halvings
        } else {
            CALLS
        };
        assert!(
            *calls <= bound,
            "{name} ran {calls} times for {CALLS} calls"
        );
    }
    assert_eq!(evalsha, CALLS, "one EVALSHA per call ({delta:?})");
}

#[derive(Default)]
struct Lines(Mutex<Vec<String>>);

impl Observer for Lines {
    fn enabled(&self, _level: Level) -> bool {
        true
    }
    fn event(&self, event: &Event<'_>) {
        if event.kind == EventKind::BudgetDegraded {
            assert_eq!(event.level(), Level::Warning);
        }
        self.0.lock().unwrap().push(event.message());
    }
}

#[test]
fn no_redis_password_or_private_key_in_any_output() {
    let emu = emulator_limited("redis-secrets", 100_000, Duration::from_secs(60));
    let key = emu.private_key();
    let password = "s3cret-redis-password-77";
    let mut redis = RedisServer::start(Some(password));
    let lines = Arc::new(Lines::default());
    let budget = shared(&redis, OnRedisError::FailClosed);
    let client = builder(&emu)
        .redis_budget(budget.clone())
        .observer(lines.clone())
        .max_retries(0)
        .build()
        .unwrap();
    client.list_users(&ListUsers::default()).unwrap();
    redis.kill();
    let down = client.list_users(&ListUsers::default()).unwrap_err();
    let wrong = builder(&emu)
        .redis_budget(
            RedisBudget::new(format!(
                "redis://:wrong-{password}@127.0.0.1:{}/0",
                redis.port
            ))
            .on_error(OnRedisError::FailClosed),
        )
        .build()
        .unwrap();
    redis.restart();
    let refused = wrong.list_users(&ListUsers::default()).unwrap_err();
    let mut shown = vec![
        format!("{budget:?}"),
        format!("{client:?}"),
        format!("{:?}", client.rate_limit_state()),
    ];
    for error in [&down, &refused] {
        assert_eq!(error.kind(), ErrorKind::BudgetUnavailable, "{error}");
        shown.extend([
            error.to_string(),
            format!("{error:?}"),
            format!("{error:#?}"),
        ]);
    }
    shown.extend(lines.0.lock().unwrap().iter().cloned());
    assert!(shown
        .iter()
        .any(|l| l.contains("the shared rate-limit budget failed")));
    for text in &shown {
        assert!(
            !text.contains(password),
            "the Redis password leaked: {text}"
        );
        assert!(
            !text.contains(&key) && !text.contains(&key[8..]),
            "the key leaked: {text}"
        );
    }
}

#[test]
fn no_redis_password_in_any_output_for_every_url_form() {
    let emu = emulator_limited("redis-url-forms", 100_000, Duration::from_secs(60));
    let password = "p4ss-in-a-url-form-31";
    let socket = std::env::temp_dir().join(format!("roomchat-absent-{}.sock", std::process::id()));
    let socket = socket.display();
    for url in [
        format!("redis://:{password}@127.0.0.1:1/0"),
        format!("redis://roomchat:{password}@127.0.0.1:1/0"),
        format!("redis+unix://{socket}?pass={password}"),
        format!("redis+unix://{socket}?db=0&password={password}"),
        format!("unix://{socket}?user=roomchat&pass={password}"),
    ] {
        let lines = Arc::new(Lines::default());
        let budget = RedisBudget::new(&url).on_error(OnRedisError::FailClosed);
        let client = builder(&emu)
            .redis_budget(budget.clone())
            .observer(lines.clone())
            .max_retries(0)
            .build()
            .unwrap();
        let error = client.list_users(&ListUsers::default()).unwrap_err();
        assert_eq!(error.kind(), ErrorKind::BudgetUnavailable, "{url}: {error}");
        let mut shown = vec![
            budget.redacted_url(),
            format!("{budget:?}"),
            format!("{client:?}"),
            format!("{:?}", client.rate_limit_state()),
            error.to_string(),
            format!("{error:?}"),
        ];
        shown.extend(lines.0.lock().unwrap().iter().cloned());
        assert!(shown[0].contains("REDACTED"), "{url}: {}", shown[0]);
        for text in &shown {
            assert!(
                !text.contains(password),
                "{url}: the password leaked: {text}"
            );
        }
    }
}

/// The Redis key holding a key's 429 hold (as the client names it: see `shared_budget`).
fn hold_key(prefix: &str, private_key: &str) -> String {
    common::redis_server::budget_key(prefix, private_key, "hold")
}

#[test]
fn a_hold_read_back_from_redis_is_capped_at_two_windows() {
    let emu = emulator_limited("redis-hold-cap", 100_000, Duration::from_secs(60));
    let redis = RedisServer::start(None);
    let client = builder(&emu)
        .rate_limit(RateLimitConfig::new(100_000, Duration::from_secs(10)).fail_fast())
        .redis_budget(shared(&redis, OnRedisError::FailClosed))
        .build()
        .unwrap();
    client.list_users(&ListUsers::default()).unwrap();
    // A hold until ~31 years after the epoch past today, as a client fed a time
    // in the wrong unit would have written (Redis time in µs).
    let hold = hold_key("roomchat", &emu.private_key());
    let until = SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_micros()
        + 1_000_000_000_000_000;
    let reply = redis.command(&["SET", &hold, &until.to_string(), "PX", "1000000000000"]);
    assert_eq!(reply.as_deref(), Some("+OK"));
    let error = client.list_users(&ListUsers::default()).unwrap_err();
    assert_eq!(error.kind(), ErrorKind::RateLimited, "{error}");
    let wait = error.retry_after().unwrap();
    figure(format_args!(
        "redis budget: a 31-year hold read back from Redis made a wait of {:.1} s",
        wait.as_secs_f64()
    ));
    // Two windows of 10 s plus the jitter allowance, and the gate's jitter.
    assert!(wait <= Duration::from_secs(23), "{wait:?}");
}

/// A "Redis" that accepts connections and never answers (a black hole), and the
/// count of connections it has accepted (a state a test waits for).
fn black_hole() -> (String, thread::JoinHandle<()>, Arc<AtomicUsize>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!(
        "redis://127.0.0.1:{}",
        listener.local_addr().unwrap().port()
    );
    listener.set_nonblocking(true).unwrap();
    let accepted = Arc::new(AtomicUsize::new(0));
    let counted = accepted.clone();
    let holder = thread::spawn(move || {
        let mut held = Vec::new();
        let until = Instant::now() + Duration::from_secs(8);
        while Instant::now() < until {
            if let Ok((stream, _)) = listener.accept() {
                held.push(stream);
                counted.fetch_add(1, Ordering::SeqCst);
            }
            thread::sleep(Duration::from_millis(5));
        }
    });
    (url, holder, accepted)
}

/// Until the black hole has accepted a connection: a caller is waiting on it.
fn until_connected(accepted: &AtomicUsize) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while accepted.load(Ordering::SeqCst) == 0 {
        assert!(Instant::now() < deadline, "no caller connected to Redis");
        thread::sleep(Duration::from_millis(2));
    }
}

/// An emulator, and a client without retries whose budget is in a black-holed
/// Redis under `policy`, with `timeout` for connecting and each round trip; the
/// black hole's count of connections.
fn black_holed_client(
    test: &str,
    policy: OnRedisError,
    timeout: Duration,
) -> (Emulator, Client, thread::JoinHandle<()>, Arc<AtomicUsize>) {
    let emu = emulator_limited(test, 100_000, Duration::from_secs(60));
    let (url, holder, accepted) = black_hole();
    let client = builder(&emu)
        .redis_budget(
            RedisBudget::new(url)
                .on_error(policy)
                .connect_timeout(timeout)
                .io_timeout(timeout),
        )
        .max_retries(0)
        .build()
        .unwrap();
    (emu, client, holder, accepted)
}

#[test]
fn a_black_holed_redis_delays_concurrent_callers_once_not_one_after_another() {
    let (_emu, client, _holder, accepted) = black_holed_client(
        "redis-black-hole",
        OnRedisError::LocalFallback,
        Duration::from_millis(500),
    );
    let started = Instant::now();
    let callers: Vec<_> = (0..16)
        .map(|_| {
            let client = client.clone();
            thread::spawn(move || {
                client.list_users(&ListUsers::page(1, 0)).unwrap();
                started.elapsed()
            })
        })
        .collect();
    // While they wait on Redis, the state is read without asking it.
    until_connected(&accepted);
    let asked = Instant::now();
    let state = client.rate_limit_state();
    let state_took = asked.elapsed();
    let slowest = callers
        .into_iter()
        .map(|c| c.join().unwrap())
        .max()
        .unwrap();
    figure(format_args!(
        "redis budget: 16 concurrent calls with a black-holed Redis (500 ms timeouts) all done in {} ms (was ~8 s); rate_limit_state took {} µs meanwhile",
        slowest.as_millis(),
        state_took.as_micros()
    ));
    assert!(slowest < Duration::from_millis(1500), "{slowest:?}");
    assert!(state_took < Duration::from_millis(20), "{state_took:?}");
    assert_eq!(state.backend, BudgetBackend::Redis);
    // The breaker is open now: the next call falls back at once, and says degraded.
    let again = Instant::now();
    client.list_users(&ListUsers::page(1, 0)).unwrap();
    assert!(again.elapsed() < Duration::from_millis(200));
    assert!(client.rate_limit_state().degraded);
}

#[test]
fn waiting_for_redis_ends_at_a_cancel() {
    let (_emu, client, _holder, accepted) = black_holed_client(
        "redis-wait-cancel",
        OnRedisError::FailClosed,
        Duration::from_secs(3),
    );
    // One caller is stuck connecting; the next waits for it, and is cancelled.
    let stuck = {
        let client = client.clone();
        thread::spawn(move || client.list_users(&ListUsers::page(1, 0)).unwrap_err())
    };
    until_connected(&accepted);
    let token = roomchat::CancelToken::new();
    // The cancel comes while the call waits (its connect timeout is 3 s); its lateness
    // is timed from the instant of the cancel, not from when it was meant to come.
    let canceller = {
        let token = token.clone();
        thread::spawn(move || {
            thread::sleep(Duration::from_millis(200));
            token.cancel();
            Instant::now()
        })
    };
    let error = client
        .with_cancel(token)
        .list_users(&ListUsers::page(1, 0))
        .unwrap_err();
    let returned = Instant::now();
    let cancelled = canceller.join().unwrap();
    let late = returned.saturating_duration_since(cancelled);
    figure(format_args!(
        "redis budget: a cancel while waiting for Redis was seen after {} ms",
        late.as_millis()
    ));
    assert_eq!(error.kind(), ErrorKind::Cancelled, "{error}");
    assert!(late < Duration::from_millis(200), "{late:?}");
    assert_eq!(stuck.join().unwrap().kind(), ErrorKind::BudgetUnavailable);
}

#[test]
fn keys_on_one_redis_share_its_connections() {
    let redis = RedisServer::start(None);
    let emulators: Vec<Emulator> = (0..40)
        .map(|i| {
            emulator_limited(
                &format!("redis-many-keys-{i}"),
                100_000,
                Duration::from_secs(60),
            )
        })
        .collect();
    let clients: Vec<Client> = emulators
        .iter()
        .map(|emu| {
            builder(emu)
                .redis_budget(shared(&redis, OnRedisError::FailClosed))
                .build()
                .unwrap()
        })
        .collect();
    for client in &clients {
        client.list_users(&ListUsers::page(1, 0)).unwrap();
    }
    let connections = redis.client_count();
    figure(format_args!(
        "redis budget: 40 keys on one Redis use {connections} connection(s) (was one per key)"
    ));
    // The count includes the helper's own connection asking.
    assert!(connections <= 2, "{connections} connections");
}

#[test]
fn a_rediss_budget_trusts_what_the_client_trusts() {
    let emu = emulator_limited("redis-tls", 100_000, Duration::from_secs(60));
    emu.seed_users(1);
    let dir = std::env::temp_dir().join(format!("roomchat-redis-tls-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    common::redis_server::make_certificates(&dir);
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let binary = std::env::var("REDIS_SERVER").unwrap_or_else(|_| "redis-server".into());
    let path = |name: &str| dir.join(name).display().to_string();
    let mut server = std::process::Command::new(binary)
        .args([
            "--port",
            "0",
            "--tls-port",
            &port.to_string(),
            "--bind",
            "127.0.0.1",
        ])
        .args([
            "--tls-cert-file",
            &path("server.crt"),
            "--tls-key-file",
            &path("server.key"),
        ])
        .args([
            "--tls-ca-cert-file",
            &path("ca.crt"),
            "--tls-auth-clients",
            "no",
        ])
        .args(["--save", "", "--appendonly", "no", "--loglevel", "warning"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("redis-server starts");
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "redis-server did not listen on its TLS port"
        );
        thread::sleep(Duration::from_millis(20));
    }
    let budget = RedisBudget::new(format!("rediss://127.0.0.1:{port}/0"))
        .on_error(OnRedisError::FailClosed)
        .connect_timeout(Duration::from_secs(2))
        .io_timeout(Duration::from_secs(2));
    let ca = std::fs::read_to_string(dir.join("ca.crt")).unwrap();
    let trusting = |prefix: &str| {
        builder(&emu)
            .redis_budget(budget.clone().key_prefix(prefix))
            .add_root_certificates_pem(&ca)
            .build()
            .unwrap()
    };
    let wary = |prefix: &str| {
        builder(&emu)
            .redis_budget(budget.clone().key_prefix(prefix))
            .max_retries(0)
            .build()
            .unwrap()
    };
    let trusted = |client: &Client| {
        client.list_users(&ListUsers::default()).unwrap();
        let state = client.rate_limit_state();
        assert_eq!(
            (state.backend, state.degraded, state.used),
            (BudgetBackend::Redis, false, 1)
        );
    };
    let refused = |client: &Client| {
        let error = client.list_users(&ListUsers::default()).unwrap_err();
        assert_eq!(error.kind(), ErrorKind::BudgetUnavailable, "{error}");
        error
    };

    // Trusting the CA (the client's own option): the budget lives in Redis over TLS.
    // Without it, the same Redis is not trusted: fail closed; also while a
    // client that trusts it uses the same URL and key (its link is not shared).
    let first = trusting("tls-one");
    trusted(&first);
    let error = refused(&wary("tls-one"));
    figure(format_args!(
        "redis budget over TLS: trusted with the client's roots; without them: {error}"
    ));
    // The other way round: a client without the roots first, then one with them.
    let second = wary("tls-two");
    refused(&second);
    trusted(&trusting("tls-two"));
    drop((first, second));
    let _ = server.kill();
    let _ = server.wait();
    let _ = std::fs::remove_dir_all(&dir);
}

/// What a descriptor names (`st_dev`, `st_ino`), or `None` when it is not open.
fn names(fd: i32) -> Option<(u64, u64)> {
    // SAFETY: fstat writes into a zeroed stat.
    let mut stat: libc::stat = unsafe { std::mem::zeroed() };
    (unsafe { libc::fstat(fd, &mut stat) } == 0).then_some((stat.st_dev, stat.st_ino))
}

/// The descriptors of this process that are sockets connected to Redis at
/// `port` (TCP) or at the unix socket `path`, leaving out `apart`.
fn redis_sockets(port: u16, path: &std::path::Path, apart: &[i32]) -> Vec<i32> {
    use std::os::unix::ffi::OsStrExt;
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc/self/fd").unwrap().flatten() {
        let Some(fd) = entry.file_name().to_str().and_then(|n| n.parse().ok()) else {
            continue;
        };
        if apart.contains(&fd) {
            continue;
        }
        // SAFETY: getpeername writes at most `len` bytes into a zeroed sockaddr_storage.
        let mut storage: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
        let mut len = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
        let got = unsafe {
            libc::getpeername(
                fd,
                (&mut storage as *mut libc::sockaddr_storage).cast(),
                &mut len,
            )
        };
        if got != 0 {
            continue;
        }
        let to_redis = match i32::from(storage.ss_family) {
            // SAFETY: the family says which address this is.
            libc::AF_INET => {
                let sin = unsafe { &*(&storage as *const _ as *const libc::sockaddr_in) };
                u16::from_be(sin.sin_port) == port
            }
            libc::AF_UNIX => {
                // SAFETY: as above.
                let sun = unsafe { &*(&storage as *const _ as *const libc::sockaddr_un) };
                let bytes: Vec<u8> = sun.sun_path.iter().map(|&c| c as u8).collect();
                let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
                &bytes[..end] == path.as_os_str().as_bytes()
            }
            _ => false,
        };
        if to_redis {
            found.push(fd);
        }
    }
    found
}

/// The library never touches a descriptor it did not make: while an
/// application thread opens connections of its own to the same Redis (unix
/// socket and TCP), many budgets connect; a forked child finds every one of
/// the application's descriptors where it was, and none of the budgets' Redis
/// sockets still shared with the parent. (The budget once took the first new
/// descriptor whose peer looked like Redis for its own, and the child's
/// `/dev/null` went over the application's sockets.)
#[test]
fn a_fork_leaves_the_applications_own_sockets_alone() {
    use std::os::fd::AsRawFd;
    use std::sync::atomic::AtomicBool;

    let emu = emulator_limited("redis-fork-fds", 100_000, Duration::from_secs(60));
    emu.seed_users(1);
    let socket =
        std::env::temp_dir().join(format!("roomchat-fork-fds-{}.sock", std::process::id()));
    let redis = RedisServer::start_with_socket(socket.clone());
    const LINKS: usize = 40;
    // Budgets whose settings differ are links of their own: each connects once.
    let clients: Vec<Client> = (0..2 * LINKS)
        .map(|i| {
            let url = if i % 2 == 0 {
                format!("redis+unix://{}", socket.display())
            } else {
                redis.url()
            };
            let budget = RedisBudget::new(url)
                .on_error(OnRedisError::FailClosed)
                .connect_timeout(Duration::from_millis(1000 + i as u64));
            builder(&emu).redis_budget(budget).build().unwrap()
        })
        .collect();

    // The application: its own connections to the same Redis, opened while the budgets connect.
    let stop = Arc::new(AtomicBool::new(false));
    let opened = Arc::new(AtomicUsize::new(0));
    let application = {
        let (stop, opened, socket, port) =
            (stop.clone(), opened.clone(), socket.clone(), redis.port);
        thread::spawn(move || {
            let mut unix = Vec::new();
            let mut tcp = Vec::new();
            while !stop.load(Ordering::Relaxed) && unix.len() < 2000 {
                unix.push(std::os::unix::net::UnixStream::connect(&socket).unwrap());
                tcp.push(std::net::TcpStream::connect(("127.0.0.1", port)).unwrap());
                opened.fetch_add(2, Ordering::Relaxed);
                thread::sleep(Duration::from_micros(50));
            }
            (unix, tcp)
        })
    };
    while opened.load(Ordering::Relaxed) < 20 {
        thread::yield_now();
    }
    thread::scope(|scope| {
        for share in clients.chunks(clients.len() / 4) {
            scope.spawn(move || {
                for client in share {
                    client.list_users(&ListUsers::page(1, 0)).unwrap();
                }
            });
        }
    });
    stop.store(true, Ordering::Relaxed);
    let (unix, tcp) = application.join().unwrap();
    let mine: Vec<i32> = unix
        .iter()
        .map(|s| s.as_raw_fd())
        .chain(tcp.iter().map(|s| s.as_raw_fd()))
        .collect();
    let before: Vec<Option<(u64, u64)>> = mine.iter().map(|&fd| names(fd)).collect();
    assert!(before.iter().all(Option::is_some));
    let budget_sockets = redis_sockets(redis.port, &socket, &mine).len();
    assert!(
        budget_sockets >= 2 * LINKS,
        "{budget_sockets} budget sockets"
    );

    let child = fork_child(|| {
        let moved = mine
            .iter()
            .zip(&before)
            .filter(|(&fd, was)| names(fd) != **was)
            .count();
        let shared = redis_sockets(redis.port, &socket, &mine).len();
        // The exit code: how many of the application's descriptors moved, +100 when Redis sockets are shared.
        (moved.min(99) + if shared > 0 { 100 } else { 0 }) as i32
    });
    let code = wait_child(child, Duration::from_secs(30));
    println!(
        "fork: {} application sockets opened while {} budgets connected; the child's verdict {code:?} (0: all in place, none of Redis's shared)",
        mine.len(),
        clients.len()
    );
    assert_eq!(
        code,
        Some(0),
        "the child found (code % 100) of the application's descriptors moved, and (code >= 100) budget sockets of the parent's"
    );
    drop((unix, tcp));
    let _ = std::fs::remove_file(&socket);
}

/// The budget's own connection speaks every form of Redis URL: TCP and unix
/// socket, a password with and without a user, a database, RESP2 and RESP3.
#[test]
fn every_redis_url_form_connects() {
    let emu = emulator_limited("redis-url-connect", 100_000, Duration::from_secs(60));
    emu.seed_users(1);
    let password = "p4ss-of-the-url-forms";
    let socket =
        std::env::temp_dir().join(format!("roomchat-url-forms-{}.sock", std::process::id()));
    let redis = RedisServer::start_with(Some(password), Some(socket.clone()));
    let (port, socket_path) = (redis.port, socket.display());
    for (db, url) in [
        (1, format!("redis://:{password}@127.0.0.1:{port}/1")),
        (
            2,
            format!("redis://default:{password}@127.0.0.1:{port}/2?protocol=resp3"),
        ),
        (
            3,
            format!("redis+unix://{socket_path}?pass={password}&db=3"),
        ),
        (
            4,
            format!("unix://{socket_path}?user=default&pass={password}&db=4&protocol=resp3"),
        ),
    ] {
        let client = builder(&emu)
            .redis_budget(RedisBudget::new(&url).on_error(OnRedisError::FailClosed))
            .build()
            .unwrap();
        client.list_users(&ListUsers::page(1, 0)).unwrap();
        let state = client.rate_limit_state();
        assert_eq!(
            (state.backend, state.degraded, state.used),
            (BudgetBackend::Redis, false, 1),
            "db {db}"
        );
        let keyspace = redis.bulk_reply(&["INFO", "keyspace"]).unwrap();
        assert!(
            keyspace.contains(&format!("db{db}:keys=2")),
            "db {db}: {keyspace}"
        );
    }
    let _ = std::fs::remove_file(&socket);
}

/// The ACL line every guide prints is the same everywhere, and is all the
/// budget needs: a user made with exactly it counts in Redis under
/// `fail_closed`; a user made with the line the guides printed before (no
/// command the script runs) is refused, and the error names the permission
/// problem rather than saying Redis cannot be reached.
#[test]
fn the_documented_acl_line_is_all_the_budget_needs() {
    let line = common::redis_server::documented_acl();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    for guide in common::redis_server::ACL_GUIDES {
        let text = std::fs::read_to_string(root.join(guide)).unwrap();
        assert!(
            text.lines()
                .any(|l| l.trim_start_matches("///").trim() == line),
            "{guide} does not print the ACL line `{line}`"
        );
    }
    let emu = emulator_limited("redis-acl", 100_000, Duration::from_secs(60));
    emu.seed_users(1);
    let redis = RedisServer::start(None);
    let password = "acl-pass-w0rd-5";
    assert_eq!(
        redis.set_user(&line, "roomchat", password).as_deref(),
        Some("+OK")
    );
    let old = "ACL SETUSER roomchat on >secret ~roomchat:* +evalsha +eval +script|load +ping";
    assert_eq!(
        redis.set_user(old, "before", password).as_deref(),
        Some("+OK")
    );
    let budget = |user: &str| {
        RedisBudget::new(format!(
            "redis://{user}:{password}@127.0.0.1:{}/0",
            redis.port
        ))
        .on_error(OnRedisError::FailClosed)
    };
    let allowed = builder(&emu)
        .redis_budget(budget("roomchat"))
        .build()
        .unwrap();
    allowed.list_users(&ListUsers::page(1, 0)).unwrap();
    let state = allowed.rate_limit_state();
    assert_eq!(
        (state.backend, state.degraded, state.used),
        (BudgetBackend::Redis, false, 1)
    );
    let refused = builder(&emu)
        .redis_budget(budget("before"))
        .max_retries(0)
        .build()
        .unwrap();
    for attempt in 0..2 {
        // The refusal itself, then the breaker's cooldown: both say why.
        let error = refused.list_users(&ListUsers::page(1, 0)).unwrap_err();
        common::redis_server::assert_refused_for_permission(&error, &[password]);
        if attempt == 0 {
            figure(format_args!(
                "redis budget: with the ACL the guides printed before: {error}"
            ));
        }
    }
}

/// A pooled connection that Redis closed while idle (`timeout 1`, as managed
/// Redis and proxies do) is not Redis failing: the call after a quiet while
/// is made on a new connection, under `fail_closed`, and the breaker stays shut.
#[test]
fn an_idle_connection_closed_by_redis_is_not_a_failure() {
    let (_emu, redis, client) = unthrottled_fail_closed("redis-idle-timeout");
    assert_eq!(
        redis.command(&["CONFIG", "SET", "timeout", "1"]).as_deref(),
        Some("+OK")
    );
    client.list_users(&ListUsers::page(1, 0)).unwrap();
    assert_eq!(redis.client_count(), 1);
    // Quiet until Redis has closed the idle connection.
    let quiet = Instant::now();
    while redis.client_count() != 0 {
        assert!(
            quiet.elapsed() < Duration::from_secs(30),
            "Redis kept the idle connection"
        );
        thread::sleep(Duration::from_millis(50));
    }
    for call in 0..3 {
        client
            .list_users(&ListUsers::page(1, 0))
            .unwrap_or_else(|e| panic!("call {call} after {:?} idle: {e}", quiet.elapsed()));
        let state = client.rate_limit_state();
        assert_eq!(
            (state.backend, state.degraded),
            (BudgetBackend::Redis, false)
        );
    }
    assert_eq!(client.rate_limit_state().used, 4);
    figure(format_args!(
        "redis budget: after {} ms idle (Redis's timeout 1 s closed the connection), 3 calls under fail_closed all counted in Redis",
        quiet.elapsed().as_millis()
    ));
}

/// A link and its pooled connections go with the last client using it: ten
/// URLs (ten databases of one Redis), ten clients each, every client dropped:
/// no connection stays open.
#[test]
fn connections_go_with_the_last_client_of_a_url() {
    let emu = emulator_limited("redis-release", 100_000, Duration::from_secs(60));
    emu.seed_users(1);
    let redis = RedisServer::start(None);
    let clients: Vec<Client> = (0..10)
        .flat_map(|db| {
            let url = format!("redis://127.0.0.1:{}/{db}", redis.port);
            let emu = &emu;
            (0..10).map(move |_| {
                builder(emu)
                    .redis_budget(RedisBudget::new(&url).on_error(OnRedisError::FailClosed))
                    .build()
                    .unwrap()
            })
        })
        .collect();
    for client in &clients {
        client.list_users(&ListUsers::page(1, 0)).unwrap();
    }
    let open = redis.client_count();
    assert_eq!(open, 10, "one connection per URL");
    // Some clients go: every URL still has one, and keeps its connection.
    let (kept, gone): (Vec<_>, Vec<_>) = clients
        .into_iter()
        .enumerate()
        .partition(|(i, _)| i % 10 == 0);
    drop(gone);
    assert!(
        redis.has_clients(10),
        "{} connections",
        redis.client_count()
    );
    drop(kept);
    assert!(
        redis.has_clients(0),
        "{} connections still open after every client went",
        redis.client_count()
    );
    figure(format_args!(
        "redis budget: 10 URLs, 100 clients: {open} connections; all clients dropped: 0 (were 10)"
    ));
}

/// A process back from its local fallback enters what it admitted there into
/// Redis before admitting through it (and as much for each other expected
/// process, which fell back too until it enters its own): another process (here a second client
/// reaching the same Redis by another URL, with its own link and state) then
/// counts them, and the service answers no 429.
#[test]
fn a_return_from_the_fallback_enters_its_local_starts_first() {
    let window = Duration::from_secs(4);
    let emu = emulator_limited("redis-return", 40, window);
    emu.seed_users(1);
    let mut redis = RedisServer::start(None);
    let client = |url: String| {
        builder(&emu)
            .rate_limit(RateLimitConfig::new(40, window).fail_fast())
            .redis_budget(
                RedisBudget::new(url)
                    .on_error(OnRedisError::LocalFallback)
                    .expected_processes(2)
                    .connect_timeout(Duration::from_millis(200))
                    .io_timeout(Duration::from_millis(200))
                    // Every call tries Redis first: the first after the restart
                    // reaches it (no wait standing in for the breaker's cooldown).
                    .breaker_cooldown(Duration::ZERO),
            )
            .max_retries(0)
            .build()
            .unwrap()
    };
    let back = client(format!("redis://127.0.0.1:{}/0", redis.port));
    let other = client(format!("redis://127.0.0.1:{}", redis.port));
    redis.kill();
    // 8 of the fallback's share (40 / 2 processes).
    let local = (0..8)
        .filter(|_| back.list_users(&ListUsers::page(1, 0)).is_ok())
        .count();
    assert_eq!(local, 8);
    assert!(back.rate_limit_state().degraded);
    redis.restart();
    back.list_users(&ListUsers::page(1, 0)).unwrap();
    let state = back.rate_limit_state();
    assert!(!state.degraded);
    // Its own, and as many for the other expected process (which may have
    // counted locally as long: it enters its own when it is back).
    assert_eq!(
        state.used as usize,
        2 * local + 1,
        "the local starts entered first"
    );
    let admitted = (0..40)
        .filter(|_| other.list_users(&ListUsers::page(1, 0)).is_ok())
        .count();
    let answered_429 = emu.journal().iter().filter(|e| e.status == 429).count();
    figure(format_args!(
        "redis budget: back from the fallback ({local} local starts entered first), the other process was admitted {admitted} more; {answered_429} answered 429"
    ));
    assert_eq!(admitted, 39 - 2 * local - 1);
    assert_eq!(answered_429, 0);
}

/// The ids of the connections whose budget script Redis holds (`CLIENT PAUSE`
/// postpones it: `flags=b`, `cmd=evalsha`), once there are `n` of them: a state,
/// polled, with a deadline.
fn held_scripts(redis: &RedisServer, n: usize) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let held: Vec<String> = redis
            .bulk_reply(&["CLIENT", "LIST"])
            .unwrap_or_default()
            .lines()
            .filter(|c| {
                let fields: Vec<&str> = c.split(' ').collect();
                fields.contains(&"cmd=evalsha")
                    && fields
                        .iter()
                        .any(|f| f.strip_prefix("flags=").is_some_and(|v| v.contains('b')))
            })
            .filter_map(|c| Some(c.split(' ').next()?.strip_prefix("id=")?.to_owned()))
            .collect();
        if held.len() == n {
            return held;
        }
        assert!(
            Instant::now() < deadline,
            "Redis holds {} budget scripts, not {n}",
            held.len()
        );
        thread::sleep(Duration::from_millis(10));
    }
}

/// A round trip under way when another caller's fails, and admitted by Redis
/// after the local fallback has admitted starts, is not used: Redis's count held
/// none of them (seen in the failover matrix under load: round trips that began
/// before the failure, admitted after the fallback's, spent the window twice and
/// met 429s). Here Redis holds one caller's script (`CLIENT PAUSE`) while a
/// second caller's connection dies: the breaker opens, the fallback spends its
/// share (4, with the start Redis admitted first), then Redis admits the held
/// one. It must wait for a slot instead of being sent as a fifth start in the
/// service's window.
#[test]
fn an_admission_redis_gave_without_the_fallbacks_starts_is_not_used() {
    let window = Duration::from_secs(10);
    let emu = emulator_limited("redis-stale-admission", 4, window);
    emu.seed_users(1);
    let redis = RedisServer::start(None);
    let client = builder(&emu)
        .rate_limit(RateLimitConfig::new(4, window))
        .redis_budget(
            RedisBudget::new(redis.url())
                .on_error(OnRedisError::LocalFallback)
                .expected_processes(1)
                // The held round trip is held, not timed out; the breaker stays
                // open while the fallback spends its share.
                .connect_timeout(Duration::from_secs(20))
                .io_timeout(Duration::from_secs(20))
                .breaker_cooldown(Duration::from_secs(20)),
        )
        // Retries as shipped: the held call, waiting for a slot, may find its
        // kept-alive connection closed by the emulator, and sends the GET again
        // (a 429 would show in the journal, which the test counts).
        .build()
        .unwrap();
    client.list_users(&ListUsers::page(1, 0)).unwrap();
    assert_eq!(
        redis
            .command(&["CLIENT", "PAUSE", "60000", "WRITE"])
            .as_deref(),
        Some("+OK")
    );
    let calls = |n: usize| {
        (0..n)
            .map(|_| client.list_users(&ListUsers::page(1, 0)).map(|_| ()))
            .collect::<Vec<_>>()
    };
    let (held, failed, local) = thread::scope(|scope| {
        let held = scope.spawn(|| calls(1));
        let first = held_scripts(&redis, 1);
        let failing = scope.spawn(|| calls(1));
        let both = held_scripts(&redis, 2);
        let second = both.iter().find(|id| !first.contains(id)).unwrap();
        assert_eq!(
            redis.command(&["CLIENT", "KILL", "ID", second]).as_deref(),
            Some(":1")
        );
        let failed = failing.join().unwrap();
        assert!(client.rate_limit_state().degraded);
        let local = calls(2);
        assert_eq!(
            redis.command(&["CLIENT", "UNPAUSE"]).as_deref(),
            Some("+OK")
        );
        (held.join().unwrap(), failed, local)
    });
    let journal = emu.journal();
    let arrived: Vec<SystemTime> = journal.iter().map(|e| e.received_at).collect();
    let answered_429 = journal.iter().filter(|e| e.status == 429).count();
    figure(format_args!(
        "redis budget: a round trip admitted after the fallback's starts: {} arrivals, busiest {window:?} window {}, {answered_429} answered 429",
        journal.len(),
        busiest_window(&arrived, window)
    ));
    assert!(
        failed.iter().chain(&local).all(Result::is_ok),
        "{failed:?} {local:?}"
    );
    assert_eq!(
        answered_429, 0,
        "the held start was sent on Redis's stale count"
    );
    assert!(held[0].is_ok(), "the held call: {:?}", held[0]);
    assert_eq!(journal.len(), 5);
    assert!(busiest_window(&arrived, window) <= 4);
}

/// Processes that fall back together admit no more between them than what is
/// left of the window, however unevenly they had shared it: a process falls
/// back from its share of what Redis last counted, not only from its own
/// starts (seen in the failover matrix under load: one process had taken most
/// of a full window, the others few, and at the kill each of those admitted
/// nearly its whole share beside the full window, and met 429s). Here another
/// process takes 6 of 8, this one 1 (Redis counts 7, this one's share of them
/// 4 of the fallback's 4), then Redis dies: the fallback admits nothing more
/// in the window.
#[test]
fn a_fallback_starts_from_its_share_of_the_window_redis_counted() {
    let window = Duration::from_secs(10);
    let emu = emulator_limited("redis-fallback-share", 8, window);
    emu.seed_users(1);
    let mut redis = RedisServer::start(None);
    let make = || {
        builder(&emu)
            .rate_limit(RateLimitConfig::new(8, window).fail_fast())
            .redis_budget(
                RedisBudget::new(redis.url())
                    .on_error(OnRedisError::LocalFallback)
                    .expected_processes(2)
                    .connect_timeout(Duration::from_secs(2))
                    .io_timeout(Duration::from_secs(2))
                    .breaker_cooldown(Duration::from_secs(20)),
            )
            .max_retries(0)
            .build()
            .unwrap()
    };
    let other = fork_child(|| {
        let client = make();
        (0..6)
            .filter(|_| client.list_users(&ListUsers::page(1, 0)).is_err())
            .count() as i32
    });
    assert_eq!(wait_child(other, Duration::from_secs(30)), Some(0));
    let client = make();
    client.list_users(&ListUsers::page(1, 0)).unwrap();
    assert_eq!(client.rate_limit_state().used, 7);
    redis.kill();
    let after = (0..4)
        .map(|_| client.list_users(&ListUsers::page(1, 0)))
        .collect::<Vec<_>>();
    assert!(client.rate_limit_state().degraded);
    let admitted = after.iter().filter(|r| r.is_ok()).count();
    let journal = emu.journal();
    let arrived: Vec<SystemTime> = journal.iter().map(|e| e.received_at).collect();
    let answered_429 = journal.iter().filter(|e| e.status == 429).count();
    figure(format_args!(
        "redis budget: fell back beside a window another process had filled: {admitted} admitted by the fallback, busiest {window:?} window {} of 8, {answered_429} answered 429",
        busiest_window(&arrived, window)
    ));
    for result in &after {
        if let Err(e) = result {
            assert_eq!(e.kind(), ErrorKind::RateLimited, "{e}");
        }
    }
    assert_eq!(answered_429, 0);
    assert!(busiest_window(&arrived, window) <= 8);
    // Its share of the 7 is 3.5 of the fallback's 4, counted as 4: the one start
    // left in the window is left to the other process.
    assert_eq!(admitted, 0, "admitted beside a window nearly full");
}

/// A process that falls back after a failure counts the window as full as
/// Redis last told it, even when its own record of that count has left the
/// window since (seen in the failover matrix: a failover just after a window
/// freed, one process took the freed starts on Redis while the others'
/// fallbacks, counting the window as it had been, admitted their shares
/// beside them: 68 of 60). Here another process (a second client, by another
/// URL: its own link and state) fills the window, this one is refused by
/// Redis (used 8 of 8), a window later Redis dies, and this one's fallback
/// admits nothing: it counts its share of the 8 from the failure on.
#[test]
fn a_fallback_after_a_failure_counts_the_window_redis_last_counted() {
    let window = Duration::from_secs(3);
    let emu = emulator_limited("redis-fallback-at-failure", 8, window);
    emu.seed_users(1);
    let mut redis = RedisServer::start(None);
    let client = |url: String| {
        builder(&emu)
            .rate_limit(RateLimitConfig::new(8, window).fail_fast())
            .redis_budget(
                RedisBudget::new(url)
                    .on_error(OnRedisError::LocalFallback)
                    .expected_processes(2)
                    .connect_timeout(Duration::from_secs(2))
                    .io_timeout(Duration::from_secs(2))
                    .breaker_cooldown(Duration::from_secs(60)),
            )
            .max_retries(0)
            .build()
            .unwrap()
    };
    let this = client(format!("redis://127.0.0.1:{}/0", redis.port));
    let other = client(format!("redis://127.0.0.1:{}", redis.port));
    let filled = (0..8)
        .filter(|_| other.list_users(&ListUsers::page(1, 0)).is_ok())
        .count();
    assert_eq!(filled, 8);
    let asked = Instant::now();
    let refused = this.list_users(&ListUsers::page(1, 0)).unwrap_err();
    assert_eq!(refused.kind(), ErrorKind::RateLimited, "{refused}");
    assert_eq!(this.rate_limit_state().used, 8);
    // A window later, what this process noted of Redis's count has left its
    // window (the budget's is 5% longer than the service's), and the time
    // Redis said to wait (with up to 5% of jitter) has passed: the next call
    // asks Redis, which is then dead (the state below says it failed).
    thread::sleep(window + Duration::from_millis(500));
    redis.kill();
    let after = (0..4)
        .map(|_| this.list_users(&ListUsers::page(1, 0)))
        .collect::<Vec<_>>();
    // The failure came within two windows of what Redis last said (the fix
    // counts that only then): otherwise the machine was too slow to judge.
    assert!(
        asked.elapsed() < window * 2,
        "the failure came {:?} after Redis last answered",
        asked.elapsed()
    );
    let state = this.rate_limit_state();
    assert!(state.degraded, "{state:?} {after:?}");
    let admitted = after.iter().filter(|r| r.is_ok()).count();
    figure(format_args!(
        "redis budget: fell back a window after Redis counted 8 of 8: {admitted} admitted by the fallback"
    ));
    for result in &after {
        if let Err(e) = result {
            assert_eq!(e.kind(), ErrorKind::RateLimited, "{e}");
        }
    }
    // Its share of the 8 is the fallback's whole 4.
    assert_eq!(admitted, 0, "the fallback started from an empty window");
}
