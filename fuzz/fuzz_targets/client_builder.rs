//! `Client::builder(key).base_url(url)…build()` with arbitrary URLs, public
//! keys and application names (the URL checking of the client builder).
//! Checks: no panic; plain `http://` is accepted only to a loopback host (as
//! the HTTP stack will parse the URL: `http::Uri`'s host) unless
//! `allow_insecure_http(true)`; no error text holds the private key, even when
//! the URL carries it; the sign-in URL and iframe of a built client never panic.
#![no_main]

use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;
use roomchat::wire::encode_query_component;
use roomchat::{Client, ErrorKind};
use roomchat_fuzz::ArbStr;

/// A few fixed keys: every key built gets a rate budget for the process's life.
const KEYS: [&str; 3] = [
    "sk_FUZZ_builder_key_0001",
    "sk_FUZZ_k&y=1/é%20",
    "sk_FUZZ_[::1]:80@evil",
];

#[derive(Arbitrary, Debug)]
struct Input {
    key: u8,
    /// Where the key goes into the URL (if at all).
    key_in_url: Option<u8>,
    url: ArbUrl,
    chat_url: Option<String>,
    public_key: Option<String>,
    app_name: Option<String>,
    insecure: bool,
    room: String,
    token: String,
}

#[derive(Arbitrary, Debug)]
enum ArbUrl {
    Text(String),
    /// `scheme://authority/path`, each part arbitrary or a known word.
    Parts(ArbStr, ArbStr, ArbStr),
}

fn loopback(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

fuzz_target!(|input: Input| {
    let key = KEYS[input.key as usize % KEYS.len()];
    let mut url = match &input.url {
        ArbUrl::Text(t) => t.clone(),
        ArbUrl::Parts(scheme, authority, path) => {
            let scheme = match scheme {
                ArbStr::Word(n) => ["http", "https", "HTTP", "ftp"][*n as usize % 4].to_owned(),
                other => other.get(),
            };
            let authority = match authority {
                ArbStr::Word(n) => [
                    "localhost",
                    "127.0.0.1:8080",
                    "[::1]",
                    "example.com",
                    "localhost:80@example.com",
                    "user@127.0.0.1",
                    "127.0.0.1.example.com",
                ][*n as usize % 7]
                    .to_owned(),
                other => other.get(),
            };
            format!("{scheme}://{authority}/{}", path.get())
        }
    };
    if let Some(at) = input.key_in_url {
        let mut at = at as usize % (url.len() + 1);
        while !url.is_char_boundary(at) {
            at -= 1;
        }
        url.insert_str(at, key);
    }
    let mut builder = Client::builder(key)
        .base_url(url.clone())
        .allow_insecure_http(input.insecure);
    if let Some(chat) = &input.chat_url {
        builder = builder.chat_url(chat.clone());
    }
    if let Some(public) = &input.public_key {
        builder = builder.public_key(public.clone());
    }
    if let Some(app) = &input.app_name {
        builder = builder.app_name(app.clone());
    }
    let leaks = |text: &str| text.contains(key) || text.contains(&encode_query_component(key));
    let client = match builder.build() {
        Ok(client) => client,
        Err(e) => {
            assert_eq!(e.kind(), ErrorKind::Configuration, "{e}");
            assert!(!leaks(&e.to_string()), "{e}");
            assert!(!leaks(&format!("{e:?}")), "{e:?}");
            return;
        }
    };
    let base = client.base_url();
    let lower = base.to_ascii_lowercase();
    assert!(
        lower.starts_with("https://") || lower.starts_with("http://"),
        "{base}"
    );
    if lower.starts_with("http://") && !input.insecure {
        let uri: http::Uri = base.parse().expect("a built client's URL parses");
        let host = uri.host().unwrap_or_default();
        assert!(loopback(host), "plain http to {host:?} accepted: {url:?}");
    }
    // `Debug` shows the base URL as given: judged only when the caller did not put the key in it.
    if !leaks(base) {
        assert!(!leaks(&format!("{client:?}")));
    }
    if let Ok(sign_in) = client.sign_in_url(&input.room, &input.token) {
        assert!(sign_in.contains("accessToken="));
    }
    let _ = client.iframe_html(&input.room, &input.token, &input.room, &input.token);
});
