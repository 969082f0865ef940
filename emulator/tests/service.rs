//! Points 3 to 8: sign-in pages, rate limit, plan gating, admin API, faults, journal.

mod common;

use std::io::Read;
use std::time::{Duration, Instant};

use common::*;
use roomchat_emulator::{EmulatorConfig, RateLimit};
use serde_json::json;

#[test]
fn sign_in_pages_apply_the_room_scope_rule_and_escape_text() {
    let f = Fixture::new();
    f.admin(
        "POST",
        "/rooms",
        Some(r#"{"roomId": "r1", "name": "One <b>"}"#),
    );
    f.admin("POST", "/rooms", Some(r#"{"roomId": "r2", "name": "Two"}"#));
    let token = |body: &str| {
        f.create_user(body)["accessToken"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let everywhere = token(r#"{"username": "ann", "isModerator": true}"#);
    let scoped = token(
        r#"{"username": "<script>alert(1)</script>", "isModerator": true, "chatRoom": "r1"}"#,
    );
    let regular = token(r#"{"username": "jon"}"#);
    let page = |room: &str, t: &str| {
        send(
            &f.agent,
            "GET",
            &format!("{}/{room}?accessToken={t}", f.emu.chat_url()),
            None,
        )
    };

    for (room, t, moderator) in [
        ("r1", &everywhere, true),
        ("r2", &everywhere, true),
        ("r1", &scoped, true),
        ("r2", &scoped, false),
        ("r1", &regular, false),
    ] {
        let answer = page(room, t);
        assert_eq!(answer.status, 200);
        assert_eq!(
            answer.header("content-type"),
            Some("text/html; charset=utf-8")
        );
        assert!(
            answer
                .text
                .contains(&format!("data-moderator=\"{moderator}\"")),
            "{room}: {}",
            answer.text
        );
        let functions = if moderator {
            "with moderator functions"
        } else {
            "without moderator functions"
        };
        assert!(answer.text.contains(functions));
    }
    let escaped = page("r1", &scoped).text;
    assert!(
        !escaped.contains("<script>") && escaped.contains("&lt;script&gt;"),
        "{escaped}"
    );
    assert!(escaped.contains("One &lt;b&gt;"));

    let tampered = format!("{}x", &everywhere[..everywhere.len() - 1]);
    for (room, t, status) in [
        ("r1", "", 401),
        ("r1", "garbage", 401),
        ("r1", tampered.as_str(), 401),
        ("nope", everywhere.as_str(), 404),
    ] {
        let answer = page(room, t);
        assert_eq!(answer.status, status, "{t}");
        assert!(answer.text.contains("Cannot sign in"));
    }
    let no_token = send(&f.agent, "GET", &format!("{}/r1", f.emu.chat_url()), None);
    assert_eq!(no_token.status, 401);
    assert!(no_token.text.contains("accessToken is required"));
}

#[test]
fn rate_limit_per_key_in_a_rolling_window() {
    let f = Fixture::with(EmulatorConfig {
        rate_limit: RateLimit {
            requests: 20,
            // Long enough that 20 requests fit in it on a loaded machine.
            window: Duration::from_secs(3),
        },
        ..EmulatorConfig::default()
    });
    let started = Instant::now();
    for i in 0..20 {
        assert_eq!(f.get(USERS, "").status, 200, "request {i}");
    }
    let over = f.get(USERS, "");
    assert_eq!(over.status, 429);
    assert!(
        over.header("retry-after").is_none(),
        "no headers unless configured"
    );
    // Requests without a valid key are neither counted nor limited.
    assert_eq!(
        send(
            &f.agent,
            "GET",
            &format!("{}{USERS}?auth=wrong", f.emu.base_url()),
            None
        )
        .status,
        401
    );
    std::thread::sleep(
        Duration::from_secs(3).saturating_sub(started.elapsed()) + Duration::from_millis(50),
    );
    assert_eq!(f.get(USERS, "").status, 200, "the window rolled");

    // Another key has its own budget.
    f.admin(
        "PUT",
        "/config",
        Some(r#"{"private_key": "sk_other", "rate_limit_headers": true}"#),
    );
    let other = send(
        &f.agent,
        "GET",
        &format!("{}{USERS}?auth=sk_other", f.emu.base_url()),
        None,
    );
    assert_eq!(other.status, 200);
    assert_eq!(other.header("x-ratelimit-limit"), Some("20"));
    assert_eq!(other.header("x-ratelimit-remaining"), Some("19"));
    for _ in 0..19 {
        send(
            &f.agent,
            "GET",
            &format!("{}{USERS}?auth=sk_other", f.emu.base_url()),
            None,
        );
    }
    let limited = send(
        &f.agent,
        "GET",
        &format!("{}{USERS}?auth=sk_other", f.emu.base_url()),
        None,
    );
    assert_eq!(limited.status, 429);
    let retry_after: u64 = limited.header("retry-after").unwrap().parse().unwrap();
    assert!((1..=3).contains(&retry_after), "{retry_after}");
    assert_eq!(limited.header("x-ratelimit-remaining"), Some("0"));
}

#[test]
fn the_default_limit_is_600_per_minute() {
    let f = Fixture::new();
    let config = f.admin("GET", "/config", None).json();
    assert_eq!(
        config["rate_limit"],
        json!({"requests": 600, "window_ms": 60000})
    );
    for _ in 0..600 {
        assert_eq!(f.get("/consumer/api/v1/chatrooms", "").status, 200);
    }
    assert_eq!(f.get("/consumer/api/v1/chatrooms", "").status, 429);
}

#[test]
fn plan_gating_answers_upgrade() {
    let f = Fixture::new();
    assert_eq!(
        f.admin(
            "POST",
            "/gate",
            Some(r#"{"method": "GET", "path": "/consumer/api/v1/chatrooms"}"#)
        )
        .status,
        200
    );
    let gated = f.get("/consumer/api/v1/chatrooms", "");
    assert_eq!(gated.status, 400);
    assert!(gated.json()["message"]
        .as_str()
        .unwrap()
        .to_lowercase()
        .contains("upgrade"));
    assert_eq!(
        f.get(USERS, "").status,
        200,
        "other endpoints are not gated"
    );
    f.emu.gate_endpoint("*", "/consumer/api/v2/*");
    assert_eq!(f.get(USERS, "").status, 400);
    f.admin("DELETE", "/gate", None);
    assert_eq!(f.get("/consumer/api/v1/chatrooms", "").status, 200);
    assert_eq!(f.get(USERS, "").status, 200);
}

#[test]
fn admin_api_resets_configures_and_seeds() {
    let f = Fixture::new();
    f.create_user(r#"{"username": "jon"}"#);
    f.admin("POST", "/rooms", Some(r#"{"name": "auto id"}"#));
    let started = Instant::now();
    let seeded = f.admin("POST", "/users/seed", Some(r#"{"count": 100000}"#));
    println!(
        "seeding 100,000 users over the admin API took {:?}",
        started.elapsed()
    );
    assert_eq!(seeded.json(), json!({"created": 100000, "total": 100001}));
    let last = f.get(USERS, "limit=1&skip=100000").json();
    assert_eq!(last["data"][0]["username"], "seed-user-100001");

    assert_eq!(f.admin("POST", "/reset", None).json(), json!({"ok": true}));
    assert_eq!(f.get(USERS, "").json()["total"], 0);
    assert_eq!(f.get("/consumer/api/v1/chatrooms", "").json(), json!([]));

    let changed = f.admin("PUT", "/config", Some(r#"{"private_key": "sk_new", "public_key": "pk_new", "rate_limit": {"requests": 5, "window_ms": 1000}}"#));
    assert_eq!(
        changed.json()["rate_limit"],
        json!({"requests": 5, "window_ms": 1000})
    );
    assert_eq!(f.emu.private_key(), "sk_new");
    assert_eq!(f.get(USERS, "").status, 200, "the helper uses the new key");
    assert_eq!(
        send(
            &f.agent,
            "GET",
            &format!(
                "{}{USERS}?auth=sk_test_emulator_private_key_0001",
                f.emu.base_url()
            ),
            None
        )
        .status,
        401
    );
    assert_eq!(
        f.admin("PUT", "/config", Some(r#"{"rate_limit": {"requests": 0}}"#))
            .status,
        400
    );
    assert_eq!(f.admin("PUT", "/config", Some("not json")).status, 400);
    assert_eq!(
        f.admin("POST", "/rooms", Some(r#"{"roomId": 5}"#)).status,
        400
    );
    assert_eq!(
        f.admin(
            "POST",
            "/conversations",
            Some(r#"{"roomId": "none", "messages": []}"#)
        )
        .status,
        400
    );
    assert_eq!(f.admin("GET", "/nothing", None).status, 404);
}

#[test]
fn seeding_in_process_is_fast() {
    let f = Fixture::new();
    let started = Instant::now();
    assert_eq!(f.emu.seed_users(100_000), 100_000);
    figure(format_args!(
        "seeding 100,000 users in process took {:?}",
        started.elapsed()
    ));
}

fn fault(f: &Fixture, spec: serde_json::Value) {
    assert_eq!(
        f.admin("POST", "/faults", Some(&spec.to_string())).status,
        200,
        "{spec}"
    );
}

/// Polls `held` until it says `n` (a state, not a sleep): at most 30 s.
fn until_held(held: impl Fn() -> usize, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while held() != n {
        assert!(Instant::now() < deadline, "{} held, not {n}", held());
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// A `hold` fault lets the earlier requests pass (the rules before it), holds the one
/// it matches, after it took effect, until a release, and the test sees it held; through
/// the admin API and through the crate's own.
#[test]
fn a_hold_fault_holds_its_request_until_released() {
    let f = Fixture::new();
    fault(
        &f,
        json!({"path": USERS, "times": 2, "action": {"kind": "delay", "ms": 0}}),
    );
    fault(
        &f,
        json!({"path": USERS, "times": 1, "action": {"kind": "hold"}}),
    );
    let held = || {
        f.admin("GET", "/held", None).json()["held"]
            .as_u64()
            .unwrap() as usize
    };
    assert_eq!(held(), 0);
    for _ in 0..2 {
        assert_eq!(
            f.get(USERS, "").status,
            200,
            "the requests before the held one pass"
        );
    }
    std::thread::scope(|scope| {
        let third = scope.spawn(|| f.get(USERS, "limit=3"));
        until_held(held, 1);
        assert!(!third.is_finished(), "answered while held");
        // It took effect (journaled), and its answer waits.
        let journal = f.emu.journal();
        assert_eq!(journal.len(), 3);
        assert!(journal[2].query.contains("limit=3"));
        let released = f.admin("DELETE", "/held", None).json();
        assert_eq!(released, json!({"released": 1}));
        let answer = third.join().unwrap();
        assert_eq!(answer.status, 200);
        assert_eq!(answer.json()["limit"], 3, "{}", answer.text);
    });
    assert_eq!(held(), 0);
    assert_eq!(f.get(USERS, "").status, 200, "the rule is spent");
    assert_eq!(
        f.admin("DELETE", "/held", None).json(),
        json!({"released": 0})
    );

    // The crate's API: held() and release_held(); clear_faults() lets it go too.
    for let_go in ["release_held", "clear_faults"] {
        f.emu.add_fault(roomchat_emulator::Fault {
            method: Some("GET".into()),
            path: USERS.into(),
            times: 1,
            action: roomchat_emulator::FaultAction::Hold,
        });
        std::thread::scope(|scope| {
            let held_one = scope.spawn(|| f.get(USERS, ""));
            until_held(|| f.emu.held(), 1);
            assert!(!held_one.is_finished(), "{let_go}: answered while held");
            if let_go == "release_held" {
                assert_eq!(f.emu.release_held(), 1);
            } else {
                f.emu.clear_faults();
            }
            assert_eq!(held_one.join().unwrap().status, 200, "{let_go}");
        });
        until_held(|| f.emu.held(), 0);
    }
}

#[test]
fn status_faults_fire_for_the_next_n_matching_requests() {
    let f = Fixture::new();
    let cases = [
        (
            500,
            r#"{"message": "Internal server error occurred", "eventId": "ev-42"}"#,
            None,
            "application/json",
        ),
        (
            502,
            "<html><body>Bad Gateway</body></html>",
            None,
            "text/html",
        ),
        (503, "", Some("3"), "application/json"),
        (503, "", None, "application/json"),
        (429, "", Some("7"), "application/json"),
        (429, "", None, "application/json"),
    ];
    for (status, body, retry_after, content_type) in cases {
        let mut headers = json!({});
        if let Some(r) = retry_after {
            headers["Retry-After"] = json!(r);
        }
        fault(
            &f,
            json!({"method": "GET", "path": USERS, "times": 2, "action": {"kind": "respond", "status": status, "body": body, "headers": headers, "content_type": content_type}}),
        );
        for _ in 0..2 {
            let answer = f.get(USERS, "");
            assert_eq!(answer.status, status);
            assert_eq!(answer.text, body);
            assert_eq!(answer.header("retry-after"), retry_after);
            assert_eq!(answer.header("content-type"), Some(content_type));
        }
        assert_eq!(f.get(USERS, "").status, 200, "spent after 2");
    }
    // method and path must both match; a prefix rule matches below it
    fault(
        &f,
        json!({"method": "POST", "path": USERS, "action": {"kind": "respond", "status": 500}}),
    );
    assert_eq!(f.get(USERS, "").status, 200);
    fault(
        &f,
        json!({"path": "/consumer/api/v1/*", "action": {"kind": "respond", "status": 418}}),
    );
    assert_eq!(f.get("/consumer/api/v1/chatrooms", "").status, 418);
    // a faulted POST has no side effect
    fault(
        &f,
        json!({"method": "POST", "path": CREATE, "action": {"kind": "respond", "status": 500}}),
    );
    assert_eq!(f.call("POST", CREATE, r#"{"username": "x"}"#).status, 500);
    assert_eq!(f.get(USERS, "").json()["total"], 0);
    assert_eq!(
        f.admin(
            "POST",
            "/faults",
            Some(r#"{"path": "/x", "action": {"kind": "explode"}}"#)
        )
        .status,
        400
    );
}

/// The body of a 200 answer that must be cut short of its `Content-Length`.
fn cut_short(mut response: ureq::http::Response<ureq::Body>) -> Vec<u8> {
    assert_eq!(response.status(), 200);
    let declared: usize = response.headers()["content-length"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    let mut body = Vec::new();
    let read = response.body_mut().as_reader().read_to_end(&mut body);
    assert!(
        read.is_err() || body.len() < declared,
        "cut short of Content-Length"
    );
    body
}

#[test]
fn connection_level_faults() {
    let f = Fixture::new();
    // close before any response
    fault(
        &f,
        json!({"method": "GET", "path": USERS, "action": {"kind": "close"}}),
    );
    let closed = agent().get(&f.api(USERS, "")).call();
    assert!(closed.is_err(), "the connection closed without an answer");

    // a body cut off mid-JSON
    fault(
        &f,
        json!({"method": "GET", "path": USERS, "action": {"kind": "truncate"}}),
    );
    let body = cut_short(agent().get(&f.api(USERS, "")).call().unwrap());
    assert!(serde_json::from_slice::<serde_json::Value>(&body).is_err());

    // not JSON, wrong content type, very large body
    fault(
        &f,
        json!({"method": "GET", "path": USERS, "action": {"kind": "not_json"}}),
    );
    let html = f.get(USERS, "");
    assert_eq!(html.header("content-type"), Some("application/json"));
    assert!(serde_json::from_str::<serde_json::Value>(&html.text).is_err());
    fault(
        &f,
        json!({"method": "GET", "path": USERS, "action": {"kind": "wrong_content_type"}}),
    );
    let relabelled = f.get(USERS, "");
    assert_eq!(
        relabelled.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    assert_eq!(
        relabelled.json()["total"],
        0,
        "the normal answer, relabelled"
    );
    fault(
        &f,
        json!({"method": "GET", "path": USERS, "action": {"kind": "large_body", "bytes": 5_000_000}}),
    );
    let large = f.get(USERS, "");
    assert_eq!(large.text.len(), 5_000_000);
    assert!(large.json()["data"].is_string());

    // added latency; the request still takes effect
    fault(
        &f,
        json!({"method": "POST", "path": CREATE, "action": {"kind": "delay", "ms": 600}}),
    );
    let started = Instant::now();
    f.create_user(r#"{"username": "slow"}"#);
    assert!(started.elapsed() >= Duration::from_millis(600));
    assert_eq!(f.get(USERS, "").json()["total"], 1);
    assert_eq!(
        f.get(USERS, "").status,
        200,
        "still serving after every fault"
    );
}

#[test]
fn the_journal_records_arrivals_in_order_with_keys_redacted() {
    let f = Fixture::new();
    f.get(USERS, "limit=5");
    f.call("POST", CREATE, r#"{"username": "jon"}"#);
    send(
        &f.agent,
        "GET",
        &format!(
            "{}/consumer/api/v1/validate?publicKey=pk&accessToken=t",
            f.emu.base_url()
        ),
        None,
    );
    fault(&f, json!({"path": USERS, "action": {"kind": "close"}}));
    let _ = agent().get(&f.api(USERS, "")).call();
    f.admin("GET", "/config", None);

    let journal = f.admin("GET", "/journal", None).json();
    let entries = journal["entries"].as_array().unwrap();
    assert_eq!(
        entries.len(),
        4,
        "admin requests are not journaled: {journal}"
    );
    assert_eq!(
        (entries[0]["method"].as_str(), entries[0]["path"].as_str()),
        (Some("GET"), Some(USERS))
    );
    assert_eq!(entries[0]["query"], "auth=REDACTED&limit=5");
    assert_eq!(entries[0]["status"], 200);
    assert!(entries[0]["user_agent"]
        .as_str()
        .unwrap()
        .starts_with("ureq/"));
    assert_eq!(entries[1]["body"], r#"{"username": "jon"}"#);
    assert_eq!(entries[2]["query"], "publicKey=REDACTED&accessToken=t");
    assert_eq!(entries[3]["status"], 0, "closed without an answer");
    let seqs: Vec<u64> = entries.iter().map(|e| e["seq"].as_u64().unwrap()).collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]));
    let times: Vec<f64> = entries
        .iter()
        .map(|e| e["received_at_ms"].as_f64().unwrap())
        .collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]));
    assert!(!journal.to_string().contains(&f.emu.private_key()));

    assert_eq!(f.emu.journal().len(), 4);
    f.admin("DELETE", "/journal", None);
    assert!(f.emu.journal().is_empty());
}

#[test]
fn the_journal_keeps_request_headers_with_credentials_redacted() {
    let f = Fixture::new();
    let traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    let request = get_with_headers(
        &f.api(USERS, ""),
        &[
            ("traceparent", traceparent),
            ("Authorization", "Bearer s3cret-bearer"),
            ("Cookie", "session=s3cret-cookie"),
            ("X-Api-Key", "s3cret-api-key"),
            ("X-Private-Key", "s3cret-private-key"),
            ("Ocp-Apim-Subscription-Key", "s3cret-subscription"),
            ("X-Team", "payments"),
        ],
    );
    assert_eq!(f.agent.run(request).unwrap().status(), 200);
    let journal = f.admin("GET", "/journal", None).json();
    let headers = &journal["entries"][0]["headers"];
    let value = |name: &str| {
        headers
            .as_array()
            .unwrap()
            .iter()
            .find(|pair| pair[0] == name)
            .map(|pair| pair[1].as_str().unwrap().to_owned())
    };
    assert_eq!(value("traceparent").as_deref(), Some(traceparent));
    assert_eq!(value("x-team").as_deref(), Some("payments"));
    for name in [
        "authorization",
        "cookie",
        "x-api-key",
        "x-private-key",
        "ocp-apim-subscription-key",
    ] {
        assert_eq!(value(name).as_deref(), Some("REDACTED"), "{name}");
    }
    assert!(value("user-agent").is_some() && value("host").is_some());
    assert!(!journal.to_string().contains("s3cret"), "{journal}");
    // The library's entries say the same.
    let entry = &f.emu.journal()[0];
    assert!(entry
        .headers
        .contains(&("traceparent".to_owned(), traceparent.to_owned())));
}

/// A GET of `url` with `headers`.
fn get_with_headers(url: &str, headers: &[(&str, &str)]) -> ureq::http::Request<()> {
    let mut builder = ureq::http::Request::builder().method("GET").uri(url);
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    builder.body(()).unwrap()
}

#[test]
fn the_journal_is_a_bounded_ring_that_counts_what_it_dropped() {
    let f = Fixture::with(EmulatorConfig {
        journal_capacity: 3,
        max_body_bytes: 200_000,
        ..EmulatorConfig::default()
    });
    for limit in 1..=5 {
        f.get(USERS, &format!("limit={limit}"));
    }
    let journal = f.admin("GET", "/journal", None).json();
    let queries: Vec<&str> = journal["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["query"].as_str().unwrap())
        .collect();
    assert_eq!(
        queries,
        [
            "auth=REDACTED&limit=3",
            "auth=REDACTED&limit=4",
            "auth=REDACTED&limit=5"
        ]
    );
    assert_eq!(
        (journal["dropped"].as_u64(), journal["capacity"].as_u64()),
        (Some(2), Some(3))
    );
    assert_eq!(f.emu.journal_dropped(), 2);
    let seqs: Vec<u64> = f.emu.journal().iter().map(|e| e.seq).collect();
    assert_eq!(seqs, [3, 4, 5]);

    // A body past the entry cap is kept in part, and said to be cut.
    let big = format!(r#"{{"username": "{}"}}"#, "b".repeat(100_000));
    assert_eq!(f.call("POST", CREATE, &big).status, 200);
    let last = f.emu.journal().pop().unwrap();
    assert_eq!((last.seq, last.status, last.truncated), (6, 200, true));
    assert_eq!(last.body.len(), roomchat_emulator::JOURNAL_BODY_CAP);
    assert!(big.starts_with(&last.body));
    assert!(!f.emu.journal()[0].truncated);

    // The admin API shows and changes the capacity; shrinking drops the oldest now.
    assert_eq!(
        f.admin("GET", "/config", None).json()["journal_capacity"],
        3
    );
    let changed = f.admin("PUT", "/config", Some(r#"{"journal_capacity": 1}"#));
    assert_eq!(changed.json()["journal_capacity"], 1);
    assert_eq!(f.emu.journal().len(), 1);
    assert_eq!(f.emu.journal_dropped(), 5);
    for bad in [
        r#"{"journal_capacity": -1}"#,
        r#"{"journal_capacity": "10"}"#,
        r#"{"journal_capacity": 1000001}"#,
    ] {
        assert_eq!(f.admin("PUT", "/config", Some(bad)).status, 400, "{bad}");
    }
    f.get(USERS, "");
    assert_eq!(
        f.emu.journal()[0].seq,
        7,
        "seq keeps increasing across drops"
    );

    // Clearing empties it and zeroes the count; the sequence goes on.
    f.admin("DELETE", "/journal", None);
    assert_eq!(f.emu.journal_dropped(), 0);
    f.get(USERS, "");
    assert_eq!(f.emu.journal()[0].seq, 8);
}

/// The admin API's listing shapes: records stored and served verbatim (with or without an
/// `_id`), deleted one by one, pages pretty-printed and a `limit` capped; and the fault
/// `truncate_after_effect`.
#[test]
fn verbatim_records_deletions_pretty_pages_a_capped_limit_and_cut_answers() {
    let f = Fixture::new();
    f.admin("POST", "/rooms", Some(r#"{"roomId": "raw"}"#));
    let records = [
        r#"{"zeta":1,"_id":"m1","big":123456789012345678901234567890,"esc":"\u00e9\/"}"#,
        r#"{ "message" : "no id", "file": {"url": "https://f.example/x"} }"#,
        r#"{"_id":"m3","created":1705332104293,"user":{"username":42}}"#,
    ];
    let added = f.admin(
        "POST",
        "/messages",
        Some(&json!({"roomId": "raw", "records": records}).to_string()),
    );
    assert_eq!(added.status, 200, "{}", added.text);
    let ids: Vec<String> = serde_json::from_value(added.json()["ids"].clone()).unwrap();
    assert_eq!((ids[0].as_str(), ids[2].as_str()), ("m1", "m3"));
    assert_eq!(ids[1].len(), 24, "a handle of the emulator's: {ids:?}");
    assert!(!records[1].contains(&ids[1]));
    let path = "/consumer/api/v1/chatRoom/raw/messages";
    let page = f.get(path, "");
    // Each record's bytes, as given.
    assert_eq!(
        page.text,
        format!(
            r#"{{"limit":50,"skip":0,"totalRecords":3,"count":3,"messages":[{}]}}"#,
            records.join(",")
        )
    );
    let files = f.get(path, "&onlyAttachments=true").json();
    assert_eq!(files["messages"][0]["message"], "no id");

    // A bad record adds none.
    let bad = f.admin(
        "POST",
        "/messages",
        Some(&json!({"roomId": "raw", "records": [records[0], "[1]"]}).to_string()),
    );
    assert_eq!(bad.status, 400);
    assert!(
        bad.text.contains("records[1] is not a JSON object"),
        "{}",
        bad.text
    );

    // Pretty-printed pages: only whitespace outside strings differs; a capped limit.
    let shape = f.admin(
        "PUT",
        "/listing",
        Some(r#"{"roomId": "raw", "pretty": true, "limitCap": 2}"#),
    );
    assert_eq!(
        shape.json(),
        json!({"roomId": "raw", "channelId": null, "pretty": true, "limitCap": 2})
    );
    let pretty = f.get(path, "&limit=50");
    assert!(
        pretty
            .text
            .starts_with("{\n  \"limit\": 2,\n  \"skip\": 0,"),
        "{}",
        pretty.text
    );
    assert!(pretty
        .text
        .contains("\"big\": 123456789012345678901234567890,"));
    assert!(pretty.text.contains(r#""esc": "\u00e9\/""#));
    assert_eq!(pretty.json()["count"], 2);
    assert_eq!(pretty.json()["messages"][1]["message"], "no id");
    f.admin(
        "PUT",
        "/listing",
        Some(r#"{"roomId": "raw", "pretty": false, "limitCap": null}"#),
    );
    assert_eq!(f.get(path, "").json()["count"], 3);

    // Deleted by id and by handle; ids not held are ignored.
    let deleted = f.admin(
        "DELETE",
        "/messages",
        Some(&json!({"roomId": "raw", "ids": [&ids[1], "m3", "nope"]}).to_string()),
    );
    assert_eq!(deleted.json(), json!({"deleted": 2, "total": 1}));
    let page = f.get(path, "").json();
    assert_eq!(page["totalRecords"], 1);
    assert_eq!(page["messages"][0]["_id"], "m1");
    assert_eq!(
        f.get(path, "&onlyAttachments=true").json()["totalRecords"],
        0
    );
    assert_eq!(
        f.admin(
            "DELETE",
            "/messages",
            Some(r#"{"roomId": "nope", "ids": []}"#)
        )
        .status,
        400
    );
    assert_eq!(
        f.admin("GET", "/listing", None).header("allow"),
        Some("PUT")
    );

    // A create that takes effect, its answer cut off.
    fault(
        &f,
        json!({"method": "POST", "path": CREATE, "action": {"kind": "truncate_after_effect"}}),
    );
    let body = cut_short(
        agent()
            .post(&f.api(CREATE, ""))
            .header("Content-Type", "application/json")
            .send(r#"{"username": "cut", "uniqueUserIdentifier": "u-cut"}"#)
            .unwrap(),
    );
    assert!(body.starts_with(br#"{"accessToken":"#), "{body:?}");
    let users = f.admin("GET", "/users", None).json();
    assert_eq!(users["users"][0]["uniqueUserIdentifier"], "u-cut");
}

/// A release (here `clear_faults`, as a test's teardown calls it) that comes after a
/// `hold` fault was taken but before its answer is held still lets that answer go: it
/// is not held until the next release, which may never come. The window is the
/// request's handling (its gzipped page of users); each round releases as soon as the
/// request is journaled (its fault taken in the same step), held or not yet.
#[test]
fn a_release_between_a_holds_fault_and_its_hold_is_not_missed() {
    use std::io::Write;
    let emu = roomchat_emulator::Emulator::start(EmulatorConfig {
        rate_limit: RateLimit {
            requests: 1_000_000,
            window: Duration::from_secs(1),
        },
        seed_users: 100,
        gzip_min_bytes: Some(1),
        ..EmulatorConfig::default()
    })
    .unwrap();
    let address = emu.base_url().trim_start_matches("http://").to_owned();
    let request = format!(
        "GET {USERS}?auth={}&limit=100 HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\nConnection: close\r\n\r\n",
        emu.private_key()
    );
    for round in 0..200 {
        emu.clear_journal();
        emu.add_fault(roomchat_emulator::Fault {
            method: Some("GET".into()),
            path: USERS.into(),
            times: 1,
            action: roomchat_emulator::FaultAction::Hold,
        });
        let mut stream = std::net::TcpStream::connect(&address).unwrap();
        stream.write_all(request.as_bytes()).unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        while emu.journal().is_empty() {
            assert!(Instant::now() < deadline, "round {round}: not journaled");
            std::thread::yield_now();
        }
        emu.clear_faults();
        // Answered once let go; a missed release would hold it until this deadline.
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        let mut answer = Vec::new();
        let read = stream.read_to_end(&mut answer);
        assert!(
            read.is_ok() && answer.starts_with(b"HTTP/1.1 200"),
            "round {round}: {read:?}, {} held",
            emu.held()
        );
    }
}
