//! The instrumentation API the languages build their OpenTelemetry on
//! (`roomchat::instrument`): what each hook is told, when and on which
//! thread, the headers each layer puts on the wire, and the credentials
//! shown nowhere. Without the feature `opentelemetry`: this is what Python,
//! Node and C get.

mod common;

use std::sync::{Arc, Mutex};
use std::thread::{self, ThreadId};
use std::time::{Duration, SystemTime};

use common::*;
use roomchat::instrument::{
    AttemptEnd, AttemptStart, CallEnd, CallEventKind, CallInfo, CallObserver, CallScope,
    Instrumentation, RequestHeaders, RetryReason, RESERVED_HEADERS,
};
use roomchat::{CreateUser, ErrorKind, ListUsers, RateLimitConfig, RawAuth, RawRequest};

/// One hook invocation, as the observer saw it.
#[derive(Debug, Clone)]
enum Hook {
    Start {
        thread: ThreadId,
        attempt: u32,
        resend_count: u32,
        started_at: SystemTime,
        events: Vec<(CallEventKind, Duration)>,
        propagate: bool,
    },
    End {
        thread: ThreadId,
        attempt: u32,
        started_at: SystemTime,
        ended_at: SystemTime,
        duration: Duration,
        status: Option<u16>,
        error_type: Option<&'static str>,
        error_text: Option<String>,
        retry: Option<(Option<RetryReason>, Duration, Option<u16>)>,
    },
    Call {
        thread: ThreadId,
        operation: &'static str,
        method: String,
        url_template: Option<String>,
        url_full: String,
        server: (String, u16),
        protocol_version: &'static str,
        started_at: SystemTime,
        ended_at: SystemTime,
        duration: Duration,
        attempts: u32,
        status: Option<u16>,
        error: Option<(ErrorKind, String)>,
        rate_limit_wait: Duration,
        retry_wait: Duration,
        events: Vec<(CallEventKind, Duration)>,
    },
}

/// Records every hook; adds `x-attempt: N` (and whatever `add` says) to each attempt.
struct Recorder {
    hooks: Arc<Mutex<Vec<Hook>>>,
    add: Vec<(&'static str, &'static str)>,
}

impl CallObserver for Recorder {
    fn attempt_start(
        &mut self,
        _call: &CallInfo<'_>,
        attempt: &AttemptStart<'_>,
        headers: &mut RequestHeaders,
    ) {
        headers
            .insert("x-attempt", &attempt.attempt.to_string())
            .unwrap();
        for (name, value) in &self.add {
            headers.insert(name, value).unwrap();
        }
        self.hooks.lock().unwrap().push(Hook::Start {
            thread: thread::current().id(),
            attempt: attempt.attempt,
            resend_count: attempt.resend_count,
            started_at: attempt.started_at,
            events: attempt.events.iter().map(|e| (e.kind, e.wait)).collect(),
            propagate: attempt.propagate_trace_context,
        });
    }

    fn attempt_end(&mut self, _call: &CallInfo<'_>, attempt: &AttemptEnd<'_>) {
        self.hooks.lock().unwrap().push(Hook::End {
            thread: thread::current().id(),
            attempt: attempt.attempt,
            started_at: attempt.started_at,
            ended_at: attempt.ended_at,
            duration: attempt.duration,
            status: attempt.status,
            error_type: attempt.error_type(),
            error_text: attempt.error.map(|e| e.to_string()),
            retry: attempt.retry().map(|r| (r.retry_reason, r.wait, r.status)),
        });
    }

    fn call_end(&mut self, call: &CallInfo<'_>, end: &CallEnd<'_>) {
        self.hooks.lock().unwrap().push(Hook::Call {
            thread: thread::current().id(),
            operation: call.operation,
            method: call.method.to_owned(),
            url_template: call.url_template.map(str::to_owned),
            url_full: call.url_full().to_owned(),
            server: (call.server_address.to_owned(), call.server_port),
            protocol_version: call.protocol_version,
            started_at: call.started_at,
            ended_at: end.ended_at,
            duration: end.duration,
            attempts: end.attempts,
            status: end.status,
            error: end.error.map(|e| (e.kind(), e.to_string())),
            rate_limit_wait: end.rate_limit_wait,
            retry_wait: end.retry_wait,
            events: end.events.iter().map(|e| (e.kind, e.wait)).collect(),
        });
    }
}

/// An instrumentation recording into `hooks`: one [`Recorder`] per call.
fn recording(
    hooks: &Arc<Mutex<Vec<Hook>>>,
    add: Vec<(&'static str, &'static str)>,
) -> Arc<dyn Instrumentation> {
    let hooks = hooks.clone();
    Arc::new(move |_call: &CallInfo<'_>| {
        Some(Box::new(Recorder {
            hooks: hooks.clone(),
            add: add.clone(),
        }) as Box<dyn CallObserver>)
    })
}

fn taken(hooks: &Arc<Mutex<Vec<Hook>>>) -> Vec<Hook> {
    std::mem::take(&mut *hooks.lock().unwrap())
}

/// The value of `name` in the journal entry `entry`'s headers.
fn sent<'a>(entry: &'a roomchat_emulator::JournalEntry, name: &str) -> Option<&'a str> {
    entry
        .headers
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

#[test]
fn two_hooks_per_attempt_on_the_calling_thread_with_core_timings_and_the_retry() {
    let emu = emulator("instrument_retry");
    emu.seed_users(3);
    let hooks = Arc::new(Mutex::new(Vec::new()));
    let client = builder(&emu)
        .instrumentation(recording(&hooks, vec![]))
        .build()
        .unwrap();
    emu.add_fault(once(
        "GET",
        USERS,
        respond(429, r#"{"message":"slow down"}"#, &[("Retry-After", "0")]),
    ));
    let before = SystemTime::now();
    let page = client.list_users(&ListUsers::page(5, 0)).unwrap();
    let after = SystemTime::now();
    assert_eq!(page.total, 3);
    let hooks = taken(&hooks);
    assert_eq!(hooks.len(), 5, "start, end, start, end, call: {hooks:#?}");
    let me = thread::current().id();
    let Hook::Start {
        thread,
        attempt: 1,
        resend_count: 0,
        started_at: start1,
        ref events,
        propagate: true,
    } = hooks[0]
    else {
        panic!("{:?}", hooks[0])
    };
    assert_eq!(thread, me);
    assert!(events.is_empty());
    let Hook::End {
        thread,
        attempt: 1,
        started_at,
        ended_at: end1,
        duration,
        status: Some(429),
        error_type: Some("429"),
        retry: Some((Some(RetryReason::RateLimited), wait, Some(429))),
        ..
    } = hooks[1]
    else {
        panic!("{:?}", hooks[1])
    };
    assert_eq!((thread, started_at), (me, start1));
    assert_eq!(wait, Duration::ZERO, "Retry-After: 0");
    assert_eq!(end1.duration_since(start1).unwrap(), duration);
    let Hook::Start {
        attempt: 2,
        resend_count: 1,
        started_at: start2,
        ..
    } = hooks[2]
    else {
        panic!("{:?}", hooks[2])
    };
    assert!(start2 >= end1);
    let Hook::End {
        attempt: 2,
        status: Some(200),
        error_type: None,
        retry: None,
        ended_at: end2,
        ..
    } = hooks[3]
    else {
        panic!("{:?}", hooks[3])
    };
    let Hook::Call {
        thread,
        operation,
        ref method,
        ref url_template,
        ref url_full,
        ref server,
        protocol_version,
        started_at: call_start,
        ended_at: call_end,
        duration: call_duration,
        attempts,
        status,
        ref error,
        retry_wait,
        ..
    } = hooks[4]
    else {
        panic!("{:?}", hooks[4])
    };
    assert_eq!(thread, me);
    assert_eq!((operation, method.as_str()), ("list_users", "GET"));
    assert_eq!(url_template.as_deref(), Some(USERS));
    let base = emu.base_url();
    assert_eq!(
        url_full,
        &format!("{base}/consumer/api/v2/users?auth=REDACTED&limit=5&skip=0")
    );
    let host = base.split("://").nth(1).unwrap();
    let (address, port) = host.rsplit_once(':').unwrap();
    assert_eq!(server, &(address.to_owned(), port.parse::<u16>().unwrap()));
    assert_eq!(protocol_version, "1.1");
    assert!(before <= call_start && call_start <= start1 && end2 <= call_end && call_end <= after);
    assert_eq!(call_end.duration_since(call_start).unwrap(), call_duration);
    assert_eq!((attempts, status, error), (2, Some(200), &None));
    assert_eq!(retry_wait, Duration::ZERO);
    // Each attempt carried its own number, from its own start hook.
    let journal = emu.journal();
    let attempts: Vec<_> = journal.iter().map(|e| sent(e, "x-attempt")).collect();
    assert_eq!(attempts, [Some("1"), Some("2")]);
}

#[test]
fn a_rate_limit_wait_rides_on_the_next_attempt_and_a_refused_call_ends_with_its_own() {
    let emu = emulator("instrument_wait");
    let hooks = Arc::new(Mutex::new(Vec::new()));
    // 1 start per ~315 ms: the second call waits.
    let client = builder(&emu)
        .rate_limit(RateLimitConfig::new(1, Duration::from_millis(300)))
        .instrumentation(recording(&hooks, vec![]))
        .build()
        .unwrap();
    client.list_chat_rooms().unwrap();
    client.list_chat_rooms().unwrap();
    let hooks_seen = taken(&hooks);
    assert_eq!(hooks_seen.len(), 6);
    let Hook::Start { ref events, .. } = hooks_seen[3] else {
        panic!("{:?}", hooks_seen[3])
    };
    assert_eq!(events.len(), 1, "{events:?}");
    let (kind, waited) = events[0];
    assert_eq!(kind, CallEventKind::RateLimitWait);
    assert!(
        waited > Duration::from_millis(100) && waited < Duration::from_secs(2),
        "{waited:?}"
    );
    let Hook::Call {
        rate_limit_wait,
        attempts: 1,
        ..
    } = hooks_seen[5]
    else {
        panic!("{:?}", hooks_seen[5])
    };
    assert_eq!(rate_limit_wait, waited);

    // A client of the same key that fails at once: no attempt, the call's end says why.
    let refusing = builder(&emu)
        .rate_limit(RateLimitConfig::new(1, Duration::from_millis(300)).fail_fast())
        .instrumentation(recording(&hooks, vec![]))
        .build()
        .unwrap();
    let e = refusing.list_chat_rooms().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::RateLimited);
    let hooks_seen = taken(&hooks);
    assert_eq!(hooks_seen.len(), 1, "{hooks_seen:?}");
    let Hook::Call {
        attempts: 0,
        status: None,
        error: Some((ErrorKind::RateLimited, _)),
        ref events,
        ..
    } = hooks_seen[0]
    else {
        panic!("{:?}", hooks_seen[0])
    };
    assert!(events.is_empty(), "refused at once: no wait");

    // A call cancelled while it waits: its end carries the wait it made.
    let token = roomchat::CancelToken::new();
    let canceller = {
        let token = token.clone();
        thread::spawn(move || {
            thread::sleep(Duration::from_millis(100));
            token.cancel();
        })
    };
    // (The key's budget takes the settings of its latest client: waiting again.)
    let client = builder(&emu)
        .rate_limit(RateLimitConfig::new(1, Duration::from_millis(300)))
        .instrumentation(recording(&hooks, vec![]))
        .build()
        .unwrap();
    let e = client.with_cancel(token).list_chat_rooms().unwrap_err();
    canceller.join().unwrap();
    assert_eq!(e.kind(), ErrorKind::Cancelled);
    let hooks_seen = taken(&hooks);
    let Some(Hook::Call {
        attempts: 0,
        ref events,
        rate_limit_wait,
        ..
    }) = hooks_seen.last()
    else {
        panic!("{hooks_seen:?}")
    };
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0].0, CallEventKind::RateLimitWait);
    assert!(events[0].1 >= Duration::from_millis(50), "{events:?}");
    assert_eq!(*rate_limit_wait, events[0].1);
}

#[test]
fn headers_of_client_scope_and_attempt_reach_the_wire_each_over_the_last() {
    let emu = emulator("instrument_headers");
    let hooks = Arc::new(Mutex::new(Vec::new()));
    let client = builder(&emu)
        .header("x-team", "payments")
        .header("x-layer", "client")
        .header("x-client-only", "1")
        .build()
        .unwrap();
    client.list_chat_rooms().unwrap();
    let scope = CallScope::new()
        .headers(
            RequestHeaders::new()
                .with("x-layer", "scope")
                .unwrap()
                .with("x-scope-only", "1")
                .unwrap(),
        )
        .instrumentation(recording(&hooks, vec![("x-layer", "attempt")]));
    scope.run(|| client.list_chat_rooms()).unwrap();
    let scope_without_hook =
        CallScope::new().headers(RequestHeaders::new().with("x-layer", "scope").unwrap());
    scope_without_hook.run(|| client.list_chat_rooms()).unwrap();
    // Outside the scope again: the client's alone.
    client.list_chat_rooms().unwrap();
    let journal = emu.journal();
    let layer: Vec<_> = journal.iter().map(|e| sent(e, "x-layer")).collect();
    assert_eq!(
        layer,
        [
            Some("client"),
            Some("attempt"),
            Some("scope"),
            Some("client")
        ]
    );
    assert!(journal
        .iter()
        .all(|e| sent(e, "x-team") == Some("payments")));
    let scope_only: Vec<_> = journal.iter().map(|e| sent(e, "x-scope-only")).collect();
    assert_eq!(scope_only, [None, Some("1"), None, None]);
    // One header of each name: the layers replace, never repeat.
    assert!(journal
        .iter()
        .all(|e| e.headers.iter().filter(|(n, _)| n == "x-layer").count() == 1));
    assert_eq!(
        taken(&hooks).len(),
        3,
        "the scope's instrumentation saw its one call"
    );
}

#[test]
fn trace_context_stays_home_when_propagation_is_off_whoever_added_it() {
    let emu = emulator("instrument_no_propagation");
    let hooks = Arc::new(Mutex::new(Vec::new()));
    let trace = [
        (
            "traceparent",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        ),
        ("tracestate", "vendor=1"),
        ("baggage", "user=ann"),
    ];
    let scope = CallScope::new()
        .headers(
            RequestHeaders::new()
                .with("tracestate", "vendor=2")
                .unwrap(),
        )
        .instrumentation(recording(&hooks, trace.to_vec()));
    for propagate in [true, false] {
        let client = builder(&emu)
            .header("traceparent", trace[0].1)
            .header("baggage", "team=payments")
            .header("x-kept", "yes")
            .propagate_trace_context(propagate)
            .build()
            .unwrap();
        scope.run(|| client.list_chat_rooms()).unwrap();
        client.list_chat_rooms().unwrap();
    }
    let journal = emu.journal();
    let carried = |e: &roomchat_emulator::JournalEntry| {
        ["traceparent", "tracestate", "baggage"]
            .iter()
            .filter(|name| sent(e, name).is_some())
            .count()
    };
    assert_eq!(
        journal.iter().map(carried).collect::<Vec<_>>(),
        [3, 2, 0, 0],
        "on: the observer's three, then the client's two; off: none"
    );
    assert_eq!(sent(&journal[0], "baggage"), Some("user=ann"));
    assert!(journal.iter().all(|e| sent(e, "x-kept") == Some("yes")));
    let told: Vec<bool> = taken(&hooks)
        .iter()
        .filter_map(|h| match h {
            Hook::Start { propagate, .. } => Some(*propagate),
            _ => None,
        })
        .collect();
    assert_eq!(
        told,
        [true, false],
        "the observer is told propagation is off"
    );
}

#[test]
fn extra_headers_are_checked() {
    let emu = emulator("instrument_header_checks");
    for (name, value) in [
        ("Host", "evil.example"),
        ("content-length", "0"),
        ("Authorization", "Bearer x"),
        ("user-agent", "me"),
        ("x-ok", "a\r\nHost: evil"),
        ("x-ok", "line\nbreak"),
        ("bad name", "v"),
        ("", "v"),
        ("x-ok", "caf\u{e9}"),
    ] {
        let e = builder(&emu).header(name, value).build().unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Configuration, "{name:?}: {value:?}");
        let mut headers = RequestHeaders::new();
        let e = headers.insert(name, value).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Validation, "{name:?}: {value:?}");
        assert!(headers.is_empty());
    }
    for reserved in RESERVED_HEADERS {
        assert!(
            RequestHeaders::new().insert(reserved, "x").is_err(),
            "{reserved}"
        );
        assert!(RequestHeaders::new()
            .insert(&reserved.to_ascii_uppercase(), "x")
            .is_err());
    }
    // An observer's refused header is refused at its insert: the attempt goes out without it.
    let mut headers = RequestHeaders::new().with("X-Team", "a").unwrap();
    assert!(headers.insert("host", "x").is_err());
    assert_eq!(headers.iter().collect::<Vec<_>>(), [("x-team", "a")]);
    assert_eq!(
        format!("{headers:?}"),
        r#"["x-team"]"#,
        "values are not shown"
    );
}

#[test]
fn each_page_of_an_iterator_is_a_call_of_the_scope_it_is_asked_in() {
    let emu = emulator("instrument_pages");
    emu.seed_users(5);
    let client = client(&emu);
    let first = Arc::new(Mutex::new(Vec::new()));
    let second = Arc::new(Mutex::new(Vec::new()));
    let mut pages = client.user_pages(2);
    let scope_a = CallScope::new().instrumentation(recording(&first, vec![("x-scope", "a")]));
    let scope_b = CallScope::new().instrumentation(recording(&second, vec![("x-scope", "b")]));
    scope_a.run(|| pages.next().unwrap()).unwrap();
    scope_b.run(|| pages.next().unwrap()).unwrap();
    pages.next().unwrap().unwrap(); // outside any scope
    assert_eq!(taken(&first).len(), 3);
    assert_eq!(taken(&second).len(), 3);
    let scopes: Vec<_> = emu
        .journal()
        .iter()
        .map(|e| sent(e, "x-scope").map(str::to_owned))
        .collect();
    assert_eq!(scopes, [Some("a".into()), Some("b".into()), None]);
}

#[test]
fn what_observers_see_shows_no_credential() {
    // Keys with the characters URLs treat apart, as the Redis password tests use.
    let private = "sk_live_S3cr?t#9/x@y+&=%";
    let public = "pk_live_Pub?l#c/k@y+&=%";
    let emu = emulator_with("instrument_secrets", |c| {
        c.private_key = private.into();
        c.public_key = public.into();
    });
    let hooks = Arc::new(Mutex::new(Vec::new()));
    let client = builder_with_key(&emu, private)
        .public_key(public)
        .base_backoff(Duration::from_millis(1))
        .instrumentation(recording(&hooks, vec![]))
        .build()
        .unwrap();
    let jon = client.create_user(&CreateUser::regular("jon")).unwrap();
    client.validate_access_token(&jon.access_token).unwrap();
    let raw = RawRequest::new("GET", "/consumer/api/v1/user/accessToken/validate")
        .query("accessToken", jon.access_token.clone())
        .auth(RawAuth::PublicKey);
    let _ = client.raw_request(&raw);
    // An answer echoing the key (the service's message quoting the request).
    emu.add_fault(once(
        "GET",
        USERS,
        respond(
            500,
            &format!(r#"{{"message":"bad key {private} / {public}"}}"#),
            &[],
        ),
    ));
    client.list_users(&ListUsers::page(1, 0)).unwrap();
    let hooks = taken(&hooks);
    let scrubbed = hooks.iter().find_map(|h| match h {
        Hook::End {
            status: Some(500),
            error_text,
            ..
        } => error_text.clone(),
        _ => None,
    });
    assert!(
        scrubbed
            .as_deref()
            .is_some_and(|t| t.contains("bad key REDACTED / REDACTED")),
        "{scrubbed:?}"
    );
    let seen = format!("{hooks:?}");
    let encoded = |s: &str| roomchat::wire::encode_query_component(s);
    for secret in [private, public, &jon.access_token] {
        for form in [secret.to_owned(), encoded(secret)] {
            assert!(!seen.contains(&form), "{form} leaked: {seen}");
        }
    }
    assert!(
        seen.contains("publicKey=REDACTED&accessToken=REDACTED"),
        "{seen}"
    );
    assert!(seen.contains("validate_access_token") && seen.contains("\"raw\""));
}
