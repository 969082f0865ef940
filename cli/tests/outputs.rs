//! The command line's generic outputs end to end, the `roomchat` binary against
//! the emulator: CSV columns that lose nothing and cells no spreadsheet runs,
//! `--all` waiting out the rate limit, resuming a CSV, errors as JSON
//! objects, the man pages (issue 44, items 9, 14, 17 and 20).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use roomchat::wire::Operation;
use roomchat_emulator::{Emulator, EmulatorConfig, Fault, FaultAction, RateLimit};
use serde_json::{json, Value};

/// The `roomchat` binary pointed at an emulator, with a config folder of its own.
struct Cli {
    base_url: String,
    private_key: String,
    config: PathBuf,
}

/// What a run printed, and its exit code.
struct Ran {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Cli {
    fn new(emu: &Emulator, name: &str) -> Cli {
        let config =
            std::env::temp_dir().join(format!("roomchat-outputs-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&config);
        std::fs::create_dir_all(&config).unwrap();
        Cli {
            base_url: emu.base_url().to_owned(),
            private_key: emu.private_key(),
            config,
        }
    }

    fn run(&self, args: &[&str]) -> Ran {
        let mut command = Command::new(env!("CARGO_BIN_EXE_roomchat"));
        for (name, _) in std::env::vars() {
            if name.starts_with("ROOMCHAT_") {
                command.env_remove(name);
            }
        }
        let out = command
            .args(args)
            .env("ROOMCHAT_PRIVATE_KEY", &self.private_key)
            .env("ROOMCHAT_BASE_URL", &self.base_url)
            .env("XDG_CONFIG_HOME", &self.config)
            .env("NO_PROXY", "*")
            .output()
            .expect("roomchat runs");
        let ran = Ran {
            code: out.status.code().expect("exited, not killed"),
            stdout: String::from_utf8(out.stdout).unwrap(),
            stderr: String::from_utf8(out.stderr).unwrap(),
        };
        assert!(!ran.stderr.contains("panicked"), "{}", ran.stderr);
        assert!(
            !ran.stdout.contains(&self.private_key) && !ran.stderr.contains(&self.private_key),
            "the key was shown"
        );
        ran
    }

    /// A run that must succeed; its stdout.
    fn ok(&self, args: &[&str]) -> String {
        let ran = self.run(args);
        assert_eq!(ran.code, 0, "roomchat {args:?}\n{}", ran.stderr);
        ran.stdout
    }
}

/// An emulator with this rate limit; `headers`: its `X-RateLimit-*` and `Retry-After`.
fn emulator_with(rate_limit: RateLimit, headers: bool) -> Emulator {
    Emulator::start(EmulatorConfig {
        rate_limit,
        rate_limit_headers: headers,
        ..EmulatorConfig::default()
    })
    .unwrap()
}

fn emulator(rate_limit: RateLimit) -> Emulator {
    emulator_with(rate_limit, true)
}

fn unlimited() -> RateLimit {
    RateLimit {
        requests: u32::MAX,
        window: Duration::from_secs(60),
    }
}

/// `args` as the `&str`s a run takes.
fn strs(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}

/// A CSV's header and rows.
fn read_csv(text: &str) -> (Vec<String>, Vec<Vec<String>>) {
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let header = reader
        .headers()
        .unwrap()
        .iter()
        .map(str::to_owned)
        .collect();
    let rows = reader
        .records()
        .map(|r| r.unwrap().iter().map(str::to_owned).collect())
        .collect();
    (header, rows)
}

/// The JSON lines of a listing.
fn json_lines(text: &str) -> Vec<Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A CSV row made a record again: each declared column's cell (text as it
/// is, anything else parsed as JSON) and the fields `_extra` holds.
fn record_of(header: &[String], row: &[String]) -> Value {
    let mut record = serde_json::Map::new();
    for (name, cell) in header.iter().zip(row) {
        if cell.is_empty() {
            continue;
        }
        if name == "_extra" {
            let extra: serde_json::Map<String, Value> = serde_json::from_str(cell).unwrap();
            record.extend(extra);
        } else {
            let value = serde_json::from_str(cell).unwrap_or_else(|_| Value::from(cell.clone()));
            record.insert(name.clone(), value);
        }
    }
    Value::Object(record)
}

/// A record as a CSV row can give it back: null fields are empty cells, and
/// a text cell that reads as JSON (`"false"`, `"12"`) is that JSON.
fn comparable(record: &Value) -> Value {
    let fields = record.as_object().unwrap();
    Value::Object(
        fields
            .iter()
            .filter(|(_, v)| !v.is_null() && *v != "")
            .map(|(k, v)| {
                let v = match v {
                    Value::String(s) => serde_json::from_str(s).unwrap_or_else(|_| v.clone()),
                    other => other.clone(),
                };
                (k.clone(), v)
            })
            .collect(),
    )
}

/// Issue 44, item 14: the columns are the listing's declared fields then
/// `_extra`, whatever the first item holds, so no field is dropped; the
/// guide's own example (`list-users --all --output csv`) included.
#[test]
fn csv_columns_are_the_declared_fields_then_extra_and_lose_nothing() {
    let emu = emulator(unlimited());
    let cli = Cli::new(&emu, "columns");
    emu.create_room(json!({"roomId": "room1", "name": "General"}));
    // The first users have no chatRoom and no meta; a later one has both.
    emu.seed_users(3);
    cli.ok(&[
        "create-user",
        "--username",
        "bob",
        "--is-moderator",
        "--chat-room",
        "room1",
        "--extra",
        r#"{"uniqueUserIdentifier": "crm-2", "email": "bob@example.com", "meta": {"plan": "gold"}}"#,
    ]);
    let listed = json_lines(&cli.ok(&["list-users", "--all"]));
    assert_eq!(listed.len(), 4);
    let declared: Vec<String> = Operation::ListUsers
        .spec()
        .unwrap()
        .item_fields
        .iter()
        .map(|f| (*f).to_owned())
        .chain(["_extra".to_owned()])
        .collect();

    // The guide's command, then the same over pages of one user, then one page.
    for args in [
        &["list-users", "--all", "--output", "csv"][..],
        &["list-users", "--all", "--output", "csv", "--page-size", "1"],
        &["list-users", "--output", "csv"],
    ] {
        let (header, rows) = read_csv(&cli.ok(args));
        assert_eq!(header, declared, "{args:?}");
        assert_eq!(rows.len(), 4, "{args:?}");
        for (row, item) in rows.iter().zip(&listed) {
            assert_eq!(
                record_of(&header, row),
                comparable(item),
                "{args:?}: a field was lost"
            );
        }
        let bob = &rows[3];
        let column = |name: &str| header.iter().position(|h| h == name).unwrap();
        assert_eq!(bob[column("chatRoom")], "room1");
        assert!(bob[column("_extra")].contains("gold"), "{bob:?}");
    }

    // Messages: `file` has its column, fields the declaration does not know go to `_extra`.
    emu.add_messages(json!({"roomId": "room1", "messages": [
        {"message": "first", "user": {"username": "ann"}},
        {"message": "a picture", "user": {"username": "ann"},
         "file": {"url": "https://files.example/p.png", "fileName": "p.png"}},
    ]}));
    let (header, rows) = read_csv(&cli.ok(&[
        "room-messages",
        "room1",
        "--all",
        "--output",
        "csv",
        "--page-size",
        "1",
    ]));
    let column = |name: &str| header.iter().position(|h| h == name).unwrap();
    assert_eq!(rows.len(), 2);
    assert!(rows[1][column("file")].contains("p.png"), "{rows:?}");
    let messages = json_lines(&cli.ok(&["room-messages", "room1", "--all"]));
    for (row, item) in rows.iter().zip(&messages) {
        assert_eq!(record_of(&header, row), comparable(item));
    }
}

/// Issue 44, item 9: a text cell a spreadsheet would run as a formula gets a
/// leading `'` in every `--output csv` (one page and `--all`), unless
/// `--raw-csv-cells`; a table shows a terminal escape instead of obeying it.
#[test]
fn csv_cells_no_spreadsheet_runs_unless_raw() {
    let emu = emulator(unlimited());
    let cli = Cli::new(&emu, "formulas");
    let formulas = [
        "=HYPERLINK(\"https://evil.example\",\"x\")",
        "@SUM(1+1)*cmd|' /C calc'!A0",
        "+1",
        "-2+3",
    ];
    for name in formulas {
        cli.ok(&["create-user", &format!("--username={name}")]);
    }
    for all in [false, true] {
        let mut args = vec!["list-users", "--output", "csv"];
        if all {
            args.push("--all");
        }
        let (header, rows) = read_csv(&cli.ok(&args));
        let username = header.iter().position(|h| h == "username").unwrap();
        let shown: Vec<&str> = rows.iter().map(|r| r[username].as_str()).collect();
        let neutral: Vec<String> = formulas.iter().map(|f| format!("'{f}")).collect();
        assert_eq!(shown, neutral, "{args:?}");
        // Numbers and booleans are not text: as they are.
        let moderator = header.iter().position(|h| h == "isModerator").unwrap();
        assert_eq!(rows[0][moderator], "false");

        args.push("--raw-csv-cells");
        let (_, rows) = read_csv(&cli.ok(&args));
        let raw: Vec<&str> = rows.iter().map(|r| r[username].as_str()).collect();
        assert_eq!(raw, formulas, "{args:?}");
    }
    emu.create_room(json!({"roomId": "room1", "name": "General"}));
    emu.add_messages(json!({"roomId": "room1", "messages": [
        {"message": "a\u{1b}[2Jb", "user": {"username": "ann"}},
    ]}));
    let table = cli.ok(&["room-messages", "room1", "--output", "table"]);
    assert!(!table.contains('\u{1b}'), "{table:?}");
    assert!(table.contains("a\\u{1b}[2Jb"), "{table}");
}

/// Issue 44, items 14 and 20: an `--all` stopped by an error says the flags
/// that go on with exactly what is left (`--max-items` less what was
/// written, `--no-header` for a CSV); following them, appended with `>>`,
/// gives one CSV of every item asked for, once. A wait longer than
/// `--max-retry-wait` is what stops it here: the 429 holds the client's
/// budget for its window, a minute.
#[test]
fn a_stopped_csv_resumes_with_the_flags_it_prints() {
    // Five requests, then 429s for a minute (no header saying so: the client
    // holds off for its window).
    let emu = emulator_with(
        RateLimit {
            requests: 5,
            window: Duration::from_secs(60),
        },
        false,
    );
    let cli = Cli::new(&emu, "resume");
    emu.seed_users(100);
    // A CSV of users 6 to 85, ten a request; a wait longer than a second stops it.
    let listing = |skip: &str, max: &str, more: &[&'static str]| -> Vec<String> {
        let mut args = vec![
            "list-users",
            "--all",
            "--output",
            "csv",
            "--page-size",
            "10",
        ];
        args.extend(["--skip", skip, "--max-items", max, "--max-retry-wait", "1"]);
        args.extend(more);
        args.into_iter().map(str::to_owned).collect()
    };
    let first = cli.run(&strs(&listing("5", "80", &["--max-retries", "0"])));
    assert_eq!(first.code, 16, "rate_limited: {}", first.stderr);
    let hint = "to resume, run the same command with --skip 55 --max-items 30 --no-header";
    assert!(first.stderr.contains(hint), "{}", first.stderr);

    emu.set_rate_limit(unlimited());
    let rest = cli.ok(&strs(&listing("55", "30", &["--no-header"])));
    let appended = format!("{}{rest}", first.stdout);
    let (header, rows) = read_csv(&appended);
    assert_eq!(header[0], "_id");
    let ids: Vec<&str> = rows.iter().map(|r| r[0].as_str()).collect();
    let listed = json_lines(&cli.ok(&["list-users", "--all"]));
    let expected: Vec<&str> = listed[5..85]
        .iter()
        .map(|u| u["_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, expected, "users 6 to 85, each once, one header");

    // --no-header is for a CSV.
    let misplaced = cli.run(&["list-users", "--all", "--no-header"]);
    assert_eq!(misplaced.code, 2, "{}", misplaced.stderr);
}

/// Issue 44, item 17: `--all` waits out the rate limit as export does: a
/// listing of more pages than the budget gives, whose service also refuses
/// more times than the client retries, is read to its end, every item once.
#[test]
fn all_waits_out_the_rate_limit_and_lists_every_item_once() {
    let emu = emulator(RateLimit {
        requests: 5,
        window: Duration::from_secs(1),
    });
    let cli = Cli::new(&emu, "patience");
    emu.seed_users(70);
    // Three 429s in a row: one more than the client's two retries.
    emu.add_fault(Fault {
        method: Some("GET".into()),
        path: "/consumer/api/v2/users".into(),
        times: 3,
        action: FaultAction::Respond {
            status: 429,
            headers: vec![("Retry-After".into(), "1".into())],
            body: r#"{"message": "Too many requests"}"#.into(),
            content_type: None,
        },
    });
    let started = Instant::now();
    let listed = cli.ok(&[
        "list-users",
        "--all",
        "--page-size",
        "10",
        "--rate-limit",
        "5",
        "--rate-window",
        "1",
    ]);
    let took = started.elapsed();
    let ids: Vec<String> = json_lines(&listed)
        .iter()
        .map(|u| u["_id"].as_str().unwrap().to_owned())
        .collect();
    let expected: Vec<String> = emu
        .users()
        .iter()
        .map(|u| u["_id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(ids, expected, "every user once, in order");
    let refused = emu.journal().iter().filter(|e| e.status == 429).count();
    assert!(refused >= 3, "the faults were met: {refused}");
    eprintln!("--all through 3 × 429 and a budget of 5 per second: 7 pages in {took:.2?}");
}

/// Issue 44, item 17: the client's own budget (the service here never
/// refuses) is waited for by `--all`, and `--max-retry-wait` bounds that
/// wait: a slot further off ends the listing with `rate_limited` (exit 16)
/// at once, instead of after the budget's default wait of a minute.
#[test]
fn all_waits_for_the_budget_and_max_retry_wait_bounds_that_wait() {
    let emu = emulator(unlimited());
    let cli = Cli::new(&emu, "budget");
    emu.seed_users(6);
    // Pages of 2: three requests (the third says the total is reached), two per 2.1 s.
    let listing = ["list-users", "--all", "--page-size", "2"];
    let budget = ["--rate-limit", "2", "--rate-window", "2"];
    let started = Instant::now();
    let listed = cli.ok(&[&listing[..], &budget[..]].concat());
    let took = started.elapsed();
    assert_eq!(json_lines(&listed).len(), 6, "{listed}");
    assert!(
        took >= Duration::from_secs(2),
        "waited for a slot: {took:?}"
    );
    // Item 20: the whole budget is spent, two per window, not one (which took 4.2 s).
    assert!(
        took < Duration::from_secs(4),
        "two requests a window: {took:?}"
    );
    eprintln!("--all, 3 requests on a budget of 2 per 2 s: {took:.2?}");

    let started = Instant::now();
    let bounded = cli.run(&[&listing[..], &budget[..], &["--max-retry-wait", "0.5"]].concat());
    let took = started.elapsed();
    assert_eq!(bounded.code, 16, "rate_limited: {}", bounded.stderr);
    assert!(
        bounded.stderr.contains("rate_limited"),
        "{}",
        bounded.stderr
    );
    assert_eq!(
        json_lines(&bounded.stdout).len(),
        4,
        "two pages, then the stop"
    );
    assert!(
        bounded.stderr.contains("--skip 4"),
        "the resume hint: {}",
        bounded.stderr
    );
    assert!(took < Duration::from_secs(2), "did not wait: {took:?}");
    assert_eq!(
        emu.journal().len(),
        3 + 2,
        "the stopped listing sent two requests"
    );
}

/// Issue 44, item 15: the service's detail of a refusal is in the message on
/// stderr and in the `--output json` error object, whose fields also hold
/// each text of the service's body.
#[test]
fn the_services_detail_is_in_the_error_on_stderr_and_in_json() {
    let emu = emulator(unlimited());
    let cli = Cli::new(&emu, "detail");
    let detail = r#""actionButtons[0].type" must be one of [link, action]"#;
    let refuse = || Fault {
        method: Some("GET".into()),
        path: "/consumer/api/v2/users".into(),
        times: 1,
        action: FaultAction::Respond {
            status: 400,
            headers: vec![],
            body: json!({"message": "invalid request", "error": detail, "success": false})
                .to_string(),
            content_type: None,
        },
    };
    emu.add_fault(refuse());
    let plain = cli.run(&["list-users"]);
    assert_eq!(plain.code, 13, "invalid_request: {}", plain.stderr);
    assert!(
        plain.stderr.contains(&format!("invalid request: {detail}")),
        "{}",
        plain.stderr
    );

    emu.add_fault(refuse());
    let ran = cli.run(&["list-users", "--output", "json"]);
    assert_eq!(ran.code, 13, "{}", ran.stderr);
    let line = ran.stderr.lines().last().unwrap_or_default();
    let object: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
    let error = &object["error"];
    assert_eq!(error["kind"], "invalid_request", "{object}");
    assert_eq!(error["message"], format!("invalid request: {detail}"));
    assert_eq!(error["service_message"], "invalid request");
    assert_eq!(error["service_error"], detail);
    assert!(error.get("service_error_message").is_none(), "{object}");
}

/// Issue 44, item 20: with `--output json` every error is the JSON error
/// object — clap's usage errors, and export's and import's errors; and an
/// SDK message names the command line's flag, not the SDK's method.
#[test]
fn errors_are_json_objects_with_output_json_and_name_the_flags() {
    let emu = emulator(unlimited());
    let cli = Cli::new(&emu, "errors");
    let last_line_object = |ran: &Ran| -> Value {
        let line = ran.stderr.lines().last().unwrap_or_default();
        serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {}", ran.stderr))
    };
    for (args, code, kind) in [
        (
            &["list-users", "--limit", "500", "--output", "json"][..],
            2,
            "usage",
        ),
        (&["create-chatroom", "--output=jsonl"], 2, "usage"),
        (&["list-users", "--bogus", "--output", "json"], 2, "usage"),
        (
            &["import", "users", "/nonexistent.csv", "--output", "json"],
            3,
            "io",
        ),
    ] {
        let ran = cli.run(args);
        assert_eq!(ran.code, code, "{args:?}: {}", ran.stderr);
        let object = last_line_object(&ran);
        assert_eq!(object["error"]["kind"], kind, "{args:?}");
        assert_eq!(object["error"]["exit_code"], code, "{args:?}");
    }
    // Export's error (whichever comes first: the room unknown, the file not writable).
    let not_a_folder = cli.config.join("a-file");
    std::fs::write(&not_a_folder, "").unwrap();
    let into = not_a_folder.join("x.jsonl").display().to_string();
    let exported = cli.run(&["export", "nope", "--output", "json", "-o", &into]);
    assert_ne!(exported.code, 0, "{}", exported.stderr);
    let object = last_line_object(&exported);
    assert_eq!(
        object["error"]["exit_code"], exported.code,
        "{}",
        exported.stderr
    );
    assert!(object["error"]["kind"].is_string(), "{object}");

    let insecure = cli.run(&["list-chat-rooms", "--base-url", "http://example.com"]);
    assert_eq!(insecure.code, 24, "{}", insecure.stderr);
    assert!(
        insecure.stderr.contains("--allow-insecure-http"),
        "{}",
        insecure.stderr
    );
    assert!(
        !insecure.stderr.contains("allow_insecure_http(true)"),
        "{}",
        insecure.stderr
    );
}

/// A page of the service's as a `Fault` answers it: 200, `body` as it is.
fn answer_once(path: &str, body: &str) -> Fault {
    Fault {
        method: Some("GET".into()),
        path: path.into(),
        times: 1,
        action: FaultAction::Respond {
            status: 200,
            headers: vec![],
            body: body.into(),
            content_type: None,
        },
    }
}

/// Hostile review, repro-5: what a generic command prints keeps the answer's
/// text as the service sent it, key order and number text (a 30-digit
/// integer, `1.10`), in every format: `--output json` (on one line when
/// piped), `jsonl`, `--all`, `csv` (a declared listing's `_extra`, the columns
/// a record's keys give) and `table`; an answer the SDK refuses is still
/// refused, with the SDK's error.
#[test]
fn the_outputs_keep_the_key_order_and_number_text_the_service_sent() {
    let emu = emulator(unlimited());
    let cli = Cli::new(&emu, "as-sent");
    emu.create_room(json!({"roomId": "r1", "name": "General"}));
    let first = r#"{"_id":"m1","zeta":"z","message":"c","amount":123456789012345678901234567890,"price":1.10,"user":{"username":"ann","b":2.50}}"#;
    let second = r#"{"_id":"m2","message":"d","price":-98765432109876543210.50}"#;
    emu.add_messages(json!({"roomId": "r1", "records": [first, second]}));

    // The items, one a line, byte for byte: one page, and page after page.
    for args in [
        &["room-messages", "r1", "--output", "jsonl"][..],
        &["room-messages", "r1", "--all"],
        &["room-messages", "r1", "--all", "--page-size", "1"],
        &["room-messages", "r1", "--all", "--output", "jsonl"],
    ] {
        let lines: Vec<String> = cli.ok(args).lines().map(str::to_owned).collect();
        assert_eq!(lines, [first, second], "{args:?}");
    }
    // The page, as the service wrote it.
    let page = cli.ok(&["room-messages", "r1", "--output", "json"]);
    assert!(
        page.ends_with(&format!(r#""messages":[{first},{second}]}}{}"#, "\n")),
        "{page}"
    );
    assert!(page.starts_with(r#"{"limit":50,"skip":0,"#), "{page}");

    // CSV: the declared columns; the other fields in `_extra` as sent; a nested value as sent.
    for args in [
        &["room-messages", "r1", "--output", "csv"][..],
        &["room-messages", "r1", "--all", "--output", "csv"],
    ] {
        let (header, rows) = read_csv(&cli.ok(args));
        let column = |name: &str| header.iter().position(|h| h == name).unwrap();
        assert_eq!(
            rows[0][column("_extra")],
            r#"{"zeta":"z","amount":123456789012345678901234567890,"price":1.10}"#,
            "{args:?}"
        );
        assert_eq!(rows[0][column("user")], r#"{"username":"ann","b":2.50}"#);
        assert_eq!(
            rows[1][column("_extra")],
            r#"{"price":-98765432109876543210.50}"#
        );
    }
    // A table: the declared fields the rows hold, then the others as first sent.
    let table = cli.ok(&["room-messages", "r1", "--output", "table"]);
    let mut lines = table.lines();
    let header: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    assert_eq!(
        header,
        ["_id", "message", "user", "zeta", "amount", "price"]
    );
    let cells: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    assert_eq!(
        cells[3..],
        ["z", "123456789012345678901234567890", "1.10"],
        "{table}"
    );

    // An answer on several lines, keys in no order: one line when piped, its bytes kept
    // but the blanks between them; its CSV's columns in the order sent.
    let room = "/consumer/api/v1/chatroom/r1";
    let sent = "{\n  \"roomId\": \"r1\",\n  \"zeta\": 1.10,\n  \"name\": \"G, H\",\n  \"big\": 123456789012345678901234567890\n}\n";
    emu.add_fault(answer_once(room, sent));
    assert_eq!(
        cli.ok(&["get-chat-room", "r1", "--output", "json"]),
        "{\"roomId\":\"r1\",\"zeta\":1.10,\"name\":\"G, H\",\"big\":123456789012345678901234567890}\n"
    );
    emu.add_fault(answer_once(room, sent));
    assert_eq!(
        cli.ok(&["get-chat-room", "r1", "--output", "csv"]),
        "roomId,zeta,name,big\nr1,1.10,\"G, H\",123456789012345678901234567890\n"
    );

    // What the SDK refuses is refused: its error, its exit code, nothing on stdout.
    emu.add_fault(answer_once(
        "/consumer/api/v1/chatRoom/r1/messages",
        r#"{"messages": "not a list"}"#,
    ));
    let refused = cli.run(&["room-messages", "r1", "--output", "json"]);
    let decode = roomchat::ErrorKind::Decode;
    assert_eq!(
        refused.code,
        10 + decode.code() as i32,
        "{}",
        refused.stderr
    );
    assert!(refused.stderr.contains(decode.name()), "{}", refused.stderr);
    assert_eq!(refused.stdout, "");
}

/// Hostile review: the CSV (or table) of an empty listing that declares no
/// columns is empty, not a lone `value` header that no later run's rows would
/// match (appended to, the file stays one CSV); a paging listing's still gives
/// its declared header.
#[test]
fn an_empty_listing_without_declared_columns_prints_no_header() {
    let emu = emulator(unlimited());
    let cli = Cli::new(&emu, "empty");
    for format in ["csv", "table"] {
        assert_eq!(
            cli.ok(&["list-chat-rooms", "--output", format]),
            "",
            "{format}"
        );
    }
    let (header, rows) = read_csv(&cli.ok(&["list-users", "--output", "csv"]));
    assert_eq!(
        (header.first().map(String::as_str), rows.len()),
        (Some("_id"), 0)
    );
    // Not empty: a column per field.
    emu.create_room(json!({"roomId": "r1", "name": "General"}));
    let (header, rows) = read_csv(&cli.ok(&["list-chat-rooms", "--output", "csv"]));
    assert!(header.iter().any(|h| h == "roomId"), "{header:?}");
    assert_eq!(rows.len(), 1);
}

/// Hostile review: an access token is a secret, shown by no dry run of any
/// operation that sends one: `REDACTED` in the body, read from
/// `$ROOMCHAT_ACCESS_TOKEN` by the curl command, which then sends exactly
/// the SDK's request.
#[test]
fn a_dry_run_shows_no_access_token() {
    let emu = emulator(unlimited());
    let cli = Cli::new(&emu, "token");
    let token = "eyJhbGciOi.secret-token.s1gn";
    let cases: [(&[&str], &str, Value); 4] = [
        (
            &["validate-access-token", "--access-token", token],
            "validate_access_token",
            json!({"accessToken": token}),
        ),
        (
            &["invalidate-access-token", "--access-token", token],
            "invalidate_access_token",
            json!({"accessToken": token}),
        ),
        (
            &[
                "send-room-message",
                "r1",
                "--message",
                "hi",
                "--user-access-token",
                token,
            ],
            "send_room_message",
            json!({"roomId": "r1", "message": "hi", "userAccessToken": token}),
        ),
        (
            &[
                "send-channel-message",
                "r1",
                "c1",
                "--message",
                "hi",
                "--user-access-token",
                token,
            ],
            "send_channel_message",
            json!({"roomId": "r1", "channelId": "c1", "message": "hi", "userAccessToken": token}),
        ),
    ];
    // These are every operation with an access token among its params.
    let with_tokens: Vec<&str> = Operation::ALL
        .into_iter()
        .filter_map(|op| op.spec())
        .filter(|spec| {
            spec.params
                .iter()
                .any(|p| p.name.to_ascii_lowercase().contains("accesstoken"))
        })
        .map(|spec| spec.name)
        .collect();
    let tested: Vec<&str> = cases.iter().map(|(_, name, _)| *name).collect();
    assert_eq!(with_tokens, tested);

    // The guide's example, as it prints it.
    let guide = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let command = "$ roomchat validate-access-token --access-token \"$TOKEN\" --dry-run\n";
    let example = guide
        .split(command)
        .nth(1)
        .and_then(|rest| rest.split("```").next());
    let printed = cli.ok(&[
        "validate-access-token",
        "--access-token",
        token,
        "--dry-run",
        "--base-url",
        "https://api.example.com",
    ]);
    assert_eq!(Some(printed.as_str()), example, "cli/README.md, Dry run");

    for (args, name, params) in &cases {
        let request = Operation::from_name(name).unwrap().build(params).unwrap();
        let mut as_json = args.to_vec();
        as_json.extend(["--dry-run", "--output", "json"]);
        let mut as_text = args.to_vec();
        as_text.push("--dry-run");
        for run in [&as_json, &as_text] {
            let ran = cli.run(run);
            assert_eq!(ran.code, 0, "{run:?}: {}", ran.stderr);
            assert!(
                !ran.stdout.contains(token) && !ran.stderr.contains(token),
                "{run:?} shows the token:\n{}{}",
                ran.stdout,
                ran.stderr
            );
            assert!(
                ran.stdout.contains(r#"ccessToken":"REDACTED""#),
                "{}",
                ran.stdout
            );
        }
        let shown: Value = serde_json::from_str(&cli.ok(&as_json)).unwrap();
        let curl = shown["curl"].as_str().unwrap();
        assert!(curl.contains("\"$ROOMCHAT_ACCESS_TOKEN\""), "{curl}");

        // The curl command, run by a shell (a stand-in `curl` prints its arguments), sends
        // the SDK's request once the key and the token are in the environment.
        #[cfg(unix)]
        {
            let printed = Command::new("sh")
                .arg("-c")
                .arg(format!(
                    "curl() {{ for a in \"$@\"; do printf '%s\\n' \"$a\"; done; }}; {curl}"
                ))
                .env("ROOMCHAT_PRIVATE_KEY", emu.private_key())
                .env("ROOMCHAT_PUBLIC_KEY", emu.public_key())
                .env("ROOMCHAT_ACCESS_TOKEN", token)
                .output()
                .unwrap();
            let printed = String::from_utf8(printed.stdout).unwrap();
            let words: Vec<&str> = printed.lines().collect();
            let key = match request.auth_param() {
                Some("publicKey") => emu.public_key(),
                _ => emu.private_key(),
            };
            assert_eq!(words[3], request.url(emu.base_url(), Some(&key)), "{curl}");
            assert_eq!(words.last().copied(), request.body.as_deref(), "{curl}");
        }
    }
}

/// Every `name(1)` a man page names.
fn pages_named(page: &str) -> Vec<String> {
    let text = page.replace("\\-", "-");
    let mut named = Vec::new();
    for (at, _) in text.match_indices("(1)") {
        let name: String = text[..at]
            .chars()
            .rev()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        named.push(name);
    }
    named
}

/// Issue 44, item 20: the man pages name only pages `roomchat man --all`
/// writes, and each has the exit-code table as its EXIT STATUS.
#[test]
fn the_man_pages_name_only_pages_that_exist_and_give_the_exit_status() {
    let emu = emulator(unlimited());
    let cli = Cli::new(&emu, "man");
    let guide = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let table = &guide[guide.find("| code | meaning |").unwrap()..];
    let codes: Vec<&str> = table
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| l.split('|').nth(1).unwrap().trim())
        .collect();
    assert!(codes.len() > 20, "{codes:?}");

    let check = |page: &str, folder: Option<&Path>| {
        assert!(page.contains(".SH \"EXIT STATUS\""), "{}", &page[..200]);
        let status = &page[page.find(".SH \"EXIT STATUS\"").unwrap()..];
        for code in &codes {
            assert!(status.contains(&format!("\\fB{code}\\fR")), "exit {code}");
        }
        for name in pages_named(page) {
            if name == "roomchat-COMMAND" || name == "roomchat-import-COMMAND" {
                continue; // the generic mention of the pages `--all` writes
            }
            match folder {
                Some(folder) => assert!(folder.join(format!("{name}.1")).is_file(), "{name}(1)"),
                None => assert_eq!(name, "roomchat", "the page names {name}(1)"),
            }
        }
    };
    let main = cli.ok(&["man"]);
    assert!(main.starts_with(".ie") && main.contains(".TH roomchat 1"));
    check(&main, None);

    let folder = cli.config.join("man1");
    cli.ok(&["man", "--all", folder.to_str().unwrap()]);
    let mut written: Vec<String> = std::fs::read_dir(&folder)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    written.sort();
    for op in Operation::ALL {
        if let Some(spec) = op.spec() {
            let page = format!("roomchat-{}.1", roomchat_cli::command_name(spec.name));
            assert!(written.contains(&page), "{page}");
        }
    }
    for page in [
        "roomchat.1",
        "roomchat-export.1",
        "roomchat-import.1",
        "roomchat-import-users.1",
    ] {
        assert!(written.contains(&page.to_owned()), "{page}: {written:?}");
    }
    for page in &written {
        check(
            &std::fs::read_to_string(folder.join(page)).unwrap(),
            Some(&folder),
        );
    }
}

/// Issue 44, item 20: the guide says how to install from a checkout, and
/// what it names is the crate whose binary is `roomchat`.
#[test]
fn the_guide_says_how_to_install_from_a_checkout() {
    let guide = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    assert!(guide.contains("cargo install --path cli"), "cli/README.md");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let manifest = std::fs::read_to_string(root.join("cli").join("Cargo.toml")).unwrap();
    assert!(
        manifest.contains("[[bin]]\nname = \"roomchat\""),
        "{manifest}"
    );
}
