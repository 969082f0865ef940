//! A Redis Cluster or a Sentinel-watched primary of real servers, started by
//! `tests/redis/topology.sh` (the one harness every language's tests use),
//! stopped when dropped.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Stdio};

pub struct Topology {
    dir: PathBuf,
    /// The URL a client's budget names.
    pub url: String,
}

fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/redis/topology.sh")
}

impl Topology {
    /// `kind` is `cluster` or `sentinel`; `options` as the script takes them.
    pub fn start(name: &str, kind: &str, options: &[&str]) -> Topology {
        let dir = std::env::temp_dir().join(format!("roomchat-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut topology = Topology {
            dir,
            url: String::new(),
        };
        let dir = topology.dir.display().to_string();
        let mut args = vec![kind, dir.as_str()];
        args.extend_from_slice(options);
        topology.url = topology.run(&args);
        topology
    }

    pub fn cluster(name: &str, options: &[&str]) -> Topology {
        Topology::start(name, "cluster", options)
    }

    pub fn sentinel(name: &str, options: &[&str]) -> Topology {
        Topology::start(name, "sentinel", options)
    }

    /// Runs a subcommand of the script on this topology; its last line.
    pub fn command(&self, subcommand: &str, args: &[&str]) -> String {
        let dir = self.dir.display().to_string();
        let mut all = vec![subcommand, dir.as_str()];
        all.extend_from_slice(args);
        self.run(&all)
    }

    /// Runs `line` (redis-cli's words, given on stdin: a password in it stays off command
    /// lines) on every live server of `kind` (`node` or `sentinel`); how many.
    pub fn each(&self, kind: &str, line: &str) -> usize {
        let dir = self.dir.display().to_string();
        let last = self.run_with_input(&["each", dir.as_str(), kind], Some(line));
        last.strip_prefix("ok ")
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("topology.sh each {kind}: {last}"))
    }

    fn run(&self, args: &[&str]) -> String {
        self.run_with_input(args, None)
    }

    fn run_with_input(&self, args: &[&str], input: Option<&str>) -> String {
        let mut child = Command::new("bash")
            .arg(script())
            .args(args)
            .stdin(if input.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("bash runs tests/redis/topology.sh");
        if let (Some(input), Some(mut stdin)) = (input, child.stdin.take()) {
            use std::io::Write;
            stdin.write_all(format!("{input}\n").as_bytes()).unwrap();
        }
        let output = child
            .wait_with_output()
            .expect("bash runs tests/redis/topology.sh");
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "topology.sh {args:?} failed: {}{}",
            stdout,
            String::from_utf8_lossy(&output.stderr)
        );
        stdout.lines().last().unwrap_or("").trim().to_owned()
    }

    /// The directory the servers keep their files in.
    pub fn dir(&self) -> &std::path::Path {
        &self.dir
    }
}

impl Drop for Topology {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(script())
            .arg("stop")
            .arg(&self.dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Asks a topology which primary serves a key, and whether that primary answers, as a
/// client would, and apart from roomchat (plain `redis` connections, kept open between
/// questions): how a test learns the instant a failover's new primary could first be
/// reached from its process. No TLS (the failover tests use none).
#[cfg(feature = "redis")]
pub struct PrimaryWatch {
    sentinel_service: Option<String>,
    password: Option<String>,
    /// The seeds (cluster nodes) or the sentinels, `host:port`.
    seeds: Vec<String>,
    key: String,
    slot: Option<i64>,
    connections: std::collections::HashMap<String, redis::Connection>,
}

#[cfg(feature = "redis")]
impl PrimaryWatch {
    /// For the topology at `url` (a `redis+cluster://` or `redis+sentinel://` URL as
    /// `tests/redis/topology.sh` prints it) and the key `key` (a cluster's slot).
    pub fn new(url: &str, key: &str) -> PrimaryWatch {
        let (scheme, rest) = url.split_once("://").expect("a URL");
        assert!(
            scheme == "redis+cluster" || scheme == "redis+sentinel",
            "PrimaryWatch: {scheme} (no TLS)"
        );
        let (password, rest) = match rest.split_once('@') {
            Some((auth, rest)) => (
                Some(auth.trim_start_matches(':').to_owned()).filter(|p| !p.is_empty()),
                rest,
            ),
            None => (None, rest),
        };
        let (hosts, service) = match rest.split_once('/') {
            Some((hosts, path)) => (
                hosts,
                Some(path.split('?').next().unwrap().to_owned()).filter(|s| !s.is_empty()),
            ),
            None => (rest, None),
        };
        PrimaryWatch {
            sentinel_service: service.filter(|_| scheme == "redis+sentinel"),
            password,
            seeds: hosts.split(',').map(str::to_owned).collect(),
            key: key.to_owned(),
            slot: None,
            connections: Default::default(),
        }
    }

    /// `cmd` on the server at `address`, on a connection kept for it (made again after an
    /// error); `None` if it did not answer within 500 ms.
    fn ask<T: redis::FromRedisValue>(&mut self, address: &str, cmd: &redis::Cmd) -> Option<T> {
        if !self.connections.contains_key(address) {
            let info = match &self.password {
                Some(p) => format!("redis://:{p}@{address}/"),
                None => format!("redis://{address}/"),
            };
            let timeout = std::time::Duration::from_millis(500);
            let connection = redis::Client::open(info)
                .ok()?
                .get_connection_with_timeout(timeout)
                .ok()?;
            connection.set_read_timeout(Some(timeout)).ok()?;
            connection.set_write_timeout(Some(timeout)).ok()?;
            self.connections.insert(address.to_owned(), connection);
        }
        let connection = self.connections.get_mut(address)?;
        match cmd.query::<T>(connection) {
            Ok(value) => Some(value),
            Err(_) => {
                self.connections.remove(address);
                None
            }
        }
    }

    /// Whether the server at `address` answers `ROLE` as a primary now.
    fn is_primary(&mut self, address: &str) -> bool {
        self.ask::<Vec<redis::Value>>(address, &redis::cmd("ROLE"))
            .and_then(|role| role.into_iter().next())
            .is_some_and(|first| match first {
                redis::Value::BulkString(b) => b == b"master",
                redis::Value::SimpleString(s) => s == "master",
                _ => false,
            })
    }

    /// The primary (`host:port`) that the first seed or sentinel to answer names for the
    /// key, if it answers as a primary now.
    pub fn serving(&mut self) -> Option<String> {
        let named = match self.sentinel_service.clone() {
            Some(service) => self.seeds.clone().into_iter().find_map(|sentinel| {
                self.ask::<Vec<String>>(
                    &sentinel,
                    redis::cmd("SENTINEL")
                        .arg("GET-MASTER-ADDR-BY-NAME")
                        .arg(&service),
                )
                .filter(|a| a.len() == 2)
                .map(|a| format!("{}:{}", a[0], a[1]))
            }),
            None => self.seeds.clone().into_iter().find_map(|seed| {
                if self.slot.is_none() {
                    self.slot =
                        self.ask::<i64>(&seed, redis::cmd("CLUSTER").arg("KEYSLOT").arg(&self.key));
                }
                let slot = self.slot?;
                let nodes = self.ask::<String>(&seed, redis::cmd("CLUSTER").arg("NODES"))?;
                primary_of_slot(&nodes, slot)
            }),
        }?;
        self.is_primary(&named).then_some(named)
    }
}

#[cfg(feature = "redis")]
/// The address of the primary not marked failed that serves `slot`, in a `CLUSTER NODES` text.
fn primary_of_slot(nodes: &str, slot: i64) -> Option<String> {
    nodes.lines().find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.len() < 9 || !fields[2].contains("master") || fields[2].contains("fail") {
            return None;
        }
        let serves = fields[8..].iter().filter(|r| !r.starts_with('[')).any(|r| {
            let (lo, hi) = r.split_once('-').unwrap_or((r, r));
            matches!((lo.parse::<i64>(), hi.parse::<i64>()), (Ok(lo), Ok(hi)) if (lo..=hi).contains(&slot))
        });
        serves.then(|| fields[1].split('@').next().unwrap().to_owned())
    })
}
