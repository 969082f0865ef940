//! Reactivate user, validate and invalidate access token (the field notes'
//! operations), over real HTTP against the emulator.

mod common;

use std::time::{Duration, SystemTime};

use common::*;
use roomchat::{CreateUser, DeactivateUser, ErrorKind, ListUsers, ReactivateUser};
use roomchat_emulator::FaultAction;
use serde_json::{json, Value};

const REACTIVATE: &str = "/consumer/api/v2/user/reactivate";
const VALIDATE: &str = "/consumer/api/v1/user/accessToken/validate";
const INVALIDATE: &str = "/consumer/api/v1/user/accesstoken/invalidate";
const EVENT_503: &str = r#"{"message":"Internal server error occurred","eventId":"ev-9"}"#;

/// The status a browser gets for the sign-in page of `room` with `token`.
fn sign_in_status(emu: &roomchat_emulator::Emulator, room: &str, token: &str) -> u16 {
    let roots = match emu.ca_pem() {
        Some(ca) => {
            ureq::tls::RootCerts::new_with_certs(&[
                ureq::tls::Certificate::from_pem(ca.as_bytes()).unwrap()
            ])
        }
        None => ureq::tls::RootCerts::WebPki,
    };
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .tls_config(ureq::tls::TlsConfig::builder().root_certs(roots).build())
        .build()
        .into();
    agent
        .get(format!("{}/{room}?accessToken={token}", emu.chat_url()))
        .call()
        .unwrap()
        .status()
        .as_u16()
}

#[test]
fn the_lifecycle_create_validate_deactivate_reactivate_invalidate() {
    let emu = emulator("lifecycle");
    let client = client(&emu);
    emu.create_room(json!({"roomId": "r1", "name": "One"}));
    let before = SystemTime::now() - Duration::from_secs(1);
    let bob = client
        .create_user(
            &CreateUser::room_moderator("bob", "r1")
                .field("uniqueUserIdentifier", "crm-7")
                .field("externalUserId", "ext-7"),
        )
        .unwrap();

    // Validate: the stored record, typed; iat a time; the rest kept.
    let user = client.validate_access_token(&bob.access_token).unwrap();
    assert_eq!(user.id, bob.user_id);
    assert_eq!(user.username.as_deref(), Some("bob"));
    assert_eq!(user.is_moderator, Some(true));
    assert_eq!(user.chat_room.as_deref(), Some("r1"));
    assert_eq!(user.external_user_id.as_deref(), Some("ext-7"));
    let iat = user.iat.expect("iat");
    assert!(
        iat >= before && iat <= SystemTime::now(),
        "{iat:?} is the creation time"
    );
    assert!(user.created.is_some() && user.updated == user.created);
    assert_eq!(user.extra["createdUsingApi"], true);
    assert_eq!(user.extra["__v"], 0);
    assert!(user.extra["customer"].is_string());
    // Sent to the documented path, with the public key, the token in the body.
    let sent = emu.journal().pop().unwrap();
    assert_eq!(
        (sent.method.as_str(), sent.path.as_str()),
        ("POST", VALIDATE)
    );
    assert_eq!(sent.query, "publicKey=REDACTED");
    let body: Value = serde_json::from_str(&sent.body).unwrap();
    assert_eq!(body, json!({"accessToken": bob.access_token}));
    assert_eq!(sign_in_status(&emu, "r1", &bob.access_token), 200);

    // Deactivated: the token neither validates nor signs in.
    client
        .deactivate_user(&DeactivateUser::UserId(bob.user_id.clone()))
        .unwrap();
    let e = client.validate_access_token(&bob.access_token).unwrap_err();
    assert_eq!(
        (e.kind(), e.status(), e.message()),
        (ErrorKind::InvalidRequest, Some(400), "invalid accessToken")
    );
    assert_eq!(e.path(), Some(&*format!("{VALIDATE}?publicKey=REDACTED")));
    assert_eq!(sign_in_status(&emu, "r1", &bob.access_token), 401);

    // Reactivated (by either identifier): listed, validating, signing in again.
    let back = client
        .reactivate_user(&ReactivateUser::UniqueUserIdentifier("crm-7".into()))
        .unwrap();
    assert!(back.success);
    assert_eq!(back.message.as_deref(), Some("user reactivated"));
    assert_eq!(
        serde_json::from_str::<Value>(&emu.journal().pop().unwrap().body).unwrap(),
        json!({"uniqueUserIdentifier": "crm-7"})
    );
    assert_eq!(client.list_users(&ListUsers::default()).unwrap().total, 1);
    let again = client.validate_access_token(&bob.access_token).unwrap();
    assert!(again.updated >= again.created);
    assert_eq!(sign_in_status(&emu, "r1", &bob.access_token), 200);
    client
        .deactivate_user(&DeactivateUser::UserId(bob.user_id.clone()))
        .unwrap();
    client
        .reactivate_user(&ReactivateUser::UserId(bob.user_id.clone()))
        .unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&emu.journal().pop().unwrap().body).unwrap(),
        json!({"userId": bob.user_id})
    );

    // Invalidated: the token is dead for good; the user is not.
    let done = client.invalidate_access_token(&bob.access_token).unwrap();
    assert!(done.success);
    let sent = emu.journal().pop().unwrap();
    assert_eq!(
        (sent.method.as_str(), sent.path.as_str()),
        ("POST", INVALIDATE)
    );
    assert!(sent.query.starts_with("auth=REDACTED"), "{}", sent.query);
    let e = client.validate_access_token(&bob.access_token).unwrap_err();
    assert_eq!(
        (e.kind(), e.message()),
        (ErrorKind::InvalidRequest, "invalid accessToken")
    );
    assert_eq!(sign_in_status(&emu, "r1", &bob.access_token), 401);
    let twice = client
        .invalidate_access_token(&bob.access_token)
        .unwrap_err();
    assert_eq!(twice.kind(), ErrorKind::InvalidRequest);
    assert_eq!(client.list_users(&ListUsers::default()).unwrap().total, 1);
}

#[test]
fn reactivating_an_unknown_or_active_user_is_user_not_found() {
    let emu = emulator("reactivate_unknown");
    let client = client(&emu);
    let jon = client.create_user(&CreateUser::regular("jon")).unwrap();
    for target in [
        ReactivateUser::UserId("0".repeat(24)),
        ReactivateUser::UniqueUserIdentifier("crm-404".into()),
        ReactivateUser::UserId(jon.user_id.clone()),
    ] {
        let e = client.reactivate_user(&target).unwrap_err();
        assert_eq!(
            (e.kind(), e.status(), e.message()),
            (ErrorKind::UserNotFound, Some(400), "user not found"),
            "{target:?}"
        );
        assert_eq!(e.method(), Some("POST"));
        assert_eq!(e.path(), Some(&*format!("{REACTIVATE}?auth=REDACTED")));
    }
    // An empty id is refused before anything is sent.
    emu.clear_journal();
    for target in [
        ReactivateUser::UserId(String::new()),
        ReactivateUser::UniqueUserIdentifier(String::new()),
    ] {
        let e = client.reactivate_user(&target).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Validation);
    }
    assert_eq!(
        client.validate_access_token("").unwrap_err().kind(),
        ErrorKind::Validation
    );
    assert_eq!(
        client.invalidate_access_token("").unwrap_err().kind(),
        ErrorKind::Validation
    );
    assert!(emu.journal().is_empty(), "nothing was sent");
}

#[test]
fn reactivate_and_invalidate_are_never_sent_twice_after_a_5xx_or_a_lost_answer() {
    let emu = emulator("tokens_no_retry");
    let client = client(&emu);
    let jon = client.create_user(&CreateUser::regular("jon")).unwrap();
    client
        .deactivate_user(&DeactivateUser::UserId(jon.user_id.clone()))
        .unwrap();
    let target = ReactivateUser::UserId(jon.user_id.clone());

    for (path, action) in [
        (REACTIVATE, respond(503, EVENT_503, &[])),
        (REACTIVATE, FaultAction::CloseConnection),
        (INVALIDATE, respond(500, EVENT_503, &[])),
        (INVALIDATE, FaultAction::CloseConnection),
    ] {
        emu.clear_journal();
        emu.add_fault(once("POST", path, action.clone()));
        let e = if path == REACTIVATE {
            client.reactivate_user(&target).unwrap_err()
        } else {
            client
                .invalidate_access_token(&jon.access_token)
                .unwrap_err()
        };
        match action {
            FaultAction::CloseConnection => assert_eq!(e.kind(), ErrorKind::Connection),
            _ => assert_eq!(
                (e.kind(), e.event_id()),
                (ErrorKind::ServerError, Some("ev-9"))
            ),
        }
        assert_eq!(arrivals(&emu, "POST", path), 1, "{path}: one attempt");
    }
    // The faults had no effect: both calls go through now, once each.
    emu.clear_journal();
    client.reactivate_user(&target).unwrap();
    client.invalidate_access_token(&jon.access_token).unwrap();
    assert_eq!(arrivals(&emu, "POST", REACTIVATE), 1);
    assert_eq!(arrivals(&emu, "POST", INVALIDATE), 1);

    // Opting in to retrying POSTs retries them too.
    let eager = builder(&emu).retry_non_idempotent(true).build().unwrap();
    client
        .deactivate_user(&DeactivateUser::UserId(jon.user_id.clone()))
        .unwrap();
    emu.clear_journal();
    emu.add_fault(once("POST", REACTIVATE, respond(503, EVENT_503, &[])));
    eager.reactivate_user(&target).unwrap();
    assert_eq!(arrivals(&emu, "POST", REACTIVATE), 2);
}

#[test]
fn validate_is_a_read_and_is_retried_after_a_5xx() {
    let emu = emulator("validate_retry");
    let client = client(&emu);
    let jon = client.create_user(&CreateUser::regular("jon")).unwrap();
    emu.clear_journal();
    emu.add_fault(once("POST", VALIDATE, respond(503, EVENT_503, &[])));
    let user = client.validate_access_token(&jon.access_token).unwrap();
    assert_eq!(user.id, jon.user_id);
    assert_eq!(arrivals(&emu, "POST", VALIDATE), 2);
    // A 400 (an invalid token) is an answer, not retried.
    emu.clear_journal();
    client.validate_access_token("not.a.token").unwrap_err();
    assert_eq!(arrivals(&emu, "POST", VALIDATE), 1);
}

#[test]
fn validate_needs_the_public_key_and_never_shows_a_secret() {
    let emu = emulator("validate_public_key");
    let key = emu.private_key();
    let client = client(&emu);
    let jon = client.create_user(&CreateUser::regular("jon")).unwrap();

    // Without a public key: a configuration error, and nothing is sent.
    let keyless = builder_with_key(&emu, &key).build().unwrap();
    emu.clear_journal();
    let e = keyless
        .validate_access_token(&jon.access_token)
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Configuration);
    assert!(e.message().contains("public key"), "{e}");
    assert!(emu.journal().is_empty());

    // A wrong public key: the service's 401, the key redacted.
    let wrong = builder(&emu)
        .public_key("pk_wrong_but_plausible_0001")
        .build()
        .unwrap();
    let e = wrong.validate_access_token(&jon.access_token).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidAuth);
    assert!(!e.to_string().contains("pk_wrong"), "{e}");

    // No error of these calls shows the private key, in any rendering.
    emu.add_fault(once(
        "POST",
        REACTIVATE,
        respond(500, &format!(r#"{{"message":"echo {key}"}}"#), &[]),
    ));
    let errors = [
        client.validate_access_token("forged.token.x").unwrap_err(),
        client
            .invalidate_access_token("forged.token.x")
            .unwrap_err(),
        client
            .reactivate_user(&ReactivateUser::UserId("x".into()))
            .unwrap_err(),
    ];
    for error in &errors {
        assert_no_secret(error, &key);
    }
    // A validated user's Debug shows no token (it carries none) and no key.
    let user = client.validate_access_token(&jon.access_token).unwrap();
    let shown = format!("{user:?} {client:?}");
    assert!(!shown.contains(&key) && !shown.contains(&jon.access_token));
}
