//! The quickstart: every endpoint, pagination, an error, a user's lifecycle
//! with its access token, the webinar story (a room made, its host a
//! moderator, posts, the history exported page by page, the room deleted),
//! and the rate-limit state.
//!
//! `cargo run --example quickstart` starts the emulator embedded and talks to it.
//! With `ROOMCHAT_BASE_URL` and `ROOMCHAT_PRIVATE_KEY` set (and optionally
//! `ROOMCHAT_CHAT_URL`, `ROOMCHAT_PUBLIC_KEY`, `ROOMCHAT_ROOM_ID`,
//! `ROOMCHAT_CONVERSATION_ID`), the same walk-through talks to a real account
//! instead — note that it then creates three users and deactivates one of them,
//! and, with the public key, creates a fourth and invalidates its token; the
//! webinar story creates a room, a user and five messages, and deletes the room.

use roomchat::{
    Client, ConversationMessages, CreateChatRoom, CreateUser, DeactivateUser, ErrorKind, ListUsers,
    PathForm, RateLimitConfig, ReactivateUser, RoomMessages, SendRoomMessage,
};
use roomchat_emulator::{Emulator, EmulatorConfig};
use serde_json::json;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    // Keeps the embedded emulator alive for the whole walk-through.
    let mut _emulator = None;
    let (base_url, key, public_key, chat_url, room_id, conversation_id) = match (
        env("ROOMCHAT_BASE_URL"),
        env("ROOMCHAT_PRIVATE_KEY"),
    ) {
        (Some(base_url), Some(key)) => {
            println!("Talking to {base_url} (a real account).");
            (
                base_url,
                key,
                env("ROOMCHAT_PUBLIC_KEY"),
                env("ROOMCHAT_CHAT_URL"),
                env("ROOMCHAT_ROOM_ID"),
                env("ROOMCHAT_CONVERSATION_ID"),
            )
        }
        _ => {
            let emulator = Emulator::start(EmulatorConfig {
                seed_users: 450,
                ..EmulatorConfig::default()
            })?;
            println!(
                "Started the embedded emulator at {} (450 seeded users).",
                emulator.base_url()
            );
            // Rooms and conversations have no REST shape in the contract: the emulator's admin API makes them.
            emulator.create_room(json!({"roomId": "bbNiVFoXm", "name": "Town square"}));
            let conversation = emulator.add_conversation(
                "bbNiVFoXm",
                vec![
                    json!({"messages": "Hello, is anyone here?", "user": {"username": "jon", "email": "jon@example.com"}}),
                    json!({"messages": "Welcome, Jon!", "user": {"username": "ann", "email": "ann@example.com"}}),
                ],
            );
            let out = (
                emulator.base_url().to_owned(),
                emulator.private_key(),
                Some(emulator.public_key()),
                Some(emulator.chat_url().to_owned()),
                Some("bbNiVFoXm".to_owned()),
                Some(conversation),
            );
            _emulator = Some(emulator);
            out
        }
    };

    let mut builder = Client::builder(key)
        .base_url(base_url)
        .app_name("roomchat-quickstart/1.0")
        .rate_limit(RateLimitConfig::default());
    if let Some(chat_url) = &chat_url {
        builder = builder.chat_url(chat_url.clone());
    }
    // Validate Access Token is authenticated by the public key, not the private one.
    if let Some(public_key) = &public_key {
        builder = builder.public_key(public_key.clone());
    }
    let client = builder.build()?;
    println!("Built {client:?} (the key is never shown).\n");

    println!("1. Create users (POST /consumer/api/v1/user)");
    let jon = client
        .create_user(&CreateUser::regular("Jon").field("uniqueUserIdentifier", "crm-jon-1"))?;
    println!(
        "   regular user      Jon  -> userId {} (moderator: {})",
        jon.user_id, jon.is_moderator
    );
    let ann = client.create_user(&CreateUser::moderator("Ann"))?;
    println!(
        "   moderator of all  Ann  -> userId {} (moderator: {})",
        ann.user_id, ann.is_moderator
    );
    let room = room_id.clone().unwrap_or_else(|| "bbNiVFoXm".into());
    let bob = client.create_user(&CreateUser::room_moderator("Bob", room.clone()))?;
    println!(
        "   moderator of {room} Bob -> userId {} (chatRoom: {:?})",
        bob.user_id, bob.chat_room
    );

    println!("\n2. List users (GET /consumer/api/v2/users)");
    let page = client.list_users(&ListUsers::page(5, 0))?;
    println!(
        "   first page: {} of {} users (limit {}, skip {})",
        page.data.len(),
        page.total,
        page.limit,
        page.skip
    );
    for user in &page.data {
        println!(
            "   - {:<16} {}",
            user.username.as_deref().unwrap_or("?"),
            user.id().unwrap_or("?")
        );
    }

    println!("\n3. Every user, fetched lazily 200 a page");
    let mut count = 0;
    for user in client.users() {
        user?;
        count += 1;
    }
    println!("   iterated over {count} users");

    println!("\n4. Deactivate a user (DELETE /consumer/api/v2/user/deactivate)");
    let done = client.deactivate_user(&DeactivateUser::UniqueUserIdentifier("crm-jon-1".into()))?;
    println!(
        "   by uniqueUserIdentifier: success={} message={:?}",
        done.success, done.message
    );

    println!("\n5. An error: deactivating Jon again");
    match client.deactivate_user(&DeactivateUser::UserId(jon.user_id.clone())) {
        Err(e) if e.kind() == ErrorKind::UserNotFound => {
            println!("   {:?} (code {}): {e}", e.kind(), e.kind().code());
        }
        other => println!("   unexpected: {other:?}"),
    }

    println!("\n6. Chat rooms (GET /consumer/api/v1/chatrooms)");
    for room in client.list_chat_rooms()? {
        println!(
            "   {} {:?}",
            room.room_id.as_deref().unwrap_or("?"),
            room.name.as_deref().unwrap_or("")
        );
    }

    if let (Some(room), Some(conversation)) = (&room_id, &conversation_id) {
        println!(
            "\n7. Conversation messages (GET /consumer/api/v2/room/…/conversation/…/messages)"
        );
        let query = ConversationMessages::new(room.clone(), conversation.clone());
        for message in client.conversation_messages(&query)? {
            let author = message
                .user
                .as_ref()
                .and_then(|u| u.username.as_deref())
                .unwrap_or("?");
            println!(
                "   [{}] {author}: {}",
                message.created.as_deref().unwrap_or("?"),
                message.text.as_deref().unwrap_or("")
            );
        }
        let same = client.conversation_messages(&query.path_form(PathForm::ChatRoom))?;
        println!(
            "   the chatroom/… path form gives the same {} messages",
            same.len()
        );
    }

    if chat_url.is_some() {
        println!("\n8. Sign Bob in to a room in a browser");
        let url = client.sign_in_url(&room, &bob.access_token)?;
        let shown = url.split("accessToken=").next().unwrap_or_default();
        println!("   {shown}accessToken=<Bob's token>");
        let iframe = client.iframe_html(&room, &bob.access_token, "100%", "600")?;
        println!(
            "   as an iframe: {}…></iframe> ({} characters)",
            &iframe[..iframe.find("accessToken=").unwrap_or(0)],
            iframe.len()
        );
    }

    if public_key.is_some() {
        println!("\n9. A user's lifecycle and its access token");
        let eve = client.create_user(&CreateUser::regular("Eve"))?;
        println!("   created Eve -> userId {}", eve.user_id);
        let record = client.validate_access_token(&eve.access_token)?;
        println!(
            "   validate her token (POST …/user/accessToken/validate, public key): {} {:?}, issued at {} (Unix time)",
            record.id,
            record.username.as_deref().unwrap_or("?"),
            record
                .iat
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_secs())
        );
        client.deactivate_user(&DeactivateUser::UserId(eve.user_id.clone()))?;
        let refused = client.validate_access_token(&eve.access_token);
        println!(
            "   deactivated: her token is refused ({})",
            refused.err().map(|e| e.to_string()).unwrap_or_default()
        );
        let back = client.reactivate_user(&ReactivateUser::UserId(eve.user_id.clone()))?;
        let valid = client.validate_access_token(&eve.access_token).is_ok();
        println!(
            "   reactivated (POST /consumer/api/v2/user/reactivate): {:?}; her token validates: {valid}",
            back.message.as_deref().unwrap_or("")
        );
        client.invalidate_access_token(&eve.access_token)?;
        match client.validate_access_token(&eve.access_token) {
            Err(e) if e.kind() == ErrorKind::InvalidRequest => {
                println!(
                    "   invalidated (POST …/user/accesstoken/invalidate): validate fails: {}",
                    e.message()
                );
            }
            other => println!("   unexpected: {other:?}"),
        }
    }

    println!(
        "\n10. The webinar story: a room, its host a moderator, posts, the transcript, the end"
    );
    let webinar = client
        .create_chat_room(&CreateChatRoom::new().name("Webinar: Rust in production"))?
        .room_id
        .ok_or("the service gave no roomId")?;
    println!("   created room {webinar} (POST /consumer/api/v1/chatroom)");
    let host = client.create_user(
        &CreateUser::regular("Grace").field("uniqueUserIdentifier", format!("host-{webinar}")),
    )?;
    let member = client.set_member(&webinar, &format!("host-{webinar}"), "moderator")?;
    println!(
        "   Grace is its {} (POST /consumer/api/v2/room/{webinar}/member)",
        member.role_name.as_deref().unwrap_or("?")
    );
    client.send_room_message(
        &webinar,
        "Welcome! We start at 10:00.",
        &SendRoomMessage::new().system_message(true),
    )?;
    for slide in 1..=4 {
        client.send_room_message(
            &webinar,
            &format!("Slide {slide}"),
            &SendRoomMessage::new().user_access_token(host.access_token.clone()),
        )?;
    }
    // The history, 2 messages a request here (200 by default): an error would be an
    // item, and the next step would fetch the same page again.
    println!("   the transcript, page by page (GET …/chatRoom/{webinar}/messages):");
    for message in client.iter_room_messages(&webinar, &RoomMessages::new().limit(2)) {
        let message = message?;
        println!(
            "   - {}: {}",
            message
                .user
                .and_then(|u| u.username)
                .unwrap_or_else(|| "?".into()),
            message.message.unwrap_or_default()
        );
    }
    client.delete_chat_room(&webinar)?;
    match client.get_chat_room(&webinar) {
        Err(e) if e.kind() == ErrorKind::NotFound => {
            println!("   deleted (DELETE /consumer/api/v1/chatroom/{webinar}): {e}")
        }
        other => println!("   unexpected: {other:?}"),
    }

    let state = client.rate_limit_state();
    println!(
        "\n11. Rate-limit budget of this key: {} used, {} remaining of {} per {:?}; next slot in {:?}",
        state.used, state.remaining, state.limit, state.window, state.next_free_in
    );
    Ok(())
}
