//! HTTPS: the emulator's own CA, a given pair, and the certificate failures a
//! client must see (unknown issuer, expired, wrong name), each of which ends
//! only that connection.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use common::*;
use roomchat_emulator::{
    ConnectionStats, Emulator, EmulatorConfig, EmulatorTls, Fault, FaultAction, TLS_DEFAULT_NAMES,
};
use rustls::CertificateError;

fn tls_emulator(tls: EmulatorTls) -> Emulator {
    Emulator::start(EmulatorConfig {
        tls: Some(tls),
        seed_users: 3,
        ..EmulatorConfig::default()
    })
    .unwrap()
}

fn users_url(emu: &Emulator) -> String {
    format!(
        "{}/consumer/api/v2/users?auth={}",
        emu.base_url(),
        emu.private_key()
    )
}

/// A generated certificate for `names`, valid or expired.
fn generated(names: &[&str], expired: bool) -> EmulatorTls {
    EmulatorTls::Generated {
        names: names.iter().map(|n| n.to_string()).collect(),
        expired,
    }
}

/// The connection counts once `done` holds of them (the server learns of a
/// failed handshake a moment after the client gives up).
fn stats_when(emu: &Emulator, done: impl Fn(&ConnectionStats) -> bool) -> ConnectionStats {
    let started = Instant::now();
    loop {
        let stats = emu.connection_stats();
        if done(&stats) || started.elapsed() > Duration::from_secs(5) {
            return stats;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The emulator still answers a trusted client, over a new connection.
fn assert_still_serving(emu: &Emulator) {
    let answer = send(
        &tls_agent(&emu.ca_pem().unwrap()),
        "GET",
        &users_url(emu),
        None,
    );
    assert_eq!(answer.status, 200, "{}", answer.text);
    assert_eq!(answer.json()["total"], 3);
}

#[test]
fn a_client_that_trusts_the_generated_ca_gets_real_answers() {
    let emu = tls_emulator(EmulatorTls::generated());
    let port = emu.base_url().rsplit(':').next().unwrap().to_owned();
    assert_eq!(emu.base_url(), format!("https://127.0.0.1:{port}"));
    assert_eq!(emu.chat_url(), format!("{}/chat", emu.base_url()));
    assert_eq!(emu.admin_url(), format!("{}/_emulator", emu.base_url()));
    let ca_pem = emu.ca_pem().unwrap();
    assert!(
        ca_pem.starts_with("-----BEGIN CERTIFICATE-----"),
        "{ca_pem}"
    );
    assert_eq!(
        std::fs::read_to_string(emu.ca_file().unwrap()).unwrap(),
        ca_pem
    );

    let agent = tls_agent(&ca_pem);
    let page = send(&agent, "GET", &users_url(&emu), None);
    assert_eq!(page.status, 200, "{}", page.text);
    assert_eq!(page.json()["total"], 3);
    let created = send(
        &agent,
        "POST",
        &format!(
            "{}/consumer/api/v1/user?auth={}",
            emu.base_url(),
            emu.private_key()
        ),
        Some(r#"{"username": "over-tls", "chatRoom": "r1"}"#),
    );
    assert_eq!(created.status, 200, "{}", created.text);
    let token = created.json()["accessToken"].as_str().unwrap().to_owned();
    assert_eq!(
        send(&agent, "GET", &users_url(&emu), None).json()["total"],
        4
    );

    // The sign-in page follows the scheme too.
    emu.create_room(serde_json::json!({"roomId": "r1", "name": "Over TLS"}));
    let page = send(
        &agent,
        "GET",
        &format!("{}/r1?accessToken={token}", emu.chat_url()),
        None,
    );
    assert_eq!(page.status, 200, "{}", page.text);
    assert!(
        page.text.contains("data-username=\"over-tls\""),
        "{}",
        page.text
    );

    // And the admin API, on the same listener.
    let config = send(&agent, "GET", &format!("{}/config", emu.admin_url()), None);
    assert_eq!(config.json()["private_key"], emu.private_key().as_str());
    let seeded = send(
        &agent,
        "POST",
        &format!("{}/users/seed", emu.admin_url()),
        Some(r#"{"count": 2}"#),
    );
    assert_eq!(seeded.json()["total"], 6);

    assert_eq!(emu.journal().len(), 4, "admin requests are not journaled");
    let stats = emu.connection_stats();
    assert!(stats.tls_handshakes >= 1, "{stats:?}");
    assert_eq!(
        (stats.tls_failed, stats.tls_last_failure),
        (0, None),
        "no handshake failed"
    );
}

#[test]
fn without_the_ca_the_handshake_fails_as_unknown_issuer_and_serving_goes_on() {
    let emu = tls_emulator(EmulatorTls::generated());
    for attempt in 1..=3u64 {
        let error = certificate_error(try_send(&public_roots_agent(), "GET", &users_url(&emu)));
        assert_eq!(error, CertificateError::UnknownIssuer);
        let stats = stats_when(&emu, |s| s.tls_failed == attempt);
        assert_eq!(stats.tls_failed, attempt, "{stats:?}");
        assert_eq!(stats.tls_handshakes, 0, "{stats:?}");
        // ureq hangs up without sending its alert: the server sees an end of file.
        assert!(stats.tls_last_failure.is_some(), "{stats:?}");
    }
    assert!(emu.journal().is_empty(), "no request got through");
    assert_still_serving(&emu);
}

#[test]
fn an_expired_certificate_fails_as_expired() {
    let emu = tls_emulator(generated(&TLS_DEFAULT_NAMES, true));
    let error = certificate_error(try_send(
        &tls_agent(&emu.ca_pem().unwrap()),
        "GET",
        &users_url(&emu),
    ));
    assert!(
        matches!(
            error,
            CertificateError::Expired | CertificateError::ExpiredContext { .. }
        ),
        "{error:?}"
    );
    assert_eq!(stats_when(&emu, |s| s.tls_failed == 1).tls_failed, 1);
    assert!(emu.journal().is_empty());
}

#[test]
fn a_name_not_in_the_certificate_fails_as_a_name_mismatch() {
    // Only `localhost`: a client that connects to 127.0.0.1 checks that address.
    let emu = tls_emulator(generated(&["localhost"], false));
    assert!(emu.base_url().starts_with("https://127.0.0.1:"));
    let error = certificate_error(try_send(
        &tls_agent(&emu.ca_pem().unwrap()),
        "GET",
        &users_url(&emu),
    ));
    assert!(
        matches!(
            error,
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. }
        ),
        "{error:?}"
    );
    let stats = stats_when(&emu, |s| s.tls_failed == 1);
    assert_eq!(
        (stats.tls_failed, stats.tls_handshakes),
        (1, 0),
        "{stats:?}"
    );
    assert!(emu.journal().is_empty());
}

/// A plain rustls client's configuration (ring) that trusts the certificates of `ca_pem`.
fn rustls_config(ca_pem: &str) -> rustls::ClientConfig {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::CertificateDer;
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
        roots.add(cert.unwrap()).unwrap();
    }
    rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth()
}

/// A handshake by a plain rustls client that trusts `ca_pem` and checks
/// `server_name`, which (unlike ureq) sends its alert before it hangs up.
fn rustls_handshake(emu: &Emulator, ca_pem: &str, server_name: &str) -> rustls::Error {
    use rustls::pki_types::ServerName;
    let config = rustls_config(ca_pem);
    let name = ServerName::try_from(server_name.to_owned()).unwrap();
    let mut connection = rustls::ClientConnection::new(std::sync::Arc::new(config), name).unwrap();
    let mut socket = TcpStream::connect(emu.base_url().trim_start_matches("https://")).unwrap();
    socket
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    loop {
        match connection.complete_io(&mut socket) {
            Err(e) => {
                return e
                    .into_inner()
                    .and_then(|inner| inner.downcast::<rustls::Error>().ok())
                    .map(|boxed| *boxed)
                    .expect("a rustls error")
            }
            Ok(_) if !connection.is_handshaking() => panic!("the handshake succeeded"),
            Ok(_) => {}
        }
    }
}

#[test]
fn a_client_alert_is_the_reason_the_server_records() {
    let emu = tls_emulator(EmulatorTls::generated());
    let stranger = test_pair(&["127.0.0.1"]);
    assert_eq!(
        rustls_handshake(&emu, &stranger.ca_pem, "127.0.0.1"),
        rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer)
    );
    let stats = stats_when(&emu, |s| s.tls_failed == 1);
    assert_eq!(
        stats.tls_last_failure.as_deref(),
        Some("received fatal alert: UnknownCA"),
        "{stats:?}"
    );

    let emu = tls_emulator(generated(&TLS_DEFAULT_NAMES, true));
    rustls_handshake(&emu, &emu.ca_pem().unwrap(), "localhost");
    let stats = stats_when(&emu, |s| s.tls_failed == 1);
    assert_eq!(
        stats.tls_last_failure.as_deref(),
        Some("received fatal alert: CertificateExpired"),
        "{stats:?}"
    );

    let emu = tls_emulator(EmulatorTls::generated());
    rustls_handshake(&emu, &emu.ca_pem().unwrap(), "roomchat.test");
    let stats = stats_when(&emu, |s| s.tls_failed == 1);
    assert_eq!(
        stats.tls_last_failure.as_deref(),
        Some("received fatal alert: BadCertificate"),
        "{stats:?}"
    );
    assert_still_serving(&emu);
}

#[test]
fn names_given_replace_the_defaults() {
    let emu = tls_emulator(generated(&["roomchat.test", "127.0.0.1"], false));
    assert_still_serving(&emu);
    let emu = tls_emulator(generated(&["roomchat.test"], false));
    let error = certificate_error(try_send(
        &tls_agent(&emu.ca_pem().unwrap()),
        "GET",
        &users_url(&emu),
    ));
    assert!(
        matches!(
            error,
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. }
        ),
        "{error:?}"
    );
}

#[test]
fn failed_handshakes_of_every_kind_leave_the_server_serving() {
    let emu = Emulator::start(EmulatorConfig {
        tls: Some(EmulatorTls::generated()),
        seed_users: 3,
        read_timeout: Duration::from_millis(300),
        ..EmulatorConfig::default()
    })
    .unwrap();
    let addr = emu.base_url().trim_start_matches("https://").to_owned();

    // Plain HTTP to the TLS port: not a handshake; closed.
    let mut plain = TcpStream::connect(&addr).unwrap();
    plain
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    plain
        .write_all(b"GET /consumer/api/v2/users HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let mut junk = Vec::new();
    let _ = plain.read_to_end(&mut junk);
    assert!(
        !String::from_utf8_lossy(&junk).contains("HTTP/1.1"),
        "no HTTP answer on a TLS port"
    );
    assert_eq!(stats_when(&emu, |s| s.tls_failed == 1).tls_failed, 1);
    assert_still_serving(&emu);

    // A client that connects and never starts its handshake is closed after read_timeout.
    let mut silent = TcpStream::connect(&addr).unwrap();
    silent
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let started = Instant::now();
    let read = silent.read(&mut [0u8; 16]);
    let waited = started.elapsed();
    assert!(matches!(read, Ok(0)), "closed, not {read:?}");
    assert!(
        waited >= Duration::from_millis(250) && waited < Duration::from_secs(3),
        "{waited:?}"
    );
    let stats = stats_when(&emu, |s| s.tls_failed == 2);
    assert_eq!(stats.tls_failed, 2, "{stats:?}");
    assert!(
        stats
            .tls_last_failure
            .as_deref()
            .unwrap()
            .contains("did not finish within 300 ms"),
        "{stats:?}"
    );

    // A client that rejects the certificate, then one that trusts it.
    certificate_error(try_send(&public_roots_agent(), "GET", &users_url(&emu)));
    assert_eq!(stats_when(&emu, |s| s.tls_failed == 3).tls_failed, 3);
    assert_still_serving(&emu);
}

#[test]
fn faults_act_over_tls_as_over_plain_http() {
    let emu = tls_emulator(EmulatorTls::generated());
    let agent = tls_agent(&emu.ca_pem().unwrap());
    emu.add_fault(Fault {
        method: Some("GET".into()),
        path: "/consumer/api/v2/users".into(),
        times: 1,
        action: FaultAction::CloseConnection,
    });
    let broken = try_send(&agent, "GET", &users_url(&emu))
        .err()
        .expect("the connection was closed without an answer");
    assert!(
        !matches!(
            rustls_error(&broken),
            Some(rustls::Error::InvalidCertificate(_))
        ),
        "a closed connection, not a certificate failure: {broken:?}"
    );
    emu.add_fault(Fault {
        method: None,
        path: "/consumer/api/v2/users".into(),
        times: 1,
        action: FaultAction::Respond {
            status: 503,
            headers: vec![("Retry-After".into(), "1".into())],
            body: r#"{"message":"busy"}"#.into(),
            content_type: None,
        },
    });
    let busy = send(&agent, "GET", &users_url(&emu), None);
    assert_eq!((busy.status, busy.header("retry-after")), (503, Some("1")));
    assert_eq!(send(&agent, "GET", &users_url(&emu), None).status, 200);
    let statuses: Vec<u16> = emu.journal().iter().map(|e| e.status).collect();
    assert_eq!(statuses, [0, 503, 200]);
}

#[test]
fn a_new_connection_after_an_idle_close_resumes_the_session() {
    let emu = Emulator::start(EmulatorConfig {
        tls: Some(EmulatorTls::generated()),
        read_timeout: Duration::from_millis(200),
        ..EmulatorConfig::default()
    })
    .unwrap();
    let agent = tls_agent(&emu.ca_pem().unwrap());
    assert_eq!(send(&agent, "GET", &users_url(&emu), None).status, 200);
    // The emulator closes the idle connection; the agent's next call opens another.
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(send(&agent, "GET", &users_url(&emu), None).status, 200);
    let stats = emu.connection_stats();
    assert_eq!(
        (stats.accepted, stats.tls_handshakes, stats.tls_resumed),
        (2, 2, 1),
        "{stats:?}"
    );
}

#[test]
fn a_given_certificate_and_key_are_served() {
    let pair = test_pair(&["127.0.0.1"]);
    let dir = TempDir::new("given-pair");
    let ca_path = dir.write("ca.pem", &pair.ca_pem);
    let emu = tls_emulator(EmulatorTls::Files {
        cert_pem_path: dir.write("cert.pem", &pair.cert_pem),
        key_pem_path: dir.write("key.pem", &pair.key_pem),
        ca_pem_path: Some(ca_path.clone()),
    });
    assert!(emu.base_url().starts_with("https://"));
    assert_eq!(emu.ca_file(), Some(ca_path.clone()));
    assert_eq!(emu.ca_pem(), Some(pair.ca_pem.clone()));
    let page = send(&tls_agent(&pair.ca_pem), "GET", &users_url(&emu), None);
    assert_eq!(page.json()["total"], 3);
    // Another CA (the emulator's own kind) is not the one that signed it.
    let other = test_pair(&["127.0.0.1"]);
    assert_eq!(
        certificate_error(try_send(&tls_agent(&other.ca_pem), "GET", &users_url(&emu))),
        CertificateError::UnknownIssuer
    );
    emu.stop();
    assert!(ca_path.exists(), "the caller's CA file is left alone");

    // Without a CA: served the same, and nothing to give back.
    let emu = tls_emulator(EmulatorTls::Files {
        cert_pem_path: dir.0.join("cert.pem"),
        key_pem_path: dir.0.join("key.pem"),
        ca_pem_path: None,
    });
    assert_eq!((emu.ca_pem(), emu.ca_file()), (None, None));
    assert_eq!(
        send(&tls_agent(&pair.ca_pem), "GET", &users_url(&emu), None).status,
        200
    );
}

#[test]
fn the_generated_ca_file_is_removed_when_the_emulator_stops() {
    let first = tls_emulator(EmulatorTls::generated());
    let second = tls_emulator(EmulatorTls::generated());
    let (first_file, second_file) = (first.ca_file().unwrap(), second.ca_file().unwrap());
    assert_ne!(first_file, second_file);
    assert_ne!(first.ca_pem(), second.ca_pem(), "a new CA each start");
    first.stop();
    assert!(!first_file.exists());
    assert!(second_file.exists());
    drop(second);
    assert!(!second_file.exists());
}

#[test]
fn bad_tls_settings_are_refused_at_start() {
    let pair = test_pair(&["127.0.0.1"]);
    let dir = TempDir::new("bad-settings");
    let cert = dir.write("cert.pem", &pair.cert_pem);
    let key = dir.write("key.pem", &pair.key_pem);
    let missing = dir.0.join("missing.pem");
    let cases = [
        ("no names", generated(&[], false)),
        (
            "a name that is not ASCII",
            generated(&["bücher.test"], false),
        ),
        (
            "missing certificate file",
            EmulatorTls::Files {
                cert_pem_path: missing.clone(),
                key_pem_path: key.clone(),
                ca_pem_path: None,
            },
        ),
        (
            "a key where the certificate should be",
            EmulatorTls::Files {
                cert_pem_path: key.clone(),
                key_pem_path: key.clone(),
                ca_pem_path: None,
            },
        ),
        (
            "a certificate where the key should be",
            EmulatorTls::Files {
                cert_pem_path: cert.clone(),
                key_pem_path: cert.clone(),
                ca_pem_path: None,
            },
        ),
        (
            "a key that does not match the certificate",
            EmulatorTls::Files {
                cert_pem_path: cert.clone(),
                key_pem_path: dir.write("other-key.pem", &test_pair(&["x"]).key_pem),
                ca_pem_path: None,
            },
        ),
        (
            "a CA file with no certificate",
            EmulatorTls::Files {
                cert_pem_path: cert.clone(),
                key_pem_path: key.clone(),
                ca_pem_path: Some(key.clone()),
            },
        ),
    ];
    for (what, tls) in cases {
        let error = Emulator::start(EmulatorConfig {
            tls: Some(tls),
            ..EmulatorConfig::default()
        })
        .err()
        .unwrap_or_else(|| panic!("{what}: started"));
        let message = error.to_string();
        assert!(!message.is_empty(), "{what}");
        assert!(
            !message.contains("PRIVATE KEY") && !message.contains(pair.key_pem.trim()),
            "{what}: the key's text is in {message:?}"
        );
    }
}

#[test]
fn connection_counts_over_the_admin_api() {
    let f = Fixture::new();
    for _ in 0..3 {
        // A new agent each time: a new connection each time.
        let answer = send(&agent(), "GET", &f.api(USERS, ""), None);
        assert_eq!(answer.status, 200);
    }
    let counts = f.admin("GET", "/connections", None).json();
    // Three calls and this admin call (the Fixture's agent).
    assert_eq!(counts["accepted"], 4, "{counts}");
    assert_eq!(
        (
            &counts["tls_handshakes"],
            &counts["tls_resumed"],
            &counts["tls_failed"],
            &counts["tls_last_failure"]
        ),
        (&0.into(), &0.into(), &0.into(), &serde_json::Value::Null)
    );
    assert_eq!(f.emu.connection_stats().accepted, 4);
    assert_eq!(f.admin("DELETE", "/connections", None).json()["ok"], true);
    assert_eq!(f.emu.connection_stats(), ConnectionStats::default());
    send(&agent(), "GET", &f.api(USERS, ""), None);
    assert_eq!(f.emu.connection_stats().accepted, 1);
    f.admin("POST", "/reset", None);
    assert_eq!(f.emu.connection_stats().accepted, 0, "a reset zeroes them");
    let wrong = f.admin("POST", "/connections", None);
    assert_eq!(
        (wrong.status, wrong.header("allow")),
        (405, Some("GET, DELETE"))
    );
}

/// A short `idle_timeout` (the test network's 1 s) closes a keep-alive connection
/// that waits that long for its next request, and says so, but a handshake is held
/// to `read_timeout`: a client that a busy machine slows down (Node finishing 16
/// handshakes on its one thread under load) is not cut off mid-handshake. With the
/// test network's `--read-timeout 1s` alone, 6 of 16 such handshakes were ("the
/// handshake did not finish within 1000 ms"; the client: "other side closed").
#[test]
fn a_short_idle_timeout_closes_idle_connections_but_not_a_slow_handshake() {
    let emu = Emulator::start(EmulatorConfig {
        tls: Some(EmulatorTls::generated()),
        idle_timeout: Some(Duration::from_millis(300)),
        ..EmulatorConfig::default()
    })
    .unwrap();
    let config = rustls_config(&emu.ca_pem().unwrap());
    let tcp = TcpStream::connect(emu.base_url().trim_start_matches("https://")).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    // A busy client: its handshake starts well past the idle timeout.
    std::thread::sleep(Duration::from_millis(800));
    let connection =
        rustls::ClientConnection::new(std::sync::Arc::new(config), "127.0.0.1".try_into().unwrap())
            .unwrap();
    let mut tls = rustls::StreamOwned::new(connection, tcp);
    let target = users_url(&emu);
    let target = target.trim_start_matches(emu.base_url());
    write!(tls, "GET {target} HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let mut head = Vec::new();
    let mut byte = [0u8];
    while !head.ends_with(b"\r\n\r\n") {
        assert_eq!(tls.read(&mut byte).unwrap(), 1, "closed: {head:?}");
        head.push(byte[0]);
    }
    let head = String::from_utf8(head).unwrap().to_ascii_lowercase();
    assert!(head.starts_with("http/1.1 200"), "{head}");
    assert!(head.contains("\r\nkeep-alive: timeout=0\r\n"), "{head}");
    let length: usize = head
        .split("\r\n")
        .find_map(|line| line.strip_prefix("content-length: "))
        .unwrap()
        .parse()
        .unwrap();
    tls.read_exact(&mut vec![0; length]).unwrap();
    // Then idle: closed at the idle timeout, not the read timeout's 10 s.
    let started = Instant::now();
    let read = tls.read(&mut [0u8; 16]);
    let waited = started.elapsed();
    assert!(
        matches!(read, Ok(0)) || read.is_err(),
        "closed, not {read:?}"
    );
    assert!(
        waited >= Duration::from_millis(200) && waited < Duration::from_secs(3),
        "{waited:?}"
    );
    assert_eq!(emu.connection_stats().tls_failed, 0);
}
