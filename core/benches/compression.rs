//! gzip or not (issue 20): bytes on the wire and the client's CPU per call for a
//! 200-user page and a 100,000-message conversation, against the embedded
//! emulator compressing answers of 1 KiB and more. Printed, never asserted.
//!
//! Bytes are counted by a relay between client and emulator; CPU is the
//! calling thread's (`RUSAGE_THREAD`: the client decodes on it).
//! `ROOMCHAT_BENCH_N` sets the calls per case (default 50; the conversation
//! takes a tenth of them). Idle, then loaded: one busy-loop process per core
//! beside it (`scripts/bench/cpu-load.sh`), half the calls.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use roomchat::{Client, ConversationMessages, ListUsers};
use roomchat_emulator::{Emulator, EmulatorConfig, RateLimit};
use serde_json::json;

/// A relay on loopback in front of `target`, counting the bytes it sends back.
fn counting_relay(target: String, from_server: Arc<AtomicU64>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for client in listener.incoming().flatten() {
            let server = TcpStream::connect(&target).unwrap();
            let (mut c_read, mut s_write) =
                (client.try_clone().unwrap(), server.try_clone().unwrap());
            std::thread::spawn(move || {
                let _ = std::io::copy(&mut c_read, &mut s_write);
            });
            let counter = from_server.clone();
            let (mut s_read, mut c_write) = (server, client);
            std::thread::spawn(move || {
                let mut buffer = vec![0u8; 64 * 1024];
                while let Ok(n) = s_read.read(&mut buffer) {
                    if n == 0 || c_write.write_all(&buffer[..n]).is_err() {
                        break;
                    }
                    counter.fetch_add(n as u64, Ordering::Relaxed);
                }
            });
        }
    });
    url
}

fn thread_cpu() -> Duration {
    // SAFETY: getrusage writes into the zeroed struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut usage) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

fn main() {
    let emu = Emulator::start(EmulatorConfig {
        gzip_min_bytes: Some(1024),
        rate_limit: RateLimit {
            requests: 1_000_000,
            window: Duration::from_secs(60),
        },
        ..EmulatorConfig::default()
    })
    .unwrap();
    emu.seed_users(200);
    emu.create_room(json!({"roomId": "bench", "name": "Bench"}));
    let messages: Vec<_> = (0..100_000)
        .map(|i| json!({"messages": format!("message number {i} of the bench conversation"), "user": {"username": format!("user-{}", i % 50)}}))
        .collect();
    let conversation = emu.add_conversation("bench", messages);
    let n: u64 = std::env::var("ROOMCHAT_BENCH_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50);
    let from_server = Arc::new(AtomicU64::new(0));
    let target = emu.base_url().trim_start_matches("http://").to_owned();
    let url = counting_relay(target, from_server.clone());

    // Idle, then with one busy-loop process per core beside it (half the calls).
    roomchat_emulator::bench::idle_and_loaded(n as usize, (n as usize / 2).max(3), |label, n| {
        let n = n as u64;
        println!("compression: answers over a counting relay, the client's CPU on its own thread (per call: totals over the calls), {label}");
        for (what, calls) in [
            ("200-user page", n),
            ("100,000-message conversation", (n / 10).max(3)),
        ] {
            let mut line = Vec::new();
            for gzip in [false, true] {
                let client = Client::builder(emu.private_key())
                    .base_url(&url)
                    .gzip(gzip)
                    .max_response_bytes(u64::MAX)
                    .build()
                    .unwrap();
                let call = || match what {
                    "200-user page" => {
                        assert_eq!(
                            client
                                .list_users(&ListUsers::page(200, 0))
                                .unwrap()
                                .data
                                .len(),
                            200
                        )
                    }
                    _ => assert_eq!(
                        client
                            .conversation_messages(&ConversationMessages::new(
                                "bench",
                                &conversation
                            ))
                            .unwrap()
                            .len(),
                        100_000
                    ),
                };
                call(); // a warm connection
                from_server.store(0, Ordering::Relaxed);
                let (cpu, wall) = (thread_cpu(), std::time::Instant::now());
                for _ in 0..calls {
                    call();
                }
                let cpu = (thread_cpu() - cpu) / calls as u32;
                let wall = wall.elapsed() / calls as u32;
                let bytes = from_server.load(Ordering::Relaxed) / calls;
                line.push(format!(
                    "{}: {:.1} KiB on the wire, {:.2} ms CPU ({:.2} ms wall) per call",
                    if gzip { "gzip" } else { "identity" },
                    bytes as f64 / 1024.0,
                    cpu.as_secs_f64() * 1e3,
                    wall.as_secs_f64() * 1e3
                ));
            }
            println!("compression: {what}, {label}: {}", line.join("; "));
        }
    });
}
