//! The rate budget's cost: in this process vs shared through Redis on loopback.
//!
//! * The cost of one acquire: the time from a call's start to the slot the
//!   budget grants it (the observer's `started_at`), p50 and p99, on each backend.
//! * List-users calls per second through a client on each backend, alternating
//!   call by call, against one embedded emulator.
//! * One Redis round trip (`PING` on a raw socket), to check the goal: the
//!   Redis backend adds no more than one round trip per call.
//!
//! Idle, then loaded: one busy-loop process per core beside it
//! (`scripts/bench/cpu-load.sh`), a quarter of the calls.
//!
//! Needs `redis-server` on `PATH` (started here on a free port).
//! `cargo bench -p roomchat --features redis --bench budget` (`ROOMCHAT_BENCH_N`, default 3000).

#[path = "../tests/common/redis_server.rs"]
mod redis_server;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use roomchat::{
    Client, Event, EventKind, Level, ListUsers, Observer, RateLimitConfig, RedisBudget,
};

/// Keeps the time from each call's start to its budget slot.
#[derive(Default)]
struct SlotDelay {
    call_started: Mutex<Option<Instant>>,
    delays: Mutex<Vec<f64>>,
}

impl Observer for SlotDelay {
    fn enabled(&self, level: Level) -> bool {
        level == Level::Debug
    }
    fn event(&self, event: &Event<'_>) {
        if event.kind == EventKind::Attempt {
            if let Some(start) = *self.call_started.lock().unwrap() {
                let delay = event.started_at.saturating_duration_since(start);
                self.delays.lock().unwrap().push(delay.as_secs_f64() * 1e6);
            }
        }
    }
}

fn percentile(values: &mut [f64], p: f64) -> f64 {
    values.sort_by(f64::total_cmp);
    values[((values.len() - 1) as f64 * p) as usize]
}

fn main() {
    let calls = roomchat_emulator::bench::calls_from_env(3000);
    let emulator = roomchat_emulator::bench::unthrottled_emulator(50);
    let redis = redis_server::RedisServer::start(None);
    let unthrottled = RateLimitConfig::new(u32::MAX, Duration::from_secs(1));
    let make = |shared: bool, observer: Arc<SlotDelay>| -> Client {
        let mut builder = Client::builder(emulator.private_key())
            .base_url(emulator.base_url())
            .rate_limit(unthrottled)
            .observer(observer);
        if shared {
            builder = builder.redis_budget(RedisBudget::new(redis.url()));
        }
        builder.build().expect("client builds")
    };
    let (local_delays, redis_delays) = (
        Arc::new(SlotDelay::default()),
        Arc::new(SlotDelay::default()),
    );
    let local = make(false, local_delays.clone());
    let shared = make(true, redis_delays.clone());

    let call = |client: &Client, delays: &SlotDelay| -> f64 {
        let started = Instant::now();
        *delays.call_started.lock().unwrap() = Some(started);
        let page = client
            .list_users(&ListUsers::page(50, 0))
            .expect("list users");
        assert_eq!(page.data.len(), 50);
        started.elapsed().as_secs_f64() * 1e6
    };
    // Idle, then with one busy-loop process per core beside it (a quarter of the calls).
    roomchat_emulator::bench::idle_and_loaded(calls, (calls / 4).max(200), |label, calls| {
        for _ in 0..200 {
            call(&local, &local_delays);
            call(&shared, &redis_delays);
        }
        local_delays.delays.lock().unwrap().clear();
        redis_delays.delays.lock().unwrap().clear();
        let (mut local_times, mut redis_times) = (Vec::new(), Vec::new());
        for i in 0..calls {
            if i % 2 == 0 {
                local_times.push(call(&local, &local_delays));
                redis_times.push(call(&shared, &redis_delays));
            } else {
                redis_times.push(call(&shared, &redis_delays));
                local_times.push(call(&local, &local_delays));
            }
        }

        // One round trip to the same Redis: PING on a raw keep-alive socket.
        let mut ping = TcpStream::connect(("127.0.0.1", redis.port)).unwrap();
        ping.set_nodelay(true).unwrap();
        let mut rtts = Vec::new();
        let mut reply = [0u8; 7];
        for _ in 0..calls.max(500) {
            let started = Instant::now();
            ping.write_all(b"*1\r\n$4\r\nPING\r\n").unwrap();
            ping.read_exact(&mut reply).unwrap();
            rtts.push(started.elapsed().as_secs_f64() * 1e6);
        }

        let mut local_slot = local_delays.delays.lock().unwrap().clone();
        let mut redis_slot = redis_delays.delays.lock().unwrap().clone();
        let rtt = percentile(&mut rtts, 0.5);
        let (local_p50, redis_p50) = (
            percentile(&mut local_slot, 0.5),
            percentile(&mut redis_slot, 0.5),
        );
        println!("rate budget, in-process vs Redis on loopback, {label}, {calls} list-users calls each (50 users), alternating:");
        println!(
            "  acquire (call start -> slot): local p50 {local_p50:.1} us, p99 {:.1} us; redis p50 {redis_p50:.1} us, p99 {:.1} us",
            percentile(&mut local_slot, 0.99),
            percentile(&mut redis_slot, 0.99)
        );
        let (l, r) = (
            percentile(&mut local_times, 0.5),
            percentile(&mut redis_times, 0.5),
        );
        println!(
            "  calls: local {l:.1} us ({:.0}/s), redis {r:.1} us ({:.0}/s); redis adds {:.1} us per call",
            1e6 / l,
            1e6 / r,
            r - l
        );
        println!(
            "  one Redis round trip (PING) p50 {rtt:.1} us: an acquire in Redis costs {:.2} round trips \
             (goal: one, plus the script's own work); a whole call {:.2}",
            (redis_p50 - local_p50) / rtt,
            (r - l) / rtt
        );
    });
}
