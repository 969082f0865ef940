//! `wire::decode_error` on an arbitrary status, headers and body (framed as in
//! `roomchat_fuzz::response_from_bytes`). Checks: no panic; the kind fits the
//! status; the error carries the status and a message; `retry_after` is what
//! `parse_retry_after` makes of the `Retry-After` header (and a wait that can be
//! added to an `Instant`); `event_id` is the body's string or number `eventId`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use roomchat::wire;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let response = roomchat_fuzz::response_from_bytes(data);
    let now = roomchat_fuzz::fixed_now();
    let error = wire::decode_error(&response, now);
    roomchat_fuzz::check_error(response.status, &error, "decode_error");
    let expected_wait = response
        .header("retry-after")
        .and_then(|v| wire::parse_retry_after(v, now));
    assert_eq!(error.retry_after(), expected_wait);
    let body: Option<Value> = serde_json::from_slice(&response.body).ok();
    let event_id = body
        .as_ref()
        .and_then(|b| b.get("eventId"))
        .and_then(|v| match v {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        });
    assert_eq!(error.event_id(), event_id.as_deref());
});
