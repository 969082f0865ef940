//! The emulator's request handling, through `roomchat_emulator::offline` (the
//! same admin API, journal, faults, routing, auth, rate limit, plan gates,
//! validation and state code the server runs): a fresh account gets a
//! sequence of arbitrary requests — REST endpoints with fuzzed ids, queries,
//! keys and bodies, sign-in pages, the admin API with fuzzed JSON, any path.
//! Checks: no panic; every answer has a status in 100..=599; unless a fault
//! rule is armed (they answer what they were told to), every answer is whole,
//! with a status the README lists, and a JSON body (`application/json`) or an
//! HTML page (`text/html`); the journal never shows the value of a query
//! parameter the emulator reads as `auth` or `publicKey`.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;
use roomchat::wire::encode_path_segment;
use roomchat_emulator::offline::{Offline, Outcome, Reply};
use roomchat_emulator::EmulatorConfig;
use roomchat_fuzz::{ArbJson, ArbStr};
use serde_json::Value;

#[derive(Arbitrary, Debug)]
struct Input {
    seed_users: u8,
    rate_limit_headers: bool,
    small_bodies: bool,
    requests: Vec<Req>,
}

#[derive(Arbitrary, Debug)]
struct Req {
    method: Meth,
    path: PathSpec,
    query: Vec<(ArbStr, ArbStr)>,
    auth: Auth,
    user_agent: Option<String>,
    body: Body,
}

#[derive(Arbitrary, Debug)]
enum Meth {
    Get,
    Post,
    Put,
    Delete,
    Patch,
    Head,
    Other(String),
}

#[derive(Arbitrary, Debug)]
enum PathSpec {
    Users,
    Deactivate,
    Messages {
        chatroom: bool,
        room: ArbStr,
        conversation: ArbStr,
    },
    CreateUser,
    ChatRooms,
    Validate,
    Chat(ArbStr),
    Admin(Admin),
    Text(String),
    Reactivate,
    ValidateAccessToken,
    InvalidateAccessToken,
}

#[derive(Arbitrary, Debug)]
enum Admin {
    Reset,
    Config,
    Gate,
    Seed,
    Rooms,
    Conversations,
    Faults,
    Journal,
    Other(String),
}

#[derive(Arbitrary, Debug)]
enum Auth {
    Missing,
    Good,
    Wrong(String),
    Public,
    /// `auth` twice: a wrong one, then the key.
    Twice,
    /// The key under a percent-encoded name (`au%74h`).
    EncodedName,
    /// The key and the public key.
    Both,
}

#[derive(Arbitrary, Debug)]
enum Body {
    Empty,
    Json(ArbJson),
    Bytes(Vec<u8>),
}

fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    // A paused clock: `delay` faults and the truncated body's pause pass at once.
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .expect("a runtime")
    })
}

fn enc(text: &str) -> String {
    form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

/// Admin requests whose work is legitimately large (seeding millions of users,
/// answering a body of hundreds of MiB) are not sent: they are slow, not wrong.
fn too_costly(body: &[u8]) -> bool {
    let Ok(spec) = serde_json::from_slice::<Value>(body) else {
        return false;
    };
    spec["count"].as_u64().is_some_and(|n| n > 10_000)
        || spec["action"]["bytes"]
            .as_u64()
            .is_some_and(|n| n > 1 << 20)
}

/// Checks an answer built by the emulator itself (no fault armed).
fn check_own_answer(reply: &Reply, admin: bool, what: &str) {
    assert!(reply.complete, "{what}: body cut off");
    let allowed: &[u16] = if admin {
        &[200, 400, 404, 405, 413]
    } else {
        &[200, 400, 401, 404, 405, 408, 413, 429]
    };
    assert!(
        allowed.contains(&reply.status),
        "{what}: status {}",
        reply.status
    );
    let content_type = reply.header("content-type").unwrap_or_default();
    if content_type.starts_with("application/json") {
        if let Err(e) = serde_json::from_slice::<Value>(&reply.body) {
            panic!(
                "{what}: {} body is not JSON ({e}): {:?}",
                reply.status,
                String::from_utf8_lossy(&reply.body)
            );
        }
    } else if content_type.starts_with("text/html") {
        assert!(
            reply.body.starts_with(b"<!DOCTYPE html>"),
            "{what}: HTML body {:?}",
            String::from_utf8_lossy(&reply.body)
        );
    } else {
        panic!("{what}: content type {content_type:?}");
    }
}

fuzz_target!(|input: Input| {
    let config = EmulatorConfig {
        seed_users: usize::from(input.seed_users % 8),
        rate_limit_headers: input.rate_limit_headers,
        max_body_bytes: if input.small_bodies { 16 } else { 1_048_576 },
        ..EmulatorConfig::default()
    };
    let emu = Offline::new(config);
    let rt = runtime();
    let mut faults_armed = false;
    for req in input.requests.iter().take(12) {
        let method = match &req.method {
            Meth::Get => "GET".to_owned(),
            Meth::Post => "POST".to_owned(),
            Meth::Put => "PUT".to_owned(),
            Meth::Delete => "DELETE".to_owned(),
            Meth::Patch => "PATCH".to_owned(),
            Meth::Head => "HEAD".to_owned(),
            Meth::Other(m) => m.clone(),
        };
        let seg = |s: &ArbStr| encode_path_segment(&s.get());
        let path = match &req.path {
            PathSpec::Users => "/consumer/api/v2/users".to_owned(),
            PathSpec::Deactivate => "/consumer/api/v2/user/deactivate".to_owned(),
            PathSpec::Messages {
                chatroom,
                room,
                conversation,
            } => format!(
                "/consumer/api/v2/{}/{}/conversation/{}/messages",
                if *chatroom { "chatroom" } else { "room" },
                seg(room),
                seg(conversation)
            ),
            PathSpec::CreateUser => "/consumer/api/v1/user".to_owned(),
            PathSpec::ChatRooms => "/consumer/api/v1/chatrooms".to_owned(),
            PathSpec::Validate => "/consumer/api/v1/validate".to_owned(),
            PathSpec::Reactivate => "/consumer/api/v2/user/reactivate".to_owned(),
            PathSpec::ValidateAccessToken => {
                "/consumer/api/v1/user/accessToken/validate".to_owned()
            }
            PathSpec::InvalidateAccessToken => {
                "/consumer/api/v1/user/accesstoken/invalidate".to_owned()
            }
            PathSpec::Chat(room) => format!("/chat/{}", seg(room)),
            PathSpec::Admin(a) => format!(
                "/_emulator/{}",
                match a {
                    Admin::Reset => "reset",
                    Admin::Config => "config",
                    Admin::Gate => "gate",
                    Admin::Seed => "users/seed",
                    Admin::Rooms => "rooms",
                    Admin::Conversations => "conversations",
                    Admin::Faults => "faults",
                    Admin::Journal => "journal",
                    Admin::Other(s) => s,
                }
            ),
            PathSpec::Text(t) => t.clone(),
        };
        let key = emu.private_key();
        let mut query: Vec<String> = Vec::new();
        match &req.auth {
            Auth::Missing => {}
            Auth::Good => query.push(format!("auth={}", enc(&key))),
            Auth::Wrong(w) => query.push(format!("auth={}", enc(w))),
            Auth::Public => query.push(format!("publicKey={}", enc(&emu.public_key()))),
            Auth::Twice => {
                query.push("auth=wrong".to_owned());
                query.push(format!("auth={}", enc(&key)));
            }
            Auth::EncodedName => query.push(format!("au%74h={}", enc(&key))),
            Auth::Both => {
                query.push(format!("auth={}", enc(&key)));
                query.push(format!("publicKey={}", enc(&emu.public_key())));
            }
        }
        for (n, v) in &req.query {
            query.push(format!("{}={}", enc(&n.get()), enc(&v.get())));
        }
        let target = if query.is_empty() {
            path.clone()
        } else {
            format!("{path}?{}", query.join("&"))
        };
        let body = match &req.body {
            Body::Empty => Vec::new(),
            Body::Json(j) => j.to_value().to_string().into_bytes(),
            Body::Bytes(b) => b.clone(),
        };
        let admin = path.starts_with("/_emulator");
        if admin && too_costly(&body) {
            continue;
        }
        let headers: Vec<(String, String)> = req
            .user_agent
            .iter()
            .map(|ua| ("user-agent".to_owned(), ua.clone()))
            .collect();
        let what = format!("{method} {target}");
        match rt.block_on(emu.handle(&method, &target, &headers, &body)) {
            Outcome::NotHttp(_) => {}
            Outcome::Closed => assert!(faults_armed, "{what}: closed without a fault"),
            Outcome::Answered(reply) => {
                assert!(
                    (100..=599).contains(&reply.status),
                    "{what}: {}",
                    reply.status
                );
                if !faults_armed || admin {
                    check_own_answer(&reply, admin, &what);
                }
                if admin && reply.status == 200 {
                    match (method.as_str(), path.as_str()) {
                        ("POST", "/_emulator/faults") => faults_armed = true,
                        ("DELETE", "/_emulator/faults") | ("POST", "/_emulator/reset") => {
                            faults_armed = false
                        }
                        _ => {}
                    }
                }
            }
        }
    }

    // The journal shows no key, under whatever spelling the emulator reads it.
    let Outcome::Answered(reply) = rt.block_on(emu.handle("GET", "/_emulator/journal", &[], b""))
    else {
        panic!("the journal did not answer");
    };
    assert_eq!(reply.status, 200);
    let journal: Value = serde_json::from_slice(&reply.body).expect("journal JSON");
    for entry in journal["entries"].as_array().expect("entries") {
        let query = entry["query"].as_str().expect("query");
        let status = entry["status"].as_u64().expect("status");
        assert!(status == 0 || (100..=599).contains(&status), "{entry}");
        for (name, value) in form_urlencoded::parse(query.as_bytes()) {
            if name == "auth" || name == "publicKey" {
                assert!(
                    "REDACTED".starts_with(value.as_ref()) && !value.is_empty() || value.is_empty(),
                    "journal shows {name}={value:?} in {query:?}"
                );
            }
        }
    }
});
