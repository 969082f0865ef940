//! Every error kind, produced by the emulator's real behaviour or its faults,
//! and the key absent from every rendering of every one.

mod common;

use std::time::Duration;

use common::*;
use roomchat::{
    Client, CreateUser, DeactivateUser, Error, ErrorKind, ListUsers, RateLimitConfig, RawAuth,
    RawRequest,
};
use roomchat_emulator::FaultAction;

fn check(error: &Error, kind: ErrorKind, key: &str) {
    assert_eq!(error.kind(), kind, "{error}");
    assert_no_secret(error, key);
}

#[test]
fn every_error_kind_and_no_key_in_any() {
    let emu = emulator("kinds");
    let key = emu.private_key();
    let client = builder(&emu).max_retries(0).build().unwrap();
    let mut seen = Vec::new();
    let mut record = |e: Error, kind: ErrorKind| {
        check(&e, kind, &key);
        seen.push(kind);
        e
    };

    // missing auth: a request without any key
    let e = record(
        client
            .raw_request(&RawRequest::new("GET", USERS).auth(RawAuth::None))
            .unwrap_err(),
        ErrorKind::MissingAuth,
    );
    assert_eq!(e.status(), Some(401));

    // invalid auth: a truncated key, and a regenerated one
    let truncated = builder_with_key(&emu, &key[..key.len() - 1])
        .build()
        .unwrap();
    let e = record(
        truncated.list_users(&ListUsers::default()).unwrap_err(),
        ErrorKind::InvalidAuth,
    );
    assert_eq!(e.message(), "invalid auth token");

    // invalid request, with the message naming the parameter
    let e = client
        .raw_request(&RawRequest::new("GET", USERS).query("limit", "many"))
        .unwrap_err();
    let e = record(e, ErrorKind::InvalidRequest);
    assert!(e.message().contains("limit"), "{e}");
    assert_eq!(
        e.path(),
        Some("/consumer/api/v2/users?auth=REDACTED&limit=many")
    );

    // user not found
    record(
        client
            .deactivate_user(&DeactivateUser::UserId("ffffffffffffffffffffffff".into()))
            .unwrap_err(),
        ErrorKind::UserNotFound,
    );

    // not found: a room that does not exist (the service's 404 `invalid chatroom id`)
    let e = record(
        client.eject_all_users("noSuchRoom").unwrap_err(),
        ErrorKind::NotFound,
    );
    assert_eq!(
        (e.status(), e.message()),
        (Some(404), "invalid chatroom id")
    );

    // plan upgrade required
    emu.gate_endpoint("GET", "/consumer/api/v1/chatrooms");
    record(
        client.list_chat_rooms().unwrap_err(),
        ErrorKind::PlanUpgradeRequired,
    );
    emu.ungate_all();

    // server error with eventId
    emu.add_fault(once(
        "GET",
        USERS,
        respond(
            500,
            r#"{"message":"Internal server error occurred","eventId":"ev-123"}"#,
            &[],
        ),
    ));
    let e = record(
        client.list_users(&ListUsers::default()).unwrap_err(),
        ErrorKind::ServerError,
    );
    assert_eq!((e.event_id(), e.status()), (Some("ev-123"), Some(500)));

    // 502 with an HTML page from a proxy: still a server error, with a clear message
    emu.add_fault(once(
        "GET",
        USERS,
        FaultAction::Respond {
            status: 502,
            headers: vec![],
            body: "<html>Bad Gateway</html>".into(),
            content_type: Some("text/html".into()),
        },
    ));
    let e = record(
        client.list_users(&ListUsers::default()).unwrap_err(),
        ErrorKind::ServerError,
    );
    assert!(e.message().contains("502"));

    // other unexpected status
    record(
        client
            .raw_request(&RawRequest::new("DELETE", "/consumer/api/v1/chatrooms"))
            .unwrap_err(),
        ErrorKind::UnexpectedStatus,
    );

    // timeout
    emu.add_fault(once(
        "GET",
        USERS,
        FaultAction::Delay(Duration::from_millis(1500)),
    ));
    let hasty = builder(&emu)
        .max_retries(0)
        .timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    record(
        hasty.list_users(&ListUsers::default()).unwrap_err(),
        ErrorKind::Timeout,
    );

    // connection failure: nothing listens there
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead_url = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let nowhere = Client::builder(key.clone())
        .base_url(dead_url)
        .max_retries(0)
        .build()
        .unwrap();
    record(
        nowhere.list_users(&ListUsers::default()).unwrap_err(),
        ErrorKind::Connection,
    );

    // undecodable: HTML labelled JSON, and JSON cut off
    emu.add_fault(once("GET", USERS, FaultAction::NotJson));
    record(
        client.list_users(&ListUsers::default()).unwrap_err(),
        ErrorKind::Decode,
    );
    emu.add_fault(once("GET", USERS, FaultAction::TruncatedBody));
    record(
        client.list_users(&ListUsers::default()).unwrap_err(),
        ErrorKind::Decode,
    );

    // response too large
    emu.add_fault(once(
        "GET",
        USERS,
        FaultAction::LargeBody { bytes: 100_000 },
    ));
    let capped = builder(&emu)
        .max_retries(0)
        .max_response_bytes(10_000)
        .build()
        .unwrap();
    record(
        capped.list_users(&ListUsers::default()).unwrap_err(),
        ErrorKind::ResponseTooLarge,
    );

    // rate limited: a 429 whose Retry-After is beyond what the client may sleep
    // (last of the sending cases: the 429 holds every client of this key off for 120 s)
    emu.clear_journal();
    emu.add_fault(once(
        "GET",
        USERS,
        respond(429, "", &[("Retry-After", "120")]),
    ));
    let patient = builder(&emu)
        .max_retry_wait(Duration::from_secs(5))
        .build()
        .unwrap();
    let e = record(
        patient.list_users(&ListUsers::default()).unwrap_err(),
        ErrorKind::RateLimited,
    );
    assert_eq!(e.retry_after(), Some(Duration::from_secs(120)));
    assert_eq!(
        arrivals(&emu, "GET", USERS),
        1,
        "a 429 beyond the cap is returned, not slept"
    );

    let held = builder(&emu)
        .rate_limit(RateLimitConfig::new(100_000, Duration::from_secs(60)).fail_fast())
        .build()
        .unwrap();
    let e = record(
        held.list_users(&ListUsers::default()).unwrap_err(),
        ErrorKind::RateLimited,
    );
    assert!(
        e.retry_after().unwrap() > Duration::from_secs(100),
        "the 429 holds every client of the key off"
    );
    assert_eq!(arrivals(&emu, "GET", USERS), 1);
    assert!(client.rate_limit_state().blocked_for.is_some());

    // client-side validation: nothing is sent
    let before = emu.journal().len();
    record(
        client.list_users(&ListUsers::page(201, 0)).unwrap_err(),
        ErrorKind::Validation,
    );
    record(
        client.create_user(&CreateUser::regular("  ")).unwrap_err(),
        ErrorKind::Validation,
    );
    assert_eq!(emu.journal().len(), before);

    // configuration
    for bad in [String::new(), format!(" {key}"), format!("{key}\n")] {
        record(
            Client::builder(bad)
                .base_url(emu.base_url())
                .build()
                .unwrap_err(),
            ErrorKind::Configuration,
        );
    }
    record(
        Client::builder(key.clone())
            .base_url("http://chat.example.com")
            .build()
            .unwrap_err(),
        ErrorKind::Configuration,
    );
    record(
        Client::builder(key.clone()).build().unwrap_err(),
        ErrorKind::Configuration,
    );
    record(
        Client::builder(key.clone())
            .base_url(emu.base_url())
            .rate_limit(RateLimitConfig::new(0, Duration::from_secs(1)))
            .build()
            .unwrap_err(),
        ErrorKind::Configuration,
    );

    // cancelled: a call waiting for a delayed answer, cancelled from another thread
    // (another key: this one is held off by the 429 above)
    let emu = emulator("kinds-cancelled");
    let client = builder(&emu).build().unwrap();
    emu.add_fault(once(
        "GET",
        USERS,
        FaultAction::Delay(Duration::from_secs(3)),
    ));
    let token = roomchat::CancelToken::new();
    let cancellable = client.with_cancel(token.clone());
    let canceller = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(100));
        token.cancel();
    });
    let e = cancellable.list_users(&ListUsers::default()).unwrap_err();
    check(&e, ErrorKind::Cancelled, &emu.private_key());
    seen.push(e.kind());
    canceller.join().unwrap();

    // budget unavailable: the shared budget's Redis cannot be reached, and the client fails closed
    #[cfg(feature = "redis")]
    {
        let closed_port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let e = builder(&emu)
            .redis_budget(
                roomchat::RedisBudget::new(format!("redis://:pw-secret@127.0.0.1:{closed_port}/0"))
                    .on_error(roomchat::OnRedisError::FailClosed),
            )
            .build()
            .unwrap()
            .list_users(&ListUsers::default())
            .unwrap_err();
        check(&e, ErrorKind::BudgetUnavailable, &emu.private_key());
        assert!(!e.to_string().contains("pw-secret"), "{e}");
        seen.push(e.kind());
    }

    // https:// to a server that answers in plain HTTP: the TLS handshake breaks,
    // and the call is not retried (the next attempt would meet the same server).
    {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("https://{}", listener.local_addr().unwrap());
        let accepted = std::thread::spawn(move || {
            listener.set_nonblocking(true).unwrap();
            let mut count = 0;
            let until = std::time::Instant::now() + Duration::from_millis(1500);
            while std::time::Instant::now() < until {
                if let Ok((mut stream, _)) = listener.accept() {
                    count += 1;
                    let _ = stream.set_nonblocking(false);
                    let _ = stream.read(&mut [0u8; 1024]);
                    let _ =
                        stream.write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            count
        });
        let e = builder(&emu)
            .base_url(url)
            .build()
            .unwrap()
            .list_users(&ListUsers::default())
            .unwrap_err();
        check(&e, ErrorKind::Tls, &emu.private_key());
        assert!(e.message().contains("TLS handshake"), "{e}");
        assert_eq!(accepted.join().unwrap(), 1, "a TLS failure was retried");
        seen.push(e.kind());
    }

    for kind in ErrorKind::ALL {
        if kind == ErrorKind::BudgetUnavailable && !cfg!(feature = "redis") {
            continue; // no shared budget without the feature
        }
        assert!(seen.contains(&kind), "{kind} was never produced");
    }
}

#[test]
fn plain_http_to_a_remote_host_only_when_allowed() {
    let key = secret_key("insecure");
    assert!(Client::builder(key.as_str())
        .base_url("http://localhost:1")
        .build()
        .is_ok());
    assert!(Client::builder(key.as_str())
        .base_url("http://[::1]:1")
        .build()
        .is_ok());
    assert!(Client::builder(key.as_str())
        .base_url("https://chat.example.com")
        .build()
        .is_ok());
    let e = Client::builder(key.as_str())
        .base_url("http://10.0.0.5")
        .build()
        .unwrap_err();
    assert_no_secret(&e, &key);
    // The refusal names Rust's setting, and no other language's.
    assert_eq!(e.kind(), ErrorKind::Configuration);
    assert_eq!(e.remedy(), Some(roomchat::Remedy::AllowInsecureHttp));
    for shown in [e.message().to_owned(), e.to_string()] {
        assert!(
            shown.ends_with("use https://, or allow_insecure_http(true) if you really mean it"),
            "{shown}"
        );
        for other in [
            "allow_insecure_http=True",
            "allowInsecureHttp",
            "roomchat_client_options_set_allow_insecure_http",
            "ClientOptions::",
        ] {
            assert!(!shown.contains(other), "{other} in {shown}");
        }
    }
    // A binding names its own, once, where Rust's was.
    let named = e.clone().name_remedy("allowInsecureHttp: true");
    assert_eq!(
        named.message(),
        e.message()
            .replace("allow_insecure_http(true)", "allowInsecureHttp: true")
    );
    assert_eq!(named.to_string().matches("allowInsecureHttp").count(), 1);
    // A host that spells the setting is still shown as it is.
    let odd = roomchat::check_base_url("http://allow_insecure_http(true)", false).unwrap_err();
    assert_eq!(
        odd.name_remedy("X").message(),
        "the base URL uses plain http:// to \"allow_insecure_http(true)\", which would send \
         the private key unencrypted; use https://, or X if you really mean it"
    );
    assert_eq!(
        Error::new(ErrorKind::Configuration, "allow_insecure_http(true)")
            .name_remedy("X")
            .message(),
        "allow_insecure_http(true)",
        "only an error that names a setting is changed"
    );
    assert!(Client::builder(key.as_str())
        .base_url("http://10.0.0.5")
        .allow_insecure_http(true)
        .build()
        .is_ok());
}

#[test]
fn debug_output_of_clients_hides_the_key() {
    let emu = emulator("debug");
    let key = emu.private_key();
    let builder = builder(&emu);
    let client = builder.clone().build().unwrap();
    for shown in [
        format!("{builder:?}"),
        format!("{client:?}"),
        format!("{:?}", client.users()),
    ] {
        assert!(!shown.contains(&key), "{shown}");
    }
}

#[test]
fn field_note_variants_decode_against_the_wire() {
    // The real service answers some conditions in other shapes than the contract;
    // served by the emulator's faults, each decodes to the same kind.
    let emu = emulator("variants");
    let client = builder(&emu).max_retries(0).build().unwrap();
    let cases = [
        (
            401,
            r#"{"error": "Invalid API Key"}"#,
            ErrorKind::InvalidAuth,
        ),
        (
            400,
            r#"{"error": "Please specify API Key"}"#,
            ErrorKind::MissingAuth,
        ),
        (
            400,
            r#"{"error": true, "errorMessage": "limit should be less than 200"}"#,
            ErrorKind::InvalidRequest,
        ),
        (
            400,
            r#"{"error": {"details": [{"message": "\"roomPassword\" is required"}]}}"#,
            ErrorKind::InvalidRequest,
        ),
        (
            400,
            r#"{"success": false, "message": "bad conversation"}"#,
            ErrorKind::InvalidRequest,
        ),
        (404, "{}", ErrorKind::NotFound),
        (404, "<html>Not Found</html>", ErrorKind::UnexpectedStatus),
    ];
    for (status, body, kind) in cases {
        emu.add_fault(once("GET", USERS, respond(status, body, &[])));
        let e = client.list_users(&ListUsers::default()).unwrap_err();
        assert_eq!(e.kind(), kind, "{status} {body}: {e}");
        assert_eq!(e.status(), Some(status));
    }
}

#[test]
fn the_services_detail_is_in_the_message_and_each_text_an_accessor() {
    // Issue 44, item 15: `{"message": "invalid request", "error": "<detail>"}` was
    // `invalid request`, the detail dropped.
    let emu = emulator("service_detail");
    let key = emu.private_key();
    let client = builder(&emu).max_retries(0).build().unwrap();
    let detail = r#""actionButtons[0].type" must be one of [link, action]"#;
    let body = serde_json::json!({"message": "invalid request", "error": detail, "success": false});
    emu.add_fault(once("GET", USERS, respond(400, &body.to_string(), &[])));
    let e = client.list_users(&ListUsers::default()).unwrap_err();
    check(&e, ErrorKind::InvalidRequest, &key);
    assert_eq!(e.message(), format!("invalid request: {detail}"));
    assert_eq!(e.service_message(), Some("invalid request"));
    assert_eq!(e.service_error(), Some(detail));
    assert_eq!(e.service_error_message(), None);
    assert!(
        e.to_string()
            .starts_with(&format!("invalid_request: invalid request: {detail} (GET ")),
        "{e}"
    );
    // A service that echoes the key in any of its texts: redacted in each.
    let body = serde_json::json!({
        "message": "invalid request",
        "error": format!("auth={key} is odd"),
        "errorMessage": format!("{key} is odd too"),
    });
    emu.add_fault(once("GET", USERS, respond(400, &body.to_string(), &[])));
    let e = client.list_users(&ListUsers::default()).unwrap_err();
    check(&e, ErrorKind::InvalidRequest, &key);
    assert_eq!(e.service_error(), Some("auth=REDACTED is odd"));
    assert_eq!(e.service_error_message(), Some("REDACTED is odd too"));
}

/// A service that quotes the call's access token back in its error (a 400's
/// `message`, `error` or `errorMessage`): the token is a secret of the call,
/// scrubbed from every text of the error as the keys are, whichever body
/// field carried it (`accessToken`, `userAccessToken`).
#[test]
fn an_access_token_quoted_back_by_the_service_is_scrubbed() {
    let emu = emulator("an_access_token_quoted_back_by_the_service_is_scrubbed");
    let client = client(&emu);
    let token = "tok-7c1b-quoted-back-secret";
    emu.add_fault(once(
        "POST",
        "/consumer/api/v1/user/accesstoken/invalidate",
        respond(
            400,
            &format!(
                r#"{{"message":"invalid accessToken {token}","error":"bad {token}","errorMessage":"{token}"}}"#
            ),
            &[],
        ),
    ));
    let e = client.invalidate_access_token(token).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidRequest, "{e}");
    for text in [
        e.to_string(),
        format!("{e:?}"),
        e.message().to_owned(),
        e.service_message().unwrap_or_default().to_owned(),
        e.service_error().unwrap_or_default().to_owned(),
        e.service_error_message().unwrap_or_default().to_owned(),
    ] {
        assert!(!text.contains(token), "the token in {text:?}");
    }
    assert!(
        e.service_message()
            .unwrap_or_default()
            .contains("invalid accessToken"),
        "the rest of the text stays: {e}"
    );
}
