//! Paired timing for the project's benchmarks: two ways of doing the same call,
//! compared in one run on a shared, noisy machine.

use std::time::{Duration, Instant};

use crate::{Emulator, EmulatorConfig, RateLimit};

/// The number of calls a benchmark makes: `ROOMCHAT_BENCH_N`, or `default`.
pub fn calls_from_env(default: usize) -> usize {
    std::env::var("ROOMCHAT_BENCH_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// An emulator for benchmarks: `seed_users` users and no effective rate limit
/// (a benchmark measures the client, not the limit).
pub fn unthrottled_emulator(seed_users: usize) -> Emulator {
    Emulator::start(EmulatorConfig {
        rate_limit: RateLimit {
            requests: u32::MAX,
            window: Duration::from_secs(60),
        },
        seed_users,
        ..EmulatorConfig::default()
    })
    .expect("the benchmark's emulator starts")
}

/// The outcome of [`compare`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Comparison {
    /// Calls made by each side.
    pub calls: usize,
    /// Total time of side `a`.
    pub a: Duration,
    /// Total time of side `b`.
    pub b: Duration,
    /// The median over rounds of (a's time / b's time) in that round.
    pub median_ratio: f64,
}

impl Comparison {
    /// Total a / total b.
    pub fn overall_ratio(&self) -> f64 {
        self.a.as_secs_f64() / self.b.as_secs_f64()
    }

    /// Microseconds per call of a duration of this comparison.
    pub fn micros_per_call(&self, total: Duration) -> f64 {
        total.as_secs_f64() * 1e6 / self.calls as f64
    }

    /// Prints both sides and the ratio a/b with its goal.
    pub fn print(&self, title: &str, a_name: &str, b_name: &str, goal: f64) {
        println!("{title} x {} calls:", self.calls);
        for (name, total) in [(a_name, self.a), (b_name, self.b)] {
            println!(
                "  {name:<16} {total:>10.2?} total, {:>7.1} us/call",
                self.micros_per_call(total)
            );
        }
        println!(
            "  ratio {a_name}/{b_name}: {:.3} median of paired rounds, {:.3} overall (goal <= {goal:.2})",
            self.median_ratio,
            self.overall_ratio()
        );
    }
}

/// Warms both sides up, then runs `calls` calls of each in `rounds` rounds.
/// Within a round the sides alternate call by call, each going first half the
/// time, so that both meet the same bursts of noise; the median of the
/// per-round ratios shrugs off what is left.
pub fn compare(calls: usize, rounds: usize, a: &dyn Fn(), b: &dyn Fn()) -> Comparison {
    let rounds = rounds.max(1);
    let per_round = (calls / rounds).max(1);
    for _ in 0..50 {
        a();
        b();
    }
    let time = |f: &dyn Fn()| {
        let started = Instant::now();
        f();
        started.elapsed()
    };
    let (mut a_total, mut b_total) = (Duration::ZERO, Duration::ZERO);
    let mut ratios = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let (mut a_round, mut b_round) = (Duration::ZERO, Duration::ZERO);
        for call in 0..per_round {
            if call % 2 == 0 {
                a_round += time(a);
                b_round += time(b);
            } else {
                b_round += time(b);
                a_round += time(a);
            }
        }
        a_total += a_round;
        b_total += b_round;
        ratios.push(a_round.as_secs_f64() / b_round.as_secs_f64());
    }
    ratios.sort_by(f64::total_cmp);
    Comparison {
        calls: per_round * rounds,
        a: a_total,
        b: b_total,
        median_ratio: ratios[rounds / 2],
    }
}
