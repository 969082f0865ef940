//! Paired timing for the project's benchmarks: two ways of doing the same call,
//! compared in one run on a shared, noisy machine.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
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

/// A busy CPU for a benchmark's loaded round: `scripts/bench/cpu-load.sh` (the
/// one implementation every language's benchmarks use) as a child, one
/// busy-loop process per core at normal priority, as on a production server.
/// Dropping it (the round's end, a panic) closes the script's stdin, which
/// kills the loops; so does this process's end, however it ends, and the
/// script bounds them to 15 minutes besides. Needs the repository's scripts
/// (the path is this crate's manifest directory's `../scripts`).
#[derive(Debug)]
pub struct CpuLoad {
    child: Child,
    processes: usize,
}

impl CpuLoad {
    /// Starts the load and waits until its processes run.
    pub fn start() -> io::Result<CpuLoad> {
        let processes = std::thread::available_parallelism().map_or(1, |n| n.get());
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/bench/cpu-load.sh");
        let mut child = Command::new("bash")
            .args([script, &processes.to_string(), "900"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()?;
        let mut ready = String::new();
        let stdout = child.stdout.take().expect("piped");
        BufReader::new(stdout).read_line(&mut ready)?;
        let load = CpuLoad { child, processes };
        if !ready.starts_with("cpu-load:") {
            return Err(io::Error::other(format!(
                "{script} did not start: {ready:?}"
            )));
        }
        Ok(load)
    }

    /// The label of the loaded round's figures: `loaded (N busy processes)`.
    pub fn label(&self) -> String {
        format!("loaded ({} busy processes)", self.processes)
    }
}

impl Drop for CpuLoad {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.wait();
    }
}

/// Runs `round` idle (its label `idle`), then again under a [`CpuLoad`] (its
/// label `loaded (N busy processes)`) with `loaded_calls` instead of `calls`.
pub fn idle_and_loaded(calls: usize, loaded_calls: usize, mut round: impl FnMut(&str, usize)) {
    round("idle", calls);
    let load = CpuLoad::start().expect("scripts/bench/cpu-load.sh starts");
    round(&load.label(), loaded_calls);
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

/// One keep-alive HTTP/1.1 connection driven by hand: minimal `GET`s, each
/// answer read whole. It measures the emulator rather than an HTTP client
/// library, for the listing-cost and soak figures.
#[derive(Debug)]
pub struct RawConnection {
    host: String,
    reader: BufReader<TcpStream>,
    writer: TcpStream,
    request: Vec<u8>,
    line: String,
    body: Vec<u8>,
}

impl RawConnection {
    /// Connects to `base_url` (`http://host:port`, as [`Emulator::base_url`] gives it).
    pub fn connect(base_url: &str) -> io::Result<RawConnection> {
        let host = base_url
            .strip_prefix("http://")
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not an http:// URL"))?
            .trim_end_matches('/')
            .to_owned();
        let writer = TcpStream::connect(&host)?;
        writer.set_nodelay(true)?;
        // A bound on every read, so that a stuck server ends a figure run with an error.
        writer.set_read_timeout(Some(Duration::from_secs(30)))?;
        Ok(RawConnection {
            reader: BufReader::with_capacity(64 * 1024, writer.try_clone()?),
            writer,
            host,
            request: Vec::with_capacity(256),
            line: String::with_capacity(128),
            body: Vec::with_capacity(64 * 1024),
        })
    }

    /// Sends `GET <path_and_query>` and reads the whole answer; returns its
    /// status and body (the body stays valid until the next call).
    pub fn get(&mut self, path_and_query: &str) -> io::Result<(u16, &[u8])> {
        self.request.clear();
        write!(
            self.request,
            "GET {path_and_query} HTTP/1.1\r\nHost: {}\r\n\r\n",
            self.host
        )?;
        self.writer.write_all(&self.request)?;
        let bad = |what: &str| io::Error::new(io::ErrorKind::InvalidData, what.to_owned());
        self.line.clear();
        if self.reader.read_line(&mut self.line)? == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the connection closed before an answer",
            ));
        }
        let status: u16 = self
            .line
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| bad("no status line"))?;
        let mut length = None;
        loop {
            self.line.clear();
            if self.reader.read_line(&mut self.line)? == 0 {
                return Err(bad("the connection closed inside the headers"));
            }
            if self.line == "\r\n" {
                break;
            }
            if let Some((name, value)) = self.line.split_once(':') {
                if name.eq_ignore_ascii_case("content-length") {
                    length = Some(
                        value
                            .trim()
                            .parse()
                            .map_err(|_| bad("bad Content-Length"))?,
                    );
                }
            }
        }
        // The emulator always sends Content-Length; chunked answers are not read here.
        let length: usize = length.ok_or_else(|| bad("no Content-Length"))?;
        self.body.resize(length, 0);
        self.reader.read_exact(&mut self.body)?;
        Ok((status, &self.body))
    }
}
