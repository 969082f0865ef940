//! A real `redis-server` on a free loopback port, for the shared-budget tests
//! and benchmark: started fresh (no persistence), stopped when dropped, and
//! able to be killed, frozen and restarted on the same port.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct RedisServer {
    pub port: u16,
    password: Option<String>,
    /// A unix socket the server listens on too.
    pub socket: Option<std::path::PathBuf>,
    child: Option<Child>,
}

impl RedisServer {
    /// Starts `redis-server` (from `PATH`, or `REDIS_SERVER`), with `password` if given.
    pub fn start(password: Option<&str>) -> RedisServer {
        RedisServer::start_with(password, None)
    }

    /// Starts `redis-server` listening on a unix socket at `socket` as well as on its port.
    pub fn start_with_socket(socket: std::path::PathBuf) -> RedisServer {
        RedisServer::start_with(None, Some(socket))
    }

    /// Starts `redis-server` with `password` if given, on a unix socket at `socket` too if given.
    pub fn start_with(password: Option<&str>, socket: Option<std::path::PathBuf>) -> RedisServer {
        let port = {
            let probe = TcpListener::bind("127.0.0.1:0").expect("a free port");
            probe.local_addr().unwrap().port()
        };
        let mut server = RedisServer {
            port,
            password: password.map(str::to_owned),
            socket,
            child: None,
        };
        server.restart();
        server
    }

    /// The URL clients use.
    pub fn url(&self) -> String {
        match &self.password {
            Some(p) => format!("redis://:{p}@127.0.0.1:{}/0", self.port),
            None => format!("redis://127.0.0.1:{}/0", self.port),
        }
    }

    /// Starts the server again on the same port (after [`RedisServer::kill`]): empty, script cache gone.
    pub fn restart(&mut self) {
        self.kill();
        let binary = std::env::var("REDIS_SERVER").unwrap_or_else(|_| "redis-server".into());
        let mut command = Command::new(&binary);
        command
            .args(["--port", &self.port.to_string()])
            .args(["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .args(["--daemonize", "no", "--loglevel", "warning"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if let Some(p) = &self.password {
            command.args(["--requirepass", p]);
        }
        if let Some(socket) = &self.socket {
            command.arg("--unixsocket").arg(socket);
            command.args(["--unixsocketperm", "700"]);
        }
        let child = command.spawn().unwrap_or_else(|e| {
            panic!("cannot start {binary} (install Debian's redis-server): {e}")
        });
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if self
                .command(&["PING"])
                .is_some_and(|r| r.starts_with("+PONG"))
            {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("redis-server did not come up on port {}", self.port);
    }

    /// Kills the server at once (SIGKILL).
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Freezes (SIGSTOP) or thaws (SIGCONT) the server: connections stay open, nothing answers.
    pub fn freeze(&self, frozen: bool) {
        if let Some(child) = &self.child {
            let signal = if frozen { "-STOP" } else { "-CONT" };
            let _ = Command::new("kill")
                .args([signal, &child.id().to_string()])
                .status();
        }
    }

    /// A fresh connection, authenticated when the server has a password: the
    /// stream to send commands on and a reader of its replies.
    fn connect(&self) -> Option<(TcpStream, BufReader<TcpStream>)> {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).ok()?;
        stream.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
        let mut reader = BufReader::new(stream.try_clone().ok()?);
        if let Some(p) = &self.password {
            stream.write_all(resp(&["AUTH", p]).as_bytes()).ok()?;
            reader.read_line(&mut String::new()).ok()?;
        }
        Some((stream, reader))
    }

    /// One command over a fresh connection (authenticated), its first reply line.
    pub fn command(&self, args: &[&str]) -> Option<String> {
        let (mut stream, mut reader) = self.connect()?;
        stream.write_all(resp(args).as_bytes()).ok()?;
        let mut line = String::new();
        reader.read_line(&mut line).ok()?;
        // A bulk reply: the value is on the next line.
        if line.starts_with('$') && !line.starts_with("$-1") {
            let mut value = String::new();
            reader.read_line(&mut value).ok()?;
            return Some(value.trim_end().to_owned());
        }
        Some(line.trim_end().to_owned())
    }

    /// The bulk-string reply to one command over a fresh connection
    /// (authenticated), whole (`command` gives only its first line).
    pub fn bulk_reply(&self, args: &[&str]) -> Option<String> {
        let (mut stream, mut reader) = self.connect()?;
        stream.write_all(resp(args).as_bytes()).ok()?;
        let mut line = String::new();
        reader.read_line(&mut line).ok()?;
        let length: usize = line.strip_prefix('$')?.trim().parse().ok()?;
        let mut text = vec![0; length + 2];
        std::io::Read::read_exact(&mut reader, &mut text).ok()?;
        String::from_utf8(text).ok()
    }

    /// Calls per command since the server started (`INFO commandstats`), as
    /// `(name, calls)`; subcommands are named `client|list` and the like.
    pub fn command_calls(&self) -> Vec<(String, u64)> {
        let text = self
            .bulk_reply(&["INFO", "commandstats"])
            .expect("INFO commandstats");
        text.lines()
            .filter_map(|line| {
                let (name, rest) = line.strip_prefix("cmdstat_")?.split_once(':')?;
                let calls = rest
                    .strip_prefix("calls=")?
                    .split(',')
                    .next()?
                    .parse()
                    .ok()?;
                Some((name.to_owned(), calls))
            })
            .collect()
    }

    /// The connections that have run a budget script (`CLIENT LIST`, `cmd=evalsha`
    /// or `cmd=eval`). Counting only these keeps the figure true in a test binary
    /// whose other tests fork: a child forked while this helper's own socket was
    /// open holds that socket, and the server goes on counting it.
    pub fn client_count(&self) -> usize {
        self.bulk_reply(&["CLIENT", "LIST"]).map_or(0, |listed| {
            listed
                .lines()
                .filter(|client| {
                    client
                        .split(' ')
                        .any(|field| field == "cmd=evalsha" || field == "cmd=eval")
                })
                .count()
        })
    }

    /// Whether the server comes to have exactly `n` budget connections within a
    /// second (a connection closed just before may take a moment to leave its count).
    pub fn has_clients(&self, n: usize) -> bool {
        let deadline = Instant::now() + Duration::from_secs(1);
        loop {
            if self.client_count() == n {
                return true;
            }
            if Instant::now() > deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// The ACL line every guide prints for the budget's Redis user
/// (`ACL SETUSER roomchat on >secret ~roomchat:* …`), read from core's guide:
/// the tests set their users up with it, so the guide cannot drift from what works.
pub fn documented_acl() -> String {
    let guide = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md");
    let text = std::fs::read_to_string(&guide).expect("core/README.md");
    text.lines()
        .map(str::trim)
        .find(|line| line.starts_with("ACL SETUSER roomchat on >secret "))
        .expect("core/README.md prints the ACL line")
        .to_owned()
}

/// Every guide that prints the ACL (paths from `core/`), the root README first.
pub const ACL_GUIDES: [&str; 6] = [
    "../README.md",
    "README.md",
    "../ffi/README.md",
    "../bindings/node/README.md",
    "../bindings/python/README.md",
    "src/budget/shared_budget.rs",
];

/// Asserts that `error` is Redis refusing the budget for lack of permission, said as
/// such (not as Redis out of reach) and showing none of `secrets`; the text it showed.
pub fn assert_refused_for_permission(error: &roomchat::Error, secrets: &[&str]) -> String {
    let shown = format!("{error} {error:?}");
    assert_eq!(
        error.kind(),
        roomchat::ErrorKind::BudgetUnavailable,
        "{shown}"
    );
    assert!(
        shown.contains("lack of permission") && !shown.contains("cannot be"),
        "{shown}"
    );
    for secret in secrets {
        assert!(!shown.contains(secret), "{shown}");
    }
    shown
}

/// What the guides print beside the one ACL line (README.md's words, which every guide
/// repeats): the extras for Cluster's nodes, for a Sentinel-watched primary and replica,
/// and the permissions of a user on the sentinels themselves.
pub struct AclExtras {
    pub cluster: String,
    pub sentinel_data: String,
    pub on_sentinels: String,
}

/// [`AclExtras`] read from README.md; every other guide must print the same three.
pub fn documented_acl_extras() -> AclExtras {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    // Words joined by single spaces: a guide may wrap its lines anywhere.
    let flat = |guide: &str| {
        let text = std::fs::read_to_string(root.join(guide)).expect(guide);
        text.split_whitespace()
            .filter(|w| *w != "///")
            .collect::<Vec<_>>()
            .join(" ")
    };
    let readme = flat(ACL_GUIDES[0]);
    let code_before = |marker: &str| -> String {
        let head = &readme[..readme.find(marker).expect(marker)];
        let close = head.rfind('`').expect(marker);
        let open = head[..close].rfind('`').expect(marker);
        head[open + 1..close].to_owned()
    };
    let code_after = |marker: &str| -> String {
        let rest = &readme[readme.find(marker).expect(marker) + marker.len()..];
        let open = rest.find('`').expect(marker);
        let close = open + 1 + rest[open + 1..].find('`').expect(marker);
        rest[open + 1..close].to_owned()
    };
    let extras = AclExtras {
        cluster: code_before(" for Cluster (not"),
        sentinel_data: code_before(" for Sentinel, and"),
        on_sentinels: code_after("on the sentinels, a user with"),
    };
    for guide in &ACL_GUIDES[1..] {
        let text = flat(guide);
        for code in [&extras.cluster, &extras.sentinel_data, &extras.on_sentinels] {
            assert!(
                text.contains(&format!("`{code}`")),
                "{guide} does not print `{code}`"
            );
        }
    }
    extras
}

/// The words of `line` (the guides' `ACL SETUSER roomchat on >secret …`) for the user
/// `user` with the password `password`.
pub fn acl_words(line: &str, user: &str, password: &str) -> Vec<String> {
    line.split_whitespace()
        .enumerate()
        .map(|(i, word)| match (i, word) {
            (2, "roomchat") => user.to_owned(),
            (_, ">secret") => format!(">{password}"),
            _ => word.to_owned(),
        })
        .collect()
}

impl RedisServer {
    /// Runs `line` (an `ACL SETUSER roomchat on >secret …` line) for the user
    /// `user` with the password `password`; Redis's first reply line.
    pub fn set_user(&self, line: &str, user: &str, password: &str) -> Option<String> {
        let words = acl_words(line, user, password);
        let words: Vec<&str> = words.iter().map(String::as_str).collect();
        self.command(&words)
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.freeze(false);
        self.kill();
    }
}

/// One command in RESP, the protocol's array of bulk strings.
fn resp(args: &[&str]) -> String {
    let mut request = format!("*{}\r\n", args.len());
    for a in args {
        request.push_str(&format!("${}\r\n{a}\r\n", a.len()));
    }
    request
}

/// A CA and a certificate for 127.0.0.1 signed by it (openssl), in `dir`:
/// `ca.crt`, `server.crt`, `server.key` (the names `tests/redis/topology.sh --tls` reads).
pub fn make_certificates(dir: &std::path::Path) {
    let run = |args: &[&str]| {
        let status = std::process::Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .expect("openssl runs (Debian's openssl)");
        assert!(status.success(), "openssl {args:?}");
    };
    run(&[
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
        "-keyout",
        "ca.key",
        "-out",
        "ca.crt",
        "-days",
        "2",
        "-subj",
        "/CN=roomchat test redis CA",
    ]);
    run(&[
        "req",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
        "-keyout",
        "server.key",
        "-out",
        "server.csr",
        "-subj",
        "/CN=127.0.0.1",
    ]);
    std::fs::write(dir.join("ext.cnf"), "subjectAltName=IP:127.0.0.1\n").unwrap();
    run(&[
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.crt",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "server.crt",
        "-days",
        "2",
        "-extfile",
        "ext.cnf",
    ]);
}

/// The budget's Redis key `{prefix}:{<hash>}:{suffix}` (`starts` or `block`)
/// for `private_key`, as the client names it (see `shared_budget`).
#[cfg(feature = "redis")]
pub fn budget_key(prefix: &str, private_key: &str, suffix: &str) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::new()
        .chain_update(b"roomchat-budget-v1\0")
        .chain_update(private_key.as_bytes())
        .finalize();
    let hash: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
    format!("{prefix}:{{{hash}}}:{suffix}")
}
