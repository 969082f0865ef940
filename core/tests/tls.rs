//! HTTPS against the emulator's TLS (issue 20): roots added in PEM are
//! trusted, and each certificate failure is `ErrorKind::Tls`, named, never
//! retried (the emulator counts one failed handshake), with no key in it.

mod common;

use std::time::{Duration, Instant};

use common::*;
use roomchat::{ErrorKind, ListUsers};
use roomchat_emulator::{Emulator, EmulatorTls};

fn tls_emulator(test: &str, tls: EmulatorTls) -> Emulator {
    emulator_with(test, |c| c.tls = Some(tls))
}

/// Failed handshakes the emulator counted, once its count settles.
fn failed_handshakes(emu: &Emulator) -> u64 {
    let until = Instant::now() + Duration::from_millis(500);
    let mut seen = emu.connection_stats().tls_failed;
    while Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
        seen = emu.connection_stats().tls_failed;
    }
    seen
}

#[test]
fn a_client_trusting_the_ca_gets_answers_over_https() {
    let emu = tls_emulator("tls_trusted", EmulatorTls::generated());
    emu.seed_users(3);
    assert!(emu.base_url().starts_with("https://127.0.0.1:"));
    let client = builder(&emu).build().unwrap();
    assert_eq!(client.list_users(&ListUsers::default()).unwrap().total, 3);
    assert_eq!(emu.connection_stats().tls_failed, 0);
}

#[test]
fn each_certificate_failure_is_the_tls_kind_named_and_never_retried() {
    let unknown = tls_emulator("tls_unknown_issuer", EmulatorTls::generated());
    let expired = tls_emulator(
        "tls_expired",
        EmulatorTls::Generated {
            names: vec!["127.0.0.1".into()],
            expired: true,
        },
    );
    let other_name = tls_emulator(
        "tls_name",
        EmulatorTls::Generated {
            names: vec!["localhost".into()],
            expired: false,
        },
    );
    for (emu, trust, said) in [
        (&unknown, false, "issuer is unknown"),
        (&expired, true, "expired"),
        (&other_name, true, "name mismatch"),
    ] {
        let mut b = builder_with_key(emu, &emu.private_key());
        if !trust {
            b = roomchat::Client::builder(emu.private_key()).base_url(emu.base_url());
        }
        // Retries left at their default (2): a TLS failure must not use them.
        let client = b.build().unwrap();
        let error = client.list_users(&ListUsers::default()).unwrap_err();
        assert_eq!(error.kind(), ErrorKind::Tls, "{error}");
        assert!(error.message().contains(said), "{error}");
        assert_no_secret(&error, &emu.private_key());
        assert_eq!(failed_handshakes(emu), 1, "{said}: the call was retried");
        assert!(emu.journal().is_empty(), "nothing reached the service");
        println!("tls: {said}: {error}");
    }
}

#[test]
fn a_new_client_resumes_the_session_of_an_earlier_one_with_the_same_roots() {
    let emu = tls_emulator("tls_shared_sessions", EmulatorTls::generated());
    let stranger = tls_emulator("tls_shared_sessions_other_ca", EmulatorTls::generated());
    let first = builder(&emu).build().unwrap();
    first.list_users(&ListUsers::default()).unwrap();
    drop(first);
    // Same roots: the process's TLS (parsed roots, session cache) is shared.
    let second = builder(&emu).build().unwrap();
    second.list_users(&ListUsers::default()).unwrap();
    let stats = emu.connection_stats();
    assert_eq!(stats.tls_handshakes, 2, "{stats:?}");
    assert_eq!(
        stats.tls_resumed, 1,
        "the second client resumed the first's session: {stats:?}"
    );
    // Other roots (one more CA trusted): nothing shared, a full handshake.
    let other = builder(&emu)
        .add_root_certificates_pem(stranger.ca_pem().unwrap())
        .build()
        .unwrap();
    other.list_users(&ListUsers::default()).unwrap();
    let stats = emu.connection_stats();
    assert_eq!(
        (stats.tls_handshakes, stats.tls_resumed),
        (3, 1),
        "{stats:?}"
    );
}
