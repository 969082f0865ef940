//! gzip (issue 20): asked for by default and decompressed, off by an option,
//! and the response cap applies to the decompressed body (a small compressed
//! answer cannot grow past it).

mod common;

use common::*;
use roomchat::{ErrorKind, ListUsers};

fn compressing_emulator(test: &str) -> roomchat_emulator::Emulator {
    let emu = emulator_with(test, |c| c.gzip_min_bytes = Some(512));
    emu.seed_users(200);
    emu
}

/// The request head a client sends (read by a one-shot server answering an empty page).
fn request_head(builder: roomchat::ClientBuilder) -> String {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let server = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let mut head = vec![0u8; 8192];
        let n = stream.read(&mut head).unwrap();
        let body = r#"{"total":0,"skip":0,"limit":50,"data":[]}"#;
        let answer = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(answer.as_bytes()).unwrap();
        String::from_utf8_lossy(&head[..n]).to_ascii_lowercase()
    });
    let client = builder.base_url(url).max_retries(0).build().unwrap();
    client.list_users(&ListUsers::default()).unwrap();
    server.join().unwrap()
}

#[test]
fn gzip_is_asked_for_by_default_and_can_be_turned_off() {
    let asked = request_head(roomchat::Client::builder("sk_live_gzip_head"));
    assert!(asked.contains("\r\naccept-encoding: gzip"), "{asked}");
    let not_asked = request_head(roomchat::Client::builder("sk_live_gzip_head").gzip(false));
    assert!(!not_asked.contains("accept-encoding"), "{not_asked}");

    // A compressing service's pages decode the same either way.
    let emu = compressing_emulator("gzip_default");
    for gzip in [true, false] {
        let client = builder(&emu).gzip(gzip).build().unwrap();
        let page = client.list_users(&ListUsers::page(200, 0)).unwrap();
        assert_eq!(page.data.len(), 200);
        assert_eq!(page.data[199].username.as_deref(), Some("seed-user-200"));
    }
}

#[test]
fn the_response_cap_applies_to_the_decompressed_body() {
    let emu = compressing_emulator("gzip_cap");
    let capped = builder(&emu)
        .max_response_bytes(10_000)
        .max_retries(0)
        .build()
        .unwrap();
    let error = capped.list_users(&ListUsers::page(200, 0)).unwrap_err();
    assert_eq!(error.kind(), ErrorKind::ResponseTooLarge, "{error}");
    // A page that fits decompressed goes through.
    assert_eq!(
        capped
            .list_users(&ListUsers::page(10, 0))
            .unwrap()
            .data
            .len(),
        10
    );
}
