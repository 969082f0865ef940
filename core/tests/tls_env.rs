//! `SSL_CERT_FILE` (issue 20): the file's roots are trusted beside Mozilla's,
//! and the system store honours it too; `read_ssl_cert_file(false)` ignores
//! it; a client that makes no TLS connection does not read it. One test in
//! its own binary: it sets a process-wide environment variable.

mod common;

use common::*;
use roomchat::{Client, ErrorKind, ListUsers, TlsRoots, ENV_SSL_CERT_FILE};
use roomchat_emulator::EmulatorTls;

#[test]
fn ssl_cert_file_is_trusted_with_either_roots() {
    let emu = emulator_with("tls_env", |c| c.tls = Some(EmulatorTls::generated()));
    emu.seed_users(1);
    let plain = || Client::builder(emu.private_key()).base_url(emu.base_url());
    std::env::remove_var(ENV_SSL_CERT_FILE);
    let refused = plain().build().unwrap().list_users(&ListUsers::default());
    assert_eq!(refused.unwrap_err().kind(), ErrorKind::Tls);

    std::env::set_var(ENV_SSL_CERT_FILE, emu.ca_file().unwrap());
    for roots in [TlsRoots::WebPki, TlsRoots::System] {
        let client = plain().tls_roots(roots).build().unwrap();
        let page = client.list_users(&ListUsers::default());
        assert_eq!(page.map(|p| p.total).ok(), Some(1), "{roots}");
    }
    // Unless the builder is told not to read it (Python's trust_env=False).
    let ignoring = plain().read_ssl_cert_file(false).build().unwrap();
    let refused = ignoring.list_users(&ListUsers::default());
    assert_eq!(refused.unwrap_err().kind(), ErrorKind::Tls);
    // A file that cannot be read is a configuration error naming the variable.
    std::env::set_var(ENV_SSL_CERT_FILE, "/nonexistent/roomchat-ca.pem");
    let error = plain().build().unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Configuration);
    assert!(error.message().contains(ENV_SSL_CERT_FILE), "{error}");
    // Not even read when ignored.
    let client = plain().read_ssl_cert_file(false).build();
    assert!(client.is_ok(), "{:?}", client.err());

    // Nor by a plain-http client, which makes no TLS connection (a container
    // setting the variable globally could not test against the loopback
    // emulator), with either roots.
    let loopback = emulator_with("tls_env_http", |c| c.tls = None);
    loopback.seed_users(2);
    for roots in [TlsRoots::WebPki, TlsRoots::System] {
        let client = Client::builder(loopback.private_key())
            .base_url(loopback.base_url())
            .tls_roots(roots)
            .build();
        let client = client.unwrap_or_else(|e| panic!("{roots}: an http client: {e}"));
        let page = client.list_users(&ListUsers::default());
        assert_eq!(page.map(|p| p.total).ok(), Some(2), "{roots}");
    }
    // An https proxy needs TLS even for an http base URL: the file is read then.
    let proxied = Client::builder(loopback.private_key())
        .base_url("http://api.example.com")
        .allow_insecure_http(true)
        .proxy(roomchat::Proxy::url("https://proxy.example.com:3128"))
        .build()
        .unwrap_err();
    assert_eq!(proxied.kind(), ErrorKind::Configuration, "{proxied}");
    assert!(proxied.message().contains(ENV_SSL_CERT_FILE), "{proxied}");
    std::env::remove_var(ENV_SSL_CERT_FILE);
}
