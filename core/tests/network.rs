//! Across the test network (`scripts/testnet.sh run -- cargo test --test network`):
//! a service host in a namespace of its own, over TLS, ~25 ms round trips, and
//! a real CONNECT proxy (tinyproxy with basic auth). Issue 20: the proxy option
//! and the environment's variables go through it, NO_PROXY by address and range
//! bypasses it, no proxy password or key reaches any output; a lost answer to a
//! POST is never retried; a timeout holds to within 50 ms of what was set.
//!
//! Without the network (a plain `cargo test`) every test says so and returns,
//! unless `CI` is set, where that is a failure. One binary, tests in sequence:
//! they set process-wide environment variables.
#![cfg(target_os = "linux")]

mod common;

use std::time::{Duration, Instant};

use roomchat::{Client, ClientBuilder, CreateUser, ErrorKind, ListUsers, Proxy};

struct Net {
    base_url: String,
    admin_url: String,
    ca: String,
    key: String,
    proxy: String,
    proxy_password: String,
    proxy_log: String,
}

fn net() -> Option<Net> {
    let var = |name: &str| std::env::var(name).ok();
    let Some(base_url) = var("ROOMCHAT_NET_BASE_URL") else {
        assert!(
            var("CI").is_none(),
            "CI must run these across the test network: scripts/testnet.sh run -- …"
        );
        println!("network: no test network (run through scripts/testnet.sh): skipped");
        return None;
    };
    Some(Net {
        base_url,
        admin_url: var("ROOMCHAT_NET_ADMIN_URL").unwrap(),
        ca: std::fs::read_to_string(var("ROOMCHAT_NET_CA_FILE").unwrap()).unwrap(),
        key: var("ROOMCHAT_NET_PRIVATE_KEY").unwrap(),
        proxy: var("ROOMCHAT_NET_PROXY").unwrap(),
        proxy_password: var("ROOMCHAT_NET_PROXY_PASSWORD").unwrap(),
        proxy_log: var("ROOMCHAT_NET_PROXY_LOG").unwrap(),
    })
}

impl Net {
    fn builder(&self) -> ClientBuilder {
        Client::builder(&self.key)
            .base_url(&self.base_url)
            .add_root_certificates_pem(&self.ca)
            .proxy(Proxy::None)
    }

    /// CONNECT lines tinyproxy logged so far.
    fn tunnels(&self) -> usize {
        std::fs::read_to_string(&self.proxy_log)
            .unwrap_or_default()
            .lines()
            .filter(|l| l.contains("CONNECT") && l.contains("10.77.0.2"))
            .count()
    }

    /// The emulator's admin API (direct, over TLS).
    fn admin(
        &self,
        method: &str,
        path: &str,
        body: Option<serde_json::Value>,
    ) -> serde_json::Value {
        let roots = ureq::tls::RootCerts::new_with_certs(&[ureq::tls::Certificate::from_pem(
            self.ca.as_bytes(),
        )
        .unwrap()]);
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .tls_config(ureq::tls::TlsConfig::builder().root_certs(roots).build())
            .proxy(None)
            .build()
            .into();
        let url = format!("{}{path}", self.admin_url);
        let mut response = match (method, body) {
            ("GET", _) => agent.get(&url).call(),
            (_, Some(body)) => agent
                .post(&url)
                .header("content-type", "application/json")
                .send(body.to_string()),
            (_, None) => agent.post(&url).send_empty(),
        }
        .unwrap();
        let text = response.body_mut().read_to_string().unwrap();
        serde_json::from_str(&text).unwrap_or(serde_json::Value::Null)
    }
}

const PROXY_VARS: [&str; 8] = [
    "HTTP_PROXY",
    "http_proxy",
    "HTTPS_PROXY",
    "https_proxy",
    "ALL_PROXY",
    "all_proxy",
    "NO_PROXY",
    "no_proxy",
];

#[test]
fn across_the_test_network() {
    let Some(net) = net() else { return };
    for var in PROXY_VARS {
        std::env::remove_var(var);
    }
    net.admin("POST", "/reset", None);
    net.admin("POST", "/users/seed", Some(serde_json::json!({"count": 5})));

    // Direct, over TLS and the delayed link.
    let direct = net.builder().build().unwrap();
    let started = Instant::now();
    assert_eq!(direct.list_users(&ListUsers::default()).unwrap().total, 5);
    println!(
        "network: first call from a new client (TCP + TLS + request over the relay): {} ms",
        started.elapsed().as_millis()
    );

    // Through the proxy given as an option: one CONNECT tunnel.
    let before = net.tunnels();
    let proxied = net.builder().proxy(Proxy::url(&net.proxy)).build().unwrap();
    assert_eq!(proxied.list_users(&ListUsers::default()).unwrap().total, 5);
    assert!(
        net.tunnels() > before,
        "the call did not go through the proxy"
    );
    let shown = format!("{proxied:?}");
    assert!(!shown.contains(&net.proxy_password), "{shown}");

    // A wrong proxy password: refused by the proxy, and no password shown.
    let wrong = net.proxy.replace(&net.proxy_password, "wrong-password-9");
    let error = net
        .builder()
        .proxy(Proxy::url(&wrong))
        .max_retries(0)
        .build()
        .unwrap()
        .list_users(&ListUsers::default())
        .unwrap_err();
    let text = format!("{error} {error:?}");
    assert!(
        !text.contains("wrong-password-9") && !text.contains(&net.key),
        "{text}"
    );
    println!("network: a wrong proxy password: {error}");

    // The environment's variable, and NO_PROXY by address and by range.
    let from_env = || {
        Client::builder(&net.key)
            .base_url(&net.base_url)
            .add_root_certificates_pem(&net.ca)
            .build()
            .unwrap()
    };
    std::env::set_var("HTTPS_PROXY", &net.proxy);
    let before = net.tunnels();
    from_env().list_users(&ListUsers::default()).unwrap();
    assert!(net.tunnels() > before, "HTTPS_PROXY was not used");
    for no_proxy in ["10.77.0.2", "10.77.0.0/16", "example.com, 10.0.0.0/8"] {
        std::env::set_var("NO_PROXY", no_proxy);
        let before = net.tunnels();
        from_env().list_users(&ListUsers::default()).unwrap();
        assert_eq!(
            net.tunnels(),
            before,
            "NO_PROXY={no_proxy} was not honoured"
        );
    }
    for var in PROXY_VARS {
        std::env::remove_var(var);
    }

    // A POST whose answer is lost is never retried: the user exists once.
    net.admin(
        "POST",
        "/faults",
        Some(serde_json::json!({
            "method": "POST", "path": "/consumer/api/v1/user", "times": 1,
            "action": {"kind": "delay", "ms": 1500}
        })),
    );
    let impatient = net
        .builder()
        .timeout(Duration::from_millis(800))
        .build()
        .unwrap();
    let error = impatient
        .create_user(&CreateUser::regular("lost-answer"))
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Timeout, "{error}");
    std::thread::sleep(Duration::from_millis(1000));
    let journal = net.admin("GET", "/journal", None);
    let posts = journal["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["method"] == "POST" && e["path"] == "/consumer/api/v1/user")
        .count();
    assert_eq!(posts, 1, "a POST whose answer was lost was sent again");

    // Timeouts hold to within 50 ms across the link. Up to 1 ms early too: a deadline
    // less than a millisecond away counts as reached (the shortest socket timeout).
    net.admin(
        "POST",
        "/faults",
        Some(serde_json::json!({
            "method": "GET", "path": "/consumer/api/v2/users", "times": 1,
            "action": {"kind": "delay", "ms": 3000}
        })),
    );
    let set = Duration::from_millis(700);
    let timed = net.builder().timeout(set).max_retries(0).build().unwrap();
    let started = Instant::now();
    let error = timed.list_users(&ListUsers::default()).unwrap_err();
    let took = started.elapsed();
    assert_eq!(error.kind(), ErrorKind::Timeout, "{error}");
    println!(
        "network: a {} ms timeout across the link took {} ms",
        set.as_millis(),
        took.as_millis()
    );
    assert!(
        took + Duration::from_millis(1) >= set && took < set + Duration::from_millis(50),
        "{took:?}"
    );
}
