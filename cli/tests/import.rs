//! `roomchat import users FILE` against the emulator: 1,000 users twice (1,000 created, then
//! none created and 1,000 already there); with creates whose answer never comes (the emulator
//! holds it after the user was created), connections closed before any effect, and 429s:
//! still nobody twice; bad rows reported, not fatal.

#[path = "export_common/mod.rs"]
mod common;

use std::collections::HashMap;
use std::time::Duration;

use common::{emulator, roomchat, run_measured, run_ok, Scratch};
use roomchat_emulator::{Emulator, Fault, FaultAction};

/// The result file's rows: (uniqueUserIdentifier, result, userId, reason).
fn results(path: &std::path::Path) -> Vec<(String, String, String, String)> {
    let mut reader = csv::Reader::from_path(path).unwrap();
    assert_eq!(
        reader.headers().unwrap().iter().collect::<Vec<_>>(),
        [
            "line",
            "uniqueUserIdentifier",
            "username",
            "result",
            "userId",
            "reason"
        ]
    );
    reader
        .records()
        .map(|r| {
            let r = r.unwrap();
            (r[1].into(), r[3].into(), r[4].into(), r[5].into())
        })
        .collect()
}

fn tally(rows: &[(String, String, String, String)]) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    for row in rows {
        *counts.entry(row.1.clone()).or_default() += 1;
    }
    counts
}

/// Every user's uniqueUserIdentifier appears once in the emulator's state.
fn assert_nobody_twice(emu: &Emulator, expected: usize) {
    let users = emu.users();
    let mut seen = HashMap::<String, usize>::new();
    for u in &users {
        *seen
            .entry(u["uniqueUserIdentifier"].as_str().unwrap_or("").to_owned())
            .or_default() += 1;
    }
    let twice: Vec<_> = seen.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "created twice: {twice:?}");
    assert_eq!(users.len(), expected);
}

#[test]
fn a_thousand_users_twice_creates_each_once() {
    let emu = emulator();
    let dir = Scratch::new("import");
    let mut csv = String::from("username,uniqueUserIdentifier,email,isModerator,meta\n");
    for i in 0..1000 {
        csv += &format!(
            "User {i},crm-{i},user{i}@example.com,{},\"{{\"\"n\"\": {i}}}\"\n",
            i % 100 == 0
        );
    }
    std::fs::write(dir.path("users.csv"), csv).unwrap();

    let first = run_ok(roomchat(
        &emu,
        &dir.0,
        // The emulator here has no effective limit: a higher budget keeps the test short.
        &[
            "--rate-limit",
            "20000",
            "import",
            "users",
            "users.csv",
            "-j",
            "8",
        ],
    ));
    let rows = results(&dir.path("users.csv.results.csv"));
    assert_eq!(rows.len(), 1000);
    assert_eq!(tally(&rows).get("created"), Some(&1000), "{}", first.stderr);
    assert!(
        first
            .stderr
            .contains("1000 created, 0 already there, 0 failed"),
        "{}",
        first.stderr
    );
    assert_nobody_twice(&emu, 1000);
    let users = emu.users();
    let u7 = users
        .iter()
        .find(|u| u["uniqueUserIdentifier"] == "crm-7")
        .unwrap();
    assert_eq!(
        (&u7["username"], &u7["email"]),
        (&"User 7".into(), &"user7@example.com".into())
    );
    assert_eq!(u7["meta"]["n"], 7);
    let u100 = users
        .iter()
        .find(|u| u["uniqueUserIdentifier"] == "crm-100")
        .unwrap();
    assert_eq!(u100["isModerator"], true);
    // No access token in the result file.
    let text = std::fs::read_to_string(dir.path("users.csv.results.csv")).unwrap();
    assert!(!text.contains("eyJ"), "a token in the results");

    emu.clear_journal();
    let second = run_ok(roomchat(&emu, &dir.0, &["import", "users", "users.csv"]));
    let rows = results(&dir.path("users.csv.results.csv"));
    assert_eq!(
        tally(&rows).get("already there"),
        Some(&1000),
        "{}",
        second.stderr
    );
    assert!(
        second.stderr.contains("0 created, 1000 already there"),
        "{}",
        second.stderr
    );
    assert_eq!(
        emu.journal().iter().filter(|e| e.method == "POST").count(),
        0,
        "nothing sent to create"
    );
    assert_nobody_twice(&emu, 1000);
    println!(
        "cli import: 1000 users created in {:.1} s (the client's budget of 600 a minute), checked again in {:.1} s",
        first.elapsed.as_secs_f64(),
        second.elapsed.as_secs_f64()
    );
}

#[test]
fn unknown_outcomes_are_checked_before_sending_again() {
    let emu = emulator();
    let dir = Scratch::new("import-faults");
    let mut lines = String::new();
    for i in 0..100 {
        lines += &format!("{{\"username\": \"u{i}\", \"uniqueUserIdentifier\": \"ext-{i}\"}}\n");
    }
    std::fs::write(dir.path("users.jsonl"), lines).unwrap();
    let create = |times: u32, action: FaultAction| {
        emu.add_fault(Fault {
            method: Some("POST".into()),
            path: "/consumer/api/v1/user".into(),
            times,
            action,
        })
    };
    // The user is created, then the answer is held past the client's patience.
    create(8, FaultAction::Delay(Duration::from_millis(1500)));
    // Closed before anything happened: not created, so sent again after the check.
    create(3, FaultAction::CloseConnection);
    create(
        3,
        FaultAction::Respond {
            status: 429,
            headers: vec![("Retry-After".into(), "1".into())],
            body: r#"{"message":"Too many requests"}"#.into(),
            content_type: None,
        },
    );
    let run = run_measured(roomchat(
        &emu,
        &dir.0,
        &[
            "import",
            "users",
            "users.jsonl",
            "--create-timeout",
            "0.5",
            "-j",
            "4",
        ],
    ));
    let rows = results(&dir.path("users.jsonl.results.csv"));
    let failed: Vec<_> = rows.iter().filter(|r| r.1 == "failed").collect();
    assert!(
        run.status.success() && failed.is_empty(),
        "{failed:?} {}",
        run.stderr
    );
    assert_eq!(tally(&rows).get("created"), Some(&100), "{}", run.stderr);
    assert_nobody_twice(&emu, 100);
    // Each user was asked for in one POST that took effect: a timed-out create was looked up
    // (GET), found, and not sent again.
    let journal = emu.journal();
    let mut effective = HashMap::<String, usize>::new();
    for e in journal
        .iter()
        .filter(|e| e.method == "POST" && e.status == 200)
    {
        let body: serde_json::Value = serde_json::from_str(&e.body).unwrap();
        *effective
            .entry(body["uniqueUserIdentifier"].as_str().unwrap().to_owned())
            .or_default() += 1;
    }
    // (A delayed answer is journaled with its status once the hold is over.)
    assert!(effective.values().all(|n| *n == 1), "{effective:?}");
    let lookups = journal
        .iter()
        .filter(|e| e.method == "GET" && e.path.starts_with("/consumer/api/v2/user/ext-"))
        .count();
    assert!(
        lookups >= 8 + 3,
        "{lookups} lookups for 11 unknown outcomes"
    );
    let confirmed = rows
        .iter()
        .filter(|r| r.3.starts_with("confirmed after an unknown outcome"))
        .count();
    assert_eq!(confirmed, 8, "{rows:?}");

    // Run again: nobody created, everybody there.
    let again = run_ok(roomchat(&emu, &dir.0, &["import", "users", "users.jsonl"]));
    let rows = results(&dir.path("users.jsonl.results.csv"));
    assert_eq!(
        tally(&rows).get("already there"),
        Some(&100),
        "{}",
        again.stderr
    );
    assert_nobody_twice(&emu, 100);
}

#[test]
fn bad_rows_are_reported_and_bad_files_refused() {
    let emu = emulator();
    let dir = Scratch::new("import-bad");
    std::fs::write(
        dir.path("mixed.jsonl"),
        concat!(
            "{\"username\": \"ok\", \"uniqueUserIdentifier\": \"good-1\"}\n",
            "{\"username\": \"no id\"}\n",
            "{not json\n",
            "{\"username\": \"dup\", \"uniqueUserIdentifier\": \"good-1\"}\n",
            "{\"username\": \"\\u0001\", \"uniqueUserIdentifier\": \"ctl\"}\n",
        ),
    )
    .unwrap();
    let run = run_measured(roomchat(&emu, &dir.0, &["import", "users", "mixed.jsonl"]));
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    // Some rows failed, the others were imported: exit code 4, not a usage error.
    assert_eq!(run.status.code(), Some(4), "{}", run.stderr);
    assert!(run.stderr.contains("4 of 5 users failed"), "{}", run.stderr);
    let rows = results(&dir.path("mixed.jsonl.results.csv"));
    let by: Vec<(&str, &str)> = rows.iter().map(|r| (r.1.as_str(), r.3.as_str())).collect();
    assert_eq!(by[0], ("created", ""));
    assert!(by[1].1.contains("no uniqueUserIdentifier"), "{by:?}");
    assert!(by[2].1.contains("not JSON"), "{by:?}");
    assert!(
        by[3].1.contains("same uniqueUserIdentifier as line 1"),
        "{by:?}"
    );
    assert!(by[4].1.contains("username"), "{by:?}");
    assert_nobody_twice(&emu, 1);

    std::fs::write(dir.path("nouser.csv"), "name,email\nann,a@example.com\n").unwrap();
    for (args, code, says) in [
        (vec!["import", "users", "missing.csv"], 3, "missing.csv"),
        (
            vec!["import", "users", "nouser.csv"],
            2,
            "no username column",
        ),
        (vec!["import", "users"], 2, "FILE"),
        (
            vec!["import", "users", "mixed.jsonl", "--create-timeout", "0"],
            2,
            "create-timeout",
        ),
    ] {
        let run = run_measured(roomchat(&emu, &dir.0, &args));
        assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
        assert_eq!(run.status.code(), Some(code), "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains(says), "{args:?}: {}", run.stderr);
    }
}

#[test]
fn dry_runs_of_import_and_export_send_nothing() {
    let emu = emulator();
    let dir = Scratch::new("dry-run");
    std::fs::write(
        dir.path("users.csv"),
        "username,uniqueUserIdentifier\nAnn Lee,crm-1\n",
    )
    .unwrap();
    emu.clear_journal();
    for args in [
        &["import", "users", "users.csv", "--dry-run"][..],
        &["export", "R1", "R2/C1", "--all-rooms", "--dry-run"][..],
    ] {
        let out = roomchat(&emu, &dir.0, args).output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(stdout.contains("auth=REDACTED"), "{stdout}");
        assert!(
            !stdout.contains(&emu.private_key()),
            "the key shown: {stdout}"
        );
        if args[0] == "import" {
            assert!(
                stdout.contains(r#""uniqueUserIdentifier":"crm-1""#),
                "{stdout}"
            );
        } else {
            assert!(
                stdout.contains("/chatRoom/R2/channel/C1/messages"),
                "{stdout}"
            );
        }
    }
    assert!(
        emu.journal().is_empty(),
        "a dry run sent {:?}",
        emu.journal()
    );
    assert!(!dir.path("users.csv.results.csv").exists());
}
