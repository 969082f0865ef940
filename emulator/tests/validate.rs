//! The emulator's own GET stand-in for Validate Access Token (see `tokens.rs` for
//! the documented one), and auth on every REST endpoint.

mod common;

use common::*;
use serde_json::json;

const VALIDATE: &str = "/consumer/api/v1/validate";

#[test]
fn validate_access_token_by_public_key() {
    let f = Fixture::new();
    let bob = f.create_user(r#"{"username": "bob", "isModerator": true, "chatRoom": "r1"}"#);
    let token = bob["accessToken"].as_str().unwrap();
    let url = |key: &str, t: &str| {
        format!(
            "{}{VALIDATE}?publicKey={key}&accessToken={t}",
            f.emu.base_url()
        )
    };
    let public = f.emu.public_key();

    let ok = send(&f.agent, "GET", &url(&public, token), None);
    assert_eq!(ok.status, 200, "{}", ok.text);
    assert_eq!(
        ok.json(),
        json!({"valid": true, "userId": bob["userId"], "username": "bob",
               "isModerator": true, "chatRoom": "r1"})
    );

    for bad in ["garbage", ""] {
        let answer = send(&f.agent, "GET", &url(&public, bad), None);
        assert_eq!(answer.status, 400, "{bad}");
        assert_eq!(answer.json()["valid"], false);
        assert!(answer.json()["message"].is_string());
    }
    // The private key is not the public key.
    let private = f.emu.private_key();
    for key in [private.as_str(), "wrong", ""] {
        assert_eq!(
            send(&f.agent, "GET", &url(key, token), None).status,
            401,
            "{key}"
        );
    }
    // A deactivated user's token no longer validates.
    f.call(
        "DELETE",
        DEACTIVATE,
        &json!({"userId": bob["userId"]}).to_string(),
    );
    let gone = send(&f.agent, "GET", &url(&public, token), None);
    assert_eq!(
        (gone.status, gone.json()["valid"].as_bool()),
        (400, Some(false))
    );
}

#[test]
fn every_rest_endpoint_asks_for_the_auth_token() {
    let f = Fixture::new();
    let base = f.emu.base_url();
    for (method, path, body) in [
        ("GET", USERS, None),
        ("POST", CREATE, Some(r#"{"username": "x"}"#)),
        ("DELETE", DEACTIVATE, Some(r#"{"userId": "x"}"#)),
        (
            "POST",
            "/consumer/api/v2/user/reactivate",
            Some(r#"{"userId": "x"}"#),
        ),
        (
            "POST",
            "/consumer/api/v1/user/accesstoken/invalidate",
            Some(r#"{"accessToken": "x"}"#),
        ),
        ("GET", "/consumer/api/v1/chatrooms", None),
        (
            "GET",
            "/consumer/api/v2/room/r/conversation/c/messages",
            None,
        ),
        (
            "GET",
            "/consumer/api/v2/chatroom/r/conversation/c/messages",
            None,
        ),
    ] {
        let missing = send(&f.agent, method, &format!("{base}{path}"), body);
        assert_eq!(missing.status, 401, "{method} {path}");
        assert!(
            missing.json()["message"]
                .as_str()
                .unwrap()
                .to_lowercase()
                .contains("auth token"),
            "{method} {path}: {}",
            missing.text
        );
        let wrong = send(&f.agent, method, &format!("{base}{path}?auth=nope"), body);
        assert_eq!(
            (wrong.status, wrong.json()),
            (401, json!({"message": "invalid auth token"})),
            "{method} {path}"
        );
    }
    assert_eq!(f.get(USERS, "").json()["total"], 0, "nothing was created");
}
