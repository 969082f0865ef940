//! Soak: many list-users calls through one client shared by a few threads,
//! printing this process's resident memory and open file descriptors every
//! 100,000 calls, and a verdict: flat within 5% from the first report on.
//!
//! `scripts/soak.sh` runs it against a release emulator. By hand:
//! `ROOMCHAT_BASE_URL=… ROOMCHAT_PRIVATE_KEY=… cargo run --release --example soak`
//! (`SOAK_CALLS`, default 1,000,000; `SOAK_THREADS`, default 4).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use roomchat::{ClientBuilder, ListUsers, RateLimitConfig};

/// VmRSS of this process, in KiB.
fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count())
}

fn env_number(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() -> Result<(), roomchat::Error> {
    let calls = env_number("SOAK_CALLS", 1_000_000);
    let threads = env_number("SOAK_THREADS", 4).max(1);
    let report_every = 100_000.min(calls.max(1));
    // No throttling: the soak measures the client, not the limit. A short window
    // keeps the budget's log of starts small (it holds one window's starts, so
    // with no effective limit its size follows the call rate).
    let client = ClientBuilder::from_env()?
        .rate_limit(RateLimitConfig::new(u32::MAX, Duration::from_millis(100)))
        .build()?;
    let done = AtomicUsize::new(0);
    let reports = std::sync::Mutex::new(Vec::new());
    let started = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let n = done.fetch_add(1, Ordering::SeqCst) + 1;
                if n > calls {
                    break;
                }
                let page = client
                    .list_users(&ListUsers::page(50, 0))
                    .expect("list users");
                assert!(!page.data.is_empty());
                if n.is_multiple_of(report_every) {
                    let (rss, fds) = (rss_kib(), open_fds());
                    println!(
                        "core: {n:>9} calls, RSS {:>7.2} MiB, {fds} open fds, {:.0} calls/s",
                        rss as f64 / 1024.0,
                        n as f64 / started.elapsed().as_secs_f64()
                    );
                    reports.lock().unwrap().push((rss, fds));
                }
            });
        }
    });
    let reports = reports.into_inner().unwrap();
    let (min, max) = reports.iter().fold((u64::MAX, 0), |(lo, hi), (rss, _)| {
        (lo.min(*rss), hi.max(*rss))
    });
    let fds: std::collections::BTreeSet<usize> = reports.iter().map(|(_, f)| *f).collect();
    let growth = (max as f64 / min.max(1) as f64 - 1.0) * 100.0;
    println!(
        "core: RSS {:.2}..{:.2} MiB over {} reports ({growth:.1}% spread, goal <= 5%); open fds {:?}; {}",
        min as f64 / 1024.0,
        max as f64 / 1024.0,
        reports.len(),
        fds,
        if growth <= 5.0 { "flat" } else { "GROWING" }
    );
    Ok(())
}
