//! The operations of `operations.md` beyond the contract's section 4: their
//! success shapes, documented errors, casing, cascades, paging, and seeding.

mod common;

use common::*;
use serde_json::{json, Value};

const ROOMS: &str = "/consumer/api/v1/chatroom";

fn room_path(room: &str, tail: &str) -> String {
    format!("/consumer/api/v1/chatroom/{room}{tail}")
}

/// Creates a room over REST; returns its id.
fn new_room(f: &Fixture, body: Value) -> String {
    let answer = f.call("POST", ROOMS, &body.to_string());
    assert_eq!(answer.status, 200, "{}", answer.text);
    answer.json()["roomId"].as_str().unwrap().to_owned()
}

fn first_detail(answer: &Answer) -> Value {
    answer.json()["error"]["details"][0].clone()
}

#[test]
fn rooms_create_get_update_list_and_validation() {
    let f = Fixture::new();
    let answer = f.call(
        "POST",
        ROOMS,
        r#"{"name": "Lobby", "enableChnnels": "on", "passwordProtected": "off", "metadata": "m", "customization": {"textColor": "black"}, "newSetting": 7}"#,
    );
    assert_eq!(answer.status, 200, "{}", answer.text);
    let created = answer.json();
    let room_id = created["roomId"].as_str().unwrap();
    assert_eq!(room_id.len(), 9);
    assert!(room_id
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'));
    assert_eq!(created["success"], true);
    assert_eq!(
        created["url"],
        format!("{}/{room_id}", f.emu.chat_url()).as_str()
    );

    let record = f.get(&room_path(room_id, ""), "").json();
    assert_eq!(record["name"], "Lobby");
    assert_eq!(record["enableChannels"], true);
    assert_eq!(record["passwordProtected"], false);
    assert_eq!(record["roomPassword"], Value::Null);
    assert_eq!(record["newSetting"], 7, "unknown fields are kept");
    assert_eq!(record["customization"]["textColor"], "black");
    assert_eq!(record["chatOff"], false);
    let listed = f.get("/consumer/api/v1/chatrooms", "").json();
    assert_eq!(listed.as_array().unwrap().len(), 1);
    assert_eq!(listed[0], record);

    let missing = f.call("POST", ROOMS, r#"{"name": "S", "passwordProtected": "on"}"#);
    assert_eq!(missing.status, 400);
    assert_eq!(
        missing.json(),
        json!({"error": {"_original": {"name": "S", "passwordProtected": "on"}, "details": [{
            "message": "\"roomPassword\" is required", "path": ["roomPassword"],
            "type": "any.required", "context": {"label": "roomPassword", "key": "roomPassword"}}]}})
    );
    let long = f.call(
        "POST",
        ROOMS,
        &json!({"metadata": "x".repeat(1001)}).to_string(),
    );
    assert_eq!(long.status, 400);
    assert_eq!(first_detail(&long)["type"], "string.max");
    let bad_switch = f.call("POST", ROOMS, r#"{"enableOneToOneChat": true}"#);
    assert_eq!(first_detail(&bad_switch)["type"], "any.only");
    let protected = new_room(&f, json!({"passwordProtected": "on", "roomPassword": "pw"}));
    assert_eq!(
        f.get(&room_path(&protected, ""), "").json()["roomPassword"],
        "pw"
    );

    let update = f.call(
        "PUT",
        &room_path(room_id, ""),
        r#"{"name": "Hall", "passwordProtected": false, "metadata": "n"}"#,
    );
    assert_eq!(update.status, 200, "{}", update.text);
    assert_eq!(update.json()["roomId"], room_id);
    assert_eq!(update.json()["success"], true);
    assert_eq!(f.get(&room_path(room_id, ""), "").json()["name"], "Hall");
    let bad = f.call(
        "PUT",
        &room_path(room_id, ""),
        r#"{"passwordProtected": "yes"}"#,
    );
    assert_eq!(bad.status, 400);
    let detail = first_detail(&bad);
    assert_eq!(
        detail["message"],
        "\"passwordProtected\" must be one of [on, off, false]"
    );
    assert_eq!(detail["type"], "any.only");
    assert_eq!(detail["path"], json!(["passwordProtected"]));

    let unknown = f.get(&room_path("nosuchroo", ""), "");
    assert_eq!((unknown.status, unknown.json()), (404, json!({})));
    let unknown = f.call("PUT", &room_path("nosuchroo", ""), "{}");
    assert_eq!(
        (unknown.status, unknown.json()),
        (404, json!({"message": "invalid chatroom id"}))
    );
}

#[test]
fn chat_off_refuses_user_messages_but_not_system_ones() {
    let f = Fixture::new();
    let room = new_room(&f, json!({"name": "R"}));
    let on_off = |state: &str| {
        let answer = f.call(
            "POST",
            &format!("/consumer/api/v1/chatRoom/{room}/{state}"),
            "",
        );
        assert_eq!(
            (answer.status, answer.json()),
            (200, json!({"success": true}))
        );
    };
    on_off("off");
    let message = f.call(
        "POST",
        &room_path(&room, "/chatoffmessage"),
        r#"{"message": "back soon"}"#,
    );
    assert_eq!(
        (message.status, message.json()),
        (200, json!({"success": true}))
    );
    let record = f.get(&room_path(&room, ""), "").json();
    assert_eq!(
        (&record["chatOff"], &record["chatOffMessage"]),
        (&json!(true), &json!("back soon"))
    );
    let refused = f.call(
        "POST",
        &room_path(&room, "/message"),
        r#"{"message": "hi", "user": {"username": "guest"}}"#,
    );
    assert_eq!(
        (refused.status, refused.json()),
        (
            400,
            json!({"success": false, "message": "chat is turned off in this chat room"})
        )
    );
    let system = f.call(
        "POST",
        &room_path(&room, "/message"),
        r#"{"message": "maintenance", "systemMessage": true}"#,
    );
    assert_eq!(system.status, 200, "{}", system.text);
    on_off("on");
    assert_eq!(f.get(&room_path(&room, ""), "").json()["chatOff"], false);
    let unknown = f.call("POST", "/consumer/api/v1/chatRoom/nosuchroo/on", "");
    assert_eq!(unknown.status, 404);
    let no_text = f.call("POST", &room_path(&room, "/chatoffmessage"), "{}");
    assert_eq!(first_detail(&no_text)["type"], "any.required");
}

#[test]
fn room_messages_authors_shape_order_and_errors() {
    let f = Fixture::new();
    let room = new_room(&f, json!({"name": "R"}));
    let user = f.create_user(
        r#"{"username": "ann", "uniqueUserIdentifier": "crm-ann", "isModerator": true}"#,
    );
    let post = |body: Value| f.call("POST", &room_path(&room, "/message"), &body.to_string());
    for body in [
        json!({"message": "one", "userAccessToken": user["accessToken"]}),
        json!({"message": "two", "systemMessage": true}),
        json!({"message": "three", "user": {"username": "drop-in", "externalProfilePic": "https://p/x.png"}}),
    ] {
        let answer = post(body);
        assert_eq!(
            (answer.status, answer.json()),
            (200, json!({"success": true}))
        );
    }
    let page = f
        .get(&format!("/consumer/api/v1/chatRoom/{room}/messages"), "")
        .json();
    assert_eq!(
        (
            &page["limit"],
            &page["skip"],
            &page["totalRecords"],
            &page["count"]
        ),
        (&json!(50), &json!(0), &json!(3), &json!(3))
    );
    let messages = page["messages"].as_array().unwrap();
    let texts: Vec<&str> = messages
        .iter()
        .map(|m| m["message"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["one", "two", "three"], "oldest first");
    let first = &messages[0];
    assert_eq!(first["chatRoom"], room.as_str());
    assert_eq!(first["user"]["_id"], user["userId"]);
    assert_eq!(first["user"]["uniqueUserIdentifier"], "crm-ann");
    assert_eq!(first["user"]["username"], "ann");
    assert_eq!(first["user"]["isModerator"], true);
    assert!(first["user"]["parentCustomerAccount"].is_string());
    assert_eq!(first["likes"], json!([]));
    assert_eq!(first["actionButtons"], json!([]));
    assert_eq!(first["__v"], 0);
    assert!(first["customer"].is_string());
    assert_eq!(first["_id"].as_str().unwrap().len(), 24);
    assert!(humantime::parse_rfc3339(first["created"].as_str().unwrap()).is_ok());
    assert_eq!(messages[1]["user"]["username"], "system");
    assert_eq!(messages[2]["user"]["username"], "drop-in");

    // Zero or two authors: the validation object.
    let none = post(json!({"message": "x"}));
    assert_eq!(none.status, 400);
    assert_eq!(first_detail(&none)["type"], "object.missing");
    let two = post(json!({"message": "x", "systemMessage": true, "user": {"username": "u"}}));
    assert_eq!(two.status, 400);
    assert_eq!(first_detail(&two)["type"], "object.xor");
    let bad_token = post(json!({"message": "x", "userAccessToken": "nope"}));
    assert_eq!(
        (bad_token.status, bad_token.json()),
        (400, json!({"message": "invalid accessToken"}))
    );
    let unknown = f.call(
        "POST",
        &room_path("nosuchroo", "/message"),
        r#"{"message": "x", "systemMessage": true}"#,
    );
    assert_eq!(
        (unknown.status, unknown.json()),
        (404, json!({"message": "invalid chatroom id"}))
    );
    let unknown = f.get("/consumer/api/v1/chatRoom/nosuchroo/messages", "");
    assert_eq!(unknown.status, 404);
}

#[test]
fn paging_attachments_and_a_100000_message_export() {
    let f = Fixture::new();
    let room = f.emu.create_room(json!({"name": "Big"}))["roomId"]
        .as_str()
        .unwrap()
        .to_owned();
    let started = std::time::Instant::now();
    let seeded = f.admin(
        "POST",
        "/messages",
        Some(&json!({"roomId": room, "count": 100_000, "attachmentEvery": 1000}).to_string()),
    );
    let seed_time = started.elapsed();
    assert_eq!(seeded.status, 200, "{}", seeded.text);
    assert_eq!(seeded.json(), json!({"added": 100_000, "total": 100_000}));

    let path = format!("/consumer/api/v1/chatRoom/{room}/messages");
    let started = std::time::Instant::now();
    let mut skip = 0;
    let mut seen = 0;
    loop {
        let page = f.get(&path, &format!("limit=200&skip={skip}")).json();
        assert_eq!(page["totalRecords"], 100_000);
        let messages = page["messages"].as_array().unwrap();
        if skip == 0 || skip == 99_800 {
            assert_eq!(
                messages[0]["message"],
                format!("message {}", skip + 1).as_str(),
                "oldest first"
            );
        }
        seen += messages.len();
        if messages.len() < 200 {
            break;
        }
        skip += 200;
    }
    let export_time = started.elapsed();
    assert_eq!(seen, 100_000);
    // One page alone, timed inside the emulator's state (no HTTP).
    println!(
        "seeded 100,000 messages in {seed_time:?}; exported them in 501 pages of 200 over HTTP in {export_time:?}"
    );

    let files = f.get(&path, "onlyAttachments=true&limit=5&skip=98").json();
    assert_eq!(
        (
            &files["totalRecords"],
            &files["count"],
            &files["limit"],
            &files["skip"]
        ),
        (&json!(100), &json!(2), &json!(5), &json!(98))
    );
    assert_eq!(files["messages"][0]["message"], "message 99000");
    assert_eq!(files["messages"][0]["file"]["contentType"], "image/png");

    // Appending does not move what a later page holds.
    let before = f.get(&path, "limit=3&skip=10").json()["messages"].clone();
    f.emu.seed_messages(&room, None, 5);
    assert_eq!(f.get(&path, "limit=3&skip=10").json()["messages"], before);
    let past = f.get(&path, "skip=200000").json();
    assert_eq!(
        (&past["count"], &past["totalRecords"]),
        (&json!(0), &json!(100_005))
    );
    assert_eq!(f.get(&path, "limit=x").status, 400);
}

#[test]
fn delete_room_messages_keeps_what_it_is_told_to() {
    let f = Fixture::new();
    let room = new_room(&f, json!({"name": "R"}));
    let channel = f.emu.add_channel(&room, json!({"channelName": "news"}));
    let channel_id = channel["_id"].as_str().unwrap();
    let conversation = f.emu.add_conversation(
        &room,
        vec![json!({"messages": "psst", "user": {"username": "a"}})],
    );
    let reset = || {
        f.emu.seed_messages(&room, None, 3);
        f.emu.seed_messages(&room, Some(channel_id), 2);
    };
    let counts = || {
        let room_total = f
            .get(&format!("/consumer/api/v1/chatRoom/{room}/messages"), "")
            .json()["totalRecords"]
            .as_u64()
            .unwrap();
        let channel_total = f
            .get(
                &format!("/consumer/api/v1/chatRoom/{room}/channel/{channel_id}/messages"),
                "",
            )
            .json()["totalRecords"]
            .as_u64()
            .unwrap();
        let private = f
            .get(
                &format!("/consumer/api/v2/room/{room}/conversation/{conversation}/messages"),
                "",
            )
            .json()
            .as_array()
            .unwrap()
            .len();
        (room_total, channel_total, private)
    };
    reset();
    let delete = |query: &str| {
        let url = f.api(&room_path(&room, "/messages"), query);
        send(&f.agent, "DELETE", &url, None)
    };
    let answer = delete("doNotDeletePrivateMessages=true&doNotDeleteChannelMessages=true");
    assert_eq!(
        (answer.status, answer.json()),
        (200, json!({"success": true, "roomId": room}))
    );
    assert_eq!(counts(), (0, 2, 1));
    reset();
    delete("doNotDeletePrivateMessages=true");
    assert_eq!(counts(), (0, 0, 1));
    delete("");
    assert_eq!(counts(), (0, 0, 0));
    let unknown = send(
        &f.agent,
        "DELETE",
        &f.api(&room_path("nosuchroo", "/messages"), ""),
        None,
    );
    assert_eq!(
        (unknown.status, unknown.json()),
        (404, json!({"message": "invalid chatroom id"}))
    );
}

#[test]
fn channels_create_update_post_list_and_delete_messages() {
    let f = Fixture::new();
    let room = new_room(&f, json!({"name": "R"}));
    let created = f.call(
        "POST",
        &room_path(&room, "/channel"),
        r#"{"channelName": "news", "enabled": true, "notifyAllUsers": false, "metadata": "m"}"#,
    );
    assert_eq!(created.status, 200, "{}", created.text);
    let channel = created.json();
    let id = channel["_id"].as_str().unwrap().to_owned();
    assert_eq!(id.len(), 24);
    assert_eq!(
        channel,
        json!({"_id": id, "channelName": "news", "enabled": true, "notifyAllUsers": false, "metadata": "m", "roomId": room})
    );
    let updated = f.call(
        "PUT",
        &room_path(&room, &format!("/channel/{id}")),
        r#"{"notifyAllUsers": true}"#,
    );
    assert_eq!(updated.status, 200);
    assert_eq!(updated.json()["notifyAllUsers"], true);
    assert_eq!(updated.json()["channelName"], "news");
    let unknown = f.call(
        "PUT",
        &room_path(&room, "/channel/000000000000000000000000"),
        "{}",
    );
    assert_eq!(
        (unknown.status, unknown.json()),
        (400, json!({"message": "channel not found"}))
    );
    let too_long = f.call(
        "POST",
        &room_path(&room, "/channel"),
        &json!({"channelName": "c", "metadata": "x".repeat(1001)}).to_string(),
    );
    assert_eq!(first_detail(&too_long)["type"], "string.max");

    let sent = f.call(
        "POST",
        &room_path(&room, &format!("/channel/{id}/message")),
        r#"{"message": "in the channel", "systemMessage": true}"#,
    );
    assert_eq!((sent.status, sent.json()), (200, json!({"success": true})));
    let page = f
        .get(
            &format!("/consumer/api/v1/chatRoom/{room}/channel/{id}/messages"),
            "",
        )
        .json();
    assert_eq!(page["totalRecords"], 1);
    let message = &page["messages"][0];
    assert_eq!(message["channel"], id.as_str());
    assert!(message.get("chatRoom").is_none());
    let room_page = f
        .get(&format!("/consumer/api/v1/chatRoom/{room}/messages"), "")
        .json();
    assert_eq!(
        room_page["totalRecords"], 0,
        "a channel's messages are its own"
    );

    let message_path = format!(
        "/consumer/api/v2/chatroom/{room}/channel/{id}/message/{}",
        message["_id"].as_str().unwrap()
    );
    let deleted = send(&f.agent, "DELETE", &f.api(&message_path, ""), None);
    assert_eq!(
        (deleted.status, deleted.json()),
        (
            200,
            json!({"success": true, "message": "channel message deleted"})
        )
    );
    let again = send(&f.agent, "DELETE", &f.api(&message_path, ""), None);
    assert_eq!(
        (again.status, again.json()),
        (
            400,
            json!({"success": false, "message": "channel message not found"})
        )
    );
}

#[test]
fn conversations_are_listed_with_their_members() {
    let f = Fixture::new();
    let room = new_room(&f, json!({"name": "R"}));
    f.create_user(r#"{"username": "ann", "uniqueUserIdentifier": "u-ann", "email": "a@x"}"#);
    let id = f.emu.add_conversation_between(
        &room,
        json!({"uniqueUserIdentifier": "u-ann"}),
        json!({"username": "bob"}),
        vec![json!({"messages": "hello", "user": {"username": "ann"}})],
    );
    let over_http = f.admin(
        "POST",
        "/conversations",
        Some(&json!({"roomId": room, "memberOne": {"username": "c"}, "memberTwo": {"username": "d"}, "messages": []}).to_string()),
    );
    assert_eq!(over_http.status, 200, "{}", over_http.text);
    for form in ["room", "chatroom"] {
        let list = f
            .get(&format!("/consumer/api/v2/{form}/{room}/conversations"), "")
            .json();
        assert_eq!(list.as_array().unwrap().len(), 2, "{form}");
        assert_eq!(list[0]["conversationId"], id.as_str());
        assert_eq!(list[0]["roomId"], room.as_str());
        assert_eq!(list[0]["memberOne"]["username"], "ann");
        assert_eq!(list[0]["memberOne"]["email"], "a@x");
        assert_eq!(list[0]["memberOne"]["uniqueUserIdentifier"], "u-ann");
        assert_eq!(list[0]["memberTwo"]["username"], "bob");
        assert!(list[0]["memberTwo"]["_id"].is_string());
        assert_eq!(list[1]["memberTwo"]["username"], "d");
    }
    let unknown = f.get("/consumer/api/v2/room/nosuchroo/conversations", "");
    assert_eq!(
        (unknown.status, unknown.json()),
        (
            400,
            json!({"success": false, "message": "chatroom not found"})
        )
    );
}

#[test]
fn delete_chat_room_cascades() {
    let f = Fixture::new();
    let room = new_room(&f, json!({"name": "Doomed"}));
    let keep = new_room(&f, json!({"name": "Kept"}));
    f.create_user(r#"{"username": "ann", "uniqueUserIdentifier": "u-ann"}"#);
    f.emu.add_member(&room, "u-ann", "moderator");
    f.emu.add_member(&keep, "u-ann", "user");
    let channel = f.emu.add_channel(&room, json!({"channelName": "c"}));
    f.emu.seed_messages(&room, None, 10);
    f.emu
        .seed_messages(&room, Some(channel["_id"].as_str().unwrap()), 10);
    let conversation = f.emu.add_conversation(
        &room,
        vec![json!({"messages": "psst", "user": {"username": "a"}})],
    );
    let deleted = send(&f.agent, "DELETE", &f.api(&room_path(&room, ""), ""), None);
    assert_eq!(
        (deleted.status, deleted.json()),
        (200, json!({"success": true, "roomId": room}))
    );
    assert_eq!(f.get(&room_path(&room, ""), "").status, 404);
    assert_eq!(
        f.get(&format!("/consumer/api/v1/chatRoom/{room}/messages"), "")
            .status,
        404
    );
    assert_eq!(
        f.get(
            &format!("/consumer/api/v2/room/{room}/conversation/{conversation}/messages"),
            ""
        )
        .status,
        400
    );
    let rooms = f.get("/consumer/api/v2/user/u-ann/rooms", "").json();
    assert_eq!(rooms, json!([{"roomId": keep, "name": "Kept"}]));
    // Recreating the same id is not possible over REST; the admin API's room is empty.
    f.emu.create_room(json!({"roomId": room, "name": "Again"}));
    assert_eq!(
        f.get(&format!("/consumer/api/v1/chatRoom/{room}/messages"), "")
            .json()["totalRecords"],
        0
    );
    let again = send(
        &f.agent,
        "DELETE",
        &f.api(&room_path("nosuchroo", ""), ""),
        None,
    );
    assert_eq!(
        (again.status, again.json()),
        (404, json!({"message": "invalid chatroom id"}))
    );
}

#[test]
fn users_update_v2_get_rooms_and_remove() {
    let f = Fixture::new();
    let room = new_room(&f, json!({"name": "Lobby"}));
    let created = f.call(
        "POST",
        "/consumer/api/v2/user",
        &json!({"uniqueUserIdentifier": "crm-7", "username": "zed", "firstName": "Z", "lastName": "Ed",
            "email": "z@x", "meta": {"k": 1}, "externalProfilePicURL": "https://p/z.png",
            "membershipDetails": {"roleName": "moderator", "roomId": room}})
        .to_string(),
    );
    assert_eq!(created.status, 200, "{}", created.text);
    let created = created.json();
    assert_eq!(created["success"], true);
    assert!(created["accessToken"].is_string());
    assert_eq!(created["user"]["username"], "zed");
    assert_eq!(created["user"]["firstName"], "Z");
    assert_eq!(created["user"]["profilePic"], "https://p/z.png");
    let user_id = created["user"]["userId"].as_str().unwrap().to_owned();

    let http = f.call(
        "POST",
        "/consumer/api/v2/user",
        r#"{"uniqueUserIdentifier": "u2", "username": "y", "externalProfilePicURL": "http://p/y.png"}"#,
    );
    assert_eq!(http.status, 400);
    assert_eq!(
        first_detail(&http)["path"],
        json!(["externalProfilePicURL"])
    );
    let no_room = f.call(
        "POST",
        "/consumer/api/v2/user",
        r#"{"uniqueUserIdentifier": "u3", "username": "y", "membershipDetails": {"roleName": "user", "roomId": "nosuchroo"}}"#,
    );
    assert_eq!(
        (no_room.status, no_room.json()),
        (400, json!({"message": "chatRoom not found"}))
    );
    let bad_role = f.call(
        "POST",
        "/consumer/api/v2/user",
        &json!({"uniqueUserIdentifier": "u4", "username": "y", "membershipDetails": {"roleName": "king", "roomId": room}}).to_string(),
    );
    assert_eq!(first_detail(&bad_role)["type"], "any.only");

    let profile = f.get("/consumer/api/v2/user/crm-7", "").json();
    for key in [
        "username",
        "profilePic",
        "profilePicKey",
        "firstName",
        "lastName",
        "meta",
        "created",
        "updated",
        "lastSeen",
        "lastChatRoomId",
        "provisioned",
    ] {
        assert!(profile.get(key).is_some(), "{key}: {profile}");
    }
    assert_eq!(
        (&profile["username"], &profile["lastName"], &profile["meta"]),
        (&json!("zed"), &json!("Ed"), &json!({"k": 1}))
    );
    let unknown = f.get("/consumer/api/v2/user/nobody", "");
    assert_eq!(
        (unknown.status, unknown.json()),
        (400, json!({"message": "user not found"}))
    );
    assert_eq!(
        f.get("/consumer/api/v2/user/crm-7/rooms", "").json(),
        json!([{"roomId": room, "name": "Lobby"}])
    );
    assert_eq!(f.get("/consumer/api/v2/user/nobody/rooms", "").status, 400);

    let updated = f.call(
        "PUT",
        "/consumer/api/v1/user",
        &json!({"userId": user_id, "username": "zed2", "isModerator": true, "externalUserId": 7})
            .to_string(),
    );
    assert_eq!(updated.status, 200, "{}", updated.text);
    let updated = updated.json();
    assert_eq!(
        (
            &updated["username"],
            &updated["userId"],
            &updated["isModerator"]
        ),
        (&json!("zed2"), &json!(user_id), &json!(true))
    );
    assert!(updated["accessToken"].is_string());
    let listed = f.get(USERS, "").json();
    assert_eq!(listed["data"][0]["username"], "zed2");
    assert_eq!(listed["data"][0]["externalUserId"], 7);
    let both = f.call(
        "PUT",
        "/consumer/api/v1/user",
        &json!({"userId": user_id, "uniqueUserIdentifier": "crm-7"}).to_string(),
    );
    assert_eq!(both.status, 400);
    let nobody = f.call(
        "PUT",
        "/consumer/api/v1/user",
        r#"{"uniqueUserIdentifier": "nobody"}"#,
    );
    assert_eq!(
        (nobody.status, nobody.json()),
        (400, json!({"message": "user not found"}))
    );

    let removed = f.call(
        "DELETE",
        "/consumer/api/v2/user",
        r#"{"uniqueUserIdentifier": "crm-7"}"#,
    );
    assert_eq!(
        (removed.status, removed.json()),
        (200, json!({"success": true, "message": "user removed"}))
    );
    assert_eq!(f.get(USERS, "").json()["total"], 0);
    assert_eq!(f.get("/consumer/api/v2/user/crm-7", "").status, 400);
    let members = f
        .get(&format!("/consumer/api/v2/room/{room}/members"), "")
        .json();
    assert_eq!(members["total"], 0, "memberships erased");
    let validate = send(
        &f.agent,
        "POST",
        &format!(
            "{}/consumer/api/v1/user/accessToken/validate?publicKey={}",
            f.emu.base_url(),
            f.emu.public_key()
        ),
        Some(&json!({"accessToken": created["accessToken"]}).to_string()),
    );
    assert_eq!(validate.status, 400, "a removed user's token is invalid");
    let again = f.call(
        "DELETE",
        "/consumer/api/v2/user",
        r#"{"uniqueUserIdentifier": "crm-7"}"#,
    );
    assert_eq!(
        (again.status, again.json()),
        (400, json!({"message": "user not found"}))
    );
    assert!(f.emu.users().is_empty());
}

#[test]
fn members_set_list_remove() {
    let f = Fixture::new();
    let room = new_room(&f, json!({"name": "Lobby"}));
    for n in 0..3 {
        f.create_user(&format!(
            r#"{{"username": "m{n}", "uniqueUserIdentifier": "u{n}"}}"#
        ));
    }
    let path = format!("/consumer/api/v2/room/{room}/member");
    let set = f.call(
        "POST",
        &path,
        r#"{"uniqueUserIdentifier": "u0", "roleName": "admin"}"#,
    );
    assert_eq!(set.status, 200, "{}", set.text);
    let member = set.json();
    assert_eq!(member["chatRoom"], json!({"name": "Lobby", "roomId": room}));
    assert_eq!(member["user"]["username"], "m0");
    assert_eq!(member["user"]["uniqueUserIdentifier"], "u0");
    assert_eq!(member["roleName"], "admin");
    assert!(member["created"].is_string());
    // An upsert: the role changes, the member stays one.
    let again = f.call(
        "POST",
        &path,
        r#"{"uniqueUserIdentifier": "u0", "roleName": "moderator"}"#,
    );
    assert_eq!(again.json()["roleName"], "moderator");
    f.emu.add_member(&room, "u1", "guest");
    let over_admin = f.admin(
        "POST",
        "/members",
        Some(&json!({"roomId": room, "uniqueUserIdentifier": "u2"}).to_string()),
    );
    assert_eq!(over_admin.json()["roleName"], "user");

    let listing = format!("/consumer/api/v2/room/{room}/members");
    let page = f.get(&listing, "limit=2&skip=1").json();
    assert_eq!(
        (&page["total"], &page["limit"], &page["skip"]),
        (&json!(3), &json!(2), &json!(1))
    );
    let roles: Vec<&str> = page["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["roleName"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["guest", "user"]);
    assert_eq!(
        f.get(&listing, "").json()["data"][0]["roleName"],
        "moderator"
    );
    let over = f.get(&listing, "limit=201");
    assert_eq!(
        (over.status, over.json()),
        (
            400,
            json!({"error": true, "errorMessage": "limit should be less than 200"})
        )
    );
    let unknown = f.get("/consumer/api/v2/room/nosuchroo/members", "");
    assert_eq!(
        (unknown.status, unknown.json()),
        (
            400,
            json!({"message": "chatroom of the specified roomId not found"})
        )
    );
    let bad_role = f.call(
        "POST",
        &path,
        r#"{"uniqueUserIdentifier": "u0", "roleName": "king"}"#,
    );
    assert_eq!(bad_role.status, 400);
    assert_eq!(
        first_detail(&bad_role)["message"],
        "\"roleName\" must be one of [user, guest, admin, moderator]"
    );
    let nobody = f.call(
        "POST",
        &path,
        r#"{"uniqueUserIdentifier": "zz", "roleName": "user"}"#,
    );
    assert_eq!(
        (nobody.status, nobody.json()),
        (400, json!({"message": "user not found"}))
    );
    let no_room = f.call(
        "POST",
        "/consumer/api/v2/room/nosuchroo/member",
        r#"{"uniqueUserIdentifier": "u0", "roleName": "user"}"#,
    );
    assert_eq!(
        (no_room.status, no_room.json()),
        (400, json!({"message": "chatRoom not found"}))
    );

    let removed = f.call("DELETE", &path, r#"{"uniqueUserIdentifier": "u1"}"#);
    assert_eq!(
        (removed.status, removed.json()),
        (
            200,
            json!({"success": true, "message": "user removed as member"})
        )
    );
    let not_member = f.call("DELETE", &path, r#"{"uniqueUserIdentifier": "u1"}"#);
    assert_eq!(
        (not_member.status, not_member.json()),
        (
            400,
            json!({"success": false, "message": "user is not a member of the chat room"})
        )
    );
    assert_eq!(f.get(&listing, "").json()["total"], 2);
}

#[test]
fn bots_create_list_enable_and_message() {
    let f = Fixture::new();
    let room = new_room(&f, json!({"name": "Lobby"}));
    let created = f.call(
        "POST",
        "/consumer/api/v2/bot",
        r#"{"name": "helper", "webhookURL": "https://hooks.example/h", "description": "d", "trigger": "mention", "messageVisibility": "public"}"#,
    );
    assert_eq!(created.status, 200, "{}", created.text);
    let bot = created.json()["bot"].clone();
    assert_eq!(created.json()["success"], true);
    let bot_id = bot["_id"].as_str().unwrap().to_owned();
    assert_eq!(bot_id.len(), 24);
    for key in [
        "name",
        "description",
        "trigger",
        "messageVisibility",
        "isAllowedInAllChatRooms",
        "messageHistoryLimit",
        "webhookURL",
        "metadata",
        "enabled",
        "customer",
        "created",
    ] {
        assert!(bot.get(key).is_some(), "{key}: {bot}");
    }
    let refuse = |body: &str| {
        let answer = f.call("POST", "/consumer/api/v2/bot", body);
        assert_eq!(answer.status, 400, "{body}: {}", answer.text);
        answer.json()
    };
    assert!(refuse(r#"{"name": "p", "webhookURL": "https://h/x", "trigger": "message", "messageVisibility": "private"}"#)["message"]
        .as_str()
        .unwrap()
        .starts_with("Error: Bots cannot be configured to trigger on every message when message visibility is set to private."));
    let invalid = refuse(r#"{"name": "p"}"#);
    assert_eq!(
        (&invalid["success"], &invalid["message"]),
        (&json!(false), &json!("invalid request"))
    );
    assert!(invalid["error"].is_string());
    assert_eq!(
        refuse(r#"{"name": "p", "webhookURL": "not a uri"}"#)["message"],
        "invalid request"
    );
    let taken = refuse(r#"{"name": "helper", "webhookURL": "https://h/x"}"#);
    assert_eq!(taken["message"], "a bot named \"helper\" already exists");

    let list = f.get("/consumer/api/v2/bots", "").json();
    assert_eq!(list["success"], true);
    assert_eq!(list["bots"], json!([bot]));

    let post_message = |body: Value| {
        f.call(
            "POST",
            &format!("/consumer/api/v2/bot/{bot_id}/chatroom/{room}/message"),
            &body.to_string(),
        )
    };
    let not_enabled = post_message(json!({"message": "hi"}));
    assert_eq!(
        (not_enabled.status, not_enabled.json()),
        (
            400,
            json!({"success": false, "message": "bot is not enabled in this chat room"})
        )
    );
    let enabled = f.call(
        "POST",
        &format!("/consumer/api/v2/bot/{bot_id}/chatroom/{room}/enable"),
        "",
    );
    assert_eq!(
        (enabled.status, enabled.json()),
        (
            200,
            json!({"success": true, "botStatus": {"status": "ENABLED"}})
        )
    );
    let buttons = json!([
        {"type": "link", "displayText": "Docs", "id": "b1", "url": "https://docs.example", "iconURL": "https://i/x.png"},
        {"type": "action", "displayText": "Press", "id": "b2", "payload": "p"}
    ]);
    let sent = post_message(
        json!({"message": "hello", "uniqueUserIdentifier": "u1", "actionButtons": buttons}),
    );
    assert_eq!(
        (sent.status, sent.json()),
        (200, json!({"success": true, "message": "message sent"}))
    );
    let page = f
        .get(&format!("/consumer/api/v1/chatRoom/{room}/messages"), "")
        .json();
    let message = &page["messages"][0];
    assert_eq!(message["message"], "hello");
    assert_eq!(message["user"]["_id"], bot_id.as_str());
    assert_eq!(message["user"]["username"], "helper");
    assert_eq!(message["actionButtons"], buttons);
    for bad in [
        json!({}),
        json!({"message": "x".repeat(1001)}),
        json!({"message": "x", "actionButtons": [{"type": "link", "displayText": "no url"}]}),
        json!({"message": "x", "actionButtons": [{"type": "other", "displayText": "t"}]}),
        json!({"message": "x", "actionButtons": [{"type": "action", "displayText": "t", "imageURL": "http://i"}]}),
    ] {
        let answer = post_message(bad.clone());
        assert_eq!(answer.status, 400, "{bad}");
        assert_eq!(answer.json()["message"], "invalid request", "{bad}");
    }

    let disabled_in_room = f.call(
        "POST",
        &format!("/consumer/api/v2/bot/{bot_id}/chatroom/{room}/disable"),
        "",
    );
    assert_eq!(
        disabled_in_room.json(),
        json!({"success": true, "message": "Bot successfully disabled in the chat room"})
    );
    assert_eq!(post_message(json!({"message": "x"})).status, 400);

    let disable = f.call(
        "POST",
        &format!("/consumer/api/v2/bot/{bot_id}/disable"),
        "",
    );
    assert_eq!(disable.status, 200);
    assert_eq!(disable.json()["bot"]["enabled"], false);
    let enable = f.call("POST", &format!("/consumer/api/v2/bot/{bot_id}/enable"), "");
    assert_eq!(
        (&enable.json()["success"], &enable.json()["bot"]["enabled"]),
        (&json!(true), &json!(true))
    );
    let unknown_bot = json!({"success": false, "message": "bot not found, or customer does not have permission to modify the bot"});
    for path in [
        "/consumer/api/v2/bot/000000000000000000000000/enable".to_owned(),
        "/consumer/api/v2/bot/000000000000000000000000/disable".to_owned(),
        format!("/consumer/api/v2/bot/000000000000000000000000/chatroom/{room}/enable"),
        format!("/consumer/api/v2/bot/000000000000000000000000/chatroom/{room}/message"),
    ] {
        let answer = f.call("POST", &path, r#"{"message": "x"}"#);
        assert_eq!(
            (answer.status, answer.json()),
            (401, unknown_bot.clone()),
            "{path}"
        );
    }
    let unknown_room = f.call(
        "POST",
        &format!("/consumer/api/v2/bot/{bot_id}/chatroom/nosuchroo/disable"),
        "",
    );
    assert_eq!(
        (unknown_room.status, unknown_room.json()),
        (
            401,
            json!({"success": false, "message": "chatroom not found"})
        )
    );
}

#[test]
fn every_path_only_in_its_documented_casing() {
    let f = Fixture::new();
    let room = new_room(&f, json!({"name": "R"}));
    for (method, path) in [
        ("GET", format!("/consumer/api/v1/chatroom/{room}/messages")),
        ("POST", format!("/consumer/api/v1/chatroom/{room}/on")),
        ("POST", format!("/consumer/api/v1/chatRoom/{room}/message")),
        ("GET", format!("/consumer/api/v1/chatRoom/{room}")),
        (
            "POST",
            format!("/consumer/api/v1/chatRoom/{room}/chatoffmessage"),
        ),
        ("POST", "/consumer/api/v1/chatRoom".to_owned()),
        ("GET", format!("/consumer/api/v2/Room/{room}/members")),
        ("POST", "/consumer/api/v2/Bot".to_owned()),
    ] {
        let answer = send(&f.agent, method, &f.api(&path, ""), Some("{}"));
        assert_eq!(
            (answer.status, answer.json()),
            (404, json!({"error": true, "message": "not found"})),
            "{method} {path}"
        );
    }
    // A documented path with another method is a 405 naming the methods.
    let answer = send(&f.agent, "PATCH", &f.api(&room_path(&room, ""), ""), None);
    assert_eq!(
        (answer.status, answer.header("allow")),
        (405, Some("GET, PUT, DELETE"))
    );
}

#[test]
fn new_operations_share_auth_gating_faults_and_the_journal() {
    let f = Fixture::new();
    let room = new_room(&f, json!({"name": "R"}));
    let path = format!("/consumer/api/v1/chatRoom/{room}/messages");
    let no_key = send(
        &f.agent,
        "GET",
        &format!("{}{path}", f.emu.base_url()),
        None,
    );
    assert_eq!(no_key.status, 401);
    f.emu.gate_endpoint("POST", "/consumer/api/v2/bot");
    let gated = f.call(
        "POST",
        "/consumer/api/v2/bot",
        r#"{"name": "b", "webhookURL": "https://h"}"#,
    );
    assert_eq!(gated.status, 400);
    assert!(gated.json()["message"]
        .as_str()
        .unwrap()
        .contains("upgrade"));
    f.emu.ungate_all();
    f.emu.add_fault(roomchat_emulator::Fault {
        method: Some("GET".into()),
        path: path.clone(),
        times: 1,
        action: roomchat_emulator::FaultAction::Respond {
            status: 503,
            headers: vec![],
            body: r#"{"message": "busy"}"#.into(),
            content_type: None,
        },
    });
    assert_eq!(f.get(&path, "").status, 503);
    assert_eq!(f.get(&path, "").status, 200);
    let journal = f.emu.journal();
    let last = journal.last().unwrap();
    assert_eq!(
        (last.method.as_str(), last.path.as_str(), last.status),
        ("GET", path.as_str(), 200)
    );
}
