//! Shared set-up: an emulator per test, and a client for it.
#![allow(dead_code)]

use std::time::{Duration, Instant, SystemTime};

pub mod redis_server;
pub mod redis_topology;

/// Prints a figure (a line of measured numbers the test command shows) to stderr,
/// past the test harness's capture: the test command takes it from the log of its
/// one workspace run instead of running the test again with `--nocapture`.
pub fn figure(line: std::fmt::Arguments<'_>) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

use roomchat::{Client, ClientBuilder, Error, RateLimitConfig};
use roomchat_emulator::{Emulator, EmulatorConfig, EmulatorTls, Fault, FaultAction};

/// A key distinctive enough to find anywhere it leaks. Each test makes its own
/// (the rate-limit budget is per key, process-wide).
pub fn secret_key(test: &str) -> String {
    format!("sk_live_SECRET_{test}_9f8e7d6c5b4a")
}

pub fn emulator(test: &str) -> Emulator {
    emulator_with(test, |_| {})
}

/// Whether the suite runs over HTTPS (`ROOMCHAT_TEST_TLS=1`): every emulator then
/// serves TLS with a CA of its own, which every client of [`builder`] trusts.
pub fn over_tls() -> bool {
    std::env::var("ROOMCHAT_TEST_TLS").is_ok_and(|v| v == "1")
}

pub fn emulator_with(test: &str, adjust: impl FnOnce(&mut EmulatorConfig)) -> Emulator {
    let mut config = EmulatorConfig {
        private_key: secret_key(test),
        tls: over_tls().then(EmulatorTls::generated),
        ..EmulatorConfig::default()
    };
    adjust(&mut config);
    Emulator::start(config).expect("emulator starts")
}

/// A client of `emu` with `key` and the defaults (trusting its CA when it serves TLS).
pub fn builder_with_key(emu: &Emulator, key: &str) -> ClientBuilder {
    let builder = Client::builder(key).base_url(emu.base_url());
    match emu.ca_pem() {
        Some(ca) => builder.add_root_certificates_pem(ca),
        None => builder,
    }
}

/// A client with fast retries, for `emu` (trusting its CA when it serves TLS).
pub fn builder(emu: &Emulator) -> ClientBuilder {
    builder_with_key(emu, &emu.private_key())
        .chat_url(emu.chat_url())
        .public_key(emu.public_key())
        .base_backoff(Duration::from_millis(20))
        .timeout(Duration::from_secs(10))
        .rate_limit(RateLimitConfig::new(100_000, Duration::from_secs(60)))
}

pub fn client(emu: &Emulator) -> Client {
    builder(emu).build().expect("client builds")
}

/// A fault that fires once.
pub fn once(method: &str, path: &str, action: FaultAction) -> Fault {
    Fault {
        method: Some(method.into()),
        path: path.into(),
        times: 1,
        action,
    }
}

pub fn respond(status: u16, body: &str, headers: &[(&str, &str)]) -> FaultAction {
    FaultAction::Respond {
        status,
        headers: headers
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect(),
        body: body.into(),
        content_type: None,
    }
}

/// How many requests with `method` to `path` reached the emulator.
pub fn arrivals(emu: &Emulator, method: &str, path: &str) -> usize {
    emu.journal()
        .iter()
        .filter(|e| e.method == method && e.path == path)
        .count()
}

/// Asserts that the key shows nowhere in the error's renderings.
pub fn assert_no_secret(error: &Error, key: &str) {
    for shown in [
        error.to_string(),
        format!("{error:?}"),
        format!("{error:#?}"),
    ] {
        assert!(!shown.contains(key), "the key leaked: {shown}");
        assert!(
            !shown.contains(&key[8..]),
            "part of the key leaked: {shown}"
        );
    }
}

pub const USERS: &str = "/consumer/api/v2/users";
pub const CREATE: &str = "/consumer/api/v1/user";
pub const DEACTIVATE: &str = "/consumer/api/v2/user/deactivate";

/// The most of `times` (sorted) within any window that starts at one of them,
/// `within(start, t)` saying whether `t` is still in the window begun at `start`.
pub fn busiest_by<T: Copy>(times: &[T], within: impl Fn(T, T) -> bool) -> usize {
    let (mut best, mut end) = (0, 0);
    for start in 0..times.len() {
        while end < times.len() && within(times[start], times[end]) {
            end += 1;
        }
        best = best.max(end - start);
    }
    best
}

/// The most arrivals (sorted) within any rolling `window`, as the service counts them.
pub fn busiest_window(arrivals: &[SystemTime], window: Duration) -> usize {
    busiest_by(arrivals, |start, t| {
        t.duration_since(start).unwrap_or_default() < window
    })
}

/// Runs `f` in a forked child, which exits with its result (0 = success; 99 if it
/// panicked). Returns the pid, for [`wait_child`].
pub fn fork_child(f: impl FnOnce() -> i32) -> libc::pid_t {
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let code = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or(99);
        unsafe { libc::_exit(code) }
    }
    pid
}

/// Waits for the forked child `pid` up to `deadline`, killing it if it outlives that:
/// its exit code (-1 if a signal ended it), or `None` if it hung.
pub fn wait_child(pid: libc::pid_t, deadline: Duration) -> Option<i32> {
    let started = Instant::now();
    loop {
        let mut status = 0;
        if unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) } == pid {
            return Some(if libc::WIFEXITED(status) {
                libc::WEXITSTATUS(status)
            } else {
                -1
            });
        }
        if started.elapsed() > deadline {
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, &mut status, 0);
            }
            return None;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// The TCP sockets of this process whose remote end is `port` (its descriptors
/// asked with `getpeername`: reading the system's socket tables is slow once
/// many connections linger in TIME_WAIT).
pub fn sockets_to(port: u16) -> usize {
    let mut count = 0;
    for entry in std::fs::read_dir("/proc/self/fd").unwrap().flatten() {
        let Some(fd) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        // SAFETY: getpeername writes at most `len` bytes into a zeroed sockaddr_storage.
        let mut storage: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
        let mut len = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
        let got = unsafe {
            libc::getpeername(
                fd,
                (&mut storage as *mut libc::sockaddr_storage).cast(),
                &mut len,
            )
        };
        if got != 0 {
            continue;
        }
        let peer_port = match i32::from(storage.ss_family) {
            // SAFETY: the family says which address this is.
            libc::AF_INET => u16::from_be(unsafe {
                (*(&storage as *const libc::sockaddr_storage).cast::<libc::sockaddr_in>()).sin_port
            }),
            libc::AF_INET6 => u16::from_be(unsafe {
                (*(&storage as *const libc::sockaddr_storage).cast::<libc::sockaddr_in6>())
                    .sin6_port
            }),
            _ => continue,
        };
        if peer_port == port {
            count += 1;
        }
    }
    count
}
