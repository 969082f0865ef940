//! Prints what a page of the users listing costs the emulator, by page size.
//!
//! `cargo run --release -p roomchat-emulator --example listing_cost`
//!
//! One raw keep-alive connection sends minimal `GET /consumer/api/v2/users`
//! requests with `limit` 1, 50 and 200, call by call in turn (so that all three
//! meet the same noise), and reads each answer whole. It prints the median over
//! rounds of the time per request for each size, the ratios to `limit=1`, and
//! whether a 50-user page costs at most 1.5 times a 1-user page. Calls per size:
//! `ROOMCHAT_BENCH_N` (default 6000).

use std::time::{Duration, Instant};

use roomchat_emulator::bench::{calls_from_env, unthrottled_emulator, RawConnection};

const PAGE_SIZES: [usize; 3] = [1, 50, 200];
const ROUNDS: usize = 15;
const GOAL: f64 = 1.5;

fn main() {
    if cfg!(debug_assertions) {
        println!("note: a debug build; the goal is about the release build (--release)");
    }
    let calls = calls_from_env(6000).max(ROUNDS);
    let per_round = calls / ROUNDS;
    let emulator = unthrottled_emulator(300);
    let mut connection = RawConnection::connect(emulator.base_url()).expect("connects");
    let paths: Vec<String> = PAGE_SIZES
        .iter()
        .map(|limit| {
            format!(
                "/consumer/api/v2/users?auth={}&limit={limit}",
                emulator.private_key()
            )
        })
        .collect();

    // Check once that each request is what it claims to be, then warm up.
    for (path, &size) in paths.iter().zip(&PAGE_SIZES) {
        let (status, body) = connection.get(path).expect("answers");
        assert_eq!(status, 200, "{}", String::from_utf8_lossy(body));
        let page: serde_json::Value = serde_json::from_slice(body).expect("a JSON page");
        assert_eq!(page["data"].as_array().map(Vec::len), Some(size));
    }
    for _ in 0..300 {
        for path in &paths {
            connection.get(path).expect("answers");
        }
    }

    let mut per_size_rounds: Vec<Vec<f64>> = vec![Vec::with_capacity(ROUNDS); PAGE_SIZES.len()];
    let mut body_bytes = [0usize; 3];
    for round in 0..ROUNDS {
        let mut totals = [Duration::ZERO; 3];
        for call in 0..per_round {
            for k in 0..PAGE_SIZES.len() {
                // Rotate which size goes first, so that none always follows another.
                let which = (k + call + round) % PAGE_SIZES.len();
                let started = Instant::now();
                let (status, body) = connection.get(&paths[which]).expect("answers");
                totals[which] += started.elapsed();
                assert_eq!(status, 200);
                body_bytes[which] = body.len();
            }
        }
        for (which, total) in totals.iter().enumerate() {
            per_size_rounds[which].push(total.as_secs_f64() * 1e6 / per_round as f64);
        }
    }
    let medians: Vec<f64> = per_size_rounds
        .iter_mut()
        .map(|rounds| {
            rounds.sort_by(f64::total_cmp);
            rounds[rounds.len() / 2]
        })
        .collect();

    println!(
        "users listing over one raw keep-alive connection: {} calls per page size in {ROUNDS} rounds, 300 users",
        per_round * ROUNDS
    );
    for (k, &size) in PAGE_SIZES.iter().enumerate() {
        println!(
            "  limit={size:<4} {:>8.1} us/request  ({:>6} body bytes)  {:.2}x limit=1",
            medians[k],
            body_bytes[k],
            medians[k] / medians[0]
        );
    }
    let ratio = medians[1] / medians[0];
    println!(
        "goal: a 50-user page at most {GOAL}x a 1-user page: {} ({ratio:.2}x)",
        if ratio <= GOAL { "met" } else { "NOT met" }
    );
}
