//! Regression tests of what the fuzz targets under `fuzz/` found (see
//! `scripts/fuzz.sh`): each reproduces the failing input, in the pure layer
//! and, where a client could meet it, over real HTTP against the emulator.

mod common;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use common::*;
use roomchat::wire::{self, Operation, WireResponse};
use roomchat::{Client, ErrorKind, ListUsers};

/// The longest wait the wire layer reads from a header (10^9 s).
const LONGEST_WAIT: Duration = Duration::from_secs(1_000_000_000);

fn answer(status: u16, headers: &[(&str, &str)], body: &str) -> WireResponse {
    WireResponse::new(
        status,
        headers
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect(),
        body.as_bytes().to_vec(),
    )
}

/// decode_responses, `crash-5d1fe1fd…` (`200` and the body `{}`): deactivate
/// decodes it as `success: false`, whose JSON, decoded again, was an error
/// with an empty message. A `"success": false` without text now says what it is.
#[test]
fn success_false_without_a_text_is_an_error_with_a_message() {
    let empty = wire::decode_deactivate_user(&answer(200, &[], "\n\n{\n}")).unwrap();
    assert!(!empty.success);
    let again = serde_json::to_string(&empty).unwrap();
    assert!(again.starts_with(r#"{"success":false"#), "{again}");
    for op in Operation::ALL {
        let e = op.decode(&answer(200, &[], &again)).unwrap_err();
        assert_eq!(
            (e.kind(), e.status()),
            (ErrorKind::InvalidRequest, Some(200))
        );
        assert_eq!(
            e.message(),
            "the service answered HTTP 200 with \"success\": false",
            "{op}"
        );
    }
    // With a text, the text is the message, as before.
    let e = wire::decode_create_user(&answer(200, &[], r#"{"success":false,"error":"no"}"#))
        .unwrap_err();
    assert_eq!(e.message(), "no");
}

/// retry_after, `crash-7c6f6fc6…`: an HTTP date in the year 9753 gave a wait
/// of 8,593,013,248 s; whole seconds up to `u64::MAX` were taken as they came,
/// and a client adding such a wait to `Instant::now()` panics.
#[test]
fn retry_after_waits_are_capped() {
    let now = UNIX_EPOCH + Duration::from_secs(1_735_689_600);
    for value in [
        "Thu, 13 Dec 9753 07:00:15 GMT",
        "18446744073709551615",
        "1e300",
        "9999999999",
    ] {
        assert_eq!(
            wire::parse_retry_after(value, now),
            Some(LONGEST_WAIT),
            "{value}"
        );
    }
    // A year past IMF-fixdate's four digits overflowed the day count: not a date.
    assert_eq!(
        wire::parse_retry_after("Thu, 13 Dec 99999999999999999 07:00:15 GMT", now),
        None
    );
    assert_eq!(
        wire::parse_retry_after("Thu, 13 Dec 10000 07:00:15 GMT", now),
        None
    );
    assert_eq!(
        wire::parse_retry_after("120", now),
        Some(Duration::from_secs(120))
    );
}

/// `X-RateLimit-Reset: 1e300` (or `inf`) made `rate_limit_headers` panic
/// (`Duration::from_secs_f64` overflows): found while writing the
/// retry_after target; the target checks it on every run.
#[test]
fn rate_limit_reset_beyond_any_duration_is_capped() {
    let now = SystemTime::now();
    for reset in ["1e300", "inf", "18446744073709551616", "1e19"] {
        let headers =
            wire::rate_limit_headers(&answer(200, &[("X-RateLimit-Reset", reset)], "{}"), now)
                .unwrap();
        assert_eq!(headers.reset, Some(LONGEST_WAIT), "{reset}");
    }
}

/// A client meeting those headers over HTTP: a 200 with
/// `X-RateLimit-Remaining: 0` and `X-RateLimit-Reset: 1e300` panicked the
/// calling thread; a 429 with `Retry-After: 18446744073709551615` panicked in
/// the rate budget (`Instant + Duration` overflow).
#[test]
fn a_client_survives_absurd_rate_limit_headers() {
    let emu = emulator("absurd_reset");
    let absurd = client(&emu);
    let page = r#"{"total":0,"limit":50,"skip":0,"data":[]}"#;
    emu.add_fault(once(
        "GET",
        USERS,
        respond(
            200,
            page,
            &[
                ("X-RateLimit-Remaining", "0"),
                ("X-RateLimit-Reset", "1e300"),
            ],
        ),
    ));
    assert_eq!(absurd.list_users(&ListUsers::default()).unwrap().total, 0);
    // A reset that far off is implausible and counts as absent (hardening round 2,
    // defect 11): the key is not held, and a fail-fast call goes through.
    assert_eq!(absurd.rate_limit_state().blocked_for, None);
    builder(&emu)
        .rate_limit(roomchat::RateLimitConfig::new(100_000, Duration::from_secs(60)).fail_fast())
        .build()
        .unwrap()
        .list_users(&ListUsers::default())
        .unwrap();

    let emu = emulator("absurd_retry_after");
    let absurd = client(&emu);
    emu.add_fault(once(
        "GET",
        USERS,
        respond(429, "", &[("Retry-After", "18446744073709551615")]),
    ));
    let e = absurd.list_users(&ListUsers::default()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::RateLimited);
    assert_eq!(e.retry_after(), Some(LONGEST_WAIT));
    assert_eq!(arrivals(&emu, "GET", USERS), 1);
}

/// client_builder, `crash-6c27cf8d…`: a URL holding the key (here inside the
/// host) was quoted whole in the configuration error.
#[test]
fn builder_errors_never_quote_the_key_in_a_url() {
    let key = secret_key("url_in_error");
    for url in [
        format!("http://l{key}ocalhost"),
        format!("https://api.example.com/x?auth={key}"),
        format!("https://api.example.com/{key} "),
        format!("http://{key}@example.com"),
        format!(
            "https://api.example.com/x?auth={}",
            wire::encode_query_component(&key)
        ),
    ] {
        let e = Client::builder(key.as_str())
            .base_url(url.as_str())
            .build()
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Configuration, "{url}");
        assert_no_secret(&e, &key);
        // The chat URL may be plain http to any host (it only builds links),
        // so the first URL is a valid one there; the others are refused.
        match Client::builder(key.as_str())
            .base_url("https://api.example.com")
            .chat_url(url.as_str())
            .build()
        {
            Ok(_) => assert!(url.starts_with("http://l"), "{url} accepted"),
            Err(e) => assert_no_secret(&e, &key),
        }
    }
}

/// Found while writing the client_builder target's oracle (the host an
/// `http::Uri` gives, which is where the request goes): `localhost:80@` before
/// the real host passed the loopback check, so the key went over plain http
/// to any host.
#[test]
fn user_info_cannot_pass_a_remote_host_off_as_loopback() {
    // The builder's error for a base URL it refuses.
    let refused = |url: &str| {
        Client::builder("sk_user_info")
            .base_url(url)
            .build()
            .map(|_| ())
            .unwrap_err()
    };
    for url in [
        "http://localhost:80@example.com",
        "http://127.0.0.1@example.com/api",
        "http://[::1]@example.com",
        "https://user:pass@api.example.com",
    ] {
        let e = refused(url);
        assert_eq!(e.kind(), ErrorKind::Configuration, "{url}");
        assert!(e.message().contains("user information"), "{e}");
        assert!(
            !e.message().contains("pass@"),
            "a password in the URL is shown: {e}"
        );
    }
    let e = refused("http://deploy:hunter2-s3cret@127.0.0.1:1");
    assert!(!e.to_string().contains("hunter2"), "{e}");
    assert!(e.message().contains("http://REDACTED@127.0.0.1:1"), "{e}");
    // Refused as not a valid URL (a `#` or `?` in the password, a blank, a query): no
    // parser can say where its user information ends, and none of it is shown.
    for url in [
        "https://deploy:hunter2#x@api.example.com",
        "https://deploy:hunter2?x@api.example.com",
        "https://deploy:hunter2@api.example.com ",
        "https://deploy:hunter2@api.example.com?pass=a@b",
    ] {
        let e = refused(url);
        assert_eq!(e.kind(), ErrorKind::Configuration, "{url}");
        assert!(!format!("{e} {e:?}").contains("hunter2"), "{url}: {e}");
        assert!(e.message().contains("https://REDACTED@"), "{e}");
    }
    // Loopback and https stay accepted; an `@` in the path is no user information.
    for url in [
        "http://localhost:8080",
        "http://127.0.0.1/api/@v2",
        "https://api.example.com/@team",
    ] {
        assert!(
            Client::builder("sk_user_info")
                .base_url(url)
                .build()
                .is_ok(),
            "{url}"
        );
    }
}

/// fuzz/redis_url: a `pass=` after a `#` (a fragment, though it looks like a
/// query parameter) was shown as written by the budget's `Debug`.
#[cfg(feature = "redis")]
#[test]
fn a_password_in_a_redis_urls_fragment_is_not_shown() {
    for url in [
        ":///a?b#c?pass=FuzzRedisPw9&",
        "redis://h/0#pass=FuzzRedisPw9",
        "rediss+cluster:///??pass=FuzzRedisPw9&",
    ] {
        let budget = roomchat::RedisBudget::new(url);
        assert!(
            !format!("{budget:?}").contains("FuzzRedisPw9"),
            "{budget:?}"
        );
        assert!(!budget.redacted_url().contains("FuzzRedisPw9"));
    }
}

/// fuzz/redis_url, `crash-…` (`rediss+cluster://h/x?=y?pass=…`): a `pass=`
/// after a second `?` was shown whole by the budget's `Debug`. And (issue 37,
/// item 8) a password holding `?`, `#` or `/` written as is was shown, in the
/// budget's `Debug`, its `redacted_url` and the configuration error, for each
/// form of URL: the user information ends at the URL's last `@`.
#[cfg(feature = "redis")]
#[test]
fn a_redis_password_with_a_question_mark_hash_or_slash_is_not_shown() {
    const PASSWORD: &str = "FuzzRedisPw9";
    let built = |url: &str| {
        let budget = roomchat::RedisBudget::new(url);
        let shown = format!("{budget:?}");
        assert!(!shown.contains(PASSWORD), "{shown}");
        assert!(!budget.redacted_url().contains(PASSWORD), "{url}");
        Client::builder("sk_redis_secret")
            .base_url("http://127.0.0.1:9")
            .redis_budget(budget)
            .build()
    };
    assert!(built("rediss+cluster://h/x?=y?pass=FuzzRedisPw9").is_err());
    for password in ["S3cr?t9", "S3cr#t9", "S3/cr/t9", "a?b#c/d@e"] {
        let password = format!("{password}{PASSWORD}");
        // Valid URLs: built (the password reaches Redis percent-encoded).
        for url in [
            format!("redis://:{password}@127.0.0.1:6390/0"),
            format!("redis+cluster://user:{password}@127.0.0.1:7000,127.0.0.1:7001"),
            format!("redis+sentinel://:{password}@127.0.0.1:26379/mymaster"),
        ] {
            assert!(
                built(&url).is_ok(),
                "{}",
                roomchat::RedisBudget::new(url).redacted_url()
            );
        }
        // Invalid ones: refused, without the password.
        for url in [
            format!("redis://:{password}@127.0.0.1:notaport/0"),
            format!("redis+cluster://:{password}@h:1/2"),
            format!("redis+sentinel://:{password}@s1?sentinel_password={password}"),
        ] {
            let e = built(&url).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Configuration, "{e}");
            assert!(!e.to_string().contains(PASSWORD), "{e}");
            assert!(!format!("{e:?}").contains(PASSWORD), "{e:?}");
        }
    }
}
