//! `roomchat-emulator`: runs the emulator until SIGINT, SIGTERM, SIGHUP, the end
//! of stdin, or (on Linux) the death of the process that started it.
//!
//! Its first line on stdout is one JSON object with `base_url`, `chat_url`,
//! `admin_url`, `private_key`, `public_key` and `ca_file`, for tests in other
//! languages. Nothing else is ever written to stdout.

use std::io::{Read, Write};
use std::process::ExitCode;

use std::path::PathBuf;

use roomchat_emulator::{
    Emulator, EmulatorConfig, EmulatorTls, RateLimit, JOURNAL_MAX_CAPACITY, TLS_DEFAULT_NAMES,
};

const USAGE: &str =
    "usage: roomchat-emulator [--host 127.0.0.1] [--port 0] [--private-key K] [--public-key P]
                         [--rate-limit 600/60s] [--rate-limit-headers] [--seed-users N] [--seed FILE]
                         [--max-body-bytes N] [--journal-capacity N] [--read-timeout 10s]
                         [--idle-timeout 10s] [--ignore-stdin] [--gzip-min-bytes N]
                         [--tls [--tls-name NAME]... [--tls-expired]]
                         [--tls-cert PATH --tls-key PATH [--tls-ca PATH]]

Serves the chat service's REST API locally. Prints one JSON line with its addresses
and keys, then serves until SIGINT, SIGTERM, SIGHUP, (unless --ignore-stdin) stdin
closes, or (on Linux) the process that started it dies.

--seed FILE applies, before the ready line, the admin requests a JSON file lists:
[{\"method\": \"POST\", \"path\": \"/rooms\", \"body\": {\"roomId\": \"webinar\", \"name\": \"Webinar\"}},
 {\"path\": \"/messages\", \"body\": {\"roomId\": \"webinar\", \"count\": 500}}, ...] (method POST
when left out; paths as under /_emulator, whose README documents them). The first that
is not answered 200 stops the start, named with its answer.

--gzip-min-bytes N gzips REST answers and sign-in pages of at least N bytes to
requests that accept gzip (never by default).

--tls serves HTTPS with a certificate signed by a CA made at start; the JSON line's
ca_file is the path of that CA's PEM (removed when the emulator stops). The
certificate names localhost, 127.0.0.1 and ::1, or only the --tls-name values given
(repeatable); --tls-expired makes it one that expired yesterday. --tls-cert and
--tls-key serve a given certificate chain and key (PEM) instead; --tls-ca names
the CA that signed them, echoed as ca_file (null without it).";

struct Args {
    config: EmulatorConfig,
    watch_stdin: bool,
    /// `--seed`: a JSON file of admin requests applied at start.
    seed: Option<PathBuf>,
}

fn parse_args(mut args: impl Iterator<Item = String>) -> Result<Args, String> {
    let mut config = EmulatorConfig::default();
    let mut watch_stdin = true;
    let mut seed = None;
    let mut generated = false;
    let mut names: Vec<String> = Vec::new();
    let mut expired = false;
    let (mut cert, mut key, mut ca): (Option<PathBuf>, Option<PathBuf>, Option<PathBuf>) =
        (None, None, None);
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--host" => config.host = value()?,
            "--port" => {
                config.port = value()?
                    .parse()
                    .map_err(|_| "--port takes a number from 0 to 65535")?
            }
            "--private-key" => config.private_key = value()?,
            "--public-key" => config.public_key = value()?,
            "--rate-limit" => config.rate_limit = value()?.parse::<RateLimit>()?,
            "--rate-limit-headers" => config.rate_limit_headers = true,
            "--seed" => seed = Some(PathBuf::from(value()?)),
            "--seed-users" => {
                config.seed_users = value()?.parse().map_err(|_| "--seed-users takes a count")?
            }
            "--max-body-bytes" => {
                config.max_body_bytes = value()?
                    .parse()
                    .map_err(|_| "--max-body-bytes takes a count")?
            }
            "--journal-capacity" => {
                config.journal_capacity = value()?
                    .parse()
                    .ok()
                    .filter(|n| *n <= JOURNAL_MAX_CAPACITY)
                    .ok_or(format!(
                        "--journal-capacity takes a count from 0 to {JOURNAL_MAX_CAPACITY}"
                    ))?
            }
            "--read-timeout" => {
                config.read_timeout = humantime::parse_duration(&value()?)
                    .ok()
                    .filter(|d| !d.is_zero())
                    .ok_or("--read-timeout takes a non-zero duration such as 10s or 500ms")?
            }
            "--idle-timeout" => {
                config.idle_timeout = Some(
                    humantime::parse_duration(&value()?)
                        .ok()
                        .filter(|d| !d.is_zero())
                        .ok_or("--idle-timeout takes a non-zero duration such as 1s or 500ms")?,
                )
            }
            "--ignore-stdin" => watch_stdin = false,
            "--gzip-min-bytes" => {
                config.gzip_min_bytes = Some(
                    value()?
                        .parse()
                        .map_err(|_| "--gzip-min-bytes takes a count")?,
                )
            }
            "--tls" => generated = true,
            "--tls-name" => {
                let name = value()?;
                if name.is_empty() {
                    return Err("--tls-name takes a DNS name or an IP address".into());
                }
                names.push(name);
            }
            "--tls-expired" => expired = true,
            "--tls-cert" => cert = Some(value()?.into()),
            "--tls-key" => key = Some(value()?.into()),
            "--tls-ca" => ca = Some(value()?.into()),
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    if config.private_key.is_empty() || config.public_key.is_empty() {
        return Err("keys must not be empty".into());
    }
    config.tls = match (generated, cert, key) {
        (false, None, None) => {
            if !names.is_empty() || expired || ca.is_some() {
                return Err(
                    "--tls-name, --tls-expired and --tls-ca go with --tls or --tls-cert".into(),
                );
            }
            None
        }
        (true, None, None) => {
            if ca.is_some() {
                return Err(
                    "--tls-ca goes with --tls-cert and --tls-key (--tls makes its own CA)".into(),
                );
            }
            Some(EmulatorTls::Generated {
                names: if names.is_empty() {
                    TLS_DEFAULT_NAMES.iter().map(|n| n.to_string()).collect()
                } else {
                    names
                },
                expired,
            })
        }
        (false, Some(cert_pem_path), Some(key_pem_path)) => {
            if !names.is_empty() || expired {
                return Err(
                    "--tls-name and --tls-expired go with --tls, not a given certificate".into(),
                );
            }
            Some(EmulatorTls::Files {
                cert_pem_path,
                key_pem_path,
                ca_pem_path: ca,
            })
        }
        (true, _, _) => {
            return Err(
                "--tls (a generated certificate) and --tls-cert/--tls-key exclude each other"
                    .into(),
            )
        }
        (false, _, _) => return Err("--tls-cert and --tls-key go together".into()),
    };
    Ok(Args {
        config,
        watch_stdin,
        seed,
    })
}

/// Applies `--seed FILE`: each admin request it lists, in order; the first not
/// answered 200 is the error.
fn apply_seed(emulator: &Emulator, file: &std::path::Path) -> Result<usize, String> {
    let at = |what: String| format!("--seed {}: {what}", file.display());
    let text = std::fs::read_to_string(file).map_err(|e| at(e.to_string()))?;
    let requests: Vec<serde_json::Value> = serde_json::from_str(&text)
        .map_err(|e| at(format!("not a JSON array of admin requests: {e}")))?;
    for (n, request) in requests.iter().enumerate() {
        let path = request["path"]
            .as_str()
            .ok_or_else(|| at(format!("request {}: no \"path\"", n + 1)))?;
        let method = request["method"].as_str().unwrap_or("POST");
        let (status, answer) = emulator.admin_request(method, path, &request["body"]);
        if status != 200 {
            return Err(at(format!(
                "request {} ({method} {path}) was answered {status}: {answer}",
                n + 1
            )));
        }
    }
    Ok(requests.len())
}

fn main() -> ExitCode {
    // Before anything else: the process that started us, while it is surely still the one.
    #[cfg(target_os = "linux")]
    let parent = parent_watch::parent();
    let args = match parse_args(std::env::args().skip(1)) {
        Ok(args) => args,
        Err(message) => {
            if message.is_empty() {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            eprintln!("roomchat-emulator: {message}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let emulator = match Emulator::start(args.config) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("roomchat-emulator: cannot start: {e}");
            return ExitCode::FAILURE;
        }
    };
    if let Some(file) = &args.seed {
        if let Err(message) = apply_seed(&emulator, file) {
            eprintln!("roomchat-emulator: {message}");
            return ExitCode::FAILURE;
        }
    }
    // Signal handlers go in before the ready line: a test may signal right after reading it.
    let (stop_tx, stop_rx) = std::sync::mpsc::channel::<&'static str>();
    let signals = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .and_then(|runtime| {
            use tokio::signal::unix::{signal, SignalKind};
            let _entered = runtime.enter();
            let interrupt = signal(SignalKind::interrupt())?;
            let terminate = signal(SignalKind::terminate())?;
            // A closed terminal would otherwise end the process without cleaning up.
            let hangup = signal(SignalKind::hangup())?;
            #[cfg(target_os = "linux")]
            let parent_death = signal(SignalKind::from_raw(parent_watch::SIGNAL))?;
            drop(_entered);
            Ok((
                runtime,
                interrupt,
                terminate,
                hangup,
                #[cfg(target_os = "linux")]
                parent_death,
            ))
        });
    #[cfg(target_os = "linux")]
    let (runtime, mut interrupt, mut terminate, mut hangup, mut parent_death) = match signals {
        Ok(s) => s,
        Err(e) => {
            eprintln!("roomchat-emulator: cannot listen for signals: {e}");
            return ExitCode::FAILURE;
        }
    };
    #[cfg(not(target_os = "linux"))]
    let (runtime, mut interrupt, mut terminate, mut hangup) = match signals {
        Ok(s) => s,
        Err(e) => {
            eprintln!("roomchat-emulator: cannot listen for signals: {e}");
            return ExitCode::FAILURE;
        }
    };
    let tx = stop_tx.clone();
    std::thread::spawn(move || {
        runtime.block_on(async {
            #[cfg(target_os = "linux")]
            let parent_died = async {
                loop {
                    parent_death.recv().await;
                    // The signal also comes when the thread that started us ends
                    // while its process lives on: only a new parent means it died.
                    if parent_watch::parent() != parent {
                        break;
                    }
                }
            };
            #[cfg(not(target_os = "linux"))]
            let parent_died = std::future::pending::<()>();
            let why = tokio::select! {
                _ = interrupt.recv() => "SIGINT",
                _ = terminate.recv() => "SIGTERM",
                _ = hangup.recv() => "SIGHUP",
                _ = parent_died => "the parent process died",
            };
            let _ = tx.send(why);
        });
    });
    // The handler is in place: now ask for the signal, then check that the parent
    // did not die before we asked (we would never be told).
    #[cfg(target_os = "linux")]
    if !parent_watch::watch(parent) {
        if std::env::var_os("ROOMCHAT_EMULATOR_LOG").is_some() {
            eprintln!(
                "roomchat-emulator: stopping (the parent process died before it could be watched)"
            );
        }
        return ExitCode::SUCCESS;
    }

    let ca_file = match emulator
        .ca_file()
        .map(|path| path.into_os_string().into_string())
    {
        None => None,
        Some(Ok(path)) => Some(path),
        Some(Err(path)) => {
            eprintln!("roomchat-emulator: the CA file's path {path:?} is not UTF-8 (set TMPDIR)");
            return ExitCode::FAILURE;
        }
    };
    let ready = serde_json::json!({
        "base_url": emulator.base_url(),
        "chat_url": emulator.chat_url(),
        "admin_url": emulator.admin_url(),
        "private_key": emulator.private_key(),
        "public_key": emulator.public_key(),
        "ca_file": ca_file,
    });
    let mut stdout = std::io::stdout().lock();
    if writeln!(stdout, "{ready}")
        .and_then(|()| stdout.flush())
        .is_err()
    {
        return ExitCode::FAILURE;
    }
    drop(stdout);

    if args.watch_stdin {
        std::thread::spawn(move || {
            let mut sink = [0u8; 256];
            let mut stdin = std::io::stdin();
            // Whatever is written to stdin is ignored; its end stops the emulator.
            while matches!(stdin.read(&mut sink), Ok(n) if n > 0) {}
            let _ = stop_tx.send("stdin closed");
        });
    }
    let why = stop_rx.recv().unwrap_or("no more stop sources");
    if std::env::var_os("ROOMCHAT_EMULATOR_LOG").is_some() {
        eprintln!("roomchat-emulator: stopping ({why})");
    }
    emulator.stop();
    ExitCode::SUCCESS
}

/// Stopping when the parent dies, on Linux: `prctl(PR_SET_PDEATHSIG)` sends
/// [`SIGNAL`] when the parent goes, and `main` stops when `getppid()` then
/// names another process (the signal also comes when only the parent's thread
/// that spawned us ends).
#[cfg(target_os = "linux")]
mod parent_watch {
    /// The signal asked for: one nothing else sends the emulator, so that it can
    /// be told apart from a plain SIGTERM (which always stops it).
    pub const SIGNAL: i32 = libc::SIGUSR2;

    /// The parent process's id.
    pub fn parent() -> libc::pid_t {
        // SAFETY: getppid has no preconditions and cannot fail.
        unsafe { libc::getppid() }
    }

    /// Asks for [`SIGNAL`] when the parent dies; false when `parent` has
    /// already gone (we have a new parent).
    pub fn watch(parent: libc::pid_t) -> bool {
        // SAFETY: PR_SET_PDEATHSIG takes a valid signal number; the other
        // arguments are unused. It cannot fail with one.
        unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, SIGNAL as libc::c_ulong, 0, 0, 0) };
        self::parent() == parent
    }
}
