//! Proxy variables in the environment (hardening round 2, defect 1): a client
//! of a loopback emulator never sends through them (the proxy would see the key
//! in clear), and a proxy the client cannot use fails the build, not every call.
//!
//! One test in its own binary: it sets process-wide environment variables.

mod common;

use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::*;
use roomchat::{Client, ErrorKind, ListUsers, Proxy};

const VARS: [&str; 6] = [
    "HTTP_PROXY",
    "http_proxy",
    "HTTPS_PROXY",
    "https_proxy",
    "ALL_PROXY",
    "all_proxy",
];

#[test]
fn proxy_variables_are_never_used_for_loopback_and_an_unusable_one_fails_the_build() {
    // A listening socket posing as the proxy, counting connections.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let fake_proxy = format!("http://user:proxy-pw-51@{}", listener.local_addr().unwrap());
    let connections = Arc::new(AtomicUsize::new(0));
    let counted = connections.clone();
    listener.set_nonblocking(true).unwrap();
    std::thread::spawn(move || loop {
        if let Ok((stream, _)) = listener.accept() {
            counted.fetch_add(1, Ordering::SeqCst);
            drop(stream);
        }
        std::thread::sleep(Duration::from_millis(5));
    });

    let emu = emulator("proxy_env_loopback");
    emu.seed_users(3);
    for url in [
        emu.base_url().to_owned(),
        emu.base_url().replace("127.0.0.1", "localhost"),
    ] {
        for var in VARS {
            std::env::set_var(var, &fake_proxy);
        }
        let client = builder(&emu)
            .base_url(url.as_str())
            .max_retries(0)
            .build()
            .unwrap();
        let page = client.list_users(&ListUsers::default()).unwrap();
        assert_eq!(page.total, 3, "{url}");
        // A SOCKS proxy in ALL_PROXY (no connector for it) changes nothing either.
        for var in VARS {
            std::env::set_var(var, "socks5://127.0.0.1:9");
        }
        let client = builder(&emu)
            .base_url(url.as_str())
            .max_retries(0)
            .build()
            .unwrap();
        client.list_users(&ListUsers::default()).unwrap();
        assert!(!format!("{client:?}").contains("proxy-pw-51"));
    }
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(
        connections.load(Ordering::SeqCst),
        0,
        "a loopback call went to the proxy"
    );

    // For a remote host, a SOCKS proxy in the environment is a configuration
    // error at build time naming the variable, without its password...
    for var in VARS {
        std::env::remove_var(var);
    }
    std::env::set_var("ALL_PROXY", "socks5://me:socks-pw-77@127.0.0.1:1080");
    let remote = || Client::builder("sk_live_proxy_env").base_url("https://api.example.com");
    let error = remote().build().unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Configuration);
    assert!(error.message().contains("ALL_PROXY"), "{error}");
    assert!(error.message().contains("SOCKS"), "{error}");
    assert!(
        !format!("{error} {error:?}").contains("socks-pw-77"),
        "{error}"
    );
    // ... that Proxy::None turns off, and NO_PROXY covers.
    remote().proxy(Proxy::None).build().unwrap();
    std::env::set_var("NO_PROXY", "localhost,.example.com");
    remote().build().unwrap();
    std::env::remove_var("NO_PROXY");

    // An explicit proxy's password shows in no Debug output.
    std::env::remove_var("ALL_PROXY");
    let explicit = remote().proxy(Proxy::url(&fake_proxy));
    assert!(!format!("{explicit:?}").contains("proxy-pw-51"));
    let client = explicit.build().unwrap();
    let shown = format!("{client:?}");
    assert!(
        shown.contains("REDACTED@127.0.0.1") && !shown.contains("proxy-pw-51"),
        "{shown}"
    );

    // An explicit proxy is used for a remote host (this one closes every
    // connection), and its password shows in no error.
    let before = connections.load(Ordering::SeqCst);
    let error = client.list_users(&ListUsers::default()).unwrap_err();
    assert!(
        connections.load(Ordering::SeqCst) > before,
        "the proxy was not used: {error}"
    );
    assert!(
        !format!("{error} {error:?}").contains("proxy-pw-51"),
        "{error}"
    );
}
