//! One end-to-end test per operation of issue 29 against ONE emulator for the
//! whole file: each test works in rooms, users and bots of its own, and reads
//! the typed answer, the state change through another operation, and the
//! error kind of an unknown room, channel, bot or user. Then the webinar
//! story, the whole of it in one test.

mod common;

use std::sync::OnceLock;
use std::time::Duration;

use common::*;
use roomchat::*;
use roomchat_emulator::{Emulator, RateLimit};
use serde_json::json;

/// The file's one emulator (a limit no test reaches, a journal that keeps everything).
fn emu() -> &'static Emulator {
    static EMU: OnceLock<Emulator> = OnceLock::new();
    EMU.get_or_init(|| {
        emulator_with("operations", |config| {
            config.rate_limit = RateLimit {
                requests: 1_000_000,
                window: Duration::from_secs(60),
            };
            config.journal_capacity = 1_000_000;
        })
    })
}

fn api() -> Client {
    client(emu())
}

/// A new room named `name` (through the API); its id.
fn new_room(client: &Client, name: &str) -> String {
    let answer = client
        .create_chat_room(&CreateChatRoom::new().name(name))
        .unwrap();
    answer.room_id.expect("a room id")
}

/// A new user with `uid` as its uniqueUserIdentifier (create user v1); its access token.
fn new_user(client: &Client, uid: &str, name: &str) -> CreatedUser {
    client
        .create_user(&CreateUser::regular(name).field("uniqueUserIdentifier", uid))
        .unwrap()
}

fn kind<T: std::fmt::Debug>(result: Result<T>) -> ErrorKind {
    result.unwrap_err().kind()
}

/// How many requests with `method` to `path` reached the emulator (the file's
/// tests run in parallel: paths here carry a room id of one test only).
fn sent(method: &str, path: &str) -> usize {
    arrivals(emu(), method, path)
}

const UNKNOWN_ROOM: &str = "no-such-room";
const UNKNOWN_ID: &str = "0123456789abcdef01234567";

// ---- rooms ----------------------------------------------------------------------------

#[test]
fn create_chat_room_sends_switches_as_on_off_and_untyped_fields_as_given() {
    let client = api();
    let answer = client
        .create_chat_room(
            &CreateChatRoom::new()
                .name("Launch")
                .password_protected(true)
                .room_password("s3cret")
                .enable_channels(true)
                .pre_moderated_chat_room(false)
                .chat_room_permission_level("members")
                .customization(json!({"sidebarColor": "#112233"}))
                .field("mainColor", "#abcdef"),
        )
        .unwrap();
    assert_eq!(answer.success, Some(true));
    let room_id = answer.room_id.unwrap();
    assert!(answer.url.unwrap().ends_with(&room_id));
    let room = client.get_chat_room(&room_id).unwrap();
    assert_eq!(room.name.as_deref(), Some("Launch"));
    assert_eq!(room.password_protected, Some(true));
    assert_eq!(room.enable_channels, Some(true));
    assert_eq!(room.pre_moderated_chat_room, Some(false));
    assert_eq!(room.extra["mainColor"], "#abcdef");
    assert_eq!(room.extra["customization"]["sidebarColor"], "#112233");

    // The service's validation object: a password-protected room needs its password.
    let e = client
        .create_chat_room(&CreateChatRoom::new().password_protected(true))
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidRequest);
    assert!(e.message().contains("roomPassword"), "{e}");
    // A choice outside the declaration: nothing is sent.
    let before = sent("POST", "/consumer/api/v1/chatroom");
    let e = client.create_chat_room(&CreateChatRoom::new().file_sharing_mode("videos"));
    assert_eq!(kind(e), ErrorKind::Validation);
    assert_eq!(sent("POST", "/consumer/api/v1/chatroom"), before);
}

#[test]
fn list_chat_rooms_gives_typed_rooms() {
    let client = api();
    let id = new_room(&client, "Listed");
    let rooms = client.list_chat_rooms().unwrap();
    let room = rooms
        .iter()
        .find(|r| r.room_id.as_deref() == Some(id.as_str()))
        .expect("the new room is listed");
    assert_eq!(room.name.as_deref(), Some("Listed"));
    assert_eq!(room.password_protected, Some(false));
}

#[test]
fn get_chat_room_reads_a_room_and_knows_an_unknown_one() {
    let client = api();
    let id = new_room(&client, "Read me");
    let room = client.get_chat_room(&id).unwrap();
    assert_eq!(room.room_id.as_deref(), Some(id.as_str()));
    assert_eq!(room.name.as_deref(), Some("Read me"));
    assert_eq!(
        kind(client.get_chat_room(UNKNOWN_ROOM)),
        ErrorKind::NotFound
    );
}

#[test]
fn update_chat_room_changes_what_get_chat_room_reads() {
    let client = api();
    let id = new_room(&client, "Before");
    let answer = client
        .update_chat_room(
            &id,
            &UpdateChatRoom::new()
                .name("After")
                .metadata("{\"tier\":2}")
                .room_password("pw")
                .password_protected(true),
        )
        .unwrap();
    assert_eq!(answer.room_id.as_deref(), Some(id.as_str()));
    let room = client.get_chat_room(&id).unwrap();
    assert_eq!(room.name.as_deref(), Some("After"));
    assert_eq!(room.metadata.as_deref(), Some("{\"tier\":2}"));
    assert_eq!(room.password_protected, Some(true));
    client
        .update_chat_room(&id, &UpdateChatRoom::new().password_protected(false))
        .unwrap();
    assert_eq!(
        client.get_chat_room(&id).unwrap().password_protected,
        Some(false)
    );
    let too_long = UpdateChatRoom::new().metadata("x".repeat(1001));
    assert_eq!(
        kind(client.update_chat_room(&id, &too_long)),
        ErrorKind::Validation
    );
    assert_eq!(
        kind(client.update_chat_room(UNKNOWN_ROOM, &UpdateChatRoom::new().name("x"))),
        ErrorKind::NotFound
    );
}

#[test]
fn delete_chat_room_deletes_the_room_with_its_messages_and_channels() {
    let client = api();
    let id = new_room(&client, "Doomed");
    let channel = client
        .create_channel(&id, "side", &CreateChannel::new())
        .unwrap()
        .id
        .unwrap();
    emu().seed_messages(&id, None, 3);
    let answer = client.delete_chat_room(&id).unwrap();
    assert_eq!(
        (answer.success, answer.room_id.as_deref()),
        (Some(true), Some(id.as_str()))
    );
    assert_eq!(kind(client.get_chat_room(&id)), ErrorKind::NotFound);
    assert_eq!(
        kind(client.room_messages(&id, &RoomMessages::new())),
        ErrorKind::NotFound
    );
    assert_eq!(
        kind(client.channel_messages(&id, &channel, &ChannelMessages::new())),
        ErrorKind::NotFound
    );
    // What a repeat meets after a lost answer.
    assert_eq!(kind(client.delete_chat_room(&id)), ErrorKind::NotFound);
}

#[test]
fn turn_chat_off_and_on_send_their_own_paths_and_gate_users_posts() {
    let client = api();
    let id = new_room(&client, "Switch");
    let jon = new_user(&client, &format!("switch-{id}"), "jon");
    let as_jon = SendRoomMessage::new().user_access_token(jon.access_token.clone());

    assert_eq!(client.turn_chat_off(&id).unwrap().success, Some(true));
    // The reference pages print these paths the wrong way round: off is `/off`.
    let off = format!("/consumer/api/v1/chatRoom/{id}/off");
    let on = format!("/consumer/api/v1/chatRoom/{id}/on");
    assert_eq!((sent("POST", &off), sent("POST", &on)), (1, 0));
    let e = client
        .send_room_message(&id, "muted?", &as_jon)
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidRequest, "{e}");
    // The room's system may still post.
    client
        .send_room_message(
            &id,
            "we are off",
            &SendRoomMessage::new().system_message(true),
        )
        .unwrap();

    assert_eq!(client.turn_chat_on(&id).unwrap().success, Some(true));
    assert_eq!((sent("POST", &off), sent("POST", &on)), (1, 1));
    client.send_room_message(&id, "back", &as_jon).unwrap();
    let texts: Vec<String> = client
        .iter_room_messages(&id, &RoomMessages::new())
        .map(|m| m.unwrap().message.unwrap())
        .collect();
    assert_eq!(texts, ["we are off", "back"]);
    assert_eq!(kind(client.turn_chat_on(UNKNOWN_ROOM)), ErrorKind::NotFound);
    assert_eq!(
        kind(client.turn_chat_off(UNKNOWN_ROOM)),
        ErrorKind::NotFound
    );
}

#[test]
fn set_chat_off_message_is_what_the_room_shows() {
    let client = api();
    let id = new_room(&client, "Quiet");
    let answer = client.set_chat_off_message(&id, "Back at 10:00").unwrap();
    assert_eq!(answer.success, Some(true));
    let room = client.get_chat_room(&id).unwrap();
    assert_eq!(room.extra["chatOffMessage"], "Back at 10:00");
    assert_eq!(
        kind(client.set_chat_off_message(UNKNOWN_ROOM, "x")),
        ErrorKind::NotFound
    );
}

#[test]
fn eject_all_users_signs_a_room_out() {
    let client = api();
    let id = new_room(&client, "Eject");
    assert_eq!(client.eject_all_users(&id).unwrap().success, Some(true));
    assert_eq!(emu().ejections(&id), 1);
    assert_eq!(sent("POST", &format!("/api/v1/chatRoom/{id}/eject-all")), 1);
    assert_eq!(
        kind(client.eject_all_users(UNKNOWN_ROOM)),
        ErrorKind::NotFound
    );
}

// ---- room messages, channels, conversations -------------------------------------------

#[test]
fn room_messages_pages_typed_messages_and_filters_attachments() {
    let client = api();
    let id = new_room(&client, "History");
    emu().add_messages(json!({"roomId": id, "count": 25, "attachmentEvery": 5}));
    let page = client
        .room_messages(&id, &RoomMessages::new().limit(10).skip(20))
        .unwrap();
    assert_eq!(
        (page.total_records, page.count, page.skip, page.limit),
        (Some(25), Some(5), Some(20), Some(10))
    );
    let messages = page.messages.unwrap();
    assert_eq!(messages[0].message.as_deref(), Some("message 21"));
    assert_eq!(messages[0].chat_room.as_deref(), Some(id.as_str()));
    let author = messages[0].user.as_ref().unwrap();
    assert_eq!(author.username.as_deref(), Some("seed-author"));
    let file = messages[4]
        .file
        .as_ref()
        .expect("message 25 carries a file");
    assert_eq!(
        (file.file_type.as_deref(), file.size),
        (Some("image"), Some(1024.0))
    );

    let files = client
        .room_messages(&id, &RoomMessages::new().only_attachments(true))
        .unwrap();
    assert_eq!(files.total_records, Some(5));
    assert!(files.messages.unwrap().iter().all(|m| m.file.is_some()));

    // Every page in turn, 10 at a time: 10, 10, 5, and the end.
    let sizes: Vec<usize> = client
        .room_messages_pages(&id, &RoomMessages::new().limit(10))
        .map(|p| p.unwrap().messages.unwrap().len())
        .collect();
    assert_eq!(sizes, [10, 10, 5]);
    assert_eq!(
        kind(client.room_messages(UNKNOWN_ROOM, &RoomMessages::new())),
        ErrorKind::NotFound
    );
    assert_eq!(
        kind(client.room_messages(&id, &RoomMessages::new().limit(0))),
        ErrorKind::Validation
    );
}

#[test]
fn iter_room_messages_yields_every_message_once_and_resumes_from_next_skip() {
    let client = api();
    let id = new_room(&client, "Export");
    emu().seed_messages(&id, None, 45);
    let mut items = client.iter_room_messages(&id, &RoomMessages::new().limit(20));
    let first: Vec<String> = items
        .by_ref()
        .take(25)
        .map(|m| m.unwrap().message.unwrap())
        .collect();
    assert_eq!(first.last().map(String::as_str), Some("message 25"));
    assert_eq!(
        items.next_skip(),
        25,
        "15 of the second page still buffered"
    );
    let resumed: Vec<String> = client
        .iter_room_messages(&id, &RoomMessages::new().limit(20).skip(items.next_skip()))
        .map(|m| m.unwrap().message.unwrap())
        .collect();
    let expected: Vec<String> = (26..=45).map(|n| format!("message {n}")).collect();
    assert_eq!(resumed, expected);
    let path = format!("/consumer/api/v1/chatRoom/{id}/messages");
    // 2 pages for the first 25, then from 25 one page of 20 that reaches the total.
    assert_eq!(sent("GET", &path), 3);
}

#[test]
fn an_error_mid_export_is_yielded_and_the_same_page_fetched_again() {
    let client = builder(emu()).max_retries(0).build().unwrap();
    let id = new_room(&client, "Flaky");
    emu().seed_messages(&id, None, 30);
    let path = format!("/consumer/api/v1/chatRoom/{id}/messages");
    let mut pages = client.room_messages_pages(&id, &RoomMessages::new().limit(10));
    assert_eq!(pages.next().unwrap().unwrap().count, Some(10));
    emu().add_fault(once("GET", &path, respond(503, "", &[])));
    let e = pages.next().unwrap().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ServerError);
    assert_eq!(pages.next_skip(), 10, "the failed page is fetched again");
    let rest: Vec<u64> = pages.map(|p| p.unwrap().skip.unwrap() as u64).collect();
    assert_eq!(rest, [10, 20]);
}

#[test]
fn delete_room_messages_keeps_channel_messages_when_told() {
    let client = api();
    let id = new_room(&client, "Purge");
    let channel = client
        .create_channel(&id, "kept", &CreateChannel::new())
        .unwrap()
        .id
        .unwrap();
    emu().seed_messages(&id, None, 4);
    emu().seed_messages(&id, Some(&channel), 3);
    let keep = DeleteRoomMessages::new().do_not_delete_channel_messages(true);
    let answer = client.delete_room_messages(&id, &keep).unwrap();
    assert_eq!(answer.room_id.as_deref(), Some(id.as_str()));
    let count = |c: &Client| {
        (
            c.room_messages(&id, &RoomMessages::new())
                .unwrap()
                .total_records,
            c.channel_messages(&id, &channel, &ChannelMessages::new())
                .unwrap()
                .total_records,
        )
    };
    assert_eq!(count(&client), (Some(0), Some(3)));
    client
        .delete_room_messages(&id, &DeleteRoomMessages::new())
        .unwrap();
    assert_eq!(count(&client), (Some(0), Some(0)));
    assert_eq!(
        kind(client.delete_room_messages(UNKNOWN_ROOM, &DeleteRoomMessages::new())),
        ErrorKind::NotFound
    );
}

#[test]
fn send_room_message_posts_as_each_of_the_three_authors() {
    let client = api();
    let id = new_room(&client, "Authors");
    let ann = new_user(&client, &format!("ann-{id}"), "ann");
    client
        .send_room_message(
            &id,
            "from ann",
            &SendRoomMessage::new().user_access_token(ann.access_token),
        )
        .unwrap();
    client
        .send_room_message(
            &id,
            "from system",
            &SendRoomMessage::new().system_message(true),
        )
        .unwrap();
    let answer = client
        .send_room_message(
            &id,
            "from a guest",
            &SendRoomMessage::new().user(json!({"username": "guest-7"})),
        )
        .unwrap();
    assert_eq!(answer.success, Some(true));
    let messages: Vec<ChatMessage> = client
        .iter_room_messages(&id, &RoomMessages::new())
        .collect::<Result<_>>()
        .unwrap();
    let authors: Vec<(&str, &str)> = messages
        .iter()
        .map(|m| {
            (
                m.message.as_deref().unwrap(),
                m.user.as_ref().unwrap().username.as_deref().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        authors,
        [
            ("from ann", "ann"),
            ("from system", "system"),
            ("from a guest", "guest-7")
        ]
    );
    assert_eq!(
        messages[0].user.as_ref().unwrap().id.as_deref(),
        Some(ann.user_id.as_str())
    );
    // Exactly one author, checked before anything is sent.
    let path = format!("/consumer/api/v1/chatroom/{id}/message");
    let before = sent("POST", &path);
    assert_eq!(
        kind(client.send_room_message(&id, "nobody", &SendRoomMessage::new())),
        ErrorKind::Validation
    );
    let two = SendRoomMessage::new()
        .system_message(true)
        .user(json!({"username": "x"}));
    assert_eq!(
        kind(client.send_room_message(&id, "two", &two)),
        ErrorKind::Validation
    );
    assert_eq!(sent("POST", &path), before);
    assert_eq!(
        kind(client.send_room_message(
            UNKNOWN_ROOM,
            "x",
            &SendRoomMessage::new().system_message(true)
        )),
        ErrorKind::NotFound
    );
}

#[test]
fn create_channel_gives_the_channel() {
    let client = api();
    let id = new_room(&client, "Channels");
    let channel = client
        .create_channel(
            &id,
            "announcements",
            &CreateChannel::new().notify_all_users(true).metadata("m"),
        )
        .unwrap();
    assert_eq!(channel.channel_name.as_deref(), Some("announcements"));
    assert_eq!(
        (channel.notify_all_users, channel.enabled),
        (Some(true), Some(true))
    );
    assert_eq!(channel.room_id.as_deref(), Some(id.as_str()));
    assert_eq!(channel.id.as_deref().map(str::len), Some(24));
    assert_eq!(
        kind(client.create_channel(UNKNOWN_ROOM, "x", &CreateChannel::new())),
        ErrorKind::NotFound
    );
}

#[test]
fn update_channel_changes_the_channel() {
    let client = api();
    let id = new_room(&client, "Channel edits");
    let channel_id = client
        .create_channel(&id, "old", &CreateChannel::new())
        .unwrap()
        .id
        .unwrap();
    let channel = client
        .update_channel(
            &id,
            &channel_id,
            &UpdateChannel::new().channel_name("new").enabled(false),
        )
        .unwrap();
    assert_eq!(
        (channel.channel_name.as_deref(), channel.enabled),
        (Some("new"), Some(false))
    );
    let e = client
        .update_channel(&id, UNKNOWN_ID, &UpdateChannel::new().enabled(true))
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotFound, "{e}");
}

#[test]
fn send_channel_message_and_channel_messages() {
    let client = api();
    let id = new_room(&client, "Channel talk");
    let channel_id = client
        .create_channel(&id, "talk", &CreateChannel::new())
        .unwrap()
        .id
        .unwrap();
    let answer = client
        .send_channel_message(
            &id,
            &channel_id,
            "hello channel",
            &SendChannelMessage::new().system_message(true),
        )
        .unwrap();
    assert_eq!(answer.success, Some(true));
    emu().seed_messages(&id, Some(&channel_id), 4);
    let page = client
        .channel_messages(&id, &channel_id, &ChannelMessages::new().limit(2))
        .unwrap();
    assert_eq!((page.total_records, page.count), (Some(5), Some(2)));
    let first = &page.messages.unwrap()[0];
    assert_eq!(first.message.as_deref(), Some("hello channel"));
    assert_eq!(first.channel.as_deref(), Some(channel_id.as_str()));
    // The room's own history holds none of them.
    assert_eq!(
        client
            .room_messages(&id, &RoomMessages::new())
            .unwrap()
            .total_records,
        Some(0)
    );
    let all: Vec<ChatMessage> = client
        .iter_channel_messages(&id, &channel_id, &ChannelMessages::new().limit(2))
        .collect::<Result<_>>()
        .unwrap();
    assert_eq!(all.len(), 5);
    assert_eq!(
        client
            .channel_messages_pages(&id, &channel_id, &ChannelMessages::new().limit(2))
            .count(),
        3
    );
    assert_eq!(
        kind(client.send_channel_message(
            &id,
            UNKNOWN_ID,
            "x",
            &SendChannelMessage::new().system_message(true)
        )),
        ErrorKind::NotFound
    );
    assert_eq!(
        kind(client.channel_messages(&id, UNKNOWN_ID, &ChannelMessages::new())),
        ErrorKind::NotFound
    );
}

#[test]
fn delete_channel_message_removes_one_message() {
    let client = api();
    let id = new_room(&client, "Channel delete");
    let channel_id = client
        .create_channel(&id, "c", &CreateChannel::new())
        .unwrap()
        .id
        .unwrap();
    emu().seed_messages(&id, Some(&channel_id), 2);
    let page = client
        .channel_messages(&id, &channel_id, &ChannelMessages::new())
        .unwrap();
    let first = page.messages.unwrap()[0].id.clone().unwrap();
    let answer = client
        .delete_channel_message(&id, &channel_id, &first)
        .unwrap();
    assert_eq!(answer.success, Some(true));
    let left = client
        .channel_messages(&id, &channel_id, &ChannelMessages::new())
        .unwrap();
    assert_eq!(left.total_records, Some(1));
    assert_eq!(
        left.messages.unwrap()[0].message.as_deref(),
        Some("message 2")
    );
    assert_eq!(
        kind(client.delete_channel_message(&id, &channel_id, &first)),
        ErrorKind::NotFound
    );
}

#[test]
fn list_conversations_gives_each_conversation_with_both_members() {
    let client = api();
    let id = new_room(&client, "Private talks");
    let ann = new_user(&client, &format!("conv-ann-{id}"), "ann");
    let conversation = emu().add_conversation_between(
        &id,
        json!({"userId": ann.user_id}),
        json!({"username": "bob"}),
        vec![json!({"messages": "hi", "user": {"username": "ann"}})],
    );
    let listed = client.list_conversations(&id).unwrap();
    assert_eq!(listed.len(), 1);
    let c = &listed[0];
    assert_eq!(c.conversation_id.as_deref(), Some(conversation.as_str()));
    assert_eq!(c.room_id.as_deref(), Some(id.as_str()));
    let one = c.member_one.as_ref().unwrap();
    assert_eq!(
        (one.id.as_deref(), one.username.as_deref()),
        (Some(ann.user_id.as_str()), Some("ann"))
    );
    assert_eq!(
        c.member_two.as_ref().unwrap().username.as_deref(),
        Some("bob")
    );
    assert_eq!(
        sent("GET", &format!("/consumer/api/v2/room/{id}/conversations")),
        1
    );
    assert_eq!(
        kind(client.list_conversations(UNKNOWN_ROOM)),
        ErrorKind::NotFound
    );
}

// ---- users ----------------------------------------------------------------------------

#[test]
fn update_user_changes_the_user_by_either_identifier() {
    let client = api();
    let jon = new_user(&client, "update-jon", "jon");
    let answer = client
        .update_user(
            &UpdateUser::new()
                .unique_user_identifier("update-jon")
                .username("jonathan")
                .external_user_id(json!(42))
                .meta(json!({"plan": "gold"})),
        )
        .unwrap();
    assert_eq!(answer.user_id.as_deref(), Some(jon.user_id.as_str()));
    assert_eq!(answer.username.as_deref(), Some("jonathan"));
    assert!(answer.access_token.is_some());
    assert_eq!(
        client.get_user("update-jon").unwrap().meta,
        Some(json!({"plan": "gold"}))
    );
    client
        .update_user(
            &UpdateUser::new()
                .user_id(jon.user_id.clone())
                .is_moderator(true),
        )
        .unwrap();
    assert_eq!(
        kind(client.update_user(&UpdateUser::new().username("nobody"))),
        ErrorKind::Validation
    );
    assert_eq!(
        kind(client.update_user(&UpdateUser::new().user_id(UNKNOWN_ID).username("x"))),
        ErrorKind::UserNotFound
    );
}

#[test]
fn create_user_v2_makes_a_member_with_a_role() {
    let client = api();
    let id = new_room(&client, "Provisioned");
    let made = client
        .create_user_v2(
            "v2-ann",
            "ann",
            &CreateUserV2::new()
                .first_name("Ann")
                .email("ann@example.com")
                .membership_details(json!({"roleName": "moderator", "roomId": id})),
        )
        .unwrap();
    assert!(made.access_token.is_some_and(|t| !t.is_empty()));
    let user = made.user.unwrap();
    assert_eq!(user.username.as_deref(), Some("ann"));
    let members = client.list_members(&id, &ListMembers::new()).unwrap();
    let member = &members.data.unwrap()[0];
    assert_eq!(member.role_name.as_deref(), Some("moderator"));
    assert_eq!(
        client.get_user("v2-ann").unwrap().first_name.as_deref(),
        Some("Ann")
    );
    let e = client.create_user_v2(
        "v2-bob",
        "bob",
        &CreateUserV2::new()
            .membership_details(json!({"roleName": "user", "roomId": UNKNOWN_ROOM})),
    );
    assert_eq!(kind(e), ErrorKind::NotFound);
}

#[test]
fn get_user_reads_the_profile() {
    let client = api();
    let made = client
        .create_user_v2("profile-1", "pat", &CreateUserV2::new().last_name("Smith"))
        .unwrap();
    let profile = client.get_user("profile-1").unwrap();
    assert_eq!(profile.username.as_deref(), Some("pat"));
    assert_eq!(profile.last_name.as_deref(), Some("Smith"));
    assert_eq!(profile.id, made.user.unwrap().id);
    assert_eq!(profile.provisioned, Some(true));
    assert!(profile.created.is_some());
    assert_eq!(
        kind(client.get_user("profile-none")),
        ErrorKind::UserNotFound
    );
}

#[test]
fn user_rooms_lists_the_rooms_a_user_is_a_member_of() {
    let client = api();
    let a = new_room(&client, "Room A");
    let b = new_room(&client, "Room B");
    new_user(&client, "rooms-kim", "kim");
    assert!(client.user_rooms("rooms-kim").unwrap().is_empty());
    client.set_member(&a, "rooms-kim", "user").unwrap();
    client.set_member(&b, "rooms-kim", "guest").unwrap();
    let rooms = client.user_rooms("rooms-kim").unwrap();
    let named: Vec<(&str, &str)> = rooms
        .iter()
        .map(|r| (r.room_id.as_deref().unwrap(), r.name.as_deref().unwrap()))
        .collect();
    assert_eq!(named, [(a.as_str(), "Room A"), (b.as_str(), "Room B")]);
    assert_eq!(
        kind(client.user_rooms("rooms-none")),
        ErrorKind::UserNotFound
    );
}

#[test]
fn remove_user_removes_the_user_and_their_memberships() {
    let client = api();
    let id = new_room(&client, "Leaving");
    let lee = new_user(&client, "remove-lee", "lee");
    client.set_member(&id, "remove-lee", "user").unwrap();
    let answer = client
        .remove_user(&RemoveUser::new().unique_user_identifier("remove-lee"))
        .unwrap();
    assert_eq!(answer.message.as_deref(), Some("user removed"));
    assert_eq!(kind(client.get_user("remove-lee")), ErrorKind::UserNotFound);
    assert_eq!(
        client.list_members(&id, &ListMembers::new()).unwrap().total,
        Some(0)
    );
    assert_eq!(
        kind(client.validate_access_token(&lee.access_token)),
        ErrorKind::InvalidRequest
    );
    // A repeat after a lost answer.
    assert_eq!(
        kind(client.remove_user(&RemoveUser::new().user_id(lee.user_id))),
        ErrorKind::UserNotFound
    );
}

// ---- members --------------------------------------------------------------------------

#[test]
fn list_members_pages_and_iterates() {
    let client = api();
    let id = new_room(&client, "Crowd");
    for n in 0..5 {
        let uid = format!("crowd-{n}");
        new_user(&client, &uid, &format!("member {n}"));
        emu().add_member(&id, &uid, "user");
    }
    let page = client
        .list_members(&id, &ListMembers::new().limit(2).skip(4))
        .unwrap();
    assert_eq!((page.total, page.skip), (Some(5), Some(4)));
    let member = &page.data.unwrap()[0];
    assert_eq!(
        member.user.as_ref().unwrap().username.as_deref(),
        Some("member 4")
    );
    assert_eq!(
        member.chat_room.as_ref().unwrap().name.as_deref(),
        Some("Crowd")
    );
    let names: Vec<String> = client
        .iter_list_members(&id, &ListMembers::new().limit(2))
        .map(|m| m.unwrap().user.unwrap().username.unwrap())
        .collect();
    assert_eq!(names.len(), 5);
    assert_eq!(names[4], "member 4");
    assert_eq!(
        client
            .list_members_pages(&id, &ListMembers::new().limit(2))
            .count(),
        3
    );
    let too_many = client.list_members(&id, &ListMembers::new().limit(201));
    assert_eq!(kind(too_many), ErrorKind::Validation);
    assert_eq!(
        kind(client.list_members(UNKNOWN_ROOM, &ListMembers::new())),
        ErrorKind::NotFound
    );
}

#[test]
fn set_member_adds_then_changes_the_role() {
    let client = api();
    let id = new_room(&client, "Roles");
    new_user(&client, "roles-max", "max");
    let member = client.set_member(&id, "roles-max", "user").unwrap();
    assert_eq!(member.role_name.as_deref(), Some("user"));
    assert_eq!(
        member.chat_room.unwrap().room_id.as_deref(),
        Some(id.as_str())
    );
    let member = client.set_member(&id, "roles-max", "moderator").unwrap();
    assert_eq!(member.role_name.as_deref(), Some("moderator"));
    let page = client.list_members(&id, &ListMembers::new()).unwrap();
    assert_eq!(page.total, Some(1), "an upsert: one membership");
    assert_eq!(
        kind(client.set_member(&id, "roles-max", "owner")),
        ErrorKind::Validation
    );
    assert_eq!(
        kind(client.set_member(&id, "roles-none", "user")),
        ErrorKind::UserNotFound
    );
    assert_eq!(
        kind(client.set_member(UNKNOWN_ROOM, "roles-max", "user")),
        ErrorKind::NotFound
    );
}

#[test]
fn remove_member_removes_the_membership() {
    let client = api();
    let id = new_room(&client, "Kick");
    new_user(&client, "kick-zoe", "zoe");
    client.set_member(&id, "kick-zoe", "user").unwrap();
    let answer = client.remove_member(&id, "kick-zoe").unwrap();
    assert_eq!(answer.message.as_deref(), Some("user removed as member"));
    assert!(client.user_rooms("kick-zoe").unwrap().is_empty());
    // Not a member any more: what a repeat meets.
    assert_eq!(
        kind(client.remove_member(&id, "kick-zoe")),
        ErrorKind::NotFound
    );
}

// ---- bots -----------------------------------------------------------------------------

fn new_bot(client: &Client, name: &str) -> String {
    client
        .create_bot(name, "https://hooks.example.com/bot", &CreateBot::new())
        .unwrap()
        .bot
        .unwrap()
        .id
        .unwrap()
}

#[test]
fn create_bot_gives_the_bot_and_refuses_private_answers_to_every_message() {
    let client = api();
    let answer = client
        .create_bot(
            "helper-create",
            "https://hooks.example.com/helper",
            &CreateBot::new()
                .trigger("mention")
                .message_visibility("private")
                .message_history_limit(5),
        )
        .unwrap();
    let bot = answer.bot.unwrap();
    assert_eq!(bot.name.as_deref(), Some("helper-create"));
    assert_eq!(
        bot.webhook_url.as_deref(),
        Some("https://hooks.example.com/helper")
    );
    assert_eq!(
        (bot.trigger.as_deref(), bot.message_history_limit),
        (Some("mention"), Some(5))
    );
    assert_eq!(bot.id.as_deref().map(str::len), Some(24));
    let refused = client.create_bot(
        "helper-private",
        "https://hooks.example.com/x",
        &CreateBot::new()
            .trigger("message")
            .message_visibility("private"),
    );
    assert_eq!(kind(refused), ErrorKind::InvalidRequest);
    let taken = client.create_bot(
        "helper-create",
        "https://hooks.example.com/x",
        &CreateBot::new(),
    );
    assert_eq!(kind(taken), ErrorKind::InvalidRequest);
}

#[test]
fn list_bots_lists_the_accounts_bots() {
    let client = api();
    let id = new_bot(&client, "lister");
    let list = client.list_bots().unwrap();
    assert_eq!(list.success, Some(true));
    let bots = list.bots.unwrap();
    let bot = bots
        .iter()
        .find(|b| b.id.as_deref() == Some(id.as_str()))
        .unwrap();
    assert_eq!(bot.name.as_deref(), Some("lister"));
}

#[test]
fn update_bot_changes_the_bot() {
    let client = api();
    let id = new_bot(&client, "updater");
    let bot = client
        .update_bot(&id, &UpdateBot::new().description("answers FAQs"))
        .unwrap()
        .bot
        .unwrap();
    assert_eq!(bot.description.as_deref(), Some("answers FAQs"));
    assert_eq!(
        kind(client.update_bot(UNKNOWN_ID, &UpdateBot::new().enabled(true))),
        ErrorKind::NotFound
    );
}

#[test]
fn enable_bot_and_disable_bot_switch_the_bot() {
    let client = api();
    let id = new_bot(&client, "switcher");
    let bot = client.disable_bot(&id).unwrap().bot.unwrap();
    assert_eq!(bot.enabled, Some(false));
    let bot = client.enable_bot(&id).unwrap().bot.unwrap();
    assert_eq!(bot.enabled, Some(true));
    // The service's 401 for an unknown bot is read by its body: not a bad key.
    assert_eq!(kind(client.enable_bot(UNKNOWN_ID)), ErrorKind::NotFound);
    assert_eq!(kind(client.disable_bot(UNKNOWN_ID)), ErrorKind::NotFound);
}

#[test]
fn bots_in_rooms_and_their_messages() {
    let client = api();
    let room = new_room(&client, "Bot room");
    let bot = new_bot(&client, "concierge");
    let buttons = json!([
        {"type": "link", "displayText": "Docs", "url": "https://example.com/docs"},
        {"type": "action", "displayText": "Call me", "id": "call", "payload": "p"}
    ]);
    let with_buttons = SendBotMessage::new().action_buttons(buttons);
    // Not enabled in the room yet.
    assert_eq!(
        kind(client.send_bot_message(&bot, &room, "hi", &with_buttons)),
        ErrorKind::InvalidRequest
    );
    let enabled = client.enable_bot_in_room(&bot, &room).unwrap();
    assert_eq!(
        enabled.bot_status.unwrap().status.as_deref(),
        Some("ENABLED")
    );
    let answer = client
        .send_bot_message(&bot, &room, "How can I help?", &with_buttons)
        .unwrap();
    assert_eq!(answer.message.as_deref(), Some("message sent"));
    let page = client.room_messages(&room, &RoomMessages::new()).unwrap();
    let message = &page.messages.unwrap()[0];
    assert_eq!(message.message.as_deref(), Some("How can I help?"));
    assert_eq!(
        message.user.as_ref().unwrap().username.as_deref(),
        Some("concierge")
    );
    let buttons = message.action_buttons.as_ref().unwrap();
    assert_eq!(
        (buttons[0].button_type.as_deref(), buttons[0].url.as_deref()),
        (Some("link"), Some("https://example.com/docs"))
    );
    assert_eq!(buttons[1].button_id.as_deref(), Some("call"));

    let disabled = client.disable_bot_in_room(&bot, &room).unwrap();
    assert_eq!(
        disabled.message.as_deref(),
        Some("Bot successfully disabled in the chat room")
    );
    assert_eq!(
        kind(client.send_bot_message(&bot, &room, "again", &SendBotMessage::new())),
        ErrorKind::InvalidRequest
    );
    for unknown in [
        client.enable_bot_in_room(UNKNOWN_ID, &room),
        client.enable_bot_in_room(&bot, UNKNOWN_ROOM),
        client.disable_bot_in_room(&bot, UNKNOWN_ROOM),
    ] {
        assert_eq!(kind(unknown), ErrorKind::NotFound);
    }
    assert_eq!(
        kind(client.send_bot_message(&bot, UNKNOWN_ROOM, "x", &SendBotMessage::new())),
        ErrorKind::NotFound
    );
    // Over 1000 characters: nothing is sent.
    assert_eq!(
        kind(client.send_bot_message(&bot, &room, &"x".repeat(1001), &SendBotMessage::new())),
        ErrorKind::Validation
    );
}

// ---- the webinar story ----------------------------------------------------------------

/// A backend provisions a room per webinar, makes the host its moderator,
/// posts as the system and as the host, exports the transcript page by page,
/// and deletes the room.
#[test]
fn the_webinar_story() {
    let client = api();
    let room_id = client
        .create_chat_room(
            &CreateChatRoom::new()
                .name("Webinar: Rust in production")
                .enable_channels(false),
        )
        .unwrap()
        .room_id
        .unwrap();
    let host = client
        .create_user_v2("webinar-host", "Grace", &CreateUserV2::new())
        .unwrap();
    let host_token = host.access_token.unwrap();
    let member = client
        .set_member(&room_id, "webinar-host", "moderator")
        .unwrap();
    assert_eq!(member.role_name.as_deref(), Some("moderator"));

    client
        .send_room_message(
            &room_id,
            "Welcome! We start at 10:00.",
            &SendRoomMessage::new().system_message(true),
        )
        .unwrap();
    for n in 1..=4 {
        client
            .send_room_message(
                &room_id,
                &format!("Slide {n}"),
                &SendRoomMessage::new().user_access_token(host_token.clone()),
            )
            .unwrap();
    }

    // The transcript, 2 messages a request, oldest first.
    let mut transcript = Vec::new();
    for message in client.iter_room_messages(&room_id, &RoomMessages::new().limit(2)) {
        let message = message.unwrap();
        let author = message.user.unwrap();
        transcript.push(format!(
            "{}{}: {}",
            author.username.unwrap(),
            if author.is_moderator == Some(true) {
                " (moderator)"
            } else {
                ""
            },
            message.message.unwrap()
        ));
    }
    assert_eq!(
        transcript,
        [
            "system (moderator): Welcome! We start at 10:00.",
            "Grace: Slide 1",
            "Grace: Slide 2",
            "Grace: Slide 3",
            "Grace: Slide 4",
        ]
    );
    let path = format!("/consumer/api/v1/chatRoom/{room_id}/messages");
    assert_eq!(sent("GET", &path), 3, "pages of 2, 2 and 1");

    client.delete_chat_room(&room_id).unwrap();
    assert_eq!(kind(client.get_chat_room(&room_id)), ErrorKind::NotFound);
    assert!(client.user_rooms("webinar-host").unwrap().is_empty());
}
