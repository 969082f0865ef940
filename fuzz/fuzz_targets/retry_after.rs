//! `wire::parse_retry_after` and `wire::rate_limit_headers` on arbitrary header
//! values and clocks. Checks: no panic; every wait is at most
//! `roomchat_fuzz::MAX_WAIT` and can be added to `Instant::now()`; whole
//! seconds read as themselves; an IMF-fixdate written for any instant up to the
//! year 9999 reads back as the time from `now` to it (zero when past).
#![no_main]

use std::time::{Duration, Instant, UNIX_EPOCH};

use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;
use roomchat::wire::{self, WireResponse};
use roomchat_fuzz::{http_date, MAX_WAIT};

#[derive(Arbitrary, Debug)]
struct Input {
    /// Seconds after the epoch of "now" (up to the year 9999).
    now: u64,
    /// A header value.
    value: String,
    /// An instant to write as an HTTP date, seconds after the epoch.
    date: u64,
    /// Which `X-RateLimit-*` headers carry `value`.
    which: u8,
}

/// 9999-12-31T23:59:59Z
const LAST: u64 = 253_402_300_799;

fn check_wait(wait: Duration, what: &str) {
    assert!(wait <= MAX_WAIT, "{what}: {wait:?}");
    assert!(
        Instant::now().checked_add(wait).is_some(),
        "{what}: {wait:?}"
    );
}

fuzz_target!(|input: Input| {
    let now = UNIX_EPOCH + Duration::from_secs(input.now % (LAST + 1));
    let parsed = wire::parse_retry_after(&input.value, now);
    if let Some(wait) = parsed {
        check_wait(wait, "parse_retry_after");
    }
    if let Ok(n) = input.value.trim().parse::<u64>() {
        assert_eq!(
            parsed,
            Some(Duration::from_secs(n).min(MAX_WAIT)),
            "{:?}",
            input.value
        );
    }

    let date = input.date % (LAST + 1);
    let text = http_date(date);
    let at = UNIX_EPOCH + Duration::from_secs(date);
    let expected = at.duration_since(now).unwrap_or_default().min(MAX_WAIT);
    assert_eq!(
        wire::parse_retry_after(&text, now),
        Some(expected),
        "{text}"
    );

    let names = [
        "X-RateLimit-Limit",
        "X-RateLimit-Remaining",
        "X-RateLimit-Reset",
    ];
    let headers: Vec<(String, String)> = names
        .iter()
        .enumerate()
        .filter(|(i, _)| input.which & (1 << i) != 0)
        .map(|(_, n)| (n.to_string(), input.value.clone()))
        .collect();
    let response = WireResponse::new(200, headers.clone(), Vec::new());
    let read = wire::rate_limit_headers(&response, now);
    if let Some(read) = read {
        assert!(!headers.is_empty());
        if let Some(reset) = read.reset {
            check_wait(reset, "X-RateLimit-Reset");
        }
    }
    // A clock before the epoch (a broken system clock) changes nothing of the above.
    let before_epoch = UNIX_EPOCH
        .checked_sub(Duration::from_secs(1))
        .unwrap_or(UNIX_EPOCH);
    let _ = wire::rate_limit_headers(&response, before_epoch);
    let _ = wire::parse_retry_after(&input.value, before_epoch);
});
