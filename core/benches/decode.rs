//! Decoding a 100,000-message conversation (about 19 MB of JSON) into
//! `Vec<Message>` through the client's own decoder, against parsing the same
//! bytes into a `serde_json::Value` (what a caller does by hand). Rounds
//! alternate; medians are printed. Goal (issue 7): the typed decode is no
//! slower than the `Value` parse.
//!
//! Then a users page of 50 (the listing's usual size, shaped as the emulator
//! sends it) decoded as a `UserPage`, as a borrowed `UserPageView`, and as a
//! `Value`, in µs per page.
//!
//! Both idle, then loaded: one busy-loop process per core beside it
//! (`scripts/bench/cpu-load.sh`), fewer rounds.
//!
//! `cargo bench -p roomchat --bench decode` (`ROOMCHAT_BENCH_MESSAGES`, default 100000).

use std::hint::black_box;
use std::time::Instant;

use roomchat::wire::{self, WireResponse};
use serde_json::json;

fn main() {
    let count: usize = std::env::var("ROOMCHAT_BENCH_MESSAGES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let messages: Vec<_> = (0..count)
        .map(|i| {
            json!({
                "_id": format!("6141fd87{:016x}", i),
                "conversation": "6141fd87c3b6750317d04f64",
                "messages": format!("Message number {i}: hello, is anyone here? \u{1F44B} \"quoted\"."),
                "created": "2024-01-15T15:21:44.293Z",
                "user": {
                    "_id": format!("{:024x}", i % 97),
                    "username": format!("user-{}", i % 97),
                    "email": format!("user-{}@example.com", i % 97),
                },
            })
        })
        .collect();
    let body = serde_json::to_vec(&messages).unwrap();
    let response = WireResponse::new(200, vec![], body);

    let typed = || {
        let started = Instant::now();
        let decoded = wire::decode_conversation_messages(&response).unwrap();
        assert_eq!(decoded.len(), count);
        black_box(decoded);
        started.elapsed().as_secs_f64() * 1e3
    };
    let value = || {
        let started = Instant::now();
        let decoded: serde_json::Value = serde_json::from_slice(&response.body).unwrap();
        assert_eq!(decoded.as_array().map(Vec::len), Some(count));
        black_box(decoded);
        started.elapsed().as_secs_f64() * 1e3
    };
    typed();
    value();
    // Idle, then with one busy-loop process per core beside it (fewer rounds).
    roomchat_emulator::bench::idle_and_loaded(10, 6, |label, rounds| {
        let (mut typed_ms, mut value_ms) = (Vec::new(), Vec::new());
        for round in 0..rounds {
            if round % 2 == 0 {
                typed_ms.push(typed());
                value_ms.push(value());
            } else {
                value_ms.push(value());
                typed_ms.push(typed());
            }
        }
        typed_ms.sort_by(f64::total_cmp);
        value_ms.sort_by(f64::total_cmp);
        let (t, v) = (typed_ms[rounds / 2], value_ms[rounds / 2]);
        println!(
            "decode {count} messages ({:.1} MB), {label}: Vec<Message> {t:.1} ms, serde_json::Value {v:.1} ms, \
             ratio {:.2} (goal <= 1.00), median of {rounds} alternating rounds",
            response.body.len() as f64 / 1e6,
            t / v
        );
        users_page(label, if rounds == 10 { 11 } else { 5 });
    });
}

/// Median µs per call of `f` over `rounds` rounds of `calls` calls.
fn per_call(rounds: &mut Vec<f64>, calls: u32, f: &dyn Fn() -> usize) {
    let started = Instant::now();
    let mut kept = 0;
    for _ in 0..calls {
        kept += f();
    }
    black_box(kept);
    rounds.push(started.elapsed().as_secs_f64() * 1e6 / f64::from(calls));
}

fn users_page(label: &str, round_count: usize) {
    let users: Vec<_> = (1..=50)
        .map(|i| {
            json!({
                "_id": format!("4917df82{i:016x}"),
                "created": "2026-11-23T11:39:07.458Z",
                "isModerator": false,
                "profilePic": "",
                "userId": format!("4917df82{i:016x}"),
                "username": format!("seed-user-{i}"),
            })
        })
        .collect();
    let body =
        serde_json::to_vec(&json!({"total": 200, "limit": 50, "skip": 0, "data": users})).unwrap();
    let response = WireResponse::new(200, vec![], body);
    let model = || wire::decode_list_users(&response).unwrap().data.len();
    let view = || wire::decode_list_users_view(&response).unwrap().data.len();
    let value = || {
        let v: serde_json::Value = serde_json::from_slice(&response.body).unwrap();
        v["data"].as_array().map_or(0, Vec::len)
    };
    let sides: [(&str, &dyn Fn() -> usize); 3] = [
        ("UserPage", &model),
        ("UserPageView", &view),
        ("serde_json::Value", &value),
    ];
    let mut rounds = vec![Vec::new(); sides.len()];
    for round in 0..round_count {
        for i in 0..sides.len() {
            let i = (i + round) % sides.len();
            per_call(&mut rounds[i], 2000, sides[i].1);
        }
    }
    let medians: Vec<f64> = rounds
        .iter_mut()
        .map(|r| {
            r.sort_by(f64::total_cmp);
            r[r.len() / 2]
        })
        .collect();
    println!(
        "decode a page of 50 users ({} bytes), {label}, median of {round_count} rotating rounds: {}",
        response.body.len(),
        sides
            .iter()
            .zip(&medians)
            .map(|((name, _), us)| format!("{name} {us:.1} µs"))
            .collect::<Vec<_>>()
            .join(", ")
    );
}
