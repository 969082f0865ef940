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

/// Data segments the peer of `socket` sent it so far (Linux's `TCP_INFO`).
#[cfg(target_os = "linux")]
fn segments_received(socket: &std::net::TcpStream) -> u32 {
    use std::os::fd::AsRawFd;
    // SAFETY: all-zero is a valid tcp_info.
    let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut length = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    // SAFETY: a valid socket, and a buffer of `length` bytes that outlives the call.
    let status = unsafe {
        libc::getsockopt(
            socket.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            (&mut info as *mut libc::tcp_info).cast(),
            &mut length,
        )
    };
    assert_eq!(status, 0, "{}", std::io::Error::last_os_error());
    info.tcpi_data_segs_in
}

/// A new connection's last handshake flight (ChangeCipherSpec, Finished) leaves
/// with the first request, in one segment: two segments from the client in all
/// (the ClientHello, then that), where there were three or four; and a pooled
/// connection's request is one segment (issue 44, item 24: fewer packets, so
/// fewer that a lossy link can hold back).
#[cfg(target_os = "linux")]
#[test]
fn a_new_connection_sends_its_handshake_finish_with_the_first_request() {
    use std::net::{TcpListener, TcpStream};
    let emu = tls_emulator("tls_segments", EmulatorTls::generated());
    let upstream = emu.base_url().trim_start_matches("https://").to_owned();
    // A forwarder in front of the emulator: the client's socket's far end is ours.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (accepted, client_side) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let (from_client, _) = listener.accept().unwrap();
        let to_server = TcpStream::connect(upstream).unwrap();
        accepted.send(from_client.try_clone().unwrap()).unwrap();
        let (mut a, mut b) = (
            from_client.try_clone().unwrap(),
            to_server.try_clone().unwrap(),
        );
        std::thread::spawn(move || std::io::copy(&mut b, &mut a));
        let (mut client, mut server) = (from_client, to_server);
        let _ = std::io::copy(&mut client, &mut server);
    });
    let client = builder(&emu)
        .base_url(format!("https://127.0.0.1:{port}"))
        .build()
        .unwrap();
    client.list_users(&ListUsers::default()).unwrap();
    let socket = client_side.recv().unwrap();
    assert_eq!(
        segments_received(&socket),
        2,
        "the ClientHello, then the handshake's finish and the request together"
    );
    client.list_users(&ListUsers::default()).unwrap();
    assert_eq!(
        segments_received(&socket),
        3,
        "one more for a pooled connection's request"
    );
    let stats = emu.connection_stats();
    assert_eq!((stats.accepted, stats.tls_handshakes), (1, 1), "{stats:?}");
}
