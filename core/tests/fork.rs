//! Fork safety: the process forks again and again while threads are in the
//! middle of calls on a shared client; every child calls at once, on its own
//! connections, and exits 0 within a deadline; the parent goes on unharmed.
#![cfg(target_os = "linux")]

mod common;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use common::*;
use roomchat::{Client, ListUsers};

const FORKS: usize = 60;
const CALLING_THREADS: usize = 6;
const CHILD_DEADLINE: Duration = Duration::from_secs(20);

/// In the child: calls on the inherited client and on a new one, checking that
/// none of the parent's connections is held. Never returns.
fn child(client: &Client, fresh: &Client, port: u16) -> ! {
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let inherited = sockets_to(port);
        if inherited != 0 {
            return 3;
        }
        for _ in 0..5 {
            if client
                .list_users(&ListUsers::page(2, 0))
                .map(|p| p.data.len())
                != Ok(2)
            {
                return 4;
            }
        }
        if fresh.list_users(&ListUsers::page(2, 0)).is_err() {
            return 5;
        }
        if sockets_to(port) == 0 {
            return 6; // the calls must have gone over the child's own connection
        }
        0
    }));
    // Straight out: no destructor of the parent's objects runs in the child.
    unsafe { libc::_exit(outcome.unwrap_or(2)) }
}

#[test]
fn forks_while_threads_are_mid_call() {
    // A watchdog: a deadlock in the parent fails the test instead of hanging CI.
    let finished = Arc::new(AtomicBool::new(false));
    {
        let finished = finished.clone();
        thread::spawn(move || {
            let started = Instant::now();
            while !finished.load(Ordering::SeqCst) {
                if started.elapsed() > Duration::from_secs(240) {
                    eprintln!("fork test: the parent hung; aborting");
                    std::process::abort();
                }
                thread::sleep(Duration::from_millis(100));
            }
        });
    }

    let emu = emulator_with("fork", |c| {
        c.rate_limit = roomchat_emulator::RateLimit {
            requests: 1_000_000,
            window: Duration::from_secs(60),
        }
    });
    emu.seed_users(10);
    let port: u16 = emu.base_url().rsplit(':').next().unwrap().parse().unwrap();
    let client = client(&emu);
    let fresh_for_children = builder(&emu).build().unwrap();

    let stop = Arc::new(AtomicBool::new(false));
    let calls = Arc::new(AtomicUsize::new(0));
    let callers: Vec<_> = (0..CALLING_THREADS)
        .map(|_| {
            let (client, stop, calls) = (client.clone(), stop.clone(), calls.clone());
            thread::spawn(move || {
                while !stop.load(Ordering::SeqCst) {
                    client
                        .list_users(&ListUsers::page(2, 0))
                        .expect("the parent's calls go on");
                    calls.fetch_add(1, Ordering::SeqCst);
                }
            })
        })
        .collect();
    while calls.load(Ordering::SeqCst) < 50 {
        thread::sleep(Duration::from_millis(1));
    }

    let mut failures = Vec::new();
    for i in 0..FORKS {
        thread::sleep(Duration::from_millis(20));
        let before = calls.load(Ordering::SeqCst);
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork failed");
        if pid == 0 {
            child(&client, &fresh_for_children, port);
        }
        match wait_child(pid, CHILD_DEADLINE) {
            Some(0) => {}
            Some(code) => failures.push(format!("child {i} exited {code}")),
            None => failures.push(format!("child {i} hung and was killed")),
        }
        // The parent's threads kept calling meanwhile.
        assert!(calls.load(Ordering::SeqCst) >= before);
    }
    stop.store(true, Ordering::SeqCst);
    for caller in callers {
        caller.join().unwrap();
    }
    finished.store(true, Ordering::SeqCst);
    println!(
        "fork: {FORKS} forks while {CALLING_THREADS} threads called ({} calls in the parent); {} children failed",
        calls.load(Ordering::SeqCst),
        failures.len()
    );
    assert!(failures.is_empty(), "{failures:#?}");
}

/// Forks while threads open new connections all the time (a new client per
/// call, so each call connects): a fork between a socket's `connect()` and its
/// registration used to leave the child holding the parent's connection
/// (hardening round 2, defect 12). Every child must hold none of them.
#[test]
fn forks_while_connections_are_being_opened() {
    let emu = emulator_with("fork-connecting", |c| {
        c.rate_limit = roomchat_emulator::RateLimit {
            requests: 1_000_000,
            window: Duration::from_secs(60),
        }
    });
    emu.seed_users(10);
    let port: u16 = emu.base_url().rsplit(':').next().unwrap().parse().unwrap();
    let fresh_for_children = builder(&emu).build().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let connects = Arc::new(AtomicUsize::new(0));
    let callers: Vec<_> = (0..CALLING_THREADS)
        .map(|_| {
            let (stop, connects) = (stop.clone(), connects.clone());
            let builder = builder(&emu);
            thread::spawn(move || {
                while !stop.load(Ordering::SeqCst) {
                    let client = builder.clone().build().unwrap();
                    client
                        .list_users(&ListUsers::page(2, 0))
                        .expect("the parent's calls go on");
                    connects.fetch_add(1, Ordering::SeqCst);
                }
            })
        })
        .collect();
    while connects.load(Ordering::SeqCst) < 20 {
        thread::sleep(Duration::from_millis(1));
    }
    let mut failures = Vec::new();
    for i in 0..FORKS * 5 {
        thread::sleep(Duration::from_millis(3));
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork failed");
        if pid == 0 {
            let inherited = sockets_to(port);
            let code = if inherited != 0 {
                3
            } else if fresh_for_children
                .list_users(&ListUsers::page(2, 0))
                .is_err()
            {
                5
            } else {
                0
            };
            unsafe { libc::_exit(code) }
        }
        match wait_child(pid, CHILD_DEADLINE) {
            Some(0) => {}
            Some(code) => failures.push(format!("child {i} exited {code}")),
            None => failures.push(format!("child {i} hung and was killed")),
        }
    }
    stop.store(true, Ordering::SeqCst);
    for caller in callers {
        caller.join().unwrap();
    }
    println!(
        "fork: {} forks while {CALLING_THREADS} threads opened {} connections; {} children held a parent's socket or failed",
        FORKS * 5,
        connects.load(Ordering::SeqCst),
        failures.len()
    );
    assert!(failures.is_empty(), "{failures:#?}");
}
