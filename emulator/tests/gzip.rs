//! `gzip_min_bytes`: answers compressed when the request accepts gzip and the
//! body is large enough; never by default, never for a fault.

mod common;

use std::io::Read;

use common::*;
use roomchat_emulator::{EmulatorConfig, EmulatorTls, Fault, FaultAction};

fn gunzip(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(bytes)
        .read_to_end(&mut out)
        .unwrap();
    out
}

fn fixture(gzip_min_bytes: Option<usize>) -> Fixture {
    Fixture::with(EmulatorConfig {
        seed_users: 200,
        gzip_min_bytes,
        ..EmulatorConfig::default()
    })
}

#[test]
fn a_large_answer_is_gzipped_when_the_request_accepts_it() {
    let f = fixture(Some(1024));
    let url = f.api(USERS, "limit=200");
    let (plain_headers, plain) = get_raw(&url, None, None);
    assert_eq!(header(&plain_headers, "content-encoding"), None);
    assert_eq!(header(&plain_headers, "vary"), Some("accept-encoding"));

    let (headers, compressed) = get_raw(&url, None, Some("gzip, deflate, br"));
    assert_eq!(header(&headers, "content-encoding"), Some("gzip"));
    assert_eq!(header(&headers, "vary"), Some("accept-encoding"));
    assert_eq!(
        header(&headers, "content-length"),
        Some(compressed.len().to_string().as_str())
    );
    assert_eq!(gunzip(&compressed), plain);
    assert!(
        compressed.len() * 4 < plain.len(),
        "{} bytes gzipped from {}",
        compressed.len(),
        plain.len()
    );
    let statuses: Vec<u16> = f.emu.journal().iter().map(|e| e.status).collect();
    assert_eq!(statuses, [200, 200]);
}

#[test]
fn accept_encoding_is_read_as_http_says() {
    let f = fixture(Some(1024));
    let url = f.api(USERS, "limit=200");
    for (value, gzipped) in [
        ("gzip", true),
        ("GZIP", true),
        ("x-gzip", true),
        ("br, gzip;q=0.5", true),
        ("*", true),
        ("identity", false),
        ("gzip;q=0", false),
        ("gzip; q=0.0, identity", false),
        ("*;q=0", false),
        ("br", false),
    ] {
        let (headers, _) = get_raw(&url, None, Some(value));
        assert_eq!(
            header(&headers, "content-encoding").is_some(),
            gzipped,
            "{value:?}"
        );
    }
}

#[test]
fn small_answers_faults_and_the_default_are_not_compressed() {
    let f = fixture(Some(1024));
    let (headers, body) = get_raw(&f.api(USERS, "limit=1"), None, Some("gzip"));
    assert!(body.len() < 1024);
    assert_eq!(header(&headers, "content-encoding"), None);

    f.emu.add_fault(Fault {
        method: None,
        path: USERS.into(),
        times: 1,
        action: FaultAction::LargeBody { bytes: 100_000 },
    });
    let (headers, body) = get_raw(&f.api(USERS, ""), None, Some("gzip"));
    assert_eq!(header(&headers, "content-encoding"), None);
    assert_eq!(body.len(), 100_000);

    let default = fixture(None);
    let (headers, _) = get_raw(&default.api(USERS, "limit=200"), None, Some("gzip"));
    assert_eq!(header(&headers, "content-encoding"), None);
    assert_eq!(header(&headers, "vary"), None, "nothing changes by default");
}

#[test]
fn gzip_over_tls() {
    let f = Fixture::with(EmulatorConfig {
        seed_users: 200,
        gzip_min_bytes: Some(1024),
        tls: Some(EmulatorTls::generated()),
        ..EmulatorConfig::default()
    });
    let ca = f.emu.ca_pem().unwrap();
    let url = f.api(USERS, "limit=200");
    let (_, plain) = get_raw(&url, Some(&ca), None);
    let (headers, compressed) = get_raw(&url, Some(&ca), Some("gzip"));
    assert_eq!(header(&headers, "content-encoding"), Some("gzip"));
    assert_eq!(gunzip(&compressed), plain);
}
