//! What the test kits of other languages (issue 22) rely on: the admin API is
//! outside the rate limit and the faults, `GET /_emulator/users` shows the whole
//! state, and the binary stops when the process that started it dies, leaving
//! no temporary file behind.

mod common;

use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use roomchat_emulator::{EmulatorConfig, Fault, FaultAction, RateLimit};
use serde_json::{json, Value};

const BINARY: &str = env!("CARGO_BIN_EXE_roomchat-emulator");

#[test]
fn admin_requests_never_count_against_the_rate_limit() {
    let f = Fixture::with(EmulatorConfig {
        rate_limit: RateLimit {
            requests: 3,
            window: Duration::from_secs(60),
        },
        ..EmulatorConfig::default()
    });
    let admin = f.emu.admin_url().to_owned();
    // Far more admin calls than the limit, of every kind.
    for round in 0..20 {
        for (method, path, body) in [
            ("GET", "/config", None),
            ("GET", "/journal", None),
            ("GET", "/users", None),
            ("GET", "/connections", None),
            ("POST", "/users/seed", Some(json!({"count": 1}))),
            (
                "POST",
                "/rooms",
                Some(json!({"roomId": format!("room-{round}"), "name": "R"})),
            ),
            (
                "POST",
                "/gate",
                Some(json!({"method": "GET", "path": "/x"})),
            ),
            ("DELETE", "/gate", None),
            (
                "PUT",
                "/config",
                Some(json!({"rate_limit": {"requests": 3, "window_ms": 60_000}})),
            ),
        ] {
            let body = body.map(|b| b.to_string());
            let answer = send(&f.agent, method, &format!("{admin}{path}"), body.as_deref());
            assert_eq!(answer.status, 200, "{method} {path}: {}", answer.text);
        }
    }
    // The whole budget is still there: three REST calls, then 429.
    let users = format!(
        "{}/consumer/api/v2/users?auth={}",
        f.emu.base_url(),
        f.emu.private_key()
    );
    for n in 1..=3 {
        let page = send(&f.agent, "GET", &users, None);
        assert_eq!(page.status, 200, "call {n}: {}", page.text);
        assert_eq!(page.json()["total"], 20);
    }
    assert_eq!(send(&f.agent, "GET", &users, None).status, 429);
    // And admin calls still answer while the key is over its limit.
    assert_eq!(
        send(&f.agent, "GET", &format!("{admin}/users"), None).status,
        200
    );
    // Only the REST calls were journaled.
    let journal = f.emu.journal();
    assert_eq!(journal.len(), 4);
    assert!(journal.iter().all(|e| e.path == "/consumer/api/v2/users"));
    assert_eq!(
        journal.iter().map(|e| e.status).collect::<Vec<_>>(),
        [200, 200, 200, 429]
    );
}

#[test]
fn faults_never_touch_the_admin_api() {
    let f = Fixture::new();
    f.emu.add_fault(Fault {
        method: None,
        path: "*".into(),
        times: 1,
        action: FaultAction::Respond {
            status: 503,
            headers: vec![],
            body: "{}".into(),
            content_type: None,
        },
    });
    let answer = send(
        &f.agent,
        "GET",
        &format!("{}/config", f.emu.admin_url()),
        None,
    );
    assert_eq!(answer.status, 200, "the admin call is not faulted");
    let users = format!(
        "{}/consumer/api/v2/users?auth={}",
        f.emu.base_url(),
        f.emu.private_key()
    );
    assert_eq!(
        send(&f.agent, "GET", &users, None).status,
        503,
        "the rule was still there for the first REST call"
    );
    assert_eq!(send(&f.agent, "GET", &users, None).status, 200);
}

#[test]
fn admin_users_lists_every_user_with_whether_it_is_active() {
    let f = Fixture::new();
    let admin_users = format!("{}/users", f.emu.admin_url());
    assert_eq!(
        send(&f.agent, "GET", &admin_users, None).json(),
        json!({"users": []})
    );
    let base = f.emu.base_url().to_owned();
    let key = f.emu.private_key();
    let created = send(
        &f.agent,
        "POST",
        &format!("{base}/consumer/api/v1/user?auth={key}"),
        Some(r#"{"username": "ann", "isModerator": true, "chatRoom": "r1", "email": "ann@example.com"}"#),
    )
    .json();
    f.emu.seed_users(2);
    let ann_id = created["userId"].as_str().unwrap();
    let gone = send(
        &f.agent,
        "DELETE",
        &format!("{base}/consumer/api/v2/user/deactivate?auth={key}"),
        Some(&json!({"userId": ann_id}).to_string()),
    );
    assert_eq!(gone.status, 200, "{}", gone.text);

    let users = send(&f.agent, "GET", &admin_users, None).json()["users"].clone();
    let users = users.as_array().unwrap();
    assert_eq!(users.len(), 3, "deactivated users too: {users:?}");
    assert_eq!(users[0]["userId"], ann_id);
    assert_eq!(users[0]["username"], "ann");
    assert_eq!(users[0]["isModerator"], true);
    assert_eq!(users[0]["chatRoom"], "r1");
    assert_eq!(users[0]["email"], "ann@example.com");
    assert_eq!(users[0]["active"], false);
    assert_eq!(users[1]["username"], "seed-user-2");
    assert_eq!(users[1]["active"], true);
    assert_eq!(users[2]["active"], true);
    // The same records as the REST listing shows, plus `active`.
    let listed = send(
        &f.agent,
        "GET",
        &format!("{base}/consumer/api/v2/users?auth={key}"),
        None,
    )
    .json();
    let mut first = users[1].clone();
    first.as_object_mut().unwrap().remove("active");
    assert_eq!(listed["data"][0], first);
    // The library says the same.
    assert_eq!(f.emu.users(), *users);
    // And it is not journaled: only the REST calls above are.
    assert_eq!(f.emu.journal().len(), 3);
    f.emu.reset();
    assert!(f.emu.users().is_empty());
}

/// The ready line of an emulator whose stdout is `out`.
fn ready_line(out: impl Read) -> Value {
    let mut line = String::new();
    BufReader::new(out).read_line(&mut line).unwrap();
    serde_json::from_str(&line).unwrap_or_else(|e| panic!("not a ready line ({e}): {line:?}"))
}

/// Whether process `pid` exists and is not a zombie.
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the command name, which is in parentheses.
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

fn wait_gone(pid: u32, what: &str) -> Duration {
    let started = Instant::now();
    while alive(pid) {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{what}: still running"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    started.elapsed()
}

fn refused(base_url: &str) -> bool {
    let address = base_url.rsplit_once("://").unwrap().1;
    std::net::TcpStream::connect(address).is_err()
}

/// A shell that starts the emulator (`args`, stdin not a pipe) and waits for
/// it: the emulator's parent, to be killed.
fn shell_parent(args: &str) -> (Child, Value, u32) {
    let mut shell = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "\"$0\" {args} </dev/null & echo \"pid $!\" >&2; wait"
        ))
        .arg(BINARY)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let ready = ready_line(shell.stdout.take().unwrap());
    let mut line = String::new();
    BufReader::new(shell.stderr.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let pid = line.trim().strip_prefix("pid ").unwrap().parse().unwrap();
    (shell, ready, pid)
}

#[cfg(target_os = "linux")]
#[test]
fn stops_when_its_parent_dies_even_with_stdin_ignored() {
    // --ignore-stdin and stdin from /dev/null: only the parent's death can stop it.
    let (mut shell, ready, pid) = shell_parent("--port 0 --ignore-stdin --tls");
    let base = ready["base_url"].as_str().unwrap().to_owned();
    let ca_file = PathBuf::from(ready["ca_file"].as_str().unwrap());
    assert!(ca_file.exists());
    assert!(alive(pid) && !refused(&base));
    shell.kill().unwrap(); // SIGKILL: the shell cleans nothing up
    shell.wait().unwrap();
    let took = wait_gone(pid, "the emulator after its parent was killed");
    println!(
        "the emulator stopped {} ms after its parent was killed",
        took.as_millis()
    );
    assert!(refused(&base), "its port is free");
    assert!(!ca_file.exists(), "a clean stop: the CA file is removed");
}

#[cfg(target_os = "linux")]
#[test]
fn outlives_the_thread_that_spawned_it() {
    // The parent-death signal also comes when the spawning *thread* ends; the
    // parent process lives on here, so the emulator must go on serving.
    // The thread ends only once the emulator is ready, so it is watching by then.
    let (mut child, ready) = std::thread::spawn(|| {
        let mut child = Command::new(BINARY)
            .args(["--port", "0"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let ready = ready_line(child.stdout.take().unwrap());
        (child, ready)
    })
    .join()
    .unwrap();
    let base = ready["base_url"].as_str().unwrap().to_owned();
    std::thread::sleep(Duration::from_millis(300));
    assert!(child.try_wait().unwrap().is_none(), "still running");
    let users = format!(
        "{base}/consumer/api/v2/users?auth={}",
        ready["private_key"].as_str().unwrap()
    );
    assert_eq!(send(&agent(), "GET", &users, None).status, 200);
    drop(child.stdin.take());
    assert!(child.wait().unwrap().success());
}

#[test]
fn every_clean_stop_removes_the_generated_ca_file() {
    for how in ["stdin", "SIGTERM", "SIGINT", "SIGHUP"] {
        let mut child = Command::new(BINARY)
            .args(["--port", "0", "--tls"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let ready = ready_line(child.stdout.take().unwrap());
        let ca_file = PathBuf::from(ready["ca_file"].as_str().unwrap());
        assert!(ca_file.exists(), "{how}");
        match how {
            "stdin" => drop(child.stdin.take()),
            signal => {
                let sent = Command::new("kill")
                    .args([format!("-{}", &signal[3..]), child.id().to_string()])
                    .status()
                    .unwrap();
                assert!(sent.success());
            }
        }
        let status = child.wait().unwrap();
        assert!(status.success(), "{how}: {status}");
        assert!(
            !ca_file.exists(),
            "{how}: {} is left behind",
            ca_file.display()
        );
        assert!(refused(ready["base_url"].as_str().unwrap()), "{how}");
    }
}

#[test]
fn the_readme_holds_the_rust_example_verbatim() {
    let readme = include_str!("../README.md");
    let example = include_str!("../../core/tests/testing_your_code.rs");
    assert!(
        readme.contains(example.trim()),
        "emulator/README.md must hold core/tests/testing_your_code.rs verbatim"
    );
}
