//! The operations whose surfaces are generated from their declarations
//! (`api/operations.toml`): eject all users and update bot, end to end against
//! the emulator, with their records, their declared limits, their exact paths
//! and their retry class.

mod common;

use common::*;
use roomchat::{ErrorKind, UpdateBot};
use serde_json::json;

const ROOM: &str = "bbNiVFoXm";

#[test]
fn eject_all_users_signs_a_rooms_users_out() {
    let emu = emulator("eject_all");
    emu.create_room(json!({"roomId": ROOM, "name": "Webinar"}));
    let client = client(&emu);

    let answer = client.eject_all_users(ROOM).unwrap();
    assert_eq!(answer.success, Some(true));
    assert_eq!(emu.ejections(ROOM), 1);
    // As the reference page prints it: no `/consumer` prefix, `chatRoom` in camel case.
    let path = format!("/api/v1/chatRoom/{ROOM}/eject-all");
    assert_eq!(arrivals(&emu, "POST", &path), 1);

    let unknown = client.eject_all_users("nope").unwrap_err();
    assert_eq!(unknown.status(), Some(404));
    assert_eq!(unknown.message(), "invalid chatroom id");
    assert_eq!(emu.ejections("nope"), 0);
    // An empty id is refused before anything is sent.
    let empty = client.eject_all_users("").unwrap_err();
    assert_eq!(empty.kind(), ErrorKind::Validation);
    assert_eq!(emu.journal().len(), 2);
}

#[test]
fn update_bot_changes_fields_and_answers_the_typed_bot() {
    let emu = emulator("update_bot");
    let bot = emu.add_bot(json!({
        "name": "helper", "webhookURL": "https://hooks.example/b", "trigger": "mention",
    }));
    let bot_id = bot["_id"].as_str().unwrap().to_owned();
    let client = client(&emu);

    let params = UpdateBot::new()
        .description("answers questions")
        .message_history_limit(20)
        .enabled(false);
    let answer = client.update_bot(&bot_id, &params).unwrap();
    assert_eq!(answer.success, Some(true));
    let updated = answer.bot.expect("the bot");
    assert_eq!(updated.id.as_deref(), Some(bot_id.as_str()));
    assert_eq!(updated.name.as_deref(), Some("helper"));
    assert_eq!(updated.description.as_deref(), Some("answers questions"));
    assert_eq!(updated.message_history_limit, Some(20));
    assert_eq!(updated.enabled, Some(false));
    assert_eq!(
        updated.webhook_url.as_deref(),
        Some("https://hooks.example/b")
    );
    assert_eq!(updated.customer.as_deref(), Some("emulated-customer"));
    let sent = emu.journal();
    let last = sent.last().unwrap();
    assert_eq!(
        (last.method.as_str(), last.path.as_str()),
        ("PUT", format!("/consumer/api/v2/bot/{bot_id}").as_str())
    );
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&last.body).unwrap(),
        json!({"description": "answers questions", "messageHistoryLimit": 20, "enabled": false})
    );
}

#[test]
fn update_bot_refuses_what_its_declaration_refuses_and_sends_nothing() {
    let emu = emulator("update_bot_limits");
    let client = client(&emu);
    for params in [
        UpdateBot::new().name("x".repeat(101)),
        UpdateBot::new().description("d".repeat(1001)),
        UpdateBot::new().trigger("always"),
        UpdateBot::new().message_history_limit(101),
    ] {
        let error = client.update_bot("b1", &params).unwrap_err();
        assert_eq!(error.kind(), ErrorKind::Validation, "{error}");
    }
    assert!(client.update_bot("", &UpdateBot::new()).is_err());
    assert!(emu.journal().is_empty());
}

#[test]
fn update_bot_answers_the_services_errors() {
    let emu = emulator("update_bot_errors");
    let bot = emu.add_bot(json!({"name": "helper", "webhookURL": "https://hooks.example/b"}));
    emu.add_bot(json!({"name": "other", "webhookURL": "https://hooks.example/o"}));
    let bot_id = bot["_id"].as_str().unwrap();
    let client = client(&emu);

    // The trigger/visibility rule: a bot on every message cannot answer in private.
    let private = UpdateBot::new()
        .trigger("message")
        .message_visibility("private");
    let refused = client.update_bot(bot_id, &private).unwrap_err();
    assert_eq!(refused.kind(), ErrorKind::InvalidRequest);
    assert!(
        refused.message().contains("trigger on every message"),
        "{refused}"
    );
    // Names are unique in the account.
    let taken = client
        .update_bot(bot_id, &UpdateBot::new().name("other"))
        .unwrap_err();
    assert_eq!(taken.kind(), ErrorKind::InvalidRequest);
    // An unknown bot is a 401 whose body says so.
    let unknown = client
        .update_bot("000000000000000000000000", &UpdateBot::new().enabled(true))
        .unwrap_err();
    assert_eq!(unknown.status(), Some(401));
    assert!(unknown.message().contains("bot not found"), "{unknown}");
}

#[test]
fn a_repeatable_post_is_sent_again_after_a_5xx() {
    // eject all users is a POST declared repeatable: retried as a GET is.
    let emu = emulator("eject_retry");
    emu.create_room(json!({"roomId": ROOM, "name": "Webinar"}));
    let client = client(&emu);
    let path = format!("/api/v1/chatRoom/{ROOM}/eject-all");
    emu.add_fault(once("POST", &path, respond(503, "", &[])));
    assert_eq!(client.eject_all_users(ROOM).unwrap().success, Some(true));
    assert_eq!(arrivals(&emu, "POST", &path), 2);
    assert_eq!(emu.ejections(ROOM), 1);
}
