//! Across the test network (run by `scripts/testnet.sh run -- cargo bench --bench network`):
//! a namespaced host over TLS 1.3 with ~25 ms round trips. Side by side with
//! libcurl (the system's, OpenSSL), printed, never asserted:
//!
//! * cold start: the first call of a new client (TCP, TLS handshake, request), median;
//! * 16 calls at once from a new client: wall time, and connections the service accepted;
//! * the call after the server closed an idle connection: whether TLS resumed.
//!
//! The first two idle, then loaded: one busy-loop process per core beside it
//! (`scripts/bench/cpu-load.sh`), half the cold starts.
//!
//! `ROOMCHAT_BENCH_N` sets the cold starts per side (default 30).

use std::time::{Duration, Instant};

use roomchat::{Client, ClientBuilder, ListUsers, Proxy};

struct Net {
    base_url: String,
    admin_url: String,
    ca_file: String,
    ca: String,
    key: String,
}

fn admin(net: &Net, method: &str, path: &str) -> serde_json::Value {
    let roots = ureq::tls::RootCerts::new_with_certs(&[ureq::tls::Certificate::from_pem(
        net.ca.as_bytes(),
    )
    .unwrap()]);
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .tls_config(ureq::tls::TlsConfig::builder().root_certs(roots).build())
        .proxy(None)
        .build()
        .into();
    let url = format!("{}{path}", net.admin_url);
    let mut response = match method {
        "GET" => agent.get(&url).call(),
        "DELETE" => agent.delete(&url).call(),
        _ => agent.post(&url).send_empty(),
    }
    .unwrap();
    let text = response.body_mut().read_to_string().unwrap();
    serde_json::from_str(&text).unwrap_or(serde_json::Value::Null)
}

fn builder(net: &Net) -> ClientBuilder {
    Client::builder(&net.key)
        .base_url(&net.base_url)
        .add_root_certificates_pem(&net.ca)
        .proxy(Proxy::None)
}

fn curl_call(net: &Net, url: &str) {
    let mut easy = curl::easy::Easy::new();
    easy.url(url).unwrap();
    easy.cainfo(&net.ca_file).unwrap();
    easy.signal(false).unwrap();
    easy.noproxy("*").unwrap();
    let mut body = Vec::new();
    {
        let mut transfer = easy.transfer();
        transfer
            .write_function(|d| {
                body.extend_from_slice(d);
                Ok(d.len())
            })
            .unwrap();
        transfer.perform().unwrap();
    }
    assert_eq!(easy.response_code().unwrap(), 200);
    let page: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert!(page["data"].is_array());
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() {
    let var = |name: &str| std::env::var(name).ok();
    let Some(base_url) = var("ROOMCHAT_NET_BASE_URL") else {
        println!("network bench: no test network (run through scripts/testnet.sh): skipped");
        return;
    };
    let ca_file = var("ROOMCHAT_NET_CA_FILE").unwrap();
    let net = Net {
        base_url,
        admin_url: var("ROOMCHAT_NET_ADMIN_URL").unwrap(),
        ca: std::fs::read_to_string(&ca_file).unwrap(),
        ca_file,
        key: var("ROOMCHAT_NET_PRIVATE_KEY").unwrap(),
    };
    admin(&net, "POST", "/reset");
    let n: usize = var("ROOMCHAT_BENCH_N")
        .and_then(|v| v.parse().ok())
        .unwrap_or(30);
    let url = format!(
        "{}/consumer/api/v2/users?auth={}&limit=1",
        net.base_url, net.key
    );

    // Idle, then with one busy-loop process per core beside it (half the cold starts).
    roomchat_emulator::bench::idle_and_loaded(n, (n / 2).max(3), |label, n| {
        // Cold starts, alternating sides.
        let (mut ours, mut curls) = (Vec::new(), Vec::new());
        for _ in 0..n {
            let started = Instant::now();
            let client = builder(&net).build().unwrap();
            client.list_users(&ListUsers::page(1, 0)).unwrap();
            ours.push(started.elapsed().as_secs_f64() * 1e3);
            let started = Instant::now();
            curl_call(&net, &url);
            curls.push(started.elapsed().as_secs_f64() * 1e3);
        }
        let (ours, curls) = (median(&mut ours), median(&mut curls));
        println!(
            "network: cold start (new client: TCP + TLS + request), {label}, median of {n}: roomchat {ours:.1} ms, libcurl {curls:.1} ms ({:+.1}%)",
            (ours / curls - 1.0) * 100.0
        );

        // 16 at once from a new client: wall time and connections opened.
        admin(&net, "DELETE", "/connections");
        let client = builder(&net).build().unwrap();
        let started = Instant::now();
        std::thread::scope(|s| {
            for _ in 0..16 {
                s.spawn(|| client.list_users(&ListUsers::page(1, 0)).unwrap());
            }
        });
        let wall = started.elapsed();
        std::thread::sleep(Duration::from_millis(200));
        let stats = admin(&net, "GET", "/connections");
        println!(
            "network: 16 calls at once from a new client, {label}: {} ms, {} connections accepted, {} TLS handshakes",
            wall.as_millis(),
            stats["accepted"],
            stats["tls_handshakes"]
        );
    });

    // After the server closes an idle connection (the test network's emulator
    // closes them after 1 s): the next call's time, and whether TLS resumed.
    let client = builder(&net).build().unwrap();
    client.list_users(&ListUsers::page(1, 0)).unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    admin(&net, "DELETE", "/connections");
    let started = Instant::now();
    client.list_users(&ListUsers::page(1, 0)).unwrap();
    let took = started.elapsed();
    std::thread::sleep(Duration::from_millis(200));
    let stats = admin(&net, "GET", "/connections");
    println!(
        "network: the call after the server closed the idle connection: {:.1} ms, {} handshake(s), {} resumed",
        took.as_secs_f64() * 1e3,
        stats["tls_handshakes"],
        stats["tls_resumed"]
    );
}
