//! Points 1, 2 and 10: the REST endpoints, their errors, state, and bad input.

mod common;

use base64::Engine;
use common::*;
use roomchat_emulator::EmulatorConfig;
use serde_json::{json, Value};

#[test]
fn users_listing_limits_and_auth_errors() {
    let f = Fixture::with(EmulatorConfig {
        seed_users: 250,
        ..EmulatorConfig::default()
    });
    let page = f.get(USERS, "").json();
    assert_eq!(
        (
            page["total"].as_u64(),
            page["limit"].as_u64(),
            page["skip"].as_u64()
        ),
        (Some(250), Some(50), Some(0))
    );
    assert_eq!(page["data"].as_array().unwrap().len(), 50);
    assert!(page["data"][0]["username"].is_string() && page["data"][0]["profilePic"].is_string());

    assert_eq!(
        f.get(USERS, "limit=200").json()["data"]
            .as_array()
            .unwrap()
            .len(),
        200,
        "200 is the maximum, accepted"
    );
    let over = f.get(USERS, "limit=201");
    assert_eq!(over.status, 400);
    assert_eq!(
        over.json(),
        json!({"error": true, "message": "limit should be less than 200"})
    );

    for (query, name) in [
        ("limit=abc", "limit"),
        ("limit=-1", "limit"),
        ("skip=x", "skip"),
        ("skip=-5", "skip"),
        ("limit=1.5", "limit"),
    ] {
        let bad = f.get(USERS, query);
        assert_eq!(bad.status, 400, "{query}");
        assert!(
            bad.json()["message"].as_str().unwrap().contains(name),
            "{query}: {}",
            bad.text
        );
    }
    let tail = f.get(USERS, "limit=100&skip=200").json();
    assert_eq!(tail["data"].as_array().unwrap().len(), 50);
    assert_eq!(tail["data"][0]["username"], "seed-user-201");

    let missing = send(
        &f.agent,
        "GET",
        &format!("{}{USERS}", f.emu.base_url()),
        None,
    );
    assert_eq!(missing.status, 401);
    assert!(missing.json()["message"]
        .as_str()
        .unwrap()
        .to_lowercase()
        .contains("pass the auth token"));
    let key = f.emu.private_key();
    for wrong in [
        "wrong".to_owned(),
        key[..key.len() - 1].to_owned(),
        format!("{key}%20"),
        format!("%20{key}"),
    ] {
        let answer = send(
            &f.agent,
            "GET",
            &format!("{}{USERS}?auth={wrong}", f.emu.base_url()),
            None,
        );
        assert_eq!(answer.status, 401, "{wrong}");
        assert_eq!(answer.json(), json!({"message": "invalid auth token"}));
    }
}

#[test]
fn created_users_are_listed_with_their_fields_and_a_real_jwt() {
    let f = Fixture::new();
    let jon = f.create_user(r#"{"username": "jon"}"#);
    assert_eq!(jon["isModerator"], false);
    assert!(jon.get("chatRoom").is_none());
    let id = jon["userId"].as_str().unwrap();
    assert!(
        id.len() == 24 && id.chars().all(|c| c.is_ascii_hexdigit()),
        "{id}"
    );

    let bob = f.create_user(
        r#"{"username": "bob", "isModerator": true, "chatRoom": "r1", "uniqueUserIdentifier": "crm-1",
            "email": "bob@example.com", "profilePic": "https://p/b.png", "externalUserId": "ext-9", "meta": {"a": [1]}}"#,
    );
    assert_eq!(bob["chatRoom"], "r1");
    let token = bob["accessToken"].as_str().unwrap();
    let parts: Vec<&str> = token.split('.').collect();
    assert_eq!(parts.len(), 3);
    let decode = |p: &str| -> Value {
        serde_json::from_slice(
            &base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(p)
                .unwrap(),
        )
        .unwrap()
    };
    assert_eq!(decode(parts[0])["alg"], "HS256");
    let claims = decode(parts[1]);
    assert_eq!(
        (claims["userId"].as_str(), claims["username"].as_str()),
        (bob["userId"].as_str(), Some("bob"))
    );
    assert_eq!(
        (claims["isModerator"].as_bool(), claims["chatRoom"].as_str()),
        (Some(true), Some("r1"))
    );

    let page = f.get(USERS, "").json();
    assert_eq!(page["total"], 2);
    let listed = &page["data"][1];
    for (field, value) in [
        ("uniqueUserIdentifier", json!("crm-1")),
        ("email", json!("bob@example.com")),
        ("profilePic", json!("https://p/b.png")),
        ("externalUserId", json!("ext-9")),
        ("meta", json!({"a": [1]})),
        ("_id", bob["userId"].clone()),
    ] {
        assert_eq!(listed[field], value, "{field}");
    }

    let dup = f.call(
        "POST",
        CREATE,
        r#"{"username": "other", "uniqueUserIdentifier": "crm-1"}"#,
    );
    assert_eq!(dup.status, 400);
    assert!(dup.json()["message"]
        .as_str()
        .unwrap()
        .contains("uniqueUserIdentifier"));
    for bad in [
        r#"{}"#,
        r#"{"username": 5}"#,
        r#"{"username": ""}"#,
        r#"{"username": "x", "isModerator": "yes"}"#,
        r#"[1]"#,
    ] {
        assert_eq!(f.call("POST", CREATE, bad).status, 400, "{bad}");
    }
    assert_eq!(
        f.get(USERS, "").json()["total"],
        2,
        "rejected creations change nothing"
    );
}

#[test]
fn deactivation_by_either_identifier() {
    let f = Fixture::new();
    let jon = f.create_user(r#"{"username": "jon"}"#);
    f.create_user(r#"{"username": "ann", "uniqueUserIdentifier": "crm-ann"}"#);
    f.create_user(r#"{"username": "eve"}"#);

    let by_id = f.call(
        "DELETE",
        DEACTIVATE,
        &json!({"userId": jon["userId"]}).to_string(),
    );
    assert_eq!(by_id.status, 200);
    assert_eq!(
        by_id.json(),
        json!({"success": true, "message": "user deactivated"})
    );
    assert_eq!(
        f.call(
            "DELETE",
            DEACTIVATE,
            r#"{"uniqueUserIdentifier": "crm-ann"}"#
        )
        .status,
        200
    );

    let page = f.get(USERS, "").json();
    assert_eq!(page["total"], 1);
    assert_eq!(page["data"][0]["username"], "eve");

    let again = f.call(
        "DELETE",
        DEACTIVATE,
        &json!({"userId": jon["userId"]}).to_string(),
    );
    assert_eq!(
        (again.status, again.json()),
        (400, json!({"message": "user not found"}))
    );
    let unknown = f.call(
        "DELETE",
        DEACTIVATE,
        r#"{"uniqueUserIdentifier": "nobody"}"#,
    );
    assert_eq!(
        (unknown.status, unknown.json()),
        (400, json!({"message": "user not found"}))
    );

    for bad in [
        r#"{"userId": "a", "uniqueUserIdentifier": "b"}"#,
        "{}",
        "",
        r#"{"userId": 7}"#,
    ] {
        let answer = f.call("DELETE", DEACTIVATE, bad);
        assert_eq!(answer.status, 400, "{bad}");
        assert!(answer.json()["error"].is_string(), "{bad}: {}", answer.text);
    }
}

#[test]
fn conversation_messages_by_both_paths_and_chat_rooms() {
    let f = Fixture::new();
    assert_eq!(f.get("/consumer/api/v1/chatrooms", "").json(), json!([]));
    let room = f
        .admin(
            "POST",
            "/rooms",
            Some(r#"{"roomId": "bbNiVFoXm", "name": "General"}"#),
        )
        .json();
    assert_eq!(room["passwordProtected"], false);
    let conversation = f
        .admin(
            "POST",
            "/conversations",
            Some(r#"{"roomId": "bbNiVFoXm", "messages": [
                {"messages": "first", "user": {"username": "jon", "email": "jon@example.com"}},
                {"messages": "second", "user": {"username": "ann"}, "created": "2024-01-15T15:21:44.293Z"}]}"#),
        )
        .json();
    let id = conversation["conversationId"].as_str().unwrap();
    for form in ["room", "chatroom"] {
        let answer = f.get(
            &format!("/consumer/api/v2/{form}/bbNiVFoXm/conversation/{id}/messages"),
            "",
        );
        assert_eq!(answer.status, 200, "{form}");
        let messages = answer.json();
        assert_eq!(messages[0]["messages"], "first");
        assert_eq!(messages[0]["conversation"], id);
        assert_eq!(messages[0]["user"]["email"], "jon@example.com");
        assert!(messages[0]["_id"].is_string() && messages[0]["user"]["_id"].is_string());
        assert_eq!(messages[1]["created"], "2024-01-15T15:21:44.293Z");
    }
    let missing = f.get(
        "/consumer/api/v2/room/bbNiVFoXm/conversation/none/messages",
        "",
    );
    assert_eq!(missing.status, 400);
    assert_eq!(missing.json()["success"], false);
    assert_eq!(
        f.get("/consumer/api/v1/chatrooms", "").json()[0]["roomId"],
        "bbNiVFoXm"
    );
}

#[test]
fn bad_input_gets_json_errors_and_never_brings_it_down() {
    let f = Fixture::with(EmulatorConfig {
        max_body_bytes: 1024,
        ..EmulatorConfig::default()
    });
    let malformed = f.call("POST", CREATE, r#"{"username": "#);
    assert_eq!(malformed.status, 400);
    assert_eq!(malformed.json()["error"], true);
    let huge = format!(r#"{{"username": "{}"}}"#, "x".repeat(5000));
    let too_big = f.call("POST", CREATE, &huge);
    assert_eq!(
        (too_big.status, too_big.json()["message"].as_str()),
        (413, Some("request body too large"))
    );
    let unknown = f.get("/consumer/api/v3/users", "");
    assert_eq!(
        (unknown.status, unknown.json()["message"].as_str()),
        (404, Some("not found"))
    );
    let wrong_method = f.call("PUT", USERS, "{}");
    assert_eq!(
        (wrong_method.status, wrong_method.json()["message"].as_str()),
        (405, Some("method not allowed"))
    );
    assert_eq!(
        send(
            &f.agent,
            "POST",
            &f.api("/consumer/api/v1/chatrooms", ""),
            Some("{}")
        )
        .status,
        405
    );
    // still serving
    assert_eq!(f.get(USERS, "").status, 200);
}

#[test]
fn many_concurrent_keep_alive_connections() {
    let f = Fixture::with(EmulatorConfig {
        seed_users: 10,
        rate_limit: roomchat_emulator::RateLimit {
            requests: 10_000,
            window: std::time::Duration::from_secs(60),
        },
        ..EmulatorConfig::default()
    });
    let url = f.api(USERS, "limit=5");
    std::thread::scope(|s| {
        for _ in 0..32 {
            let url = url.clone();
            s.spawn(move || {
                let agent = agent();
                for _ in 0..20 {
                    let answer = send(&agent, "GET", &url, None);
                    assert_eq!(answer.status, 200);
                    assert_eq!(answer.json()["data"].as_array().unwrap().len(), 5);
                }
            });
        }
    });
    // One raw connection, three requests on it: keep-alive works.
    use std::io::{BufRead, BufReader, Read, Write};
    let addr = f.emu.base_url().trim_start_matches("http://").to_owned();
    let mut stream = std::net::TcpStream::connect(&addr).unwrap();
    let path = url.trim_start_matches(f.emu.base_url());
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    for _ in 0..3 {
        write!(stream, "GET {path} HTTP/1.1\r\nHost: {addr}\r\n\r\n").unwrap();
        let mut status = String::new();
        reader.read_line(&mut status).unwrap();
        assert!(status.starts_with("HTTP/1.1 200"), "{status}");
        let mut length = 0;
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            if line == "\r\n" {
                break;
            }
            if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = v.trim().parse().unwrap();
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body).unwrap();
    }
}

#[test]
fn every_405_names_the_allowed_methods() {
    let f = Fixture::new();
    for (method, path, allow) in [
        ("TRACE", USERS, "GET"),
        ("POST", USERS, "GET"),
        ("TRACE", DEACTIVATE, "DELETE"),
        ("GET", DEACTIVATE, "DELETE"),
        ("TRACE", CREATE, "POST, PUT"),
        ("TRACE", "/consumer/api/v1/chatrooms", "GET"),
        ("TRACE", "/consumer/api/v1/validate", "GET"),
        (
            "TRACE",
            "/consumer/api/v2/room/r/conversation/c/messages",
            "GET",
        ),
        (
            "OPTIONS",
            "/consumer/api/v2/chatroom/r/conversation/c/messages",
            "GET",
        ),
    ] {
        let answer = send(&f.agent, method, &f.api(path, ""), None);
        assert_eq!(answer.status, 405, "{method} {path}");
        assert_eq!(answer.header("allow"), Some(allow), "{method} {path}");
        assert_eq!(answer.json()["message"], "method not allowed");
    }
    let page = send(&f.agent, "POST", &format!("{}/r1", f.emu.chat_url()), None);
    assert_eq!((page.status, page.header("allow")), (405, Some("GET")));
    for (method, path, allow) in [
        ("GET", "/reset", "POST"),
        ("DELETE", "/config", "GET, PUT"),
        ("GET", "/faults", "POST, DELETE"),
        ("POST", "/journal", "GET, DELETE"),
        ("TRACE", "/users/seed", "POST"),
    ] {
        let answer = f.admin(method, path, None);
        assert_eq!(
            (answer.status, answer.header("allow")),
            (405, Some(allow)),
            "{method} {path}"
        );
    }
}

#[test]
fn empty_identifiers_are_refused_and_never_match_a_user() {
    let f = Fixture::new();
    let jon = f.create_user(r#"{"username": "jon"}"#);
    for body in [
        r#"{"username": "ann", "uniqueUserIdentifier": ""}"#,
        r#"{"username": "ann", "isModerator": true, "chatRoom": ""}"#,
        "{\"username\": \"a\\u0000b\"}",
        "{\"username\": \"line\\nbreak\"}",
        "{\"username\": \"bell\\u0007\"}",
        "{\"username\": \"c1\\u0085\"}",
        r#"{"username": " \t "}"#,
        r#"{"username": "ann", "uniqueUserIdentifier": null}"#,
        r#"{"username": "ann", "isModerator": null}"#,
        r#"{"username": null}"#,
    ] {
        let answer = f.call("POST", CREATE, body);
        assert_eq!(answer.status, 400, "{body}: {}", answer.text);
        assert_eq!(answer.json()["error"], true, "{body}");
    }
    // What is not a control character is a name like any other.
    f.create_user(r#"{"username": "Zoë \u00a0 王 🙂", "uniqueUserIdentifier": " "}"#);

    for body in [
        r#"{"uniqueUserIdentifier": ""}"#,
        r#"{"userId": ""}"#,
        r#"{"userId": null}"#,
        r#"{"userId": "", "uniqueUserIdentifier": null}"#,
    ] {
        let answer = f.call("DELETE", DEACTIVATE, body);
        assert_eq!(answer.status, 400, "{body}");
        assert!(
            answer.json()["error"].is_string(),
            "{body}: {}",
            answer.text
        );
    }
    let page = f.get(USERS, "").json();
    assert_eq!(page["total"], 2, "nobody was deactivated");
    assert_eq!(page["data"][0]["userId"], jon["userId"]);
}

#[test]
fn counts_past_u64_are_refused_for_what_is_wrong_with_them() {
    let f = Fixture::with(EmulatorConfig {
        seed_users: 2,
        ..EmulatorConfig::default()
    });
    let skip = f.get(USERS, "skip=99124460148459667456");
    assert_eq!(
        (skip.status, skip.json()),
        (
            400,
            json!({"error": true, "message": "skip should be at most 18446744073709551615"})
        )
    );
    let limit = f.get(USERS, "limit=99124460148459667456");
    assert_eq!(
        (limit.status, limit.json()),
        (
            400,
            json!({"error": true, "message": "limit should be less than 200"})
        )
    );
    let last = f.get(USERS, "skip=18446744073709551615").json();
    assert_eq!(
        (&last["skip"], &last["total"], &last["data"]),
        (&json!(u64::MAX), &json!(2), &json!([]))
    );
    let empty = f.get(USERS, "limit=0").json();
    assert_eq!((&empty["total"], &empty["data"]), (&json!(2), &json!([])));
    for bad in ["skip=", "skip=+", "skip=1e3", "limit=٣"] {
        let answer = f.get(USERS, bad);
        assert_eq!(answer.status, 400, "{bad}");
        assert!(
            answer.json()["message"]
                .as_str()
                .unwrap()
                .ends_with("should be a non-negative integer"),
            "{bad}: {}",
            answer.text
        );
    }
}

#[test]
fn every_answer_carries_its_request_id_and_a_date() {
    use roomchat_emulator::{Fault, FaultAction};
    let f = Fixture::new();
    let last_seq = || f.emu.journal().last().unwrap().seq;
    let ok = f.get(USERS, "");
    assert_eq!(
        ok.header("x-request-id"),
        Some(format!("req_{}", last_seq()).as_str())
    );
    assert!(ok.header("date").is_some_and(|d| d.ends_with(" GMT")));
    let refused = f.get("/consumer/api/v2/nothing", "");
    assert_eq!(refused.status, 404);
    assert_eq!(
        refused.header("x-request-id"),
        Some(format!("req_{}", last_seq()).as_str())
    );
    assert_ne!(ok.header("x-request-id"), refused.header("x-request-id"));

    // A fault's answer carries one too, unless the fault sends its own.
    let respond = |headers: Vec<(String, String)>| Fault {
        method: Some("GET".into()),
        path: USERS.into(),
        times: 1,
        action: FaultAction::Respond {
            status: 503,
            headers,
            body: String::new(),
            content_type: None,
        },
    };
    f.emu.add_fault(respond(vec![]));
    let faulted = f.get(USERS, "");
    assert_eq!(faulted.status, 503);
    assert_eq!(
        faulted.header("x-request-id"),
        Some(format!("req_{}", last_seq()).as_str())
    );
    f.emu
        .add_fault(respond(vec![("X-Request-Id".into(), "upstream-7".into())]));
    assert_eq!(f.get(USERS, "").header("x-request-id"), Some("upstream-7"));

    // Admin answers have none.
    assert_eq!(
        f.admin("GET", "/journal", None).header("x-request-id"),
        None
    );
}
