//! The `roomchat` binary end to end against the emulator: every declared
//! operation answers `--help` and runs once, `--dry-run` builds what the SDK
//! builds, `--all` pages, bad input gets a clear error and its exit code, and
//! the key is never shown.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::{Command, Output};

use roomchat::wire::Operation;
use roomchat_cli::command_name as kebab;
use roomchat_emulator::{Emulator, EmulatorConfig};
use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_roomchat");

/// A run of the binary: its exit code, stdout and stderr.
struct Run {
    args: String,
    code: i32,
    stdout: String,
    stderr: String,
}

impl Run {
    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}\n{}", self.stdout, self.stderr))
    }

    fn ok(self) -> Run {
        assert_eq!(
            self.code, 0,
            "roomchat {}\nstdout: {}\nstderr: {}",
            self.args, self.stdout, self.stderr
        );
        self
    }
}

/// A fresh, empty config directory (no profile file unless a test writes one).
fn config_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("roomchat-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `roomchat args…` with the emulator's keys and base URL in the
/// environment (none when `emu` is `None`), checking that no key is printed
/// and nothing panicked.
fn roomchat(emu: Option<&Emulator>, config: &PathBuf, args: &[&str]) -> Run {
    let mut command = Command::new(BIN);
    command
        .args(args)
        .env_remove("ROOMCHAT_PRIVATE_KEY")
        .env_remove("ROOMCHAT_PUBLIC_KEY")
        .env_remove("ROOMCHAT_BASE_URL")
        .env_remove("ROOMCHAT_PROFILE")
        .env_remove("ROOMCHAT_REDIS_URL")
        .env("XDG_CONFIG_HOME", config)
        .env("NO_PROXY", "*");
    if let Some(emu) = emu {
        command
            .env("ROOMCHAT_PRIVATE_KEY", emu.private_key())
            .env("ROOMCHAT_PUBLIC_KEY", emu.public_key())
            .env("ROOMCHAT_BASE_URL", emu.base_url());
    }
    let Output {
        status,
        stdout,
        stderr,
    } = command.output().expect("run roomchat");
    let run = Run {
        args: args.join(" "),
        code: status.code().expect("exited, not killed"),
        stdout: String::from_utf8(stdout).unwrap(),
        stderr: String::from_utf8(stderr).unwrap(),
    };
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    if let Some(emu) = emu {
        for key in [emu.private_key(), emu.public_key()] {
            assert!(
                !run.stdout.contains(&key) && !run.stderr.contains(&key),
                "a key was shown: {args:?}\n{}\n{}",
                run.stdout,
                run.stderr
            );
        }
    }
    run
}

fn emulator() -> Emulator {
    Emulator::start(EmulatorConfig::default()).unwrap()
}

#[test]
fn every_declared_operation_answers_help_with_its_declaration() {
    let config = config_dir("help");
    let mut count = 0;
    for op in Operation::ALL {
        let Some(spec) = op.spec() else { continue };
        count += 1;
        let help = roomchat(None, &config, &[&kebab(spec.name), "--help"]).ok();
        let words = |text: &str| text.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            words(&help.stdout).contains(&words(spec.summary)),
            "{}",
            help.stdout
        );
        assert!(help.stdout.contains(spec.path), "{}", help.stdout);
        assert!(help.stdout.contains("Retry class"), "{}", help.stdout);
        for error in spec.errors {
            assert!(help.stdout.contains(error.kind.name()), "{}", help.stdout);
            assert!(
                words(&help.stdout).contains(&words(error.when)),
                "{}",
                help.stdout
            );
        }
        for param in spec.params {
            assert!(
                help.stdout.contains(param.name),
                "{} {}",
                spec.name,
                param.name
            );
        }
    }
    assert_eq!(count, 41);
    // The overview groups every operation under its family.
    let overview = roomchat(None, &config, &["--help"]).ok();
    for family in [
        "Users:",
        "Rooms:",
        "Bots:",
        "Members:",
        "Messages and channels:",
    ] {
        assert!(overview.stdout.contains(family), "{}", overview.stdout);
    }
}

#[test]
fn every_declared_operation_runs_once_through_the_cli() {
    let emu = emulator();
    let config = config_dir("every");
    let mut ran: BTreeSet<String> = BTreeSet::new();
    let mut call = |args: &[&str]| -> Value {
        let run = roomchat(Some(&emu), &config, args).ok();
        ran.insert(args[0].to_owned());
        run.json()
    };
    emu.create_room(json!({"roomId": "room1", "name": "General"}));

    // Rooms.
    let created = call(&[
        "create-chat-room",
        "--name",
        "Webinar",
        "--enable-channels",
        "false",
    ]);
    let webinar = created["roomId"]
        .as_str()
        .or_else(|| created["chatRoom"]["roomId"].as_str())
        .unwrap_or_else(|| panic!("{created}"))
        .to_owned();
    let rooms = call(&["list-chat-rooms"]);
    assert_eq!(rooms.as_array().map(Vec::len), Some(2), "{rooms}");
    let one = roomchat(Some(&emu), &config, &["get-chat-room", "room1"]).ok();
    assert_eq!(
        one.stdout.lines().count(),
        1,
        "one line when piped: {}",
        one.stdout
    );
    call(&["get-chat-room", "room1"]);
    // On a terminal (util-linux `script` gives it one): indented.
    #[cfg(target_os = "linux")]
    {
        let on_tty = Command::new("script")
            .args(["-qec", &format!("{BIN} get-chat-room room1"), "/dev/null"])
            .env("ROOMCHAT_PRIVATE_KEY", emu.private_key())
            .env("ROOMCHAT_BASE_URL", emu.base_url())
            .env("XDG_CONFIG_HOME", &config)
            .output()
            .unwrap();
        let shown = String::from_utf8_lossy(&on_tty.stdout);
        assert!(on_tty.status.success(), "{shown}");
        assert!(shown.starts_with("{\r\n  \""), "{shown:?}");
    }
    call(&["update-chat-room", "room1", "--description", "all hands"]);
    call(&["turn-chat-off", "room1"]);
    call(&["turn-chat-on", "room1"]);
    call(&["set-chat-off-message", "room1", "--message", "back soon"]);
    call(&["eject-all-users", "room1"]);
    assert_eq!(emu.ejections("room1"), 1);

    // Users.
    let ann = call(&[
        "create-user",
        "--username",
        "ann",
        "--extra",
        r#"{"uniqueUserIdentifier": "crm-1"}"#,
    ]);
    let token = ann["accessToken"].as_str().unwrap().to_owned();
    let users = call(&["list-users", "--limit", "10"]);
    assert_eq!(users["data"][0]["username"], "ann");
    call(&["validate-access-token", "--access-token", &token]);
    call(&["deactivate-user", "--unique-user-identifier", "crm-1"]);
    call(&["reactivate-user", "--unique-user-identifier", "crm-1"]);
    call(&[
        "update-user",
        "--unique-user-identifier",
        "crm-1",
        "--email",
        "ann@example.com",
    ]);
    call(&[
        "create-user-v2",
        "--unique-user-identifier",
        "crm-2",
        "--username",
        "bob",
    ]);
    call(&["get-user", "crm-2"]);

    // Members.
    call(&[
        "set-member",
        "room1",
        "--unique-user-identifier",
        "crm-2",
        "--role-name",
        "moderator",
    ]);
    let members = call(&["list-members", "room1"]);
    assert_eq!(members["total"], 1, "{members}");
    let rooms_of_bob = call(&["user-rooms", "crm-2"]);
    assert_eq!(rooms_of_bob[0]["roomId"], "room1");
    call(&[
        "remove-member",
        "room1",
        "--unique-user-identifier",
        "crm-2",
    ]);

    // Messages, channels, conversations.
    call(&[
        "send-room-message",
        "room1",
        "--message",
        "hi all",
        "--system-message",
    ]);
    call(&[
        "send-room-message",
        "room1",
        "--message",
        "from ann",
        "--user-access-token",
        &token,
    ]);
    let messages = call(&["room-messages", "room1"]);
    assert_eq!(messages["totalRecords"], 2, "{messages}");
    let channel = call(&["create-channel", "room1", "--channel-name", "news"]);
    let channel_id = channel["_id"].as_str().unwrap().to_owned();
    call(&[
        "update-channel",
        "room1",
        &channel_id,
        "--notify-all-users",
        "true",
    ]);
    call(&[
        "send-channel-message",
        "room1",
        &channel_id,
        "--message",
        "hello",
        "--user",
        r#"{"username": "guest"}"#,
    ]);
    let in_channel = call(&["channel-messages", "room1", &channel_id]);
    let message_id = in_channel["messages"][0]["_id"]
        .as_str()
        .unwrap()
        .to_owned();
    call(&["delete-channel-message", "room1", &channel_id, &message_id]);
    let conversation = emu.add_conversation(
        "room1",
        vec![json!({"messages": "psst", "user": {"username": "jon"}})],
    );
    call(&["list-conversations", "room1"]);
    let said = call(&[
        "conversation-messages",
        "room1",
        &conversation,
        "--path-form",
        "chatroom",
    ]);
    assert_eq!(said[0]["messages"], "psst", "{said}");
    call(&["delete-room-messages", "room1"]);

    // Bots.
    let bot = call(&[
        "create-bot",
        "--name",
        "helper",
        "--webhook-url",
        "https://hooks.example/b",
    ]);
    let bot_id = bot["bot"]["_id"]
        .as_str()
        .unwrap_or_else(|| panic!("{bot}"))
        .to_owned();
    call(&[
        "update-bot",
        &bot_id,
        "--description",
        "answers",
        "--message-history-limit",
        "20",
    ]);
    call(&["list-bots"]);
    call(&["disable-bot", &bot_id]);
    call(&["enable-bot", &bot_id]);
    call(&["disable-bot-in-room", &bot_id, "room1"]);
    call(&["enable-bot-in-room", &bot_id, "room1"]);
    // A JSON param from a file.
    let buttons = config.join("buttons.json");
    std::fs::write(
        &buttons,
        r#"[{"type": "link", "displayText": "Docs", "id": "docs", "url": "https://docs.example"}]"#,
    )
    .unwrap();
    let from_file = format!("@{}", buttons.display());
    call(&[
        "send-bot-message",
        &bot_id,
        "room1",
        "--message",
        "how can I help?",
        "--action-buttons",
        &from_file,
    ]);
    let posted = call(&["room-messages", "room1"]);
    assert_eq!(
        posted["messages"][0]["actionButtons"][0]["id"], "docs",
        "{posted}"
    );

    // The ends of things.
    call(&["invalidate-access-token", "--access-token", &token]);
    call(&["remove-user", "--unique-user-identifier", "crm-2"]);
    call(&["delete-chat-room", &webinar]);

    let declared: BTreeSet<String> = Operation::ALL
        .into_iter()
        .filter_map(|op| op.spec().map(|spec| kebab(spec.name)))
        .collect();
    assert_eq!(ran, declared, "every declared operation runs once");
    // Each was sent: one arrival per call, none refused by the emulator.
    let journal = emu.journal();
    assert!(journal.iter().all(|e| e.status < 300), "{journal:?}");
    assert!(journal
        .iter()
        .all(|e| !e.query.contains(&emu.private_key())));
}

#[test]
fn dry_run_builds_what_the_sdk_builds_and_sends_nothing() {
    let emu = emulator();
    let config = config_dir("dry");
    // A sample of each family: (the CLI's arguments, the SDK's params).
    let samples: Vec<(Vec<&str>, &str, Value)> = vec![
        (
            vec!["list-users", "--limit", "20", "--skip", "40"],
            "list_users",
            json!({"limit": 20, "skip": 40}),
        ),
        (
            vec![
                "create-user",
                "--username",
                "bob",
                "--is-moderator",
                "--chat-room",
                "r 1",
                "--extra",
                r#"{"email": "b@example.com"}"#,
            ],
            "create_user",
            json!({"username": "bob", "role": "room_moderator", "chatRoom": "r 1", "extra": {"email": "b@example.com"}}),
        ),
        (
            vec![
                "create-chat-room",
                "--name",
                "Webinar",
                "--enable-channels",
                "false",
                "--customization",
                r#"{"theme": "dark"}"#,
                "--extra",
                r#"{"x": 1}"#,
            ],
            "create_chat_room",
            json!({"name": "Webinar", "enableChannels": false, "customization": {"theme": "dark"}, "x": 1}),
        ),
        (
            vec!["turn-chat-off", "room/1"],
            "turn_chat_off",
            json!({"roomId": "room/1"}),
        ),
        (
            vec![
                "room-messages",
                "room1",
                "--limit",
                "5",
                "--only-attachments",
                "true",
            ],
            "room_messages",
            json!({"roomId": "room1", "limit": 5, "onlyAttachments": true}),
        ),
        (
            vec![
                "send-channel-message",
                "room1",
                "ch1",
                "--message",
                "hé",
                "--system-message",
            ],
            "send_channel_message",
            json!({"roomId": "room1", "channelId": "ch1", "message": "hé", "systemMessage": true}),
        ),
        (
            vec![
                "set-member",
                "room1",
                "--unique-user-identifier",
                "u1",
                "--role-name",
                "guest",
            ],
            "set_member",
            json!({"roomId": "room1", "uniqueUserIdentifier": "u1", "roleName": "guest"}),
        ),
        (
            vec!["list-members", "room1", "--limit", "200"],
            "list_members",
            json!({"roomId": "room1", "limit": 200}),
        ),
        (
            vec![
                "update-bot",
                "b1",
                "--trigger",
                "mention",
                "--enabled",
                "false",
            ],
            "update_bot",
            json!({"botId": "b1", "trigger": "mention", "enabled": false}),
        ),
        (
            vec!["validate-access-token", "--access-token", "t0k"],
            "validate_access_token",
            json!({"accessToken": "t0k"}),
        ),
    ];
    for (args, name, params) in samples {
        let mut with = args.clone();
        with.extend(["--dry-run", "--output", "json"]);
        let shown = roomchat(Some(&emu), &config, &with).ok().json();
        let request = Operation::from_name(name).unwrap().build(&params).unwrap();
        assert_eq!(shown["method"], request.method.as_str(), "{args:?}");
        assert_eq!(
            shown["url"],
            request.url(emu.base_url(), Some("REDACTED")),
            "{args:?}"
        );
        let mut body: Value = request
            .body
            .as_deref()
            .map_or(Value::Null, |b| serde_json::from_str(b).unwrap());
        // An access token is a secret: not shown (outputs.rs, a_dry_run_shows_no_access_token).
        if let Some(token) = body.get_mut("accessToken") {
            *token = "REDACTED".into();
        }
        assert_eq!(shown["body"], body, "{args:?}");
        let curl = shown["curl"].as_str().unwrap();
        assert!(
            curl.starts_with(&format!("curl -sS -X {} '", request.method)),
            "{curl}"
        );
        assert!(curl.contains("\"$ROOMCHAT_P"), "{curl}");

        // The text form: method and URL, body, curl.
        let mut text = args.clone();
        text.push("--dry-run");
        let printed = roomchat(Some(&emu), &config, &text).ok().stdout;
        assert!(printed.starts_with(&format!(
            "{} {}",
            request.method,
            shown["url"].as_str().unwrap()
        )));
        assert!(printed.contains("curl -sS"), "{printed}");
    }
    // A dry run needs no key.
    let keyless = roomchat(None, &config, &["get-chat-room", "r1", "--dry-run"]).ok();
    assert!(
        keyless.stdout.contains("auth=REDACTED"),
        "{}",
        keyless.stdout
    );
    // An id beginning with `-` (the service's room ids may) is the id, not a flag.
    let dashed = roomchat(
        None,
        &config,
        &["delete-chat-room", "-uY74mGhE", "--dry-run"],
    )
    .ok();
    assert!(
        dashed.stdout.contains("/chatroom/-uY74mGhE?auth=REDACTED"),
        "{}",
        dashed.stdout
    );
    // A base URL a run refuses, a dry run refuses too: a password in it is never shown.
    for args in [
        &["list-users", "--dry-run"][..],
        &["list-users", "--dry-run", "--output", "json"],
        &["export", "r1", "--dry-run"],
    ] {
        let mut with = args.to_vec();
        with.extend(["--base-url", "https://deploy:hunter2@api.example.com"]);
        let refused = roomchat(None, &config, &with);
        assert_eq!(refused.code, 24, "{args:?}: {}", refused.stderr);
        assert!(
            !format!("{}{}", refused.stdout, refused.stderr).contains("hunter2"),
            "{args:?}: {} {}",
            refused.stdout,
            refused.stderr
        );
        assert!(
            refused.stderr.contains("https://REDACTED@api.example.com"),
            "{}",
            refused.stderr
        );
    }
    assert!(emu.journal().is_empty(), "a dry run sent nothing");
}

/// Issue 51, item 11: a proxy URL a run refuses, a dry run refuses the same way (exit 24, the
/// same message), before it prints anything; the proxy's password is shown by neither.
#[test]
fn a_proxy_a_run_refuses_a_dry_run_refuses() {
    let emu = emulator();
    let config = config_dir("dry-proxy");
    for proxy in [
        "http://:8080",
        "http://p:0",
        "http://p:70000",
        "socks5://p:1080",
        "http://u:s3cret-pw@:8080",
        "http://u:s3cret-pw@p:0",
        "http://u:s3cret-pw@p:70000",
        "socks5://u:s3cret-pw@p:1080",
    ] {
        for dry in [
            &["list-users", "--dry-run"][..],
            &["list-users", "--dry-run", "--output", "json"],
            &["export", "r1", "--dry-run"],
        ] {
            let mut args = dry.to_vec();
            args.extend(["--proxy", proxy]);
            let shown = roomchat(Some(&emu), &config, &args);
            args.retain(|a| *a != "--dry-run");
            let refused = roomchat(Some(&emu), &config, &args);
            assert_eq!(refused.code, 24, "{args:?}: {}", refused.stderr);
            assert!(
                refused.stderr.contains("the proxy URL"),
                "{}",
                refused.stderr
            );
            assert_eq!(shown.code, 24, "{args:?} --dry-run: {}", shown.stdout);
            assert_eq!(shown.stdout, "", "{args:?} --dry-run: nothing printed");
            assert_eq!(shown.stderr, refused.stderr, "{args:?}");
            assert!(!refused.stderr.contains("s3cret-pw"), "{}", refused.stderr);
            if proxy.contains('@') {
                assert!(refused.stderr.contains("REDACTED@"), "{}", refused.stderr);
            }
        }
    }
    // What a run takes, a dry run takes.
    let taken = roomchat(
        Some(&emu),
        &config,
        &[
            "list-users",
            "--dry-run",
            "--proxy",
            "http://u:s3cret-pw@p:3128",
        ],
    )
    .ok();
    assert!(!taken.stdout.contains("s3cret-pw"), "{}", taken.stdout);
    assert!(emu.journal().is_empty(), "a dry run sent nothing");
}

#[test]
fn bad_input_gets_a_clear_error_and_its_exit_code() {
    let emu = emulator();
    let config = config_dir("bad");
    let run = |emu: Option<&Emulator>, args: &[&str]| roomchat(emu, &config, args);

    let unknown = run(Some(&emu), &["create-chatroom"]);
    assert_eq!(unknown.code, 2, "{}", unknown.stderr);
    assert!(
        unknown.stderr.contains("create-chat-room"),
        "suggests the near name: {}",
        unknown.stderr
    );

    // A proxy URL this client cannot use fails on the loopback emulator too, where no
    // proxy would be used: a typo shows before production.
    let bad_proxy = run(
        Some(&emu),
        &["list-users", "--proxy", "ftp://proxy.internal:1"],
    );
    assert_eq!(bad_proxy.code, 24, "{}", bad_proxy.stderr);
    assert!(
        bad_proxy
            .stderr
            .contains("the proxy URL (ftp://proxy.internal:1) has a scheme"),
        "{}",
        bad_proxy.stderr
    );

    let out_of_limits = run(Some(&emu), &["list-users", "--limit", "500"]);
    assert_eq!(out_of_limits.code, 2);
    assert!(
        out_of_limits.stderr.contains("500") && out_of_limits.stderr.contains("1..=200"),
        "{}",
        out_of_limits.stderr
    );
    let too_long = run(
        Some(&emu),
        &[
            "create-bot",
            "--name",
            &"x".repeat(101),
            "--webhook-url",
            "https://h.example",
        ],
    );
    assert_eq!(too_long.code, 2);
    assert!(
        too_long.stderr.contains("at most 100 characters"),
        "{}",
        too_long.stderr
    );
    let not_a_choice = run(
        Some(&emu),
        &[
            "set-member",
            "r",
            "--unique-user-identifier",
            "u",
            "--role-name",
            "king",
        ],
    );
    assert_eq!(not_a_choice.code, 2);
    assert!(
        not_a_choice.stderr.contains("moderator"),
        "{}",
        not_a_choice.stderr
    );

    let malformed = run(
        Some(&emu),
        &["create-chat-room", "--customization", "{not json"],
    );
    assert_eq!(malformed.code, 2);
    assert!(
        malformed
            .stderr
            .contains("error: usage: --customization: the value is not JSON"),
        "{}",
        malformed.stderr
    );
    let missing = run(
        Some(&emu),
        &[
            "send-bot-message",
            "b",
            "r",
            "--message",
            "m",
            "--action-buttons",
            "@/nonexistent/buttons.json",
        ],
    );
    assert_eq!(missing.code, 3);
    assert!(
        missing.stderr.contains("/nonexistent/buttons.json"),
        "{}",
        missing.stderr
    );

    // Exactly one author, required params: refused before anything is sent.
    let two_authors = run(
        Some(&emu),
        &[
            "send-room-message",
            "r",
            "--message",
            "m",
            "--system-message",
            "--user",
            "{}",
        ],
    );
    assert_eq!(two_authors.code, 2, "{}", two_authors.stderr);
    // A flag is an author only when set: core refuses, nothing is sent.
    let no_author = run(
        Some(&emu),
        &[
            "send-room-message",
            "r",
            "--message",
            "m",
            "--system-message",
            "false",
        ],
    );
    assert_eq!(no_author.code, 23, "validation: {}", no_author.stderr);
    assert!(
        no_author.stderr.contains("give exactly one of"),
        "{}",
        no_author.stderr
    );
    let no_name = run(Some(&emu), &["create-channel", "r"]);
    assert_eq!(no_name.code, 2);
    assert!(
        no_name.stderr.contains("--channel-name"),
        "{}",
        no_name.stderr
    );

    let no_key = run(None, &["list-chat-rooms", "--base-url", emu.base_url()]);
    assert_eq!(no_key.code, 24, "configuration: {}", no_key.stderr);
    assert!(
        no_key.stderr.contains("ROOMCHAT_PRIVATE_KEY"),
        "{}",
        no_key.stderr
    );
    assert!(emu.journal().is_empty(), "nothing sent for bad input");

    // The service's errors: kind, status, message; the error object with --output json.
    let not_found = run(Some(&emu), &["get-chat-room", "nope"]);
    assert_eq!(not_found.code, 28, "{}", not_found.stderr);
    assert!(
        not_found.stderr.contains("not_found (status 404)"),
        "{}",
        not_found.stderr
    );
    let as_json = run(Some(&emu), &["get-chat-room", "nope", "--output", "json"]);
    assert_eq!(as_json.code, 28);
    let object: Value = serde_json::from_str(as_json.stderr.trim()).unwrap();
    assert_eq!(
        (
            &object["error"]["kind"],
            &object["error"]["status"],
            &object["error"]["exit_code"]
        ),
        (&json!("not_found"), &json!(404), &json!(28))
    );
}

#[test]
fn all_streams_every_item_of_a_paged_listing() {
    let emu = emulator();
    let config = config_dir("all");
    emu.create_room(json!({"roomId": "room1", "name": "General"}));
    emu.seed_messages("room1", None, 450);
    let run = |args: &[&str]| roomchat(Some(&emu), &config, args).ok();

    let every = run(&["room-messages", "room1", "--all", "--page-size", "100"]);
    let texts: Vec<String> = every
        .stdout
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["message"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    let expected: Vec<String> = (1..=450).map(|n| format!("message {n}")).collect();
    assert_eq!(texts, expected);
    let requests = emu.journal().len();
    assert_eq!(requests, 5, "450 messages in pages of 100");

    // Resumed from --skip, bounded by --max-items.
    let part = run(&[
        "room-messages",
        "room1",
        "--all",
        "--skip",
        "10",
        "--max-items",
        "120",
        "--page-size",
        "50",
    ]);
    let lines: Vec<Value> = part
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 120);
    assert_eq!(lines[0]["message"], "message 11");
    assert_eq!(lines[119]["message"], "message 130");

    // The reader going away (`| head -1`) ends the stream quietly.
    let mut child = Command::new(BIN)
        .args(["room-messages", "room1", "--all", "--page-size", "10"])
        .env("ROOMCHAT_PRIVATE_KEY", emu.private_key())
        .env("ROOMCHAT_BASE_URL", emu.base_url())
        .env("XDG_CONFIG_HOME", &config)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().unwrap()),
        &mut first,
    )
    .unwrap();
    assert!(first.contains("message 1"), "{first}");
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // One page as a table and as CSV; users as JSON lines.
    emu.seed_users(3);
    let table = run(&["list-users", "--output", "table"]).stdout;
    let mut rows = table.lines();
    assert!(rows.next().unwrap().contains("username"), "{table}");
    assert_eq!(rows.count(), 3, "{table}");
    let csv = run(&["list-users", "--output", "csv"]).stdout;
    assert_eq!(csv.lines().count(), 4, "{csv}");
    let users = run(&["list-users", "--all", "--output", "csv"]).stdout;
    assert_eq!(users.lines().count(), 4, "{users}");
    let jsonl = run(&["list-users", "--output", "jsonl"]).stdout;
    assert_eq!(jsonl.lines().count(), 3, "{jsonl}");
}

#[test]
fn a_profile_holding_a_key_must_be_private() {
    let emu = emulator();
    let config = config_dir("profile");
    let file = config.join("roomchat").join("config.toml");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(
        &file,
        format!(
            "[staging]\nbase_url = {:?}\nprivate_key = {:?}\nmax_retries = 0\n",
            emu.base_url(),
            emu.private_key()
        ),
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        let refused = roomchat(None, &config, &["--profile", "staging", "list-chat-rooms"]);
        assert_eq!(refused.code, 24, "{}", refused.stderr);
        assert!(refused.stderr.contains("chmod 600"), "{}", refused.stderr);
        assert!(!refused.stderr.contains(&emu.private_key()));
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    let listed = roomchat(None, &config, &["list-chat-rooms", "--profile", "staging"]).ok();
    assert_eq!(listed.json(), json!([]));
    let unknown = roomchat(None, &config, &["--profile", "prod", "list-chat-rooms"]);
    assert_eq!(unknown.code, 24);
    assert!(
        unknown.stderr.contains("no profile [prod]"),
        "{}",
        unknown.stderr
    );
    assert!(
        !unknown.stderr.contains(&emu.private_key()) && !listed.stdout.contains(&emu.private_key())
    );
}

#[test]
fn completions_and_the_man_page_are_generated() {
    let config = config_dir("completions");
    for shell in ["bash", "zsh", "fish"] {
        let script = roomchat(None, &config, &["completions", shell]).ok().stdout;
        assert!(script.contains("create-chat-room"), "{shell}");
    }
    let man = roomchat(None, &config, &["man"]).ok().stdout;
    assert!(
        man.contains(".TH roomchat"),
        "{}",
        &man[..200.min(man.len())]
    );
    let version = roomchat(None, &config, &["--version"]).ok().stdout;
    assert!(version.starts_with("roomchat "));
}

#[cfg(unix)]
#[test]
fn interrupted_paging_says_where_to_resume_and_resuming_loses_nothing() {
    let emu = emulator();
    let config = config_dir("interrupt");
    emu.create_room(json!({"roomId": "room1", "name": "General"}));
    emu.seed_messages("room1", None, 100);
    // One request a second: ten pages take ten seconds, Ctrl-C comes once the second page
    // was asked for (a state of the emulator's journal), while the third waits its turn.
    let child = Command::new(BIN)
        .args(["room-messages", "room1", "--all", "--page-size", "10"])
        .args(["--rate-limit", "1", "--rate-window", "1"])
        .env("ROOMCHAT_PRIVATE_KEY", emu.private_key())
        .env("ROOMCHAT_BASE_URL", emu.base_url())
        .env("XDG_CONFIG_HOME", &config)
        .env_remove("ROOMCHAT_PROFILE")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while emu
        .journal()
        .iter()
        .filter(|e| e.path.ends_with("/room1/messages"))
        .count()
        < 2
    {
        assert!(std::time::Instant::now() < deadline, "no second page asked");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    // The shell's own kill: no procps needed.
    let killed = Command::new("sh")
        .args(["-c", &format!("kill -INT {}", child.id())])
        .status()
        .unwrap();
    assert!(killed.success());
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    let first: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(
        !first.is_empty() && first.len() < 100,
        "{} lines",
        first.len()
    );
    let resume = format!("--skip {}", first.len());
    assert!(stderr.contains(&resume), "{stderr}");
    assert!(!stderr.contains(&emu.private_key()));

    let rest = roomchat(
        Some(&emu),
        &config,
        &[
            "room-messages",
            "room1",
            "--all",
            "--skip",
            &first.len().to_string(),
        ],
    )
    .ok();
    let texts: Vec<String> = first
        .iter()
        .cloned()
        .chain(
            rest.stdout
                .lines()
                .map(|l| serde_json::from_str(l).unwrap()),
        )
        .map(|m: Value| m["message"].as_str().unwrap().to_owned())
        .collect();
    let expected: Vec<String> = (1..=100).map(|n| format!("message {n}")).collect();
    assert_eq!(texts, expected, "every message once, in order");
}

#[test]
fn the_guide_documents_the_exit_code_of_every_error_kind() {
    let guide = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    for kind in roomchat::ErrorKind::ALL {
        let row = format!("| {} | `{}`", 10 + kind.code(), kind.name());
        assert!(guide.contains(&row), "cli/README.md lacks {row}");
    }
}

#[test]
fn client_options_reach_the_client() {
    use roomchat_emulator::{EmulatorTls, Fault, FaultAction};
    use std::time::Duration;
    let config = config_dir("options");
    let fault = |action: FaultAction| Fault {
        method: Some("GET".into()),
        path: "/consumer/api/v1/chatrooms".into(),
        times: 1,
        action,
    };
    let emu = emulator();
    let run = |args: &[&str]| roomchat(Some(&emu), &config, args);

    // Retries: a 503 is retried by default, not with --max-retries 0.
    let unavailable = || {
        fault(FaultAction::Respond {
            status: 503,
            headers: vec![],
            body: "{}".into(),
            content_type: None,
        })
    };
    emu.add_fault(unavailable());
    let no_retry = run(&["list-chat-rooms", "--max-retries", "0"]);
    assert_eq!(no_retry.code, 17, "server_error: {}", no_retry.stderr);
    assert!(
        no_retry.stderr.contains("server_error (status 503)"),
        "{}",
        no_retry.stderr
    );
    emu.add_fault(unavailable());
    run(&["list-chat-rooms", "--base-backoff", "0.01"]).ok();
    assert_eq!(emu.journal().len(), 3);

    // The attempt's timeout, the answer's cap.
    emu.add_fault(fault(FaultAction::Delay(Duration::from_secs(3))));
    let slow = run(&["list-chat-rooms", "--timeout", "0.3", "--max-retries", "0"]);
    assert_eq!(slow.code, 19, "timeout: {}", slow.stderr);
    emu.add_fault(Fault {
        method: Some("GET".into()),
        path: "/consumer/api/v2/users".into(),
        times: 1,
        action: FaultAction::LargeBody { bytes: 4096 },
    });
    let large = run(&[
        "list-users",
        "--max-response-bytes",
        "1000",
        "--max-retries",
        "0",
    ]);
    assert_eq!(
        large.code,
        22,
        "response_too_large: {} {} {:?}",
        large.stderr,
        large.stdout.len(),
        emu.journal().iter().map(|e| e.status).collect::<Vec<_>>()
    );

    // A shared budget that cannot be reached, with the policy that refuses to send.
    let closed = run(&[
        "list-chat-rooms",
        "--redis-url",
        "redis://:hunter2@127.0.0.1:9/0",
        "--redis-on-error",
        "fail_closed",
    ]);
    assert_eq!(closed.code, 26, "budget_unavailable: {}", closed.stderr);
    assert!(!closed.stderr.contains("hunter2"), "{}", closed.stderr);

    // A private CA: refused without --ca-file, trusted with it.
    let tls = Emulator::start(EmulatorConfig {
        tls: Some(EmulatorTls::generated()),
        ..EmulatorConfig::default()
    })
    .unwrap();
    let ca = tls.ca_file().unwrap();
    let untrusted = roomchat(
        Some(&tls),
        &config,
        &["list-chat-rooms", "--max-retries", "0"],
    );
    assert_eq!(untrusted.code, 27, "tls: {}", untrusted.stderr);
    let trusted = roomchat(
        Some(&tls),
        &config,
        &["list-chat-rooms", "--ca-file", ca.to_str().unwrap()],
    )
    .ok();
    assert_eq!(trusted.json(), json!([]));
}
