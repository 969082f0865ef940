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
