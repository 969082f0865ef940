//! Every endpoint of section 4, over real HTTP against the emulator.

mod common;

use common::*;
use roomchat::{
    ConversationMessages, CreateUser, DeactivateUser, ErrorKind, ListUsers, PathForm, RawAuth,
    RawRequest, Role,
};
use serde_json::json;

#[test]
fn create_users_of_every_role_and_list_them() {
    let emu = emulator("create_list");
    let client = client(&emu);

    let regular = client.create_user(&CreateUser::regular("jon")).unwrap();
    assert!(!regular.is_moderator);
    assert_eq!(regular.chat_room, None);
    assert_eq!(regular.user_id.len(), 24);
    assert_eq!(regular.access_token.split('.').count(), 3, "a JWT");

    let everywhere = client.create_user(&CreateUser::moderator("ann")).unwrap();
    assert!(everywhere.is_moderator);
    assert_eq!(everywhere.chat_room, None);

    let scoped = client
        .create_user(&CreateUser::room_moderator("bob", "room-1"))
        .unwrap();
    assert!(scoped.is_moderator);
    assert_eq!(scoped.chat_room.as_deref(), Some("room-1"));

    let extra = CreateUser::regular("eve")
        .field("uniqueUserIdentifier", "crm-42")
        .field("email", "eve@example.com")
        .field("meta", json!({"plan": "gold"}));
    client.create_user(&extra).unwrap();

    // The wire body is exactly what the role says, with the extra fields unchanged.
    let bodies: Vec<serde_json::Value> = emu
        .journal()
        .iter()
        .filter(|e| e.path == CREATE)
        .map(|e| serde_json::from_str(&e.body).unwrap())
        .collect();
    assert_eq!(bodies[0], json!({"username": "jon", "isModerator": false}));
    assert_eq!(bodies[1], json!({"username": "ann", "isModerator": true}));
    assert_eq!(
        bodies[2],
        json!({"username": "bob", "isModerator": true, "chatRoom": "room-1"})
    );
    assert_eq!(bodies[3]["meta"], json!({"plan": "gold"}));

    let page = client.list_users(&ListUsers::default()).unwrap();
    assert_eq!((page.total, page.limit, page.skip), (4, 50, 0));
    let names: Vec<_> = page
        .data
        .iter()
        .map(|u| u.username.clone().unwrap())
        .collect();
    assert_eq!(names, ["jon", "ann", "bob", "eve"]);
    let eve = &page.data[3];
    assert_eq!(eve.unique_user_identifier.as_deref(), Some("crm-42"));
    assert_eq!(eve.email.as_deref(), Some("eve@example.com"));
    assert_eq!(
        eve.extra["meta"],
        json!({"plan": "gold"}),
        "fields the contract does not name are kept"
    );
    assert_eq!(eve.id(), Some(page.data[3].user_id.as_deref().unwrap()));

    let second = client.list_users(&ListUsers::page(2, 1)).unwrap();
    assert_eq!(
        (second.total, second.limit, second.skip, second.data.len()),
        (4, 2, 1, 2)
    );
    assert_eq!(second.data[0].username.as_deref(), Some("ann"));

    let journal = emu.journal();
    let listing = journal.iter().rev().find(|e| e.path == USERS).unwrap();
    assert_eq!(listing.query, "auth=REDACTED&limit=2&skip=1");
    let version = env!("CARGO_PKG_VERSION");
    let platform = format!("{} {}", std::env::consts::OS, std::env::consts::ARCH);
    assert_eq!(
        listing.user_agent.as_deref(),
        Some(format!("roomchat-rust/{version} (core {version}; {platform})").as_str())
    );

    let named = builder(&emu).app_name("billing-sync/2.1").build().unwrap();
    named.list_chat_rooms().unwrap();
    let sent = emu.journal().pop().unwrap();
    assert_eq!(
        sent.user_agent.as_deref(),
        Some(
            format!("roomchat-rust/{version} (core {version}; {platform}) billing-sync/2.1")
                .as_str()
        )
    );
}

#[test]
fn deactivate_by_either_identifier() {
    let emu = emulator("deactivate");
    let client = client(&emu);
    let jon = client.create_user(&CreateUser::regular("jon")).unwrap();
    client
        .create_user(&CreateUser::regular("ann").field("uniqueUserIdentifier", "crm-1"))
        .unwrap();

    let done = client
        .deactivate_user(&DeactivateUser::UserId(jon.user_id.clone()))
        .unwrap();
    assert!(done.success);
    assert_eq!(done.message.as_deref(), Some("user deactivated"));
    client
        .deactivate_user(&DeactivateUser::UniqueUserIdentifier("crm-1".into()))
        .unwrap();
    assert_eq!(client.list_users(&ListUsers::default()).unwrap().total, 0);

    let again = client
        .deactivate_user(&DeactivateUser::UserId(jon.user_id))
        .unwrap_err();
    assert_eq!(again.kind(), ErrorKind::UserNotFound);
    assert_eq!(again.status(), Some(400));
    assert_eq!(again.method(), Some("DELETE"));
    assert_eq!(
        again.path(),
        Some("/consumer/api/v2/user/deactivate?auth=REDACTED")
    );

    let bodies: Vec<String> = emu
        .journal()
        .iter()
        .filter(|e| e.path == DEACTIVATE)
        .map(|e| e.body.clone())
        .collect();
    assert_eq!(bodies[1], r#"{"uniqueUserIdentifier":"crm-1"}"#);
}

#[test]
fn conversation_messages_by_both_path_forms() {
    let emu = emulator("messages");
    let client = client(&emu);
    emu.create_room(json!({"roomId": "bbNiVFoXm", "name": "General"}));
    let conversation = emu.add_conversation(
        "bbNiVFoXm",
        vec![
            json!({"messages": "first", "user": {"username": "jon", "email": "jon@example.com"}}),
            json!({"messages": "second", "user": {"username": "ann", "uniqueUserIdentifier": "crm-2"}}),
        ],
    );
    for form in [PathForm::Room, PathForm::ChatRoom] {
        let query = ConversationMessages::new("bbNiVFoXm", &conversation).path_form(form);
        let messages = client.conversation_messages(&query).unwrap();
        assert_eq!(messages.len(), 2);
        assert_eq!(messages[0].text.as_deref(), Some("first"));
        assert_eq!(
            messages[0].conversation.as_deref(),
            Some(conversation.as_str())
        );
        assert_eq!(
            messages[0].user.as_ref().unwrap().email.as_deref(),
            Some("jon@example.com")
        );
        assert_eq!(
            messages[1]
                .user
                .as_ref()
                .unwrap()
                .unique_user_identifier
                .as_deref(),
            Some("crm-2")
        );
        assert!(messages[0].created.as_deref().unwrap().ends_with('Z'));
    }
    let paths: Vec<String> = emu.journal().iter().map(|e| e.path.clone()).collect();
    assert_eq!(
        paths[0],
        format!("/consumer/api/v2/room/bbNiVFoXm/conversation/{conversation}/messages")
    );
    assert_eq!(
        paths[1],
        format!("/consumer/api/v2/chatroom/bbNiVFoXm/conversation/{conversation}/messages")
    );

    let missing = client
        .conversation_messages(&ConversationMessages::new("bbNiVFoXm", "nope"))
        .unwrap_err();
    assert_eq!(
        (missing.kind(), missing.message()),
        (ErrorKind::NotFound, "conversation not found")
    );
}

#[test]
fn hostile_ids_cannot_change_the_request() {
    let emu = emulator("hostile");
    let client = client(&emu);
    client.create_user(&CreateUser::regular("jon")).unwrap();
    for (room, conversation) in [
        ("../users", "x"),
        ("a?b#c", "d"),
        ("..", ".."),
        ("r", "../../v2/users?limit=1"),
    ] {
        let e = client
            .conversation_messages(&ConversationMessages::new(room, conversation))
            .unwrap_err();
        // The emulator's 400 says which does not exist: the room or the conversation.
        assert_eq!(e.kind(), ErrorKind::NotFound, "{room} {conversation}: {e}");
        let last = emu.journal().pop().unwrap();
        assert!(
            last.path.starts_with("/consumer/api/v2/room/"),
            "{}",
            last.path
        );
        assert!(last.path.ends_with("/messages"), "{}", last.path);
        assert_eq!(last.query, "auth=REDACTED");
    }
    let deactivated = client.deactivate_user(&DeactivateUser::UserId(
        "x\" , \"uniqueUserIdentifier\": \"y".into(),
    ));
    assert_eq!(
        deactivated.unwrap_err().kind(),
        ErrorKind::UserNotFound,
        "the id stays one JSON string"
    );
}

#[test]
fn chat_rooms_come_back_typed_with_unknown_fields_kept() {
    let emu = emulator("rooms");
    let client = client(&emu);
    assert!(client.list_chat_rooms().unwrap().is_empty());
    emu.create_room(
        json!({"roomId": "r1", "name": "General", "enableChannels": true, "custom": [1, 2]}),
    );
    let rooms = client.list_chat_rooms().unwrap();
    assert_eq!(rooms.len(), 1);
    assert_eq!(rooms[0].room_id.as_deref(), Some("r1"));
    assert_eq!(rooms[0].name.as_deref(), Some("General"));
    assert_eq!(rooms[0].enable_channels, Some(true));
    assert_eq!(rooms[0].extra["custom"], json!([1, 2]));
}

#[test]
fn raw_requests_use_the_same_pipeline() {
    let emu = emulator("raw");
    let client = client(&emu);
    let created = client.create_user(&CreateUser::moderator("ann")).unwrap();

    let validate = RawRequest::new("GET", "/consumer/api/v1/validate")
        .query("accessToken", created.access_token.clone())
        .auth(RawAuth::PublicKey);
    let answer = client.raw_request(&validate).unwrap();
    assert_eq!(answer.status, 200);
    assert_eq!(answer.body["userId"], created.user_id.as_str());
    let sent = emu.journal().pop().unwrap();
    assert!(
        sent.query.starts_with("publicKey=REDACTED&accessToken="),
        "{}",
        sent.query
    );

    let create = RawRequest::new("post", "/consumer/api/v1/user").body(json!({"username": "raw"}));
    assert_eq!(client.raw_request(&create).unwrap().body["username"], "raw");

    let unknown = client
        .raw_request(&RawRequest::new("GET", "/consumer/api/v9/nothing"))
        .unwrap_err();
    // A JSON 404 (`{}`, as an unknown room's) reads as not found.
    assert_eq!(
        (unknown.kind(), unknown.status()),
        (ErrorKind::NotFound, Some(404))
    );

    for bad in [
        RawRequest::new("TRACE", "/x"),
        RawRequest::new("GET", "no-slash"),
        RawRequest::new("GET", "/a?b=c"),
        RawRequest::new("GET", "/a/../b"),
        RawRequest::new("GET", "/a").query("auth", "other"),
        // In any case: the service reads query names without case.
        RawRequest::new("GET", "/a").query("Auth", "other"),
    ] {
        assert_eq!(
            client.raw_request(&bad).unwrap_err().kind(),
            ErrorKind::Validation,
            "{bad:?}"
        );
    }
}

#[test]
fn sign_in_url_signs_in_with_the_right_scope() {
    let emu = emulator("signin");
    let client = client(&emu);
    emu.create_room(json!({"roomId": "room-1", "name": "One"}));
    emu.create_room(json!({"roomId": "room 2", "name": "Two"}));
    let scoped = client
        .create_user(&CreateUser::room_moderator("bob", "room-1"))
        .unwrap();
    assert!(matches!(
        CreateUser::room_moderator("bob", "room-1").role,
        Role::ModeratorOfRoom(_)
    ));

    let fetch = |url: &str| {
        // A browser that trusts the emulator's CA when it serves TLS.
        let roots = match emu.ca_pem() {
            Some(ca) => ureq::tls::RootCerts::new_with_certs(&[ureq::tls::Certificate::from_pem(
                ca.as_bytes(),
            )
            .unwrap()]),
            None => ureq::tls::RootCerts::WebPki,
        };
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .tls_config(ureq::tls::TlsConfig::builder().root_certs(roots).build())
            .build()
            .into();
        agent
            .get(url)
            .call()
            .unwrap()
            .body_mut()
            .read_to_string()
            .unwrap()
    };
    let own = client.sign_in_url("room-1", &scoped.access_token).unwrap();
    assert!(own.starts_with(&format!("{}/room-1?accessToken=", emu.chat_url())));
    assert!(fetch(&own).contains("data-moderator=\"true\""));
    let other = client.sign_in_url("room 2", &scoped.access_token).unwrap();
    assert!(other.contains("/room%202?"), "{other}");
    assert!(
        fetch(&other).contains("data-moderator=\"false\""),
        "a room moderator is a regular user elsewhere"
    );

    let iframe = client
        .iframe_html("room-1", &scoped.access_token, "100%", "600")
        .unwrap();
    assert!(iframe.starts_with(&format!("<iframe src=\"{}/room-1?", emu.chat_url())));
    assert!(iframe.contains("width=\"100%\" height=\"600\""));
}
