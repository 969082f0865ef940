//! N list-users calls through the client and through a bare ureq agent, against
//! the embedded emulator, alternating in rounds so both see the same machine.
//! Prints both and the ratio client/bare (goal: at most 1.10).
//!
//! `cargo bench -p roomchat --bench list_users` (`ROOMCHAT_BENCH_N` sets N, default 4000).

use std::time::Duration;

use roomchat::{Client, ListUsers, RateLimitConfig};

fn main() {
    let n = roomchat_emulator::bench::calls_from_env(4000);
    let emulator = roomchat_emulator::bench::unthrottled_emulator(50);
    let key = emulator.private_key();
    let client = Client::builder(key.clone())
        .base_url(emulator.base_url())
        .rate_limit(RateLimitConfig::new(u32::MAX, Duration::from_secs(60)))
        .build()
        .expect("client builds");
    // The bare agent is configured as a careful hand-written caller would be (and as the
    // client is): timeouts set, statuses read rather than turned into errors.
    let bare: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_connect(Some(roomchat::DEFAULT_CONNECT_TIMEOUT))
        .timeout_global(Some(roomchat::DEFAULT_TIMEOUT))
        .max_redirects(0)
        .build()
        .into();
    let url = format!(
        "{}/consumer/api/v2/users?auth={key}&limit=20&skip=0",
        emulator.base_url()
    );

    let via_client = || {
        let page = client
            .list_users(&ListUsers::page(20, 0))
            .expect("list users");
        assert_eq!(page.data.len(), 20);
    };
    let via_bare = || {
        // What a careful hand-written call does: send, check, read, parse into JSON.
        let mut response = bare.get(&url).call().expect("bare call");
        assert_eq!(response.status(), 200);
        let body = response.body_mut().read_to_vec().expect("body");
        let page: serde_json::Value = serde_json::from_slice(&body).expect("json");
        assert_eq!(page["data"].as_array().map(Vec::len), Some(20));
    };
    let comparison = roomchat_emulator::bench::compare(n, 20, &via_client, &via_bare);
    comparison.print(
        "list_users against the embedded emulator",
        "client",
        "bare",
        1.1,
    );
}
