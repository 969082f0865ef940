//! Holds a server asks for (`Retry-After` on a 429, `X-RateLimit-Remaining: 0`
//! with `X-RateLimit-Reset`) are believed only within reason (hardening round 2,
//! defect 11): a server sending milliseconds, or an epoch in milliseconds, must
//! not hold the key off for hours or years.

mod common;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use common::*;
use roomchat::{ErrorKind, ListUsers, RateLimitConfig};

/// A client whose budget fails at once (so a hold shows as an error, not a wait).
fn fail_fast_client(emu: &roomchat_emulator::Emulator) -> roomchat::Client {
    builder(emu)
        .rate_limit(RateLimitConfig::new(100_000, Duration::from_secs(60)).fail_fast())
        .max_retries(0)
        .build()
        .unwrap()
}

#[test]
fn a_retry_after_in_milliseconds_counts_as_absent() {
    let emu = emulator("holds_retry_after_ms");
    let client = fail_fast_client(&emu);
    emu.add_fault(once(
        "GET",
        USERS,
        respond(
            429,
            r#"{"message":"Too many requests"}"#,
            &[("Retry-After", "60000")],
        ),
    ));
    let error = client.list_users(&ListUsers::default()).unwrap_err();
    assert_eq!(error.kind(), ErrorKind::RateLimited);
    let held = client.rate_limit_state().blocked_for.expect("held off");
    println!(
        "holds: Retry-After 60000 held the key for {:.1} s (was 16.7 h)",
        held.as_secs_f64()
    );
    // As a 429 without Retry-After: the first of a row holds a sixtieth of the window.
    assert!(held <= Duration::from_secs(1), "held for {held:?}");
    // A plausible Retry-After is still believed as it is (another key: this one is held).
    let other = emulator("holds_retry_after_ok");
    let client = fail_fast_client(&other);
    other.add_fault(once(
        "GET",
        USERS,
        respond(
            429,
            r#"{"message":"Too many requests"}"#,
            &[("Retry-After", "90")],
        ),
    ));
    client.list_users(&ListUsers::default()).unwrap_err();
    let held = client.rate_limit_state().blocked_for.expect("held off");
    assert!(
        held > Duration::from_secs(85) && held <= Duration::from_secs(90),
        "{held:?}"
    );
}

#[test]
fn an_epoch_in_milliseconds_as_reset_holds_nothing() {
    let emu = emulator("holds_reset_epoch_ms");
    let client = fail_fast_client(&emu);
    let epoch_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis()
        + 30_000;
    let reset = epoch_ms.to_string();
    let answer = r#"{"total":0,"skip":0,"limit":50,"data":[]}"#;
    emu.add_fault(once(
        "GET",
        USERS,
        respond(
            200,
            answer,
            &[
                ("X-RateLimit-Remaining", "0"),
                ("X-RateLimit-Reset", &reset),
            ],
        ),
    ));
    client.list_users(&ListUsers::default()).unwrap();
    let state = client.rate_limit_state();
    println!(
        "holds: X-RateLimit-Reset in epoch ms held the key for {:?} (was ~31 years)",
        state.blocked_for
    );
    assert_eq!(state.blocked_for, None);
    client.list_users(&ListUsers::default()).unwrap();
    // An epoch in seconds 30 s ahead is believed.
    let epoch_s = (epoch_ms / 1000).to_string();
    emu.add_fault(once(
        "GET",
        USERS,
        respond(
            200,
            answer,
            &[
                ("X-RateLimit-Remaining", "0"),
                ("X-RateLimit-Reset", &epoch_s),
            ],
        ),
    ));
    client.list_users(&ListUsers::default()).unwrap();
    let held = client.rate_limit_state().blocked_for.expect("held off");
    assert!(
        held > Duration::from_secs(25) && held <= Duration::from_secs(31),
        "{held:?}"
    );
}
