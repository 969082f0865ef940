//! Point 9: the binary, as the Python, Node and C tests use it.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use serde_json::Value;

fn spawn(args: &[&str]) -> (Child, Value) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_roomchat-emulator"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    (
        child,
        serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("first line is not JSON ({e}): {line}")),
    )
}

fn wait_exit(child: &mut Child) -> std::process::ExitStatus {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the emulator did not exit"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn prints_its_addresses_and_keys_then_serves() {
    let (mut child, ready) = spawn(&[
        "--private-key",
        "sk_bin",
        "--public-key",
        "pk_bin",
        "--rate-limit",
        "3/1m",
        "--seed-users",
        "7",
    ]);
    let base = ready["base_url"].as_str().unwrap();
    assert!(base.starts_with("http://127.0.0.1:"));
    assert_eq!(ready["chat_url"].as_str().unwrap(), format!("{base}/chat"));
    assert_eq!(
        ready["admin_url"].as_str().unwrap(),
        format!("{base}/_emulator")
    );
    assert_eq!(
        (ready["private_key"].as_str(), ready["public_key"].as_str()),
        (Some("sk_bin"), Some("pk_bin"))
    );
    let a = agent();
    let page = send(
        &a,
        "GET",
        &format!("{base}/consumer/api/v2/users?auth=sk_bin"),
        None,
    );
    assert_eq!(page.json()["total"], 7);
    send(
        &a,
        "GET",
        &format!("{base}/consumer/api/v2/users?auth=sk_bin"),
        None,
    );
    send(
        &a,
        "GET",
        &format!("{base}/consumer/api/v2/users?auth=sk_bin"),
        None,
    );
    assert_eq!(
        send(
            &a,
            "GET",
            &format!("{base}/consumer/api/v2/users?auth=sk_bin"),
            None
        )
        .status,
        429,
        "3/1m"
    );

    // Closing stdin stops it cleanly.
    drop(child.stdin.take());
    assert!(wait_exit(&mut child).success());
    assert!(
        agent()
            .get(&format!("{base}/consumer/api/v2/users"))
            .call()
            .is_err(),
        "no longer serving"
    );
}

#[test]
fn stops_cleanly_on_sigterm_and_sigint() {
    for signal in ["-TERM", "-INT"] {
        let (mut child, ready) = spawn(&["--port", "0"]);
        assert!(ready["base_url"].is_string());
        let killed = Command::new("kill")
            .args([signal, &child.id().to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        assert!(wait_exit(&mut child).success(), "{signal}");
    }
}

#[test]
fn bad_arguments_exit_2() {
    for args in [
        &["--rate-limit", "fast"][..],
        &["--port", "x"],
        &["--frobnicate"],
        &["--private-key", ""],
        &["--journal-capacity", "-1"],
        &["--journal-capacity", "1000001"],
        &["--read-timeout", "0s"],
        &["--read-timeout", "soon"],
    ] {
        let status = Command::new(env!("CARGO_BIN_EXE_roomchat-emulator"))
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap();
        assert_eq!(status.code(), Some(2), "{args:?}");
    }
}
