//! Running the `roomchat` binary as a schedule says: killed (SIGKILL) at an instant, bounded
//! in time (a command that does not end is a failure, killed then), or on a full disk (a small
//! tmpfs mounted over its output folder in a mount namespace of its own).

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use roomchat_emulator::Emulator;

/// A finished run of the command.
pub struct Ran {
    /// The exit code; `None` when a signal ended it (the schedule's kill, or the time limit's).
    pub code: Option<i32>,
    /// The schedule killed it (it had not ended by then).
    pub killed: bool,
    /// It had not ended within the time limit (killed then).
    pub hung: bool,
    pub stderr: String,
    pub elapsed: Duration,
}

impl Ran {
    /// A failure of any run, whatever the schedule: a panic (exit 101) or no end.
    pub fn broken(&self, what: &str) -> Result<(), String> {
        if self.hung {
            return Err(format!(
                "{what} did not end within {:.0} s (killed then); stderr: {}",
                self.elapsed.as_secs_f64(),
                tail(&self.stderr)
            ));
        }
        if self.code == Some(101) || self.stderr.contains("panicked at") {
            // The panic's place and message.
            let lines: Vec<&str> = self.stderr.lines().collect();
            let at = lines.iter().position(|l| l.contains("panicked at"));
            let panic = at.map_or_else(
                || tail(&self.stderr),
                |at| shorten(&lines[at..(at + 2).min(lines.len())].join(" "), 400),
            );
            return Err(format!("{what} panicked (exit {:?}): {panic}", self.code));
        }
        Ok(())
    }

    /// The run ended by itself with exit code 0.
    pub fn ok(&self) -> bool {
        self.code == Some(0)
    }

    pub fn summary(&self) -> String {
        match (self.killed, self.hung, self.code) {
            (true, _, _) => "killed".into(),
            (_, true, _) => "hung".into(),
            (_, _, Some(code)) => format!("exit {code}"),
            (_, _, None) => "ended by a signal".into(),
        }
    }
}

/// The last lines of a command's stderr, on one line.
pub fn tail(stderr: &str) -> String {
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    let text = lines[lines.len().saturating_sub(3)..].join(" | ");
    shorten(&text, 400)
}

/// `text` cut to about `max` bytes (at a character boundary).
pub fn shorten(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

/// When the schedule kills the command.
#[derive(Clone, Copy)]
pub enum Stop<'a> {
    Never,
    /// SIGKILL this long after the start.
    After(Duration),
    /// SIGKILL `then` after `progress` (read from the emulator: pages served, users created)
    /// reaches `at`, or at `fallback` after the start.
    Progress {
        progress: &'a (dyn Fn() -> u64 + Sync),
        at: u64,
        then: Duration,
        fallback: Duration,
    },
}

/// The global flags every run gets: a budget that never holds the command back (the
/// emulator's rate limit is off too) and short retry pauses.
const GLOBAL_FLAGS: [&str; 4] = ["--rate-limit", "1000000", "--base-backoff", "0.02"];

/// `program ARGS` with the environment of a run against `emu` in `dir`: the key and URL, no
/// other `ROOMCHAT_` variable, no profile of the machine's.
pub fn command(program: &str, emu: &Emulator, dir: &Path) -> Command {
    let mut cmd = Command::new(program);
    for (name, _) in std::env::vars() {
        if name.starts_with("ROOMCHAT_") {
            cmd.env_remove(name);
        }
    }
    cmd.env("ROOMCHAT_PRIVATE_KEY", emu.private_key())
        .env("ROOMCHAT_BASE_URL", emu.base_url())
        .env("XDG_CONFIG_HOME", dir.join(".no-config"))
        .env("RUST_BACKTRACE", "0")
        .current_dir(dir)
        .stdin(Stdio::null());
    cmd
}

/// `roomchat ARGS` (and [`GLOBAL_FLAGS`]) against `emu`, in `dir`.
pub fn roomchat(emu: &Emulator, dir: &Path, args: &[String]) -> Command {
    let mut cmd = command(env!("CARGO_BIN_EXE_roomchat"), emu, dir);
    cmd.args(args).args(GLOBAL_FLAGS);
    cmd
}

/// The rows of a CSV file `name` (after its header), which must be `expected` rows.
pub fn csv_rows<R: std::io::Read>(
    reader: &mut csv::Reader<R>,
    name: &str,
    expected: usize,
) -> Result<Vec<csv::StringRecord>, String> {
    let rows: Vec<csv::StringRecord> = reader
        .records()
        .collect::<Result<_, _>>()
        .map_err(|e| format!("{name}: {e}"))?;
    if rows.len() != expected {
        return Err(format!(
            "{name} has {} rows for {expected} items",
            rows.len()
        ));
    }
    Ok(rows)
}

/// The export checkpoint's `next_skip` (as the guide documents it), when there is one to read:
/// a steer for kills and deletions, never an expectation.
pub fn checkpoint_skip(path: &Path) -> Option<u64> {
    let text = std::fs::read(path).ok()?;
    serde_json::from_slice::<serde_json::Value>(&text).ok()?["next_skip"].as_u64()
}

/// Runs `cmd` (stdout to `stdout`, else nowhere) until it ends, the schedule's `stop`, or
/// `limit`. A command in a process group of its own (`group`) is killed with its group.
pub fn run(mut cmd: Command, stop: &Stop<'_>, limit: Duration, stdout: Option<&Path>) -> Ran {
    use std::os::unix::process::CommandExt;
    let started = Instant::now();
    let out = match stdout {
        Some(path) => Stdio::from(std::fs::File::create(path).expect("the stdout file")),
        None => Stdio::null(),
    };
    let mut child = cmd
        .stdout(out)
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .expect("the command starts");
    let mut stderr = child.stderr.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut text = Vec::new();
        let _ = stderr.read_to_end(&mut text);
        String::from_utf8_lossy(&text).into_owned()
    });
    let kill_group = |pid: u32| {
        // The whole group: a command run through a shell (the full disk's) has children.
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{pid}")])
            .stderr(Stdio::null())
            .status();
    };
    let (mut killed, mut hung) = (false, false);
    // When the progress reached its mark.
    let mut reached: Option<Instant> = None;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        let elapsed = started.elapsed();
        let due = match stop {
            Stop::Never => false,
            Stop::After(d) => elapsed >= *d,
            Stop::Progress {
                progress,
                at,
                then,
                fallback,
            } => {
                if reached.is_none() && progress() >= *at {
                    reached = Some(Instant::now());
                }
                elapsed >= *fallback || reached.is_some_and(|r| r.elapsed() >= *then)
            }
        };
        if due || elapsed >= limit {
            killed = due;
            hung = !due;
            kill_group(child.id());
            break child.wait().expect("wait");
        }
        std::thread::sleep(Duration::from_micros(500));
    };
    Ran {
        code: status.code(),
        killed,
        hung,
        stderr: reader.join().unwrap_or_default(),
        elapsed: started.elapsed(),
    }
}

/// Whether full-disk schedules can run here (root, mount namespaces, tmpfs), and why not.
pub struct DiskFull {
    pub available: bool,
    pub why: String,
}

pub fn disk_full_available() -> DiskFull {
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    if !root {
        return DiskFull {
            available: false,
            why: "not root: a tmpfs cannot be mounted".into(),
        };
    }
    let probe = std::env::temp_dir().join(format!("roomchat-harness-probe-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&probe);
    let mounted = Command::new("unshare")
        .args(["--mount", "--propagation", "private", "sh", "-c"])
        .arg("mount -t tmpfs -o size=16k harness-probe \"$1\" && umount \"$1\"")
        .arg("sh")
        .arg(&probe)
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    let _ = std::fs::remove_dir_all(&probe);
    DiskFull {
        available: mounted,
        why: if mounted {
            String::new()
        } else {
            "unshare --mount or a tmpfs mount failed".into()
        },
    }
}

/// The shell script that runs a command on a full disk: in a mount namespace of its own, a
/// tmpfs of `$3` KiB is mounted over the output folder `$1` with its content copied in (through
/// `$2`), the command (`$4…`) runs, then what it left is copied back to the real folder.
/// Exit 97 is the script's own failure.
const FULL_DISK_SCRIPT: &str = r#"
out=$1 stash=$2 size=$3
shift 3
rm -rf "$stash" && mkdir -p "$stash" && cp -a "$out/." "$stash/" || exit 97
mount -t tmpfs -o "size=${size}k" harness-full "$out" || exit 97
cp -a "$stash/." "$out/" || exit 97
"$@"
rc=$?
rm -rf "$stash" && mkdir "$stash" && cp -a "$out/." "$stash/" || exit 97
umount "$out" || exit 97
rm -rf "$out" && mkdir "$out" && cp -a "$stash/." "$out/" && rm -rf "$stash" || exit 97
exit $rc
"#;

/// `roomchat ARGS` in `dir` with its output folder `dir/out` on a full disk of `size_kib`.
pub fn roomchat_on_full_disk(
    emu: &Emulator,
    dir: &Path,
    args: &[String],
    size_kib: u64,
) -> Command {
    let mut cmd = command("unshare", emu, dir);
    cmd.args(["--mount", "--propagation", "private", "sh", "-c"])
        .arg(FULL_DISK_SCRIPT)
        .arg("sh")
        .arg(dir.join("out"))
        .arg(dir.join(".full-disk-stash"))
        .arg(size_kib.to_string())
        .arg(env!("CARGO_BIN_EXE_roomchat"))
        .args(args)
        .args(GLOBAL_FLAGS);
    cmd
}
