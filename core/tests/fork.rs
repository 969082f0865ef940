//! Fork safety: the process forks again and again while threads are in the
//! middle of calls on a shared client; every child calls at once, on its own
//! connections, and exits 0 within a deadline; the parent goes on unharmed.
#![cfg(target_os = "linux")]

mod common;

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use common::*;
use roomchat::{Client, ListUsers};

const FORKS: usize = 60;
const CALLING_THREADS: usize = 6;
const CHILD_DEADLINE: Duration = Duration::from_secs(20);

/// The inodes of the TCP sockets of this process whose remote end is `port`.
fn sockets_to(port: u16) -> usize {
    let mut ours = HashSet::new();
    for entry in std::fs::read_dir("/proc/self/fd").unwrap().flatten() {
        if let Ok(target) = std::fs::read_link(entry.path()) {
            let target = target.to_string_lossy().into_owned();
            if let Some(inode) = target
                .strip_prefix("socket:[")
                .and_then(|s| s.strip_suffix(']'))
            {
                ours.insert(inode.to_owned());
            }
        }
    }
    let mut count = 0;
    for table in ["/proc/self/net/tcp", "/proc/self/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(table) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let remote_port = fields[2]
                .rsplit(':')
                .next()
                .and_then(|p| u16::from_str_radix(p, 16).ok());
            if remote_port == Some(port) && ours.contains(fields[9]) {
                count += 1;
            }
        }
    }
    count
}

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
