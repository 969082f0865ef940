//! Durations and sizes at and past their limits: a clear configuration error or
//! a working call, never a panic (hardening round 2, defect 4).

mod common;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::time::Duration;

use common::*;
use roomchat::{Client, ErrorKind, ListUsers, RateLimitConfig, WhenLimited, MAX_DURATION};

#[test]
fn durations_past_the_limit_are_configuration_errors() {
    let emu = emulator("limits_durations");
    let huge = Duration::from_secs_f64(1e19);
    let just_over = MAX_DURATION + Duration::from_secs(1);
    let cases: Vec<(&str, roomchat::ClientBuilder)> = vec![
        ("timeout", builder(&emu).timeout(huge)),
        ("connect timeout", builder(&emu).connect_timeout(just_over)),
        ("base backoff", builder(&emu).base_backoff(huge)),
        ("longest retry wait", builder(&emu).max_retry_wait(huge)),
        (
            "rate-limit window",
            builder(&emu).rate_limit(RateLimitConfig::new(10, huge)),
        ),
        ("longest rate-limit wait", {
            let mut config = RateLimitConfig::new(10, Duration::from_secs(1));
            config.when_limited = WhenLimited::Wait(huge);
            builder(&emu).rate_limit(config)
        }),
    ];
    for (what, builder) in cases {
        let error = builder.build().unwrap_err();
        assert_eq!(error.kind(), ErrorKind::Configuration, "{what}: {error}");
        assert!(error.message().contains(what), "{what}: {error}");
        assert!(error.message().contains("1000000000"), "{what}: {error}");
    }
    // At the limit itself, the client builds and works.
    let client = builder(&emu)
        .timeout(MAX_DURATION)
        .max_retry_wait(MAX_DURATION)
        .build()
        .unwrap();
    client.list_users(&ListUsers::default()).unwrap();
}

/// A one-shot server answering every request with a chunked body of `body`.
fn chunked_server(body: &'static str) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming().take(4) {
            let Ok(mut stream) = stream else { return };
            let mut request = [0u8; 4096];
            let _ = stream.read(&mut request);
            let answer = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n{:x}\r\n{body}\r\n0\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(answer.as_bytes());
        }
    });
    url
}

#[test]
fn the_largest_response_cap_reads_chunked_bodies_whole() {
    let url = chunked_server(r#"{"total":0,"skip":0,"limit":50,"data":[]}"#);
    let client = Client::builder("sk_live_limits_cap")
        .base_url(url)
        .max_response_bytes(u64::MAX)
        .max_retries(0)
        .build()
        .unwrap();
    let page = client.list_users(&ListUsers::default()).unwrap();
    assert_eq!((page.total, page.limit), (0, 50));
}
