//! What per-call options and the raw response cost: the users listing (50 a
//! page) through the client, against the same call through a view with its
//! own timeout and retries (`Client::with_options`: a request-level ureq
//! config per call) and through `Client::with_response` (every header kept,
//! the answer copied out). Paired rounds on one emulator, calls alternating;
//! printed, never asserted.
//!
//! `cargo bench -p roomchat --bench options` (`ROOMCHAT_BENCH_N`: calls per side, default 3000).

use std::time::Duration;

use roomchat::{CallOptions, Client, ListUsers, RateLimitConfig};
use roomchat_emulator::bench::{calls_from_env, compare, unthrottled_emulator};

fn main() {
    let calls = calls_from_env(3000);
    let emulator = unthrottled_emulator(50);
    let client = Client::builder(emulator.private_key())
        .base_url(emulator.base_url())
        .rate_limit(RateLimitConfig::new(u32::MAX, Duration::from_secs(60)))
        .build()
        .expect("client");
    let view = client
        .with_options(
            CallOptions::new()
                .timeout(Duration::from_secs(5))
                .max_retries(0),
        )
        .expect("view");
    let params = ListUsers::page(50, 0);
    let plain = || {
        let page = client.list_users(&params).expect("list users");
        assert_eq!(page.data.len(), 50);
    };
    let through_view = || {
        let page = view.list_users(&params).expect("list users");
        assert_eq!(page.data.len(), 50);
    };
    let with_response = || {
        let answer = client
            .with_response(|c| c.list_users(&params))
            .expect("list users");
        assert_eq!(answer.value.data.len(), 50);
        assert!(answer.meta.request_id().is_some());
    };
    compare(calls, 9, &through_view, &plain).print(
        "list_users (50 users): a view with its own timeout vs the client",
        "view",
        "client",
        1.05,
    );
    compare(calls, 9, &with_response, &plain).print(
        "list_users (50 users): with_response vs the plain call",
        "with_response",
        "plain",
        1.05,
    );
    let one_view = || {
        let view = client
            .with_options(CallOptions::new().max_retries(0))
            .expect("view");
        view.list_users(&params).expect("list users");
    };
    compare(calls, 9, &one_view, &plain).print(
        "list_users (50 users): a new view per call (retries only) vs the client",
        "new view",
        "client",
        1.05,
    );
}
