//! Per-call options (`Client::with_options`), the answer beside the result
//! (`Client::with_response`), the `User-Agent` and `ROOMCHAT_LOG`, against the
//! emulator's journal and connection counts.

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use common::*;
use roomchat::{
    CallOptions, ConversationMessages, CreateUser, DeactivateUser, ErrorKind, ListUsers,
    RawRequest, ReactivateUser, WithResponse, MAX_DURATION,
};
use roomchat_emulator::FaultAction;

fn last_request_id(emu: &roomchat_emulator::Emulator) -> String {
    format!(
        "req_{}",
        emu.journal().last().expect("a request arrived").seq
    )
}

// ---- with_options ------------------------------------------------------------------

#[test]
fn a_view_counts_in_the_parents_budget_and_shares_its_connection() {
    let emu = emulator("view_shares");
    let client = client(&emu);
    let view = client
        .with_options(
            CallOptions::new()
                .timeout(Duration::from_secs(5))
                .max_retries(0),
        )
        .unwrap();
    client.list_users(&ListUsers::default()).unwrap();
    view.list_users(&ListUsers::default()).unwrap();
    view.list_chat_rooms().unwrap();
    assert_eq!(
        client.rate_limit_state().used,
        3,
        "the parent sees its view's calls"
    );
    assert_eq!(view.rate_limit_state().used, 3);
    assert_eq!(
        emu.connection_stats().accepted,
        1,
        "the view's calls (with their own timeout) went over the parent's kept-alive connection"
    );
    assert_eq!(arrivals(&emu, "GET", USERS), 2);
}

#[test]
fn a_view_without_retries_makes_one_attempt_while_the_parent_retries() {
    let emu = emulator("view_retries");
    let client = client(&emu);
    let once_only = client
        .with_options(CallOptions::new().max_retries(0))
        .unwrap();
    emu.add_fault(roomchat_emulator::Fault {
        times: 3,
        ..once("GET", USERS, respond(503, "", &[]))
    });
    let e = once_only.list_users(&ListUsers::default()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ServerError);
    assert_eq!(arrivals(&emu, "GET", USERS), 1, "one attempt, no retry");
    // The parent keeps its 2 retries: 503, 503, then the answer.
    client.list_users(&ListUsers::default()).unwrap();
    assert_eq!(arrivals(&emu, "GET", USERS), 4);

    // And a view may allow more than its parent.
    let strict = builder(&emu).max_retries(0).build().unwrap();
    let lenient = strict
        .with_options(CallOptions::new().max_retries(1))
        .unwrap();
    emu.add_fault(once("GET", USERS, respond(503, "", &[])));
    lenient.list_users(&ListUsers::default()).unwrap();
    assert_eq!(arrivals(&emu, "GET", USERS), 6);
}

#[test]
fn a_views_timeout_holds_against_a_slow_answer_and_leaves_the_parents_alone() {
    let emu = emulator("view_timeout");
    let client = client(&emu); // 10 s
    let quick = client
        .with_options(
            CallOptions::new()
                .timeout(Duration::from_millis(300))
                .max_retries(0),
        )
        .unwrap();
    emu.add_fault(once(
        "GET",
        USERS,
        FaultAction::Delay(Duration::from_millis(1500)),
    ));
    let started = Instant::now();
    let e = quick.list_users(&ListUsers::default()).unwrap_err();
    let took = started.elapsed();
    assert_eq!(e.kind(), ErrorKind::Timeout, "{e}");
    assert!(
        took >= Duration::from_millis(280) && took < Duration::from_millis(1200),
        "the view's 300 ms timeout, not the parent's 10 s: {took:?}"
    );
    // The same slow answer is within the parent's own timeout.
    emu.add_fault(once(
        "GET",
        USERS,
        FaultAction::Delay(Duration::from_millis(600)),
    ));
    client.list_users(&ListUsers::default()).unwrap();
}

#[test]
fn views_layer_and_carry_their_options_into_iterators_and_cancel_handles() {
    let emu = emulator("view_layers");
    emu.seed_users(3);
    let client = client(&emu);
    let first = client
        .with_options(CallOptions::new().timeout(Duration::from_secs(3)))
        .unwrap();
    let second = first
        .with_options(CallOptions::new().max_retries(0))
        .unwrap();
    assert_eq!(client.call_options(), CallOptions::new());
    assert_eq!(
        second.call_options(),
        CallOptions::new()
            .timeout(Duration::from_secs(3))
            .max_retries(0)
    );
    let cancellable = second.with_cancel(roomchat::CancelToken::new());
    assert_eq!(cancellable.call_options(), second.call_options());

    emu.add_fault(once("GET", USERS, respond(503, "", &[])));
    let mut users = second.users();
    assert_eq!(
        users.next().unwrap().unwrap_err().kind(),
        ErrorKind::ServerError,
        "the iterator made one attempt, as its view says"
    );
    assert_eq!(arrivals(&emu, "GET", USERS), 1);
}

#[test]
fn bad_option_values_are_configuration_errors() {
    let emu = emulator("view_bad");
    let client = client(&emu);
    let too_long = MAX_DURATION + Duration::from_secs(1);
    for (options, names) in [
        (CallOptions::new().timeout(Duration::ZERO), "timeout"),
        (
            CallOptions::new().connect_timeout(Duration::ZERO),
            "connect timeout",
        ),
        (CallOptions::new().timeout(too_long), "timeout"),
        (
            CallOptions::new().connect_timeout(too_long),
            "connect timeout",
        ),
        (CallOptions::new().max_retry_wait(too_long), "retry wait"),
    ] {
        let e = client.with_options(options).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Configuration, "{options:?}");
        assert!(e.message().contains(names), "{e}");
    }
    assert!(emu.journal().is_empty(), "nothing was sent");
}

// ---- with_response ----------------------------------------------------------------------

#[test]
fn the_answer_comes_beside_the_result_with_its_request_id_and_date() {
    let emu = emulator("meta_basic");
    emu.seed_users(2);
    let client = client(&emu);
    let WithResponse { value: page, meta } = client
        .with_response(|c| c.list_users(&ListUsers::default()))
        .unwrap();
    assert_eq!(page.total, 2);
    assert_eq!((meta.status, meta.attempts), (200, 1));
    assert_eq!(meta.request_id(), Some(last_request_id(&emu).as_str()));
    let date = meta.header("Date").expect("a Date header");
    assert!(date.ends_with(" GMT"), "{date}");
    assert!(meta
        .header("content-type")
        .is_some_and(|t| t.starts_with("application/json")));
    assert!(
        meta.headers
            .iter()
            .all(|(name, _)| *name == name.to_ascii_lowercase()),
        "{:?}",
        meta.headers
    );
}

#[test]
fn the_answer_carries_the_rate_limit_headers_and_the_attempts_after_a_retry() {
    let emu = emulator_with("meta_headers", |c| c.rate_limit_headers = true);
    let client = client(&emu);
    emu.add_fault(once("GET", USERS, respond(503, "", &[])));
    let (_, meta) = client
        .with_response(|c| c.list_users(&ListUsers::default()))
        .unwrap()
        .into_parts();
    assert_eq!(meta.attempts, 2);
    assert_eq!(meta.request_id(), Some(last_request_id(&emu).as_str()));
    assert_eq!(emu.journal().len(), 2);
    assert_eq!(meta.header("x-ratelimit-limit"), Some("600"));
    assert_eq!(
        meta.header("X-RateLimit-Remaining"),
        Some("599"),
        "the faulted 503 never reached the emulator's limiter"
    );
}

#[test]
fn every_endpoint_gives_its_answer() {
    let emu = emulator("meta_every");
    emu.create_room(serde_json::json!({"roomId": "bbNiVFoXm", "name": "General"}));
    let conversation = emu.add_conversation(
        "bbNiVFoXm",
        vec![serde_json::json!({"messages": "hi", "user": {"username": "jon"}})],
    );
    let client = client(&emu);
    let check = |meta: &roomchat::ResponseMeta| {
        assert_eq!(meta.status, 200);
        assert_eq!(meta.request_id(), Some(last_request_id(&emu).as_str()));
    };

    let created = client
        .with_response(|c| {
            c.create_user(&CreateUser::regular("jon").field("uniqueUserIdentifier", "crm-1"))
        })
        .unwrap();
    check(&created.meta);
    assert_eq!(created.value.username, "jon");

    let names = client
        .with_response(|c| c.list_users_with(&ListUsers::default(), |page| page.data.len()))
        .unwrap();
    check(&names.meta);
    assert_eq!(names.value, 1);

    let messages = client
        .with_response(|c| {
            c.conversation_messages(&ConversationMessages::new("bbNiVFoXm", &conversation))
        })
        .unwrap();
    check(&messages.meta);
    assert_eq!(messages.value[0].text.as_deref(), Some("hi"));

    let rooms = client.with_response(|c| c.list_chat_rooms()).unwrap();
    check(&rooms.meta);

    let raw = client
        .with_response(|c| c.raw_request(&RawRequest::new("GET", "/consumer/api/v1/chatrooms")))
        .unwrap();
    check(&raw.meta);
    assert_eq!(raw.value.status, 200);

    let gone = client
        .with_response(|c| c.deactivate_user(&DeactivateUser::UniqueUserIdentifier("crm-1".into())))
        .unwrap();
    check(&gone.meta);

    let back = client
        .with_response(|c| c.reactivate_user(&ReactivateUser::UniqueUserIdentifier("crm-1".into())))
        .unwrap();
    check(&back.meta);
    let token = client
        .with_response(|c| c.validate_access_token(&created.value.access_token))
        .unwrap();
    check(&token.meta);
    assert_eq!(token.value.username.as_deref(), Some("jon"));
    let invalidated = client
        .with_response(|c| c.invalidate_access_token(&created.value.access_token))
        .unwrap();
    check(&invalidated.meta);

    // Through a view with options too, and the last of several requests.
    let view = client
        .with_options(CallOptions::new().max_retries(0))
        .unwrap();
    let both = view
        .with_response(|c| {
            c.list_chat_rooms()?;
            c.list_users(&ListUsers::default())
        })
        .unwrap();
    check(&both.meta);
    assert_eq!(emu.journal().last().unwrap().path, USERS);
}

#[test]
fn a_failed_call_or_a_call_without_a_request_gives_an_error() {
    let emu = emulator("meta_errors");
    let client = client(&emu);
    let e = client
        .with_response(|c| c.deactivate_user(&DeactivateUser::UserId("0".repeat(24))))
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::UserNotFound);
    assert_eq!(e.status(), Some(400));

    let e = client
        .with_response(|c| c.sign_in_url("room", "token"))
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Validation, "{e}");
}

// ---- User-Agent ---------------------------------------------------------------------------

#[test]
fn the_user_agent_names_the_package_the_core_the_platform_and_the_app() {
    let emu = emulator("user_agent");
    let core = roomchat::VERSION;
    let platform = format!("{} {}", std::env::consts::OS, std::env::consts::ARCH);
    let python = builder(&emu)
        .sdk_identity("roomchat-python/9.8.7", Some("CPython 3.11".into()))
        .app_name("my-backend/1.4")
        .build()
        .unwrap();
    python.list_chat_rooms().unwrap();
    assert_eq!(
        emu.journal().pop().unwrap().user_agent.unwrap(),
        format!("roomchat-python/9.8.7 (core {core}; CPython 3.11; {platform}) my-backend/1.4")
    );
    let c = builder(&emu)
        .sdk_identity("roomchat-c/1.0.0", None)
        .build()
        .unwrap();
    c.list_chat_rooms().unwrap();
    assert_eq!(
        emu.journal().pop().unwrap().user_agent.unwrap(),
        format!("roomchat-c/1.0.0 (core {core}; {platform})")
    );

    for (product, runtime) in [
        ("roomchat python/1.0", None),
        ("roomchat-python", None),
        ("roomchat-python/", None),
        ("roomchat-python/1.0", Some("CPython (3.11)")),
        ("roomchat-python/1.0", Some("CPython\n3.11")),
        ("roomchat-python/1.0", Some(" ")),
    ] {
        let e = builder(&emu)
            .sdk_identity(product, runtime.map(str::to_owned))
            .build()
            .unwrap_err();
        assert_eq!(
            e.kind(),
            ErrorKind::Configuration,
            "{product:?} {runtime:?}"
        );
    }
}

// ---- ROOMCHAT_LOG ---------------------------------------------------------------------------

/// Set in the child process the logging tests run.
const CHILD: &str = "ROOMCHAT_TEST_LOG_CHILD";

/// In a child process with `ROOMCHAT_LOG` set (the variable is process-wide):
/// one call answered after a retry, by a client without an observer, and one
/// by a client with its own.
#[test]
fn log_child() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let emu = emulator("log_child");
    let client = client(&emu);
    emu.add_fault(once("GET", USERS, respond(503, "", &[])));
    client.list_users(&ListUsers::page(5, 0)).unwrap();
    struct Quiet;
    impl roomchat::Observer for Quiet {
        fn enabled(&self, _: roomchat::Level) -> bool {
            false
        }
        fn event(&self, _: &roomchat::Event<'_>) {}
    }
    let observed = builder(&emu)
        .observer(std::sync::Arc::new(Quiet))
        .build()
        .unwrap();
    observed.list_chat_rooms().unwrap();
}

fn run_log_child(setting: &str) -> String {
    let output = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "log_child", "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .env("ROOMCHAT_LOG", setting)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stderr).unwrap()
}

#[test]
fn roomchat_log_prints_to_stderr_without_the_key() {
    let key = secret_key("log_child");
    let debug = run_log_child("debug");
    let lines: Vec<&str> = debug
        .lines()
        .filter(|l| l.starts_with("[roomchat]"))
        .collect();
    assert_eq!(lines.len(), 3, "{debug}");
    assert!(lines[0].starts_with("[roomchat] DEBUG: GET /consumer/api/v2/users?auth=REDACTED&limit=5&skip=0 -> 503 (attempt 1, "), "{debug}");
    assert!(lines[1].starts_with("[roomchat] WARNING: retrying GET /consumer/api/v2/users?auth=REDACTED&limit=5&skip=0 in "), "{debug}");
    assert!(lines[2].starts_with("[roomchat] DEBUG: GET /consumer/api/v2/users?auth=REDACTED&limit=5&skip=0 -> 200 (attempt 2, "), "{debug}");
    assert!(
        !debug.contains("chatrooms"),
        "a client with its own observer prints nothing: {debug}"
    );
    assert!(!debug.contains(&key), "{debug}");

    for setting in ["warn", "INFO"] {
        let warn = run_log_child(setting);
        let lines: Vec<&str> = warn
            .lines()
            .filter(|l| l.starts_with("[roomchat]"))
            .collect();
        assert_eq!(lines.len(), 1, "{setting}: {warn}");
        assert!(
            lines[0].starts_with("[roomchat] WARNING: retrying GET"),
            "{warn}"
        );
    }
    for setting in ["", "off", "verbose"] {
        let quiet = run_log_child(setting);
        assert!(!quiet.contains("[roomchat]"), "{setting:?}: {quiet}");
    }
}
