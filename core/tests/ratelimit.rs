//! The shared rate-limit budget against the emulator's own limit.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;
use roomchat::{Client, ErrorKind, ListUsers, RateLimitConfig};
use roomchat_emulator::RateLimit;

#[test]
fn many_threads_use_the_budget_without_a_single_429() {
    // A 2 s window: long next to scheduling delays on a loaded 2-core machine.
    let (limit, window) = (40u32, Duration::from_secs(2));
    let emu = emulator_with("budget_threads", |c| {
        c.rate_limit = RateLimit {
            requests: limit,
            window,
        }
    });
    let config = RateLimitConfig::new(limit, window);
    let calls = config.effective_requests() as usize * 4;
    // Several clients of one key, on several threads: one budget.
    let clients: Vec<Client> = (0..4)
        .map(|_| {
            builder(&emu)
                .max_retries(0)
                .rate_limit(config)
                .build()
                .unwrap()
        })
        .collect();
    let done = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    std::thread::scope(|s| {
        for t in 0..8 {
            let client = clients[t % clients.len()].clone();
            let done = done.clone();
            s.spawn(move || {
                while done.fetch_add(1, Ordering::SeqCst) < calls {
                    client.list_users(&ListUsers::page(1, 0)).unwrap();
                }
            });
        }
    });
    let elapsed = started.elapsed();
    let journal = emu.journal();
    let rejected = journal.iter().filter(|e| e.status == 429).count();
    let mut arrived: Vec<_> = journal.iter().map(|e| e.received_at).collect();
    arrived.sort();
    // The busiest rolling window, as the service counts it (arrivals).
    let busiest = busiest_window(&arrived, window);
    let used = busiest as f64 / f64::from(limit);
    figure(format_args!(
        "rate limiter: {} calls by 8 threads in {:.2?}; busiest {:?} window had {busiest} of {limit} allowed ({:.1}% of the budget); {rejected} answered 429",
        journal.len(), elapsed, window, used * 100.0
    ));
    assert_eq!(journal.len(), calls);
    assert_eq!(rejected, 0, "no request may be rejected");
    assert!(
        used >= 0.90,
        "at least 90% of the budget is used, got {:.1}%",
        used * 100.0
    );
    assert!(used <= 1.0);
}

#[test]
fn state_is_shared_by_every_client_of_a_key_and_fails_fast_when_asked() {
    let emu = emulator("budget_state");
    let config = RateLimitConfig::new(10, Duration::from_secs(30)).fail_fast();
    let a = builder(&emu).rate_limit(config).build().unwrap();
    let b = builder(&emu).rate_limit(config).build().unwrap();
    let fresh = a.rate_limit_state();
    assert_eq!((fresh.limit, fresh.used, fresh.remaining), (9, 0, 9));
    for _ in 0..5 {
        a.list_users(&ListUsers::page(1, 0)).unwrap();
    }
    for _ in 0..4 {
        b.list_users(&ListUsers::page(1, 0)).unwrap();
    }
    let spent = b.rate_limit_state();
    assert_eq!((spent.used, spent.remaining), (9, 0));
    assert!(spent.next_free_in > Duration::from_secs(25));
    let e = a.list_users(&ListUsers::page(1, 0)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::RateLimited);
    assert!(e.retry_after().unwrap() > Duration::from_secs(25));
    assert_eq!(emu.journal().len(), 9, "the refused call was never sent");
}

#[test]
fn a_429_holds_every_caller_off_until_it_clears() {
    let emu = emulator("budget_429");
    let a = client(&emu);
    let b = client(&emu);
    emu.add_fault(once(
        "GET",
        USERS,
        respond(
            429,
            r#"{"message":"Too many requests"}"#,
            &[("Retry-After", "1")],
        ),
    ));
    let started = Instant::now();
    a.list_users(&ListUsers::default()).unwrap();
    assert!(started.elapsed() >= Duration::from_millis(950));
    // b was held off too while the block lasted; now it goes straight through.
    let started = Instant::now();
    b.list_users(&ListUsers::default()).unwrap();
    assert!(b.rate_limit_state().blocked_for.is_none());
    let _ = started;
}

#[test]
fn rate_limit_headers_feed_the_budget() {
    // The service's limit is 5 per 2 s; the client believes the default 600 per minute,
    // but the X-RateLimit-* headers make it hold off instead of meeting a 429.
    let emu = emulator_with("budget_headers", |c| {
        c.rate_limit = RateLimit {
            requests: 5,
            window: Duration::from_secs(2),
        };
        c.rate_limit_headers = true;
    });
    let client = Client::builder(emu.private_key())
        .base_url(emu.base_url())
        .max_retries(0)
        .build()
        .unwrap();
    for _ in 0..8 {
        client.list_users(&ListUsers::page(1, 0)).unwrap();
    }
    let journal = emu.journal();
    assert_eq!(journal.iter().filter(|e| e.status == 429).count(), 0);
    assert_eq!(journal.len(), 8);
}
