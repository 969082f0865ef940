//! Stress: 64 threads × 500 calls on one client, with a rate limit that binds.
//! No deadlock (a watchdog aborts instead of hanging), no 429, and the budget's
//! invariant checked twice: the client's own starts (from its observer) never
//! exceed its limit in any of its windows, and the arrivals the emulator
//! journaled never exceed the service's limit in any of the service's windows.
//!
//! Not part of `cargo test`'s default run (`test = false`); the test command
//! runs it in release: `cargo test --release -p roomchat --test stress -- --nocapture`.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant, SystemTime};

use common::*;
use roomchat::{Event, EventKind, Level, ListUsers, Observer, RateLimitConfig};

const THREADS: usize = 64;
const CALLS_EACH: usize = 500;
/// The service's limit in this test: 3,000 per second (the client allows itself 2,940 per 1.05 s).
const LIMIT: u32 = 3000;
const WINDOW: Duration = Duration::from_secs(1);

/// Records when each attempt started (the instant the budget counted).
#[derive(Default)]
struct Starts(Mutex<Vec<Instant>>);

impl Observer for Starts {
    fn enabled(&self, level: Level) -> bool {
        level == Level::Debug
    }

    fn event(&self, event: &Event<'_>) {
        if event.kind == EventKind::Attempt {
            self.0.lock().unwrap().push(event.started_at);
        }
    }
}

#[test]
fn sixty_four_threads_share_a_binding_budget() {
    let done = Arc::new(AtomicBool::new(false));
    {
        let done = done.clone();
        thread::spawn(move || {
            let started = Instant::now();
            while !done.load(Ordering::SeqCst) {
                if started.elapsed() > Duration::from_secs(180) {
                    eprintln!("stress: no progress for 180 s (deadlock?); aborting");
                    std::process::abort();
                }
                thread::sleep(Duration::from_millis(100));
            }
        });
    }

    let emu = emulator_with("stress", |c| {
        c.rate_limit = roomchat_emulator::RateLimit {
            requests: LIMIT,
            window: WINDOW,
        };
        c.journal_capacity = THREADS * CALLS_EACH * 2;
    });
    emu.seed_users(3);
    let starts = Arc::new(Starts::default());
    let config = RateLimitConfig::new(LIMIT, WINDOW);
    let client = builder(&emu)
        .rate_limit(config)
        .observer(starts.clone())
        .build()
        .unwrap();

    let began = Instant::now();
    let workers: Vec<_> = (0..THREADS)
        .map(|_| {
            let client = client.clone();
            thread::spawn(move || {
                for _ in 0..CALLS_EACH {
                    client
                        .list_users(&ListUsers::page(1, 0))
                        .expect("no call fails");
                }
            })
        })
        .collect();
    for worker in workers {
        worker.join().unwrap();
    }
    let took = began.elapsed();
    done.store(true, Ordering::SeqCst);

    let total = THREADS * CALLS_EACH;
    let journal = emu.journal();
    assert_eq!(emu.journal_dropped(), 0);
    assert_eq!(journal.len(), total, "one arrival per call, no retry");
    let answered_429 = journal.iter().filter(|e| e.status == 429).count();
    assert_eq!(answered_429, 0);

    let mut started = starts.0.lock().unwrap().clone();
    started.sort();
    assert_eq!(started.len(), total);
    let client_window = WINDOW + config.jitter_allowance;
    let busiest_starts = busiest_by(&started, |a, b| b.duration_since(a) < client_window);
    let mut arrived: Vec<SystemTime> = journal.iter().map(|e| e.received_at).collect();
    arrived.sort();
    let busiest_arrivals = busiest_window(&arrived, WINDOW);
    let rate = total as f64 / took.as_secs_f64();
    println!(
        "stress: {THREADS} threads x {CALLS_EACH} calls in {took:.2?} ({rate:.0} calls/s); \
         busiest {client_window:?} of starts {busiest_starts} (client limit {}), \
         busiest {WINDOW:?} of arrivals {busiest_arrivals} (service limit {LIMIT}); 0 answered 429",
        config.effective_requests()
    );
    assert!(busiest_starts <= config.effective_requests() as usize);
    assert!(busiest_arrivals <= LIMIT as usize);
    // The limit bound: the run cannot have been faster than the budget allows.
    let windows_needed = (total as f64 / config.effective_requests() as f64).floor() - 1.0;
    assert!(
        took >= client_window.mul_f64(windows_needed.max(0.0)),
        "{took:?}: the budget did not bind"
    );
}
