//! Soak: does the emulator's memory stay flat under a million requests?
//!
//! `cargo run --release -p roomchat-emulator --example soak -- <emulator-binary> [requests] [connections]`
//! (`scripts/soak-emulator.sh` builds both and runs it).
//!
//! Starts the emulator binary unthrottled with 300 users, sends `requests`
//! (default 1,000,000) users-listing requests over `connections` (default 4)
//! raw keep-alive connections, and prints the process's resident memory
//! (`VmRSS` of `/proc/<pid>/status`) at start, after a warm-up, and at every
//! 100,000; then a verdict: the final RSS within 10% of the post-warm-up RSS.
//! The warm-up lasts until every bounded structure is at its steady size: at
//! least 20,000 requests (the journal's 10,000-entry ring is full) and at least
//! one second (the rate limiter's window of arrivals is full many times over).
//! Exits 1 when that fails. Not part of the default test run.

use std::io::{BufRead, BufReader};
use std::process::{Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use roomchat_emulator::bench::RawConnection;

const WARM_UP: u64 = 20_000;
const WARM_UP_TIME: Duration = Duration::from_secs(1);
const STEP: u64 = 100_000;
const TOLERANCE: f64 = 0.10;

fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc is readable");
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS in /proc/<pid>/status")
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let Some(binary) = args.next() else {
        eprintln!("usage: soak <emulator-binary> [requests] [connections]");
        return ExitCode::from(2);
    };
    let total: u64 = args
        .next()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let connections: usize = args.next().and_then(|v| v.parse().ok()).unwrap_or(4).max(1);

    let mut child = Command::new(&binary)
        // Unthrottled. The limiter keeps each arrival of its window (an exact
        // sliding log), so its memory is throughput x window: bounded, but it
        // moves with the machine's speed. A 100 ms window keeps that part small
        // and steady, so that the figures show everything else.
        .args(["--rate-limit", "1000000000/100ms", "--seed-users", "300"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {binary}: {e}"));
    let mut ready = String::new();
    BufReader::new(child.stdout.take().expect("piped stdout"))
        .read_line(&mut ready)
        .expect("the ready line");
    let ready: serde_json::Value = serde_json::from_str(&ready).expect("a JSON ready line");
    let base_url = ready["base_url"].as_str().expect("base_url").to_owned();
    let key = ready["private_key"]
        .as_str()
        .expect("private_key")
        .to_owned();
    let pid = child.id();

    println!("soak: {total} users-listing requests over {connections} keep-alive connections to {binary} (pid {pid})");
    let start_rss = rss_kib(pid);
    println!("  {:>9} requests  RSS {:>7} KiB  (start)", 0, start_rss);
    let mut pool: Vec<RawConnection> = (0..connections)
        .map(|_| RawConnection::connect(&base_url).expect("connects"))
        .collect();
    let started = Instant::now();
    let key: Arc<str> = key.into();
    let path = move |n: u64| format!("/consumer/api/v2/users?auth={key}&skip={}", n % 300);

    // Warm-up: every connection sends until both bounds are reached.
    let sent = Arc::new(AtomicU64::new(0));
    let handles: Vec<_> = pool
        .drain(..)
        .map(|mut connection| {
            let sent = sent.clone();
            let path = path.clone();
            std::thread::spawn(move || {
                while sent.load(Ordering::Relaxed) < WARM_UP.min(total)
                    || started.elapsed() < WARM_UP_TIME
                {
                    let n = sent.fetch_add(1, Ordering::Relaxed);
                    if n >= total {
                        break;
                    }
                    let (status, _) = connection.get(&path(n)).expect("an answer");
                    assert_eq!(status, 200, "every request is served");
                }
                connection
            })
        })
        .collect();
    pool = handles
        .into_iter()
        .map(|h| h.join().expect("a sender thread"))
        .collect();
    let mut done = sent.load(Ordering::Relaxed).min(total);
    let warm_rss = rss_kib(pid);
    let mut last_rss = warm_rss;
    println!(
        "  {done:>9} requests  RSS {warm_rss:>7} KiB  {:>6.0} requests/s  (after warm-up: journal ring and rate window full)",
        done as f64 / started.elapsed().as_secs_f64()
    );

    while done < total {
        let milestone = ((done / STEP + 1) * STEP).min(total);
        let phase = milestone - done;
        let handles: Vec<_> = pool
            .drain(..)
            .enumerate()
            .map(|(k, mut connection)| {
                let share =
                    phase / connections as u64 + u64::from((k as u64) < phase % connections as u64);
                let path = path.clone();
                std::thread::spawn(move || {
                    for i in 0..share {
                        let (status, _) = connection
                            .get(&path(done + i * connections as u64 + k as u64))
                            .expect("an answer");
                        assert_eq!(status, 200, "every request is served");
                    }
                    connection
                })
            })
            .collect();
        pool = handles
            .into_iter()
            .map(|h| h.join().expect("a sender thread"))
            .collect();
        done = milestone;
        last_rss = rss_kib(pid);
        println!(
            "  {done:>9} requests  RSS {last_rss:>7} KiB  {:>6.0} requests/s",
            done as f64 / started.elapsed().as_secs_f64()
        );
    }
    drop(pool);
    drop(child.stdin.take()); // the emulator stops when its stdin closes
    let _ = child.wait();

    let growth = last_rss as f64 / warm_rss as f64 - 1.0;
    let ok = growth <= TOLERANCE;
    println!(
        "verdict: RSS after {total} requests is {last_rss} KiB, {:+.1}% of the post-warm-up {warm_rss} KiB (limit +{:.0}%): {}",
        growth * 100.0,
        TOLERANCE * 100.0,
        if ok { "PASS" } else { "FAIL" }
    );
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
