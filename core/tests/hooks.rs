//! What the language packages build on: cancelling a call from another thread
//! at each point where it waits, the observer's events, and `from_env`.

mod common;

use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use common::*;
use roomchat::{
    CancelToken, Client, ClientBuilder, ErrorKind, Event, EventKind, Level, ListUsers, Observer,
    RateLimitConfig,
};
use roomchat_emulator::FaultAction;

/// Cancels `token` after `after`, from another thread.
fn cancel_later(token: &CancelToken, after: Duration) -> thread::JoinHandle<()> {
    let token = token.clone();
    thread::spawn(move || {
        thread::sleep(after);
        token.cancel();
    })
}

#[test]
fn a_cancelled_token_sends_nothing() {
    let emu = emulator("cancel-before");
    let token = CancelToken::new();
    token.cancel();
    let e = client(&emu)
        .with_cancel(token)
        .list_users(&ListUsers::default())
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Cancelled);
    assert!(emu.journal().is_empty());
}

#[test]
fn cancel_abandons_a_rate_limit_wait() {
    let emu = emulator("cancel-budget");
    // 3 per 20 s (no reserve below 10): 3 starts, then a wait of about 20 s.
    let client = builder(&emu)
        .rate_limit(RateLimitConfig::new(3, Duration::from_secs(20)))
        .build()
        .unwrap();
    for _ in 0..3 {
        client.list_users(&ListUsers::default()).unwrap();
    }
    let token = CancelToken::new();
    let canceller = cancel_later(&token, Duration::from_millis(150));
    let started = Instant::now();
    let e = client
        .with_cancel(token)
        .list_users(&ListUsers::default())
        .unwrap_err();
    canceller.join().unwrap();
    assert_eq!(e.kind(), ErrorKind::Cancelled, "{e}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(
        arrivals(&emu, "GET", USERS),
        3,
        "the waiting call sent nothing"
    );
    // The budget is intact for the others: the slot was never taken.
    assert_eq!(client.rate_limit_state().used, 3);
}

#[test]
fn cancel_abandons_a_retry_backoff() {
    let emu = emulator("cancel-backoff");
    emu.add_fault(once(
        "GET",
        USERS,
        respond(503, r#"{"message":"busy"}"#, &[("Retry-After", "20")]),
    ));
    let token = CancelToken::new();
    let canceller = cancel_later(&token, Duration::from_millis(150));
    let started = Instant::now();
    let e = client(&emu)
        .with_cancel(token)
        .list_users(&ListUsers::default())
        .unwrap_err();
    canceller.join().unwrap();
    assert_eq!(e.kind(), ErrorKind::Cancelled, "{e}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(arrivals(&emu, "GET", USERS), 1, "no retry was sent");
}

#[test]
fn cancel_gives_up_a_request_on_the_wire_and_its_connection() {
    let emu = emulator("cancel-in-flight");
    emu.seed_users(3);
    let client = client(&emu);
    client.list_users(&ListUsers::page(1, 0)).unwrap(); // a pooled connection
    emu.add_fault(once(
        "GET",
        USERS,
        FaultAction::Delay(Duration::from_secs(4)),
    ));
    let token = CancelToken::new();
    let canceller = cancel_later(&token, Duration::from_millis(150));
    let started = Instant::now();
    let e = client
        .with_cancel(token)
        .list_users(&ListUsers::page(2, 0))
        .unwrap_err();
    canceller.join().unwrap();
    let took = started.elapsed();
    assert_eq!(e.kind(), ErrorKind::Cancelled, "{e}");
    assert!(
        took < Duration::from_millis(150) + Duration::from_secs(1),
        "{took:?}"
    );
    // The abandoned connection still has the delayed answer coming: had it gone
    // back to the pool, this call would read that answer (2 users) instead of its own.
    let page = client.list_users(&ListUsers::page(3, 0)).unwrap();
    assert_eq!(page.data.len(), 3);
}

/// What the recorder keeps of an event: its kind, level, status and line.
type Seen = (EventKind, Level, Option<u16>, String);

#[derive(Default)]
struct Recorder {
    enabled: bool,
    seen: Mutex<Vec<Seen>>,
}

impl Observer for Recorder {
    fn enabled(&self, _level: Level) -> bool {
        self.enabled
    }

    fn event(&self, event: &Event<'_>) {
        self.seen
            .lock()
            .unwrap()
            .push((event.kind, event.level(), event.status, event.message()));
    }
}

#[test]
fn the_observer_sees_attempts_retries_and_waits_without_the_key() {
    let emu = emulator("observer");
    let key = emu.private_key();
    let recorder = Arc::new(Recorder {
        enabled: true,
        ..Recorder::default()
    });
    let client = builder(&emu)
        .rate_limit(RateLimitConfig::new(4, Duration::from_millis(900)))
        .observer(recorder.clone())
        .build()
        .unwrap();
    emu.add_fault(once(
        "GET",
        USERS,
        respond(503, r#"{"message":"busy"}"#, &[]),
    ));
    client.list_users(&ListUsers::page(5, 0)).unwrap();
    let seen = recorder.seen.lock().unwrap().clone();
    let kinds: Vec<_> = seen.iter().map(|(k, l, s, _)| (*k, *l, *s)).collect();
    assert_eq!(
        kinds,
        [
            (EventKind::Attempt, Level::Debug, Some(503)),
            (EventKind::Retry, Level::Warning, Some(503)),
            (EventKind::Attempt, Level::Debug, Some(200)),
        ]
    );
    assert!(seen[0].3.starts_with(
        "GET /consumer/api/v2/users?auth=REDACTED&limit=5&skip=0 -> 503 (attempt 1, "
    ));
    assert!(seen[1]
        .3
        .starts_with("retrying GET /consumer/api/v2/users?auth=REDACTED&limit=5&skip=0 in "));
    assert!(seen[1]
        .3
        .ends_with(" after server_error (HTTP 503) (attempt 1 failed)"));
    assert!(seen[2].3.contains("-> 200 (attempt 2, "));

    // The budget (4, no reserve below 10) has two starts left: the call after them waits, and says so first.
    for _ in 0..3 {
        client.list_users(&ListUsers::page(5, 0)).unwrap();
    }
    let seen = recorder.seen.lock().unwrap().clone();
    let waits: Vec<_> = seen
        .iter()
        .filter(|(k, ..)| *k == EventKind::RateLimitWait)
        .collect();
    assert_eq!(waits.len(), 1, "{seen:#?}");
    assert_eq!(waits[0].1, Level::Warning);
    assert!(waits[0].3.starts_with("waiting "), "{}", waits[0].3);
    for (.., line) in &seen {
        assert!(!line.contains(&key) && !line.contains(&key[8..]), "{line}");
    }
}

#[test]
fn a_disabled_observer_is_never_called() {
    let emu = emulator("observer-off");
    let recorder = Arc::new(Recorder::default());
    let client = builder(&emu).observer(recorder.clone()).build().unwrap();
    client.list_users(&ListUsers::default()).unwrap();
    assert!(recorder.seen.lock().unwrap().is_empty());
}

#[test]
fn from_env_reads_the_documented_variables() {
    // The only test of this binary that touches the environment.
    let emu = emulator("from-env");
    for name in [
        roomchat::ENV_PRIVATE_KEY,
        roomchat::ENV_BASE_URL,
        roomchat::ENV_CHAT_URL,
        roomchat::ENV_PUBLIC_KEY,
        roomchat::ENV_APP_NAME,
    ] {
        std::env::remove_var(name);
    }
    let e = Client::from_env().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Configuration);
    assert!(e.message().contains("ROOMCHAT_PRIVATE_KEY"), "{e}");

    std::env::set_var(roomchat::ENV_PRIVATE_KEY, emu.private_key());
    std::env::set_var(roomchat::ENV_BASE_URL, "");
    let e = Client::from_env().unwrap_err();
    assert!(
        e.message().contains("ROOMCHAT_BASE_URL"),
        "an empty variable is unset: {e}"
    );
    assert_no_secret(&e, &emu.private_key());

    std::env::set_var(roomchat::ENV_BASE_URL, emu.base_url());
    std::env::set_var(roomchat::ENV_CHAT_URL, emu.chat_url());
    std::env::set_var(roomchat::ENV_APP_NAME, "env-test/1.0");
    // Over TLS, the environment's convention trusts the emulator's CA.
    if let Some(ca) = emu.ca_file() {
        std::env::set_var(roomchat::ENV_SSL_CERT_FILE, ca);
    }
    let client = ClientBuilder::from_env()
        .unwrap()
        .max_retries(0)
        .build()
        .unwrap();
    client.list_users(&ListUsers::default()).unwrap();
    assert!(client
        .sign_in_url("r", "t")
        .unwrap()
        .starts_with(emu.chat_url()));
    let agent = emu.journal()[0].user_agent.clone().unwrap_or_default();
    assert!(agent.ends_with(" env-test/1.0"), "{agent}");
    std::env::remove_var(roomchat::ENV_SSL_CERT_FILE);
}
