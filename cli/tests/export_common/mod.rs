//! What the export and import tests share: an emulator, the `roomchat` command pointed at it,
//! a scratch folder, and a run measured (wall time, peak RSS).

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use roomchat_emulator::{Emulator, EmulatorConfig, RateLimit};

/// An emulator with no effective rate limit (the client's own budget still applies).
pub fn emulator() -> Emulator {
    let emu = Emulator::start(EmulatorConfig {
        rate_limit: RateLimit {
            requests: u32::MAX,
            window: Duration::from_secs(60),
        },
        ..EmulatorConfig::default()
    })
    .expect("the emulator starts");
    emu.set_journal_capacity(2_000);
    emu
}

/// A new empty folder under the system's temporary one, removed when dropped.
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!(
            "roomchat-cli-{name}-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `roomchat ARGS` against `emu`, in `dir`, with a clean environment of the key and URL.
pub fn roomchat(emu: &Emulator, dir: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_roomchat"));
    for (name, _) in std::env::vars() {
        if name.starts_with("ROOMCHAT_") {
            cmd.env_remove(name);
        }
    }
    cmd.env("ROOMCHAT_PRIVATE_KEY", emu.private_key())
        .env("ROOMCHAT_BASE_URL", emu.base_url())
        .current_dir(dir)
        .args(args)
        .stdin(Stdio::null());
    cmd
}

/// A finished run: status, stderr, wall time and the child's peak RSS.
pub struct Run {
    pub status: ExitStatus,
    pub stderr: String,
    pub elapsed: Duration,
    pub peak_rss_mib: f64,
}

/// The `VmHWM` of process `pid` (its peak RSS since its exec), in MiB.
fn peak_rss_mib(pid: u32) -> Option<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kb = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse::<f64>()
        .ok()?;
    Some(kb / 1024.0)
}

/// Runs `cmd` to its end; its peak RSS read from `/proc/<pid>/status` (`VmHWM`, which starts
/// afresh at exec: `wait4`'s `ru_maxrss` would count this test's own memory, as the child
/// shares it until its exec) every 5 ms while it runs.
pub fn run_measured(mut cmd: Command) -> Run {
    use std::io::Read;
    use std::sync::atomic::{AtomicBool, Ordering};
    let started = Instant::now();
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("roomchat starts");
    let mut stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let pid = child.id();
    let done = std::sync::Arc::new(AtomicBool::new(false));
    let poller = {
        let done = done.clone();
        std::thread::spawn(move || {
            let mut peak: f64 = 0.0;
            while !done.load(Ordering::Relaxed) {
                if let Some(p) = peak_rss_mib(pid) {
                    peak = peak.max(p);
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            peak
        })
    };
    let status = child.wait().unwrap();
    let elapsed = started.elapsed();
    done.store(true, Ordering::Relaxed);
    Run {
        status,
        stderr: reader.join().unwrap(),
        elapsed,
        peak_rss_mib: poller.join().unwrap(),
    }
}

/// Runs `cmd`, asserting success; its stderr.
pub fn run_ok(cmd: Command) -> Run {
    let run = run_measured(cmd);
    assert!(
        run.status.success(),
        "roomchat failed ({}): {}",
        run.status,
        run.stderr
    );
    run
}
