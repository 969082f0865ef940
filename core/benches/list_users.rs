//! The users listing through the client, against the physical floor and libcurl.
//!
//! Three ways of making the same call against one emulator (embedded, no
//! effective rate limit), each decoding the page into the same `UserPage` and
//! reading every username:
//!
//! * **client**: `Client::list_users` (keep-alive pool, budget, retries, timeouts);
//! * **floor**: a raw keep-alive `TcpStream` sending the minimal HTTP/1.1
//!   request and reading exactly the body (what no HTTP library can beat);
//! * **libcurl**: a reused easy handle (what a C/C++ backend writes by hand).
//!
//! Calls alternate one by one (the order rotating) so that all three meet the
//! same noise; the figures are medians. Then the same with 8 threads (one
//! shared client; a socket or an easy handle per thread for the others).
//! All of it idle, then loaded: one busy-loop process per core beside it
//! (`scripts/bench/cpu-load.sh`), every side under the same load.
//! Goals (issue 7): client/floor <= 1.10 at 50 users, faster than libcurl at
//! every page size, and 8 threads reaching >= 1.6x the single-thread calls/s.
//!
//! `cargo bench -p roomchat --bench list_users` (`ROOMCHAT_BENCH_N`: calls per
//! side and page size, default 3000).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use roomchat::{Client, ListUsers, RateLimitConfig, UserPage};

/// One way of making the call: returns the usernames' total length (kept, so nothing is optimised away).
trait Side {
    fn call(&mut self) -> usize;
}

/// Makes one side for one thread.
type MakeSide<'a> = &'a (dyn Fn() -> Box<dyn Side + Send> + Sync);

/// Decodes a page as the client does: the body checked as UTF-8 once, then parsed.
fn decode(body: &[u8]) -> UserPage {
    serde_json::from_str(std::str::from_utf8(body).unwrap()).unwrap()
}

fn names(page: &UserPage, expected: usize) -> usize {
    assert_eq!(page.data.len(), expected);
    page.data
        .iter()
        .map(|u| u.username.as_deref().map_or(0, str::len))
        .sum()
}

struct ClientSide {
    client: Client,
    params: ListUsers,
    expected: usize,
}

impl Side for ClientSide {
    fn call(&mut self) -> usize {
        let page = self.client.list_users(&self.params).expect("list users");
        names(&page, self.expected)
    }
}

/// The floor: one keep-alive socket, the minimal request, the body read by its `Content-Length`.
struct FloorSide {
    stream: TcpStream,
    request: Vec<u8>,
    buffer: Vec<u8>,
    expected: usize,
}

impl FloorSide {
    fn new(host_port: &str, target: &str, expected: usize) -> FloorSide {
        let stream = TcpStream::connect(host_port).expect("connect");
        stream.set_nodelay(true).unwrap();
        FloorSide {
            stream,
            request: format!("GET {target} HTTP/1.1\r\nHost: {host_port}\r\n\r\n").into_bytes(),
            buffer: Vec::with_capacity(64 * 1024),
            expected,
        }
    }
}

impl Side for FloorSide {
    fn call(&mut self) -> usize {
        self.stream.write_all(&self.request).unwrap();
        self.buffer.clear();
        let mut chunk = [0u8; 65536];
        let (head_end, body_len) = loop {
            let n = self.stream.read(&mut chunk).unwrap();
            assert!(n > 0, "the emulator closed the connection");
            self.buffer.extend_from_slice(&chunk[..n]);
            if let Some(end) = self.buffer.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = std::str::from_utf8(&self.buffer[..end]).unwrap();
                assert!(head.starts_with("HTTP/1.1 200"), "{head}");
                let length = head
                    .lines()
                    .find_map(|l| {
                        let (name, value) = l.split_once(':')?;
                        name.eq_ignore_ascii_case("content-length")
                            .then(|| value.trim().parse::<usize>().unwrap())
                    })
                    .expect("content-length");
                break (end + 4, length);
            }
        };
        while self.buffer.len() < head_end + body_len {
            let n = self.stream.read(&mut chunk).unwrap();
            assert!(n > 0);
            self.buffer.extend_from_slice(&chunk[..n]);
        }
        let page = decode(&self.buffer[head_end..]);
        names(&page, self.expected)
    }
}

/// libcurl with a reused easy handle.
struct CurlSide {
    easy: curl::easy::Easy2<Collect>,
    expected: usize,
}

struct Collect(Vec<u8>);

impl curl::easy::Handler for Collect {
    fn write(&mut self, data: &[u8]) -> Result<usize, curl::easy::WriteError> {
        self.0.extend_from_slice(data);
        Ok(data.len())
    }
}

impl CurlSide {
    fn new(url: &str, expected: usize) -> CurlSide {
        let mut easy = curl::easy::Easy2::new(Collect(Vec::with_capacity(64 * 1024)));
        easy.url(url).unwrap();
        // As a careful hand-written caller would: timeouts set, no signals (threads).
        easy.connect_timeout(Duration::from_secs(10)).unwrap();
        easy.timeout(Duration::from_secs(30)).unwrap();
        easy.signal(false).unwrap();
        CurlSide { easy, expected }
    }
}

impl Side for CurlSide {
    fn call(&mut self) -> usize {
        self.easy.get_mut().0.clear();
        self.easy.perform().expect("curl");
        assert_eq!(self.easy.response_code().unwrap(), 200);
        let page = decode(&self.easy.get_ref().0);
        names(&page, self.expected)
    }
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// `calls` calls of each side, alternating call by call with a rotating order;
/// returns each side's median microseconds per call.
fn interleaved(sides: &mut [&mut dyn Side], calls: usize) -> Vec<f64> {
    let mut sink = 0;
    for _ in 0..100 {
        for side in sides.iter_mut() {
            sink += side.call();
        }
    }
    let mut times = vec![Vec::with_capacity(calls); sides.len()];
    for i in 0..calls {
        for k in 0..sides.len() {
            let s = (i + k) % sides.len();
            let started = Instant::now();
            sink += sides[s].call();
            times[s].push(started.elapsed().as_secs_f64() * 1e6);
        }
    }
    assert!(sink > 0);
    times.iter_mut().map(|t| median(t)).collect()
}

/// Calls per second of `threads` threads making `calls_each` calls, each thread with its own side.
fn throughput(threads: usize, calls_each: usize, make: MakeSide<'_>) -> f64 {
    let sides: Vec<_> = (0..threads).map(|_| make()).collect();
    let started = Instant::now();
    thread::scope(|scope| {
        for mut side in sides {
            scope.spawn(move || {
                for _ in 0..calls_each {
                    side.call();
                }
            });
        }
    });
    (threads * calls_each) as f64 / started.elapsed().as_secs_f64()
}

fn main() {
    let calls = roomchat_emulator::bench::calls_from_env(3000);
    let emulator = roomchat_emulator::bench::unthrottled_emulator(200);
    let key = emulator.private_key();
    let base_url = emulator.base_url().to_owned();
    let host_port = base_url.trim_start_matches("http://").to_owned();
    let client = Client::builder(key.clone())
        .base_url(&base_url)
        .rate_limit(RateLimitConfig::new(u32::MAX, Duration::from_secs(60)))
        .build()
        .expect("client builds");
    let target = |size: usize| format!("/consumer/api/v2/users?auth={key}&limit={size}&skip=0");

    // Idle, then with one busy-loop process per core beside it (a quarter of the calls).
    roomchat_emulator::bench::idle_and_loaded(calls, (calls / 4).max(200), |label, calls| {
        println!("list_users against the embedded emulator, {label}, {calls} calls per side and page size (median us per call):");
        println!(
            "  {:>5}  {:>9}  {:>9}  {:>9}  {:>12}  {:>14}",
            "users", "client", "floor", "libcurl", "client/floor", "client/libcurl"
        );
        let mut verdicts = Vec::new();
        for size in [1usize, 50, 200] {
            let mut via_client = ClientSide {
                client: client.clone(),
                params: ListUsers::page(size as u32, 0),
                expected: size,
            };
            let mut via_floor = FloorSide::new(&host_port, &target(size), size);
            let mut via_curl = CurlSide::new(&format!("{base_url}{}", target(size)), size);
            let m = interleaved(&mut [&mut via_client, &mut via_floor, &mut via_curl], calls);
            let (to_floor, to_curl) = (m[0] / m[1], m[0] / m[2]);
            println!(
                "  {size:>5}  {:>9.1}  {:>9.1}  {:>9.1}  {to_floor:>12.3}  {to_curl:>14.3}",
                m[0], m[1], m[2]
            );
            if size == 50 {
                verdicts.push(format!(
                    "client/floor at 50 users {to_floor:.3} (goal <= 1.10)"
                ));
            }
            verdicts.push(format!("client/libcurl at {size} {to_curl:.3} (goal < 1)"));
        }

        // Throughput: one shared client across threads; a socket / easy handle per thread for the others.
        let size = 50;
        let calls_each = (calls / 4).max(100);
        let shared = Arc::new(client.clone());
        let make_client = || -> Box<dyn Side + Send> {
            Box::new(ClientSide {
                client: (*shared).clone(),
                params: ListUsers::page(size as u32, 0),
                expected: size,
            })
        };
        let make_floor = || -> Box<dyn Side + Send> {
            Box::new(FloorSide::new(&host_port, &target(size), size))
        };
        let url = format!("{base_url}{}", target(size));
        let make_curl = || -> Box<dyn Side + Send> { Box::new(CurlSide::new(&url, size)) };
        let makers: [(&str, MakeSide<'_>); 3] = [
            ("client", &make_client),
            ("floor", &make_floor),
            ("libcurl", &make_curl),
        ];
        let mut rates = vec![[Vec::new(), Vec::new()]; 3];
        for _ in 0..3 {
            for (i, (_, make)) in makers.iter().enumerate() {
                rates[i][0].push(throughput(1, calls_each, *make));
                rates[i][1].push(throughput(8, calls_each, *make));
            }
        }
        println!(
            "throughput at {size} users, {label} ({calls_each} calls per thread, median of 3 alternating runs):"
        );
        println!(
            "  {:>8}  {:>12}  {:>12}  {:>9}",
            "", "1 thread/s", "8 threads/s", "8t / 1t"
        );
        let mut scaling = 0.0;
        for (i, (name, _)) in makers.iter().enumerate() {
            let one = median(&mut rates[i][0]);
            let eight = median(&mut rates[i][1]);
            println!(
                "  {name:>8}  {one:>12.0}  {eight:>12.0}  {:>9.2}",
                eight / one
            );
            if i == 0 {
                scaling = eight / one;
            }
        }
        verdicts.push(format!(
            "client 8 threads / 1 thread {scaling:.2} (goal >= 1.6)"
        ));
        println!("summary, {label}: {}", verdicts.join("; "));
    });
}
