//! The three operations of the field notes: reactivate user, validate and
//! invalidate access token; and sign-in only with a valid token.

mod common;

use common::*;
use serde_json::{json, Value};

const REACTIVATE: &str = "/consumer/api/v2/user/reactivate";
const VALIDATE: &str = "/consumer/api/v1/user/accessToken/validate";
const INVALIDATE: &str = "/consumer/api/v1/user/accesstoken/invalidate";

impl Fixture {
    /// POST validate access token with the public key `key`.
    fn validate_with(&self, key: &str, body: &str) -> Answer {
        let url = format!("{}{VALIDATE}?publicKey={key}", self.emu.base_url());
        send(&self.agent, "POST", &url, Some(body))
    }

    fn validate(&self, token: &str) -> Answer {
        self.validate_with(
            &self.emu.public_key(),
            &json!({"accessToken": token}).to_string(),
        )
    }

    fn sign_in(&self, room: &str, token: &str) -> Answer {
        let url = format!("{}/{room}?accessToken={token}", self.emu.chat_url());
        send(&self.agent, "GET", &url, None)
    }
}

fn text(v: &Value, key: &str) -> String {
    v[key].as_str().unwrap_or_default().to_owned()
}

#[test]
fn validate_answers_the_stored_record_with_the_tokens_issue_time() {
    let f = Fixture::new();
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let bob = f.create_user(
        r#"{"username": "bob", "isModerator": true, "chatRoom": "r1", "externalUserId": "ext-7"}"#,
    );
    let answer = f.validate(&text(&bob, "accessToken"));
    assert_eq!(answer.status, 200, "{}", answer.text);
    let record = answer.json();
    assert_eq!(record["_id"], bob["userId"]);
    assert_eq!(record["username"], "bob");
    assert_eq!(record["isModerator"], true);
    assert_eq!(record["chatRoom"], "r1");
    assert_eq!(record["externalUserId"], "ext-7");
    assert_eq!(record["createdUsingApi"], true);
    assert_eq!(record["__v"], 0);
    assert!(record["customer"].is_string() && record["parentCustomerAccount"].is_string());
    let iat = record["iat"].as_u64().unwrap();
    assert!(iat >= before && iat <= before + 5, "{iat} vs {before}");
    // `created` is the listing's, and `updated` starts there.
    let listed = f.get(USERS, "").json()["data"][0].clone();
    assert_eq!(record["created"], listed["created"]);
    assert_eq!(record["updated"], record["created"]);

    // A regular user has no chatRoom nor externalUserId in the record.
    let jon = f.create_user(r#"{"username": "jon"}"#);
    let record = f.validate(&text(&jon, "accessToken")).json();
    assert_eq!(record["isModerator"], false);
    assert!(record.get("chatRoom").is_none() && record.get("externalUserId").is_none());
}

/// `externalUserId` is "a number or a string" at create user, as at update user
/// (issue 37, item 13); anything else is refused.
#[test]
fn create_user_takes_a_numeric_external_user_id() {
    let f = Fixture::new();
    let bob = f.create_user(r#"{"username": "bob", "externalUserId": 7}"#);
    assert_eq!(
        f.validate(&text(&bob, "accessToken")).json()["externalUserId"],
        7
    );
    assert_eq!(f.get(USERS, "").json()["data"][0]["externalUserId"], 7);
    for bad in ["true", "[7]", r#"{"id": 7}"#] {
        let body = format!(r#"{{"username": "jon", "externalUserId": {bad}}}"#);
        let refused = f.call("POST", CREATE, &body);
        assert_eq!(refused.status, 400, "{bad}: {}", refused.text);
        assert!(refused.text.contains("externalUserId"), "{}", refused.text);
    }
}

#[test]
fn validate_takes_the_public_key_and_refuses_bad_tokens() {
    let f = Fixture::new();
    let jon = f.create_user(r#"{"username": "jon"}"#);
    let body = json!({"accessToken": text(&jon, "accessToken")}).to_string();
    // The private key is not the public key; none at all asks for it.
    let private = f.emu.private_key();
    for key in [private.as_str(), "wrong", ""] {
        assert_eq!(f.validate_with(key, &body).status, 401, "{key:?}");
    }
    let with_auth = send(&f.agent, "POST", &f.api(VALIDATE, ""), Some(body.as_str()));
    assert_eq!(with_auth.status, 401, "auth is not the public key");

    let forged = {
        let token = text(&jon, "accessToken");
        let (signed, _) = token.rsplit_once('.').unwrap();
        format!("{signed}.AAAA")
    };
    for bad in ["garbage", "a.b.c", forged.as_str()] {
        let answer = f.validate(bad);
        assert_eq!(
            (answer.status, answer.json()),
            (400, json!({"message": "invalid accessToken"})),
            "{bad}"
        );
    }
    // A body without a usable token is a validation error of its own shape.
    let public = f.emu.public_key();
    for bad in [
        "",
        "[]",
        "{}",
        r#"{"accessToken": ""}"#,
        r#"{"accessToken": 5}"#,
    ] {
        let answer = f.validate_with(&public, bad);
        assert_eq!(answer.status, 400, "{bad}");
        assert!(answer.json()["error"].is_string(), "{bad}: {}", answer.text);
    }
    // Only POST, and only the camel-case path.
    let get = send(
        &f.agent,
        "GET",
        &format!("{}{VALIDATE}?publicKey={public}", f.emu.base_url()),
        None,
    );
    assert_eq!(get.status, 405);
    let lower = send(
        &f.agent,
        "POST",
        &format!(
            "{}/consumer/api/v1/user/accesstoken/validate?publicKey={public}",
            f.emu.base_url()
        ),
        Some(body.as_str()),
    );
    assert_eq!(lower.status, 404);
}

#[test]
fn deactivation_and_reactivation_turn_tokens_and_sign_in_off_and_on() {
    let f = Fixture::new();
    f.admin("POST", "/rooms", Some(r#"{"roomId": "r1", "name": "One"}"#));
    let jon = f.create_user(r#"{"username": "jon", "uniqueUserIdentifier": "crm-1"}"#);
    let ann = f.create_user(r#"{"username": "ann"}"#);
    let token = text(&jon, "accessToken");
    let created = text(&f.validate(&token).json(), "created");
    assert_eq!(f.sign_in("r1", &token).status, 200);

    let off = f.call("DELETE", DEACTIVATE, r#"{"uniqueUserIdentifier": "crm-1"}"#);
    assert_eq!(off.status, 200);
    assert_eq!(f.validate(&token).status, 400, "a deactivated user's token");
    let page = f.sign_in("r1", &token);
    assert_eq!(page.status, 401);
    assert!(page.text.contains("deactivated"), "{}", page.text);

    // Reactivate by either identifier: the user is back, in creation order.
    let on = f.call(
        "POST",
        REACTIVATE,
        &json!({"userId": jon["userId"]}).to_string(),
    );
    assert_eq!(
        (on.status, on.json()),
        (200, json!({"success": true, "message": "user reactivated"}))
    );
    let names: Vec<Value> = f.get(USERS, "").json()["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["username"].clone())
        .collect();
    assert_eq!(names, [json!("jon"), json!("ann")]);
    let record = f.validate(&token).json();
    assert_eq!(record["_id"], jon["userId"]);
    assert_eq!(record["created"], created.as_str());
    assert!(
        text(&record, "updated") >= created,
        "updated moves on: {record}"
    );
    assert_eq!(f.sign_in("r1", &token).status, 200);

    f.call("DELETE", DEACTIVATE, r#"{"uniqueUserIdentifier": "crm-1"}"#);
    let by_unique = f.call("POST", REACTIVATE, r#"{"uniqueUserIdentifier": "crm-1"}"#);
    assert_eq!(by_unique.status, 200, "{}", by_unique.text);

    // An active user, or one that does not exist, is "user not found".
    for body in [
        json!({"userId": jon["userId"]}),
        json!({"userId": ann["userId"]}),
        json!({"userId": "0".repeat(24)}),
        json!({"uniqueUserIdentifier": "crm-404"}),
    ] {
        let answer = f.call("POST", REACTIVATE, &body.to_string());
        assert_eq!(
            (answer.status, answer.json()),
            (400, json!({"message": "user not found"})),
            "{body}"
        );
    }
    // Validation as for deactivate: both, neither, empty, wrong type.
    for bad in [
        r#"{"userId": "a", "uniqueUserIdentifier": "b"}"#,
        "{}",
        r#"{"userId": ""}"#,
        r#"{"uniqueUserIdentifier": 7}"#,
        "[]",
    ] {
        let answer = f.call("POST", REACTIVATE, bad);
        assert_eq!(answer.status, 400, "{bad}");
        assert!(answer.json()["error"].is_string(), "{bad}: {}", answer.text);
    }
    assert_eq!(
        send(&f.agent, "DELETE", &f.api(REACTIVATE, ""), Some("{}")).status,
        405
    );
    assert_eq!(
        send(
            &f.agent,
            "POST",
            &format!("{}{REACTIVATE}", f.emu.base_url()),
            Some("{}")
        )
        .status,
        401
    );
}

#[test]
fn an_invalidated_token_neither_validates_nor_signs_in() {
    let f = Fixture::new();
    f.admin("POST", "/rooms", Some(r#"{"roomId": "r1", "name": "One"}"#));
    let jon = f.create_user(r#"{"username": "jon"}"#);
    let ann = f.create_user(r#"{"username": "ann"}"#);
    let token = text(&jon, "accessToken");
    let body = json!({"accessToken": token}).to_string();

    let done = f.call("POST", INVALIDATE, &body);
    assert_eq!((done.status, done.json()), (200, json!({"success": true})));
    assert_eq!(
        f.validate(&token).json(),
        json!({"message": "invalid accessToken"})
    );
    let page = f.sign_in("r1", &token);
    assert_eq!(page.status, 401);
    assert!(page.text.contains("invalidated"), "{}", page.text);
    // Twice is invalid: the token is no longer one the service honours.
    let again = f.call("POST", INVALIDATE, &body);
    assert_eq!(
        (again.status, again.json()),
        (400, json!({"message": "invalid accessToken"}))
    );
    // Another user's token is untouched.
    assert_eq!(f.validate(&text(&ann, "accessToken")).status, 200);

    // A deactivated user's token can be invalidated, and stays so after reactivation.
    let ann_token = text(&ann, "accessToken");
    f.call(
        "DELETE",
        DEACTIVATE,
        &json!({"userId": ann["userId"]}).to_string(),
    );
    let revoked = f.call(
        "POST",
        INVALIDATE,
        &json!({"accessToken": ann_token}).to_string(),
    );
    assert_eq!(revoked.status, 200, "{}", revoked.text);
    f.call(
        "POST",
        REACTIVATE,
        &json!({"userId": ann["userId"]}).to_string(),
    );
    assert_eq!(f.validate(&ann_token).status, 400);

    for bad in ["garbage", "a.b.c"] {
        let answer = f.call("POST", INVALIDATE, &json!({"accessToken": bad}).to_string());
        assert_eq!(
            (answer.status, answer.json()),
            (400, json!({"message": "invalid accessToken"})),
            "{bad}"
        );
    }
    for bad in ["{}", r#"{"accessToken": null}"#, r#"{"accessToken": ""}"#] {
        let answer = f.call("POST", INVALIDATE, bad);
        assert_eq!(answer.status, 400, "{bad}");
        assert!(answer.json()["error"].is_string(), "{bad}");
    }
    // Only the lower-case path, with the private key.
    let camel = f.call(
        "POST",
        "/consumer/api/v1/user/accessToken/invalidate",
        &body,
    );
    assert_eq!(camel.status, 404);
    let public = send(
        &f.agent,
        "POST",
        &format!(
            "{}{INVALIDATE}?publicKey={}",
            f.emu.base_url(),
            f.emu.public_key()
        ),
        Some(body.as_str()),
    );
    assert_eq!(public.status, 401);

    // The journal shows the keys redacted.
    let journal = f.admin("GET", "/journal", None).json();
    let entries = journal["entries"].as_array().unwrap();
    assert!(entries
        .iter()
        .all(|e| !e["query"].as_str().unwrap().contains("sk_test")
            && !e["query"].as_str().unwrap().contains("pk_test")));
}

#[test]
fn a_reset_forgets_invalidated_tokens_and_users() {
    let f = Fixture::new();
    let jon = f.create_user(r#"{"username": "jon"}"#);
    let token = text(&jon, "accessToken");
    f.call(
        "POST",
        INVALIDATE,
        &json!({"accessToken": token}).to_string(),
    );
    f.admin("POST", "/reset", None);
    // The user is gone with the reset: its token is invalid for that reason now.
    assert_eq!(f.validate(&token).status, 400);
    let fresh = f.create_user(r#"{"username": "eve"}"#);
    assert_eq!(f.validate(&text(&fresh, "accessToken")).status, 200);
}
