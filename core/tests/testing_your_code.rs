//! A test of your own code against the emulator, in Rust: `roomchat-emulator`
//! as a dev-dependency. (emulator/README.md, "Testing your code", shows it.)

use std::time::Duration;

use roomchat::{Client, CreateUser};
use roomchat_emulator::{Emulator, EmulatorConfig, Fault, FaultAction};

/// Your code: makes `username` a moderator of `room` unless the name is taken.
fn sign_up(client: &Client, username: &str, room: &str) -> Result<String, String> {
    for user in client.users() {
        if user.map_err(|e| e.to_string())?.username.as_deref() == Some(username) {
            return Err(format!("{username} is taken"));
        }
    }
    let created = client.create_user(&CreateUser::room_moderator(username, room));
    Ok(created.map_err(|e| e.to_string())?.user_id)
}

#[test]
fn signup_backs_off_after_a_429() {
    let emu = Emulator::start(EmulatorConfig::default()).unwrap(); // stops when dropped
    emu.seed_users(3);
    emu.add_fault(Fault {
        method: Some("POST".into()),
        path: "/consumer/api/v1/user".into(),
        times: 1,
        action: FaultAction::Respond {
            status: 429,
            headers: vec![("Retry-After".into(), "1".into())],
            body: r#"{"message":"Too many requests"}"#.into(),
            content_type: None,
        },
    });
    let client = Client::builder(emu.private_key())
        .base_url(emu.base_url())
        .build()
        .unwrap();

    let user_id = sign_up(&client, "ann", "support").unwrap();

    let posts: Vec<_> = emu
        .journal()
        .into_iter()
        .filter(|e| e.method == "POST")
        .collect();
    assert_eq!(
        posts.iter().map(|e| e.status).collect::<Vec<_>>(),
        [429, 200]
    );
    let waited = posts[1]
        .received_at
        .duration_since(posts[0].received_at)
        .unwrap();
    assert!(waited >= Duration::from_secs(1));
    assert!(posts[1].query.contains("auth=REDACTED"));
    let ann = emu
        .users()
        .into_iter()
        .find(|u| u["username"] == "ann")
        .unwrap();
    assert_eq!(ann["userId"], user_id.as_str());
    assert_eq!(
        (&ann["isModerator"], &ann["chatRoom"]),
        (&true.into(), &"support".into())
    );
}

#[test]
fn a_taken_name_is_refused() {
    let emu = Emulator::start(EmulatorConfig::default()).unwrap();
    emu.seed_users(3);
    let client = Client::builder(emu.private_key())
        .base_url(emu.base_url())
        .build()
        .unwrap();

    assert_eq!(
        sign_up(&client, "seed-user-2", "support"),
        Err("seed-user-2 is taken".into())
    );
    assert_eq!(emu.users().len(), 3);
}
