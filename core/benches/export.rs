//! The history export: every message of a 100,000-message room read with
//! `Client::iter_room_messages` (200 a page), in messages/s and this process's
//! peak RSS.
//!
//! The emulator runs in a forked child (seeded there through its admin API,
//! `add_messages`), so that the peak RSS measured here is the client's alone,
//! as it is for the Python and Node benches (their emulator is another process
//! too). The peak is reset (`/proc/self/clear_refs`) before each export, and
//! the RSS is read after the first tenth as well: a flat memory has the same
//! peak after 10,000 messages as after 100,000. Idle, then loaded: one
//! busy-loop process per core beside it (`scripts/bench/cpu-load.sh`).
//!
//! `cargo bench -p roomchat --bench export` (`ROOMCHAT_BENCH_MESSAGES`: the
//! room's size, default 100,000). Linux only (`/proc`).

use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::FromRawFd;
use std::time::{Duration, Instant};

use roomchat::{Client, RateLimitConfig, RoomMessages};

const ROOM: &str = "export-bench";

/// A `kB` line of `/proc/self/status` (`VmRSS`, `VmHWM`), in MiB.
fn status_mib(field: &str) -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

/// Resets the peak RSS (`VmHWM`) to the current RSS.
fn reset_peak() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// Forks the emulator's process: seeds `count` messages in one room, writes
/// `base_url\nprivate_key\n` to the pipe, then serves until the parent closes
/// its end of the other pipe (the parent's end, however it ends).
fn spawn_emulator(count: usize) -> (String, String, std::fs::File) {
    let mut to_parent = [0; 2];
    let mut to_child = [0; 2];
    // SAFETY: two fresh pipes; the fork happens before this process starts any thread.
    unsafe {
        assert_eq!(libc::pipe(to_parent.as_mut_ptr()), 0);
        assert_eq!(libc::pipe(to_child.as_mut_ptr()), 0);
    }
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        unsafe {
            libc::close(to_parent[0]);
            libc::close(to_child[1]);
        }
        let emu = roomchat_emulator::bench::unthrottled_emulator(0);
        emu.create_room(serde_json::json!({"roomId": ROOM, "name": "Export"}));
        let total = emu.add_messages(serde_json::json!({
            "roomId": ROOM, "count": count, "text": "a message of the webinar's transcript, number",
            "attachmentEvery": 50,
        }))["total"]
            .as_u64();
        assert_eq!(total, Some(count as u64));
        let mut out = unsafe { std::fs::File::from_raw_fd(to_parent[1]) };
        writeln!(out, "{}\n{}", emu.base_url(), emu.private_key()).unwrap();
        drop(out);
        let mut wait = unsafe { std::fs::File::from_raw_fd(to_child[0]) };
        let _ = wait.read(&mut [0; 1]); // EOF: the parent is done
        drop(emu);
        unsafe { libc::_exit(0) }
    }
    unsafe {
        libc::close(to_parent[1]);
        libc::close(to_child[0]);
    }
    let mut lines = BufReader::new(unsafe { std::fs::File::from_raw_fd(to_parent[0]) }).lines();
    let base_url = lines.next().unwrap().unwrap();
    let key = lines.next().unwrap().unwrap();
    // Kept open while this process runs: its end is the child's signal to stop.
    let keep = unsafe { std::fs::File::from_raw_fd(to_child[1]) };
    (base_url, key, keep)
}

fn main() {
    let count: usize = std::env::var("ROOMCHAT_BENCH_MESSAGES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let seeding = Instant::now();
    let (base_url, key, _child) = spawn_emulator(count);
    println!(
        "export: {count} messages seeded in the emulator's process in {:.1} s",
        seeding.elapsed().as_secs_f64()
    );
    let client = Client::builder(key)
        .base_url(base_url)
        .timeout(Duration::from_secs(30))
        .rate_limit(RateLimitConfig::new(1_000_000, Duration::from_secs(60)))
        .build()
        .unwrap();
    // A warm connection, and the client's own allocations made, before measuring.
    client
        .room_messages(ROOM, &RoomMessages::new().limit(1))
        .unwrap();

    roomchat_emulator::bench::idle_and_loaded(1, 1, |label, rounds| {
        for _ in 0..rounds {
            reset_peak();
            let before = status_mib("VmRSS");
            let (mut seen, mut text_bytes, mut files) = (0usize, 0usize, 0usize);
            let mut at_tenth = f64::NAN;
            let started = Instant::now();
            for message in client.iter_room_messages(ROOM, &RoomMessages::new()) {
                let message = message.expect("no error on an idle loopback");
                seen += 1;
                text_bytes += message.message.map_or(0, |t| t.len());
                files += usize::from(message.file.is_some());
                if seen == count / 10 {
                    at_tenth = status_mib("VmHWM");
                }
            }
            let elapsed = started.elapsed();
            assert_eq!(seen, count, "every message once");
            assert_eq!(files, count / 50);
            println!(
                "export: {seen} messages ({:.1} MiB of text) with iter_room_messages (200 a page), {label}: \
                 {:.0} messages/s ({:.2} s); RSS {before:.1} MiB before, peak {at_tenth:.1} MiB after \
                 the first tenth, peak {:.1} MiB at the end",
                text_bytes as f64 / (1024.0 * 1024.0),
                seen as f64 / elapsed.as_secs_f64(),
                elapsed.as_secs_f64(),
                status_mib("VmHWM"),
            );
        }
    });
}
