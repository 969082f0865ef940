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
    assert!(ready["ca_file"].is_null(), "plain HTTP: {ready}");
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
        &["--idle-timeout", "0s"],
        &["--idle-timeout", "soon"],
        &["--tls-cert", "cert.pem"],
        &["--tls-key", "key.pem"],
        &["--tls", "--tls-cert", "cert.pem", "--tls-key", "key.pem"],
        &["--tls-name", "localhost"],
        &["--tls-expired"],
        &["--tls", "--tls-ca", "ca.pem"],
        &["--tls-ca", "ca.pem"],
        &["--tls-cert", "c.pem", "--tls-key", "k.pem", "--tls-expired"],
        &["--tls", "--tls-name", ""],
        &["--tls", "--tls-name"],
        &["--gzip-min-bytes", "lots"],
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

#[test]
fn tls_prints_the_ca_file_and_serves_https() {
    let (mut child, ready) = spawn(&["--tls", "--seed-users", "2"]);
    let base = ready["base_url"].as_str().unwrap().to_owned();
    assert!(base.starts_with("https://127.0.0.1:"), "{ready}");
    assert_eq!(ready["chat_url"].as_str().unwrap(), format!("{base}/chat"));
    assert_eq!(
        ready["admin_url"].as_str().unwrap(),
        format!("{base}/_emulator")
    );
    let ca_file = std::path::PathBuf::from(ready["ca_file"].as_str().expect("ca_file"));
    let ca_pem = std::fs::read_to_string(&ca_file).unwrap();
    assert!(
        ca_pem.starts_with("-----BEGIN CERTIFICATE-----")
            && ca_pem.trim_end().ends_with("-----END CERTIFICATE-----"),
        "{ca_pem}"
    );
    let key = ready["private_key"].as_str().unwrap();
    let users = format!("{base}/consumer/api/v2/users?auth={key}");
    let page = send(&tls_agent(&ca_pem), "GET", &users, None);
    assert_eq!(page.json()["total"], 2);
    let counts = send(
        &tls_agent(&ca_pem),
        "GET",
        &format!("{base}/_emulator/connections"),
        None,
    )
    .json();
    assert_eq!(counts["tls_handshakes"], 2, "{counts}");

    // A client without the CA is refused, and the emulator goes on.
    assert_eq!(
        certificate_error(try_send(&public_roots_agent(), "GET", &users)),
        rustls::CertificateError::UnknownIssuer
    );
    assert_eq!(send(&tls_agent(&ca_pem), "GET", &users, None).status, 200);

    drop(child.stdin.take());
    assert!(wait_exit(&mut child).success());
    assert!(!ca_file.exists(), "the CA file goes with the emulator");
}

#[test]
fn tls_names_and_expired_flags_shape_the_certificate() {
    let (mut child, ready) = spawn(&[
        "--tls",
        "--tls-name",
        "localhost",
        "--tls-name",
        "roomchat.test",
    ]);
    let ca_pem = std::fs::read_to_string(ready["ca_file"].as_str().unwrap()).unwrap();
    let users = format!(
        "{}/consumer/api/v2/users",
        ready["base_url"].as_str().unwrap()
    );
    let error = certificate_error(try_send(&tls_agent(&ca_pem), "GET", &users));
    assert!(
        matches!(
            error,
            rustls::CertificateError::NotValidForName
                | rustls::CertificateError::NotValidForNameContext { .. }
        ),
        "127.0.0.1 is not among the names given: {error:?}"
    );
    drop(child.stdin.take());
    assert!(wait_exit(&mut child).success());

    let (mut child, ready) = spawn(&["--tls", "--tls-expired"]);
    let ca_pem = std::fs::read_to_string(ready["ca_file"].as_str().unwrap()).unwrap();
    let users = format!(
        "{}/consumer/api/v2/users",
        ready["base_url"].as_str().unwrap()
    );
    let error = certificate_error(try_send(&tls_agent(&ca_pem), "GET", &users));
    assert!(
        matches!(
            error,
            rustls::CertificateError::Expired | rustls::CertificateError::ExpiredContext { .. }
        ),
        "{error:?}"
    );
    drop(child.stdin.take());
    assert!(wait_exit(&mut child).success());
}

#[test]
fn tls_cert_and_key_serve_a_given_pair() {
    let pair = test_pair(&["127.0.0.1", "localhost"]);
    let dir = TempDir::new("binary-pair");
    let cert = dir.write("cert.pem", &pair.cert_pem);
    let key = dir.write("key.pem", &pair.key_pem);
    let ca = dir.write("ca.pem", &pair.ca_pem);
    let (cert, key, ca) = (
        cert.to_str().unwrap(),
        key.to_str().unwrap(),
        ca.to_str().unwrap(),
    );

    let (mut child, ready) = spawn(&["--tls-cert", cert, "--tls-key", key, "--tls-ca", ca]);
    assert_eq!(ready["ca_file"].as_str(), Some(ca), "echoed: {ready}");
    let base = ready["base_url"].as_str().unwrap();
    assert!(base.starts_with("https://"), "{ready}");
    let users = format!(
        "{base}/consumer/api/v2/users?auth={}",
        ready["private_key"].as_str().unwrap()
    );
    assert_eq!(
        send(&tls_agent(&pair.ca_pem), "GET", &users, None).status,
        200
    );
    drop(child.stdin.take());
    assert!(wait_exit(&mut child).success());
    assert!(
        std::path::Path::new(ca).exists(),
        "a given CA file is left alone"
    );

    let (mut child, ready) = spawn(&["--tls-cert", cert, "--tls-key", key]);
    assert!(ready["ca_file"].is_null(), "no CA given: {ready}");
    let base = ready["base_url"].as_str().unwrap();
    let users = format!(
        "{base}/consumer/api/v2/users?auth={}",
        ready["private_key"].as_str().unwrap()
    );
    assert_eq!(
        send(&tls_agent(&pair.ca_pem), "GET", &users, None).status,
        200
    );
    drop(child.stdin.take());
    assert!(wait_exit(&mut child).success());
}

#[test]
fn unreadable_tls_files_exit_1_and_print_nothing() {
    let dir = TempDir::new("binary-bad-files");
    let pair = test_pair(&["127.0.0.1"]);
    let cert = dir.write("cert.pem", &pair.cert_pem);
    let missing = dir.0.join("missing.pem");
    let output = Command::new(env!("CARGO_BIN_EXE_roomchat-emulator"))
        .args([
            "--tls-cert",
            cert.to_str().unwrap(),
            "--tls-key",
            missing.to_str().unwrap(),
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(
        output.stdout.is_empty(),
        "stdout: {:?}",
        String::from_utf8_lossy(&output.stdout)
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("missing.pem"), "{stderr}");
}

#[test]
fn gzip_min_bytes_turns_compression_on() {
    let (mut child, ready) = spawn(&["--gzip-min-bytes", "100", "--seed-users", "50"]);
    let url = format!(
        "{}/consumer/api/v2/users?auth={}",
        ready["base_url"].as_str().unwrap(),
        ready["private_key"].as_str().unwrap()
    );
    let (headers, _) = get_raw(&url, None, Some("gzip"));
    assert_eq!(header(&headers, "content-encoding"), Some("gzip"));
    drop(child.stdin.take());
    assert!(wait_exit(&mut child).success());
}

#[test]
fn seed_applies_admin_requests_before_the_ready_line() {
    let dir = std::env::temp_dir().join(format!("roomchat-seed-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let seed = dir.join("seed.json");
    std::fs::write(
        &seed,
        r#"[{"path": "/rooms", "body": {"roomId": "webinar", "name": "Webinar"}},
            {"path": "/messages", "body": {"roomId": "webinar", "count": 250}},
            {"path": "/channels", "body": {"roomId": "webinar", "channelName": "Q&A"}},
            {"method": "POST", "path": "/users/seed", "body": {"count": 3}}]"#,
    )
    .unwrap();
    let (mut child, ready) = spawn(&["--seed", seed.to_str().unwrap()]);
    let base = ready["base_url"].as_str().unwrap();
    let key = ready["private_key"].as_str().unwrap();
    let page = send(
        &agent(),
        "GET",
        &format!("{base}/consumer/api/v1/chatRoom/webinar/messages?auth={key}&limit=1"),
        None,
    );
    assert_eq!(page.json()["totalRecords"], 250, "{}", page.text);
    drop(child.stdin.take());
    assert!(wait_exit(&mut child).success());

    // A request the admin API refuses stops the start, naming it.
    std::fs::write(
        &seed,
        r#"[{"path": "/messages", "body": {"roomId": "nowhere", "count": 1}}]"#,
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_roomchat-emulator"))
        .args(["--seed", seed.to_str().unwrap()])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty(), "no ready line");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("request 1 (POST /messages) was answered 400"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&dir).ok();
}
