//! `roomchat export` at its edges, one end-to-end test per behaviour against the emulator, on
//! small rooms: odd times, odd pages (pretty-printed, records without `_id`, a capped
//! `limit`), deletions before the resume point, colliding targets and locks, planted symlinks,
//! exit codes, what is printed and left behind.

mod export_common;

use std::path::Path;
use std::time::Duration;

use export_common::{emulator, roomchat, run_measured, run_ok, Scratch};
use roomchat_emulator::{Emulator, Fault, FaultAction};
use serde_json::{json, Value};

/// The lines of a file.
fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(str::to_owned)
        .collect()
}

/// The `_id`s of a jsonl export, in order.
fn ids(path: &Path) -> Vec<String> {
    lines(path)
        .iter()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["_id"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect()
}

/// The files of `dir` whose name holds `.roomchat-`, sorted.
fn leftovers(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".roomchat-"))
        .collect();
    names.sort();
    names
}

/// A fault answering the next `times` GETs of `path` with `status` and `body`.
fn respond(emu: &Emulator, path: &str, times: u32, status: u16, body: String) {
    emu.add_fault(Fault {
        method: Some("GET".into()),
        path: path.into(),
        times,
        action: FaultAction::Respond {
            status,
            headers: vec![],
            body,
            content_type: None,
        },
    });
}

#[test]
fn a_time_with_a_non_ascii_character_is_refused_or_kept_never_a_panic() {
    let emu = emulator();
    emu.create_room(json!({"roomId": "alpha", "name": "Alpha"}));
    emu.add_messages(json!({"roomId": "alpha", "messages": [
        {"message": "odd time", "created": "2024-01-1é", "user": {"username": "ann"}},
        {"message": "plain", "created": "2024-01-20T12:00:00.000Z", "user": {"username": "ann"}},
    ]}));
    let dir = Scratch::new("times");
    for flag in ["--after", "--before"] {
        let run = run_measured(roomchat(
            &emu,
            &dir.0,
            &["export", "alpha", flag, "2024-01-1é"],
        ));
        assert_eq!(run.status.code(), Some(2), "{flag}: {}", run.stderr);
        assert!(run.stderr.contains("not a time"), "{}", run.stderr);
    }
    // A message whose `created` the filter cannot place is kept, as the guide says.
    run_ok(roomchat(
        &emu,
        &dir.0,
        &["export", "alpha", "-o", "a.jsonl", "--after", "2024-01-01"],
    ));
    let kept = lines(&dir.path("a.jsonl"));
    assert_eq!(kept.len(), 2, "{kept:?}");
    assert!(kept[0].contains("2024-01-1é"), "{kept:?}");
}

/// `created` as the guide reads it, in the filter as in the transcript: an RFC 3339 time
/// with more than nine digits of a second (RFC 3339 sets no limit; the tenth on are
/// dropped), seconds or milliseconds since 1970 as a JSON number.
#[test]
fn the_time_filter_reads_created_as_the_transcript_shows_it() {
    let emu = emulator();
    emu.create_room(json!({"roomId": "alpha", "name": "Alpha"}));
    // `created` given twice counts once, the last; an escaped key is the key; a string is a
    // time only as RFC 3339 with its offset (else shown as sent, and kept); compared to the
    // nanosecond.
    emu.add_messages(json!({"roomId": "alpha", "records": [
        r#"{"_id":"f10","created":"2024-01-15T15:21:44.1234567891Z","message":"ten digits"}"#,
        r#"{"_id":"s","created":1705332104,"message":"seconds"}"#,
        r#"{"_id":"ms","created":1705332104000,"message":"milliseconds"}"#,
        r#"{"_id":"early","created":1704412800.5,"message":"the 5th"}"#,
        r#"{"_id":"twice","created":"2020-01-01T00:00:00Z","created":"2024-01-16T00:00:00Z"}"#,
        r#"{"_id":"escaped","cr\u0065ated":"2020-01-01T00:00:00Z"}"#,
        r#"{"_id":"annotated","created":"2024-01-01T00:00:00Z[Europe/Paris]"}"#,
        r#"{"_id":"hour","created":"2024-01-01T00:00:00+01"}"#,
        r#"{"_id":"no-zone","created":"2024-01-01 00:00"}"#,
        r#"{"_id":"half-ms","created":"2024-01-15T00:00:00.0005Z"}"#,
        r#"{"_id":"tiny","created":"2024-01-15T00:00:00.00005Z"}"#,
    ]}));
    let dir = Scratch::new("created");
    run_ok(roomchat(
        &emu,
        &dir.0,
        &[
            "export",
            "alpha",
            "-o",
            "after.jsonl",
            "--after",
            "2024-01-15T00:00:00.0001Z",
        ],
    ));
    assert_eq!(
        ids(&dir.path("after.jsonl")),
        [
            "f10",
            "s",
            "ms",
            "twice",
            "annotated",
            "hour",
            "no-zone",
            "half-ms"
        ]
    );
    run_ok(roomchat(
        &emu,
        &dir.0,
        &[
            "export",
            "alpha",
            "-o",
            "before.jsonl",
            "--before",
            "2024-01-15",
        ],
    ));
    assert_eq!(
        ids(&dir.path("before.jsonl")),
        ["early", "escaped", "annotated", "hour", "no-zone"]
    );
    run_ok(roomchat(
        &emu,
        &dir.0,
        &["export", "alpha", "-f", "txt", "-o", "all.txt"],
    ));
    let text = std::fs::read_to_string(dir.path("all.txt")).unwrap();
    assert_eq!(
        text.matches("[2024-01-15 15:21:44 UTC]").count(),
        3,
        "{text}"
    );
    for shown in [
        "[2024-01-05 00:00:00 UTC]",
        "[2024-01-16 00:00:00 UTC]",
        "[2020-01-01 00:00:00 UTC]",
        "[2024-01-01T00:00:00Z[Europe/Paris]]",
        "[2024-01-01T00:00:00+01]",
        "[2024-01-01 00:00]",
    ] {
        assert!(text.contains(shown), "{shown} in {text}");
    }
    assert_eq!(
        text.matches("[2024-01-15 00:00:00 UTC]").count(),
        2,
        "{text}"
    );
}

/// A number's `created` with a fraction or an exponent is read exactly, to the nanosecond
/// (issue 51, item 9: read through an f64, `1705332104.293` was `…44.292999983`, kept by a
/// `--before` equal to it, and `1705332104.2930001`, 100 ns after an `--after`, was dropped).
#[test]
fn a_numbers_created_is_read_to_the_nanosecond_at_the_filters_bound() {
    let emu = emulator();
    emu.create_room(json!({"roomId": "alpha", "name": "Alpha"}));
    emu.add_messages(json!({"roomId": "alpha", "records": [
        r#"{"_id":"int","created":1705332104293}"#,
        r#"{"_id":"point-zero","created":1705332104293.0}"#,
        r#"{"_id":"seconds","created":1705332104.293}"#,
        r#"{"_id":"exponent","created":1.705332104293e12}"#,
        r#"{"_id":"100ns-after","created":1705332104.2930001}"#,
        r#"{"_id":"1ns-before","created":1705332104.292999999}"#,
    ]}));
    let dir = Scratch::new("exact-epoch");
    let bound = "2024-01-15T15:21:44.293Z";
    for (flag, file, kept) in [
        ("--before", "before.jsonl", vec!["1ns-before"]),
        ("--after", "after.jsonl", vec!["100ns-after"]),
    ] {
        run_ok(roomchat(
            &emu,
            &dir.0,
            &["export", "alpha", "-o", file, flag, bound],
        ));
        assert_eq!(ids(&dir.path(file)), kept, "{flag} {bound}");
    }
    run_ok(roomchat(
        &emu,
        &dir.0,
        &["export", "alpha", "-f", "html", "-o", "all.html"],
    ));
    let html = std::fs::read_to_string(dir.path("all.html")).unwrap();
    assert_eq!(
        html.matches(r#"<time datetime="2024-01-15T15:21:44.293Z">"#)
            .count(),
        4,
        "{html}"
    );
    assert!(html.contains(r#"datetime="2024-01-15T15:21:44.2930001Z""#));
    assert!(html.contains(r#"datetime="2024-01-15T15:21:44.292999999Z""#));
}

/// The listing's path of room `room`.
fn listing(room: &str) -> String {
    format!("/consumer/api/v1/chatRoom/{room}/messages")
}

/// A page of the listing as the service answers it, the records given as JSON text.
fn page(records: &[&str], skip: usize, limit: usize, total: usize) -> String {
    format!(
        r#"{{"limit":{limit},"skip":{skip},"totalRecords":{total},"count":{},"messages":[{}]}}"#,
        records.len(),
        records.join(",")
    )
}

/// The `(skip, limit)` of each listing request of `path` the emulator received, in order.
fn asked(emu: &Emulator, path: &str) -> Vec<(u64, u64)> {
    emu.journal()
        .iter()
        .filter(|e| e.path == path)
        .map(|e| {
            let value = |name: &str| {
                e.query
                    .split('&')
                    .find_map(|kv| kv.strip_prefix(&format!("{name}=")))
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(u64::MAX)
            };
            (value("skip"), value("limit"))
        })
        .collect()
}

#[test]
fn jsonl_keeps_each_record_byte_for_byte_from_a_pretty_printed_page() {
    let emu = emulator();
    emu.create_room(json!({"roomId": "alpha", "name": "Alpha"}));
    let body = "{\n  \"success\": true,\n  \"limit\": 200,\n  \"skip\": 0,\n  \"totalRecords\": 2,\n  \"count\": 2,\n  \"messages\": [\n    {\n      \"_id\": \"m1\",\n      \"zeta\": 1.50,\n      \"big\": 123456789012345678901234567890,\n      \"message\": \"two  spaces,\\n \\\"quoted\\\" \\u00e9\",\n      \"alpha\": [ 1, 2 ],\n      \"created\": \"2024-01-15T15:21:44.293Z\"\n    },\n    {\n      \"_id\": \"m2\",\n      \"user\": { \"username\": \"ann\", \"isModerator\": false },\n      \"created\": \"2024-01-15T15:21:45.000Z\"\n    }\n  ]\n}\n";
    respond(&emu, &listing("alpha"), 1, 200, body.into());
    let dir = Scratch::new("bytes");
    run_ok(roomchat(
        &emu,
        &dir.0,
        &["export", "alpha", "-o", "a.jsonl", "--quiet"],
    ));
    assert_eq!(
        lines(&dir.path("a.jsonl")),
        [
            r#"{"_id":"m1","zeta":1.50,"big":123456789012345678901234567890,"message":"two  spaces,\n \"quoted\" \u00e9","alpha":[1,2],"created":"2024-01-15T15:21:44.293Z"}"#,
            r#"{"_id":"m2","user":{"username":"ann","isModerator":false},"created":"2024-01-15T15:21:45.000Z"}"#,
        ]
    );
}

/// Runs `cmd` to its end; kills it and fails if it is still running after `limit` (a loop).
fn run_within(mut cmd: std::process::Command, limit: Duration) -> export_common::Run {
    use std::io::Read;
    let started = std::time::Instant::now();
    let mut child = cmd
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > limit {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("still running after {limit:?}: {}", reader.join().unwrap());
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    export_common::Run {
        status,
        stderr: reader.join().unwrap(),
        elapsed: started.elapsed(),
        peak_rss_mib: 0.0,
    }
}

#[test]
fn records_without_an_id_are_each_written_once_and_the_export_ends() {
    let emu = emulator();
    let dir = Scratch::new("no-ids");
    // Room alpha: a record without `_id` ends the first page and the second; room beta has no
    // ids at all, two of its records alike. Pages of 2 (3 with the message of overlap).
    let alpha = [
        r#"{"_id":"m1","message":"one"}"#,
        r#"{"message":"no id, at a page's end","created":"2024-01-15T15:21:44.293Z"}"#,
        r#"{"_id":"m3","message":"three"}"#,
        r#"{"message":"no id either"}"#,
        r#"{"_id":"m5","message":"five"}"#,
    ];
    let beta = [
        r#"{"message":"a"}"#,
        r#"{"message":"b"}"#,
        r#"{"message":"b"}"#,
        r#"{"message":"c"}"#,
        r#"{"message":"d"}"#,
    ];
    for (room, records) in [("alpha", alpha), ("beta", beta)] {
        emu.create_room(json!({"roomId": room, "name": room}));
        for (skip, limit) in [(0, 2), (1, 3), (3, 3)] {
            let end = (skip + limit).min(records.len());
            let body = page(&records[skip..end], skip, limit, records.len());
            respond(&emu, &listing(room), 1, 200, body);
        }
        emu.clear_journal();
        let file = format!("{room}.jsonl");
        let run = run_within(
            roomchat(
                &emu,
                &dir.0,
                &["export", room, "-o", &file, "--page-size", "2", "--quiet"],
            ),
            Duration::from_secs(20),
        );
        assert!(run.status.success(), "{room}: {}", run.stderr);
        assert_eq!(lines(&dir.path(&file)), records, "{room}");
        assert_eq!(
            asked(&emu, &listing(room)),
            [(0, 2), (1, 3), (3, 3)],
            "{room}"
        );
    }
}

/// A client of the emulator with no budget to speak of.
fn client(emu: &Emulator) -> roomchat::Client {
    roomchat::Client::builder(emu.private_key())
        .base_url(emu.base_url())
        .rate_limit(roomchat::RateLimitConfig::new(
            1_000_000,
            Duration::from_secs(60),
        ))
        .build()
        .unwrap()
}

/// The checkpoint's `next_skip`, once there is one.
fn checkpoint_skip(path: &Path) -> Option<u64> {
    let text = std::fs::read(path).ok()?;
    serde_json::from_slice::<Value>(&text).ok()?["next_skip"].as_u64()
}

/// Starts `roomchat ARGS` (an export to `file` of the listing at `path`, pages of
/// `page_size`) with its `pages`-th page held 300 ms, so that a commit is due when it comes,
/// and the next held until the test lets it go (a `Hold` fault: `clear_faults`); returns
/// the running command once that page is held and its checkpoint says `pages` pages, the
/// listing's requests answered meanwhile held 1 ms each.
fn held_after(
    emu: &Emulator,
    dir: &Scratch,
    args: &[&str],
    path: &str,
    file: &str,
    pages: u32,
    page_size: u64,
) -> std::process::Child {
    for (times, ms) in [(pages - 1, 1), (1, 300)] {
        emu.add_fault(Fault {
            method: Some("GET".into()),
            path: path.into(),
            times,
            action: FaultAction::Delay(Duration::from_millis(ms)),
        });
    }
    emu.add_fault(Fault {
        method: Some("GET".into()),
        path: path.into(),
        times: 1,
        action: FaultAction::Hold,
    });
    let mut child = roomchat(emu, &dir.0, args)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let checkpoint = dir.path(&format!("{file}.roomchat-checkpoint"));
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while emu.held() == 0 || checkpoint_skip(&checkpoint) != Some(u64::from(pages) * page_size) {
        assert!(child.try_wait().unwrap().is_none(), "the export ended");
        assert!(std::time::Instant::now() < deadline, "no checkpoint");
        std::thread::sleep(Duration::from_millis(5));
    }
    child
}

#[test]
fn deletions_before_the_resume_point_duplicate_nothing() {
    // The issue's cases: 3,000 messages, killed at 1,950 with pages of 50 and the 1,110
    // messages before the resume point deleted (3,840 lines before the fix), killed at 1,800
    // with pages of 200 and 850 deleted (3,950); then deletions on both sides of the resume
    // point, the last message written among them. (A single room message cannot be deleted
    // through the API, a channel's can: a channel's listing is paged the same way.)
    let emu = emulator();
    emu.create_room(json!({"roomId": "alpha", "name": "Alpha"}));
    let sdk = client(&emu);
    let dir = Scratch::new("deleted");
    let cases: [(u64, u32, std::ops::Range<usize>); 3] = [
        (50, 39, 840..1_950),
        (200, 9, 950..1_800),
        (50, 39, 1_000..2_100),
    ];
    for (case, (page_size, pages, deleted)) in cases.into_iter().enumerate() {
        let channel = emu.add_channel("alpha", json!({"channelName": format!("side {case}")}))
            ["_id"]
            .as_str()
            .unwrap()
            .to_owned();
        emu.seed_messages("alpha", Some(&channel), 3_000);
        let all: Vec<String> = sdk
            .iter_channel_messages("alpha", &channel, &roomchat::ChannelMessages::new())
            .map(|m| m.unwrap().id.unwrap())
            .collect();
        assert_eq!(all.len(), 3_000);
        let target = format!("alpha/{channel}");
        let path = format!("/consumer/api/v1/chatRoom/alpha/channel/{channel}/messages");
        let file = format!("side{case}.jsonl");
        let size = page_size.to_string();
        let args = [
            "export",
            &target,
            "-o",
            &file,
            "--page-size",
            &size,
            "--quiet",
        ];
        let mut child = held_after(&emu, &dir, &args, &path, &file, pages, page_size);
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        emu.clear_faults();
        for id in &all[deleted.clone()] {
            sdk.delete_channel_message("alpha", &channel, id).unwrap();
        }
        run_ok(roomchat(&emu, &dir.0, &args));
        // Every message once, in order, but those deleted before they were fetched.
        let resumed_at = pages as usize * page_size as usize;
        let expected: Vec<String> = all
            .iter()
            .enumerate()
            .filter(|(i, _)| !(deleted.contains(i) && *i >= resumed_at))
            .map(|(_, id)| id.clone())
            .collect();
        let written = ids(&dir.path(&file));
        assert_eq!(
            written.len(),
            expected.len(),
            "case {case}: {} lines for {} messages",
            written.len(),
            expected.len()
        );
        assert_eq!(written, expected, "case {case}");
    }
}

#[test]
fn a_service_capping_the_limit_is_read_to_the_real_end() {
    // Asked for pages of 10, the service gives 5 (saying `limit: 5`, or only its total).
    let emu = emulator();
    let dir = Scratch::new("capped");
    let records: Vec<String> = (1..=12)
        .map(|n| format!(r#"{{"_id":"m{n}","message":"{n}"}}"#))
        .collect();
    let records: Vec<&str> = records.iter().map(String::as_str).collect();
    for (room, says_limit) in [("alpha", true), ("beta", false)] {
        emu.create_room(json!({"roomId": room, "name": room}));
        for (skip, end) in [(0, 5), (4, 9), (8, 12)] {
            let mut body = page(&records[skip..end], skip, 5, records.len());
            if !says_limit {
                body = body.replace(r#""limit":5,"#, "");
            }
            respond(&emu, &listing(room), 1, 200, body);
        }
        emu.clear_journal();
        let file = format!("{room}.jsonl");
        run_ok(roomchat(
            &emu,
            &dir.0,
            &["export", room, "-o", &file, "--page-size", "10", "--quiet"],
        ));
        assert_eq!(lines(&dir.path(&file)), records, "{room}");
        assert_eq!(
            asked(&emu, &listing(room)),
            [(0, 10), (4, 11), (8, 11)],
            "{room}"
        );
    }
    // A page that says another skip than asked is an error, not a silent loss.
    emu.create_room(json!({"roomId": "gamma", "name": "gamma"}));
    respond(
        &emu,
        &listing("gamma"),
        1,
        200,
        page(&records[..10], 0, 10, 12),
    );
    respond(
        &emu,
        &listing("gamma"),
        1,
        200,
        page(&records[..10], 0, 11, 12),
    );
    let run = run_measured(roomchat(
        &emu,
        &dir.0,
        &["export", "gamma", "-o", "g.jsonl", "--page-size", "10"],
    ));
    assert_eq!(run.status.code(), Some(21), "{}", run.stderr);
    assert!(run.stderr.contains("says skip 0"), "{}", run.stderr);
}

#[test]
fn identical_targets_are_one_and_colliding_ones_are_refused_before_any_fetch() {
    let emu = emulator();
    let dir = Scratch::new("collide");
    for room in ["dup", "CON", "nul.x", "x."] {
        emu.create_room(json!({"roomId": room, "name": room}));
        emu.seed_messages(room, None, 30);
    }
    // `dup dup` is one target: one file, each message once.
    let run = run_ok(roomchat(
        &emu,
        &dir.0,
        &["export", "dup", "dup", "-o", "out/"],
    ));
    assert_eq!(ids(&dir.path("out/dup.jsonl")).len(), 30);
    assert!(
        run.stderr.contains("1 room(s) exported, 30 messages"),
        "{}",
        run.stderr
    );
    // Windows' device names and a trailing dot are made safe names.
    run_ok(roomchat(
        &emu,
        &dir.0,
        &["export", "CON", "nul.x", "x.", "-o", "win/", "--quiet"],
    ));
    let mut files: Vec<String> = std::fs::read_dir(dir.path("win"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(files, ["_CON.jsonl", "_nul.x.jsonl", "x_.jsonl"]);
    // Two targets for one file (the same name, or the same without case): refused, both
    // named, before anything is fetched or made.
    for (a, b, file) in [
        ("k--C", "k/C", "k--C.jsonl"),
        ("a b", "a_b", "a_b.jsonl"),
        ("Abc", "abc", "abc.jsonl"),
    ] {
        emu.clear_journal();
        let run = run_measured(roomchat(&emu, &dir.0, &["export", a, b, "-o", "new/"]));
        assert_eq!(run.status.code(), Some(2), "{a} {b}: {}", run.stderr);
        for says in [a, b, &format!("new/{file}")] {
            assert!(run.stderr.contains(says), "{says}: {}", run.stderr);
        }
        assert_eq!(emu.journal().len(), 0, "{a} {b}: something was asked");
        assert!(!dir.path("new").exists(), "{a} {b}: a folder was made");
    }
}

#[test]
fn a_second_run_of_the_same_export_refuses_its_file_while_the_first_writes_it() {
    let emu = emulator();
    emu.create_room(json!({"roomId": "alpha", "name": "Alpha"}));
    emu.seed_messages("alpha", None, 300);
    let dir = Scratch::new("lock");
    let args = ["export", "alpha", "-o", "a.jsonl", "--page-size", "50"];
    // The first run holds its third page (its checkpoint at 100).
    let mut first = held_after(&emu, &dir, &args, &listing("alpha"), "a.jsonl", 2, 50);
    let part = std::fs::read(dir.path("a.jsonl.roomchat-part")).unwrap();
    // Its third request (held) arrived: any request after it is the second run's.
    while asked(&emu, &listing("alpha")).len() < 3 {
        std::thread::sleep(Duration::from_millis(5));
    }
    emu.clear_journal();
    let second = run_within(roomchat(&emu, &dir.0, &args), Duration::from_secs(10));
    assert_eq!(second.status.code(), Some(3), "{}", second.stderr);
    let says = format!("another roomchat export (process {})", first.id());
    assert!(second.stderr.contains(&says), "{}", second.stderr);
    assert!(second.stderr.contains("a.jsonl"), "{}", second.stderr);
    assert_eq!(emu.journal().len(), 0, "the second run asked for pages");
    assert_eq!(
        std::fs::read(dir.path("a.jsonl.roomchat-part")).unwrap(),
        part
    );
    // Killed (SIGKILL), the first holds nothing any more: the same command finishes.
    first.kill().unwrap();
    first.wait().unwrap();
    emu.clear_faults();
    run_ok(roomchat(&emu, &dir.0, &args));
    let expected: Vec<String> = client(&emu)
        .iter_room_messages("alpha", &roomchat::RoomMessages::new())
        .map(|m| m.unwrap().id.unwrap())
        .collect();
    assert_eq!(ids(&dir.path("a.jsonl")), expected);
    assert!(leftovers(&dir.0).is_empty(), "{:?}", leftovers(&dir.0));
}

#[cfg(unix)]
#[test]
fn a_link_planted_where_the_export_keeps_its_files_is_refused_not_followed() {
    let emu = emulator();
    emu.create_room(json!({"roomId": "alpha", "name": "Alpha"}));
    emu.seed_messages("alpha", None, 30);
    let dir = Scratch::new("links");
    let victim = dir.path("victim.txt");
    // The staging file is html's (jsonl has none); the checkpoint's temporary file is made
    // at jsonl's end.
    for (suffix, format) in [
        ("roomchat-part", "jsonl"),
        ("roomchat-checkpoint", "jsonl"),
        ("roomchat-checkpoint.tmp", "jsonl"),
        ("roomchat-tmp", "html"),
        ("roomchat-lock", "jsonl"),
    ] {
        std::fs::write(&victim, "precious\n").unwrap();
        let file = format!("a.{format}");
        let planted = dir.path(&format!("{file}.{suffix}"));
        std::os::unix::fs::symlink(&victim, &planted).unwrap();
        let run = run_measured(roomchat(
            &emu,
            &dir.0,
            &["export", "alpha", "-f", format, "-o", &file],
        ));
        assert_eq!(run.status.code(), Some(3), "{suffix}: {}", run.stderr);
        assert!(
            run.stderr
                .contains(&format!("{file}.{suffix}: a symbolic link")),
            "{suffix}: {}",
            run.stderr
        );
        assert_eq!(
            std::fs::read_to_string(&victim).unwrap(),
            "precious\n",
            "{suffix}"
        );
        assert!(!dir.path(&file).exists(), "{suffix}");
        // (The link itself may be gone: a failed render removes its staging file.)
        let _ = std::fs::remove_file(&planted);
        for left in leftovers(&dir.0) {
            std::fs::remove_file(dir.path(&left)).unwrap();
        }
    }
    // A hard link to another file, where the part file goes: refused too.
    std::fs::write(&victim, "precious\n").unwrap();
    std::fs::hard_link(&victim, dir.path("b.jsonl.roomchat-part")).unwrap();
    let run = run_measured(roomchat(
        &emu,
        &dir.0,
        &["export", "alpha", "-o", "b.jsonl"],
    ));
    assert_eq!(run.status.code(), Some(3), "{}", run.stderr);
    assert!(run.stderr.contains("hard links"), "{}", run.stderr);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
}

#[test]
fn with_several_failed_rooms_the_exit_code_is_the_first_failures() {
    let emu = emulator();
    emu.create_room(json!({"roomId": "alpha", "name": "Alpha"}));
    emu.seed_messages("alpha", None, 10);
    let dir = Scratch::new("exit-codes");
    // alpha's part file cannot be written (a folder is in its way): 3, first (one at a time);
    // then an unknown room: 28. The code is the first's.
    std::fs::create_dir_all(dir.path("out/alpha.jsonl.roomchat-part")).unwrap();
    let run = run_measured(roomchat(
        &emu,
        &dir.0,
        &["export", "alpha", "nope", "-o", "out/", "-j", "1"],
    ));
    assert_eq!(run.status.code(), Some(3), "{}", run.stderr);
    assert!(run.stderr.contains("2 failed"), "{}", run.stderr);
    assert!(run.stderr.contains("nope failed"), "{}", run.stderr);
    // The other way round: the service's error first, its kind's code.
    let run = run_measured(roomchat(
        &emu,
        &dir.0,
        &["export", "nope", "alpha", "-o", "out/", "-j", "1"],
    ));
    assert_eq!(run.status.code(), Some(28), "{}", run.stderr);
}

#[test]
fn ids_are_printed_without_their_escapes() {
    let emu = emulator();
    let evil = "evil\u{1b}]0;pwned\u{7}\u{1b}[2J";
    emu.create_room(json!({"roomId": evil, "name": "Evil"}));
    emu.seed_messages(evil, None, 10);
    let dir = Scratch::new("escapes");
    // Plain progress (stderr is a pipe), a note, a failure: no escape reaches the terminal.
    let channel = format!("{evil}/\u{1b}[31mnope");
    let run = run_measured(roomchat(
        &emu,
        &dir.0,
        &["export", evil, &channel, "-o", "out/"],
    ));
    assert_eq!(run.status.code(), Some(28), "{}", run.stderr);
    assert!(!run.stderr.contains('\u{1b}'), "{:?}", run.stderr);
    assert!(!run.stderr.contains('\u{7}'), "{:?}", run.stderr);
    assert!(run.stderr.contains("evil\\u{1b}]0;pwned"), "{}", run.stderr);
    let again = run_measured(roomchat(&emu, &dir.0, &["export", evil, "-o", "out/"]));
    assert!(
        again.stderr.contains("is there already"),
        "{}",
        again.stderr
    );
    assert!(!again.stderr.contains('\u{1b}'), "{:?}", again.stderr);
}

#[test]
fn the_rooms_name_for_a_title_waits_out_a_429() {
    let emu = emulator();
    emu.create_room(json!({"roomId": "alpha", "name": "Alpha"}));
    emu.seed_messages("alpha", None, 10);
    let dir = Scratch::new("name-429");
    // The room's name, asked for the transcript's title, meets a 429: waited out (it was
    // dropped).
    emu.add_fault(Fault {
        method: Some("GET".into()),
        path: "/consumer/api/v1/chatroom/alpha".into(),
        times: 1,
        action: FaultAction::Respond {
            status: 429,
            headers: vec![("Retry-After".into(), "1".into())],
            body: r#"{"message":"Too many requests"}"#.into(),
            content_type: None,
        },
    });
    let run = run_ok(roomchat(
        &emu,
        &dir.0,
        &["export", "alpha", "-f", "txt", "-o", "a.txt"],
    ));
    let text = std::fs::read_to_string(dir.path("a.txt")).unwrap();
    assert!(text.starts_with("Room Alpha (alpha)\n"), "{text}");
    assert!(run.stderr.contains("1 429(s) met"), "{}", run.stderr);
}

#[test]
fn a_checkpoint_of_another_export_is_refused_saying_what_it_holds() {
    let emu = emulator();
    emu.create_room(json!({"roomId": "alpha", "name": "Alpha"}));
    let dir = Scratch::new("other-checkpoint");
    // A checkpoint of another export says what it holds, readably.
    std::fs::write(
        dir.path("x.jsonl.roomchat-checkpoint"),
        r#"{"version":2,"room":"alpha","channel":"side","after":"2024-01-01","before":null,"next_skip":0,"messages":0,"part_bytes":0,"last":null,"fetched_all":false,"total":null}"#,
    )
    .unwrap();
    let refused = run_measured(roomchat(
        &emu,
        &dir.0,
        &["export", "alpha", "-o", "x.jsonl"],
    ));
    assert_eq!(refused.status.code(), Some(2), "{}", refused.stderr);
    assert!(
        refused
            .stderr
            .contains("the checkpoint is of another export (alpha/side --after 2024-01-01)"),
        "{}",
        refused.stderr
    );
    assert!(!refused.stderr.contains("None"), "{}", refused.stderr);
}

#[test]
fn an_unknown_target_leaves_nothing_behind() {
    let emu = emulator();
    emu.create_room(json!({"roomId": "alpha", "name": "Alpha"}));
    let dir = Scratch::new("unknown");
    for (target, format) in [("nope", "jsonl"), ("alpha/nope", "html")] {
        let run = run_measured(roomchat(&emu, &dir.0, &["export", target, "-f", format]));
        assert_eq!(run.status.code(), Some(28), "{target}: {}", run.stderr);
        let left: Vec<_> = std::fs::read_dir(&dir.0).unwrap().collect();
        assert!(left.is_empty(), "{target}: {left:?}");
    }
}

#[test]
fn a_failed_target_says_to_run_again_only_when_that_can_help() {
    let emu = emulator();
    emu.create_room(json!({"roomId": "alpha", "name": "Alpha"}));
    emu.seed_messages("alpha", None, 10);
    let dir = Scratch::new("rerun");
    let again = "run the same command again to resume";
    // An unknown room, a checkpoint of another export: a rerun cannot cure them.
    std::fs::write(
        dir.path("x.jsonl.roomchat-checkpoint"),
        r#"{"version":2,"room":"beta","channel":null,"after":null,"before":null,"next_skip":0,"messages":0,"part_bytes":0,"last":null,"fetched_all":false,"total":null}"#,
    )
    .unwrap();
    for args in [
        vec!["export", "nope"],
        vec!["export", "alpha", "-o", "x.jsonl"],
    ] {
        let run = run_measured(roomchat(&emu, &dir.0, &args));
        assert!(run.status.code().is_some_and(|c| c != 0), "{args:?}");
        assert!(run.stderr.contains("failed: "), "{args:?}: {}", run.stderr);
        assert!(!run.stderr.contains(again), "{args:?}: {}", run.stderr);
    }
    // A page that is not JSON (a proxy's page): a rerun can.
    emu.add_fault(Fault {
        method: Some("GET".into()),
        path: listing("alpha"),
        times: 1,
        action: FaultAction::NotJson,
    });
    let run = run_measured(roomchat(&emu, &dir.0, &["export", "alpha"]));
    assert_eq!(run.status.code(), Some(21), "{}", run.stderr);
    assert!(run.stderr.contains(again), "{}", run.stderr);
    run_ok(roomchat(&emu, &dir.0, &["export", "alpha", "--quiet"]));
}

#[test]
fn an_output_file_in_new_folders_gets_its_folders() {
    let emu = emulator();
    emu.create_room(json!({"roomId": "alpha", "name": "Alpha"}));
    emu.seed_messages("alpha", None, 10);
    let dir = Scratch::new("mkdir");
    run_ok(roomchat(
        &emu,
        &dir.0,
        &["export", "alpha", "-o", "newdir/sub/f.jsonl", "--quiet"],
    ));
    assert_eq!(ids(&dir.path("newdir/sub/f.jsonl")).len(), 10);
}

#[test]
fn a_resumed_exports_summary_counts_this_runs_messages() {
    let emu = emulator();
    emu.create_room(json!({"roomId": "alpha", "name": "Alpha"}));
    emu.seed_messages("alpha", None, 300);
    let dir = Scratch::new("rate");
    let args = ["export", "alpha", "-o", "a.jsonl", "--page-size", "50"];
    let mut first = held_after(&emu, &dir, &args, &listing("alpha"), "a.jsonl", 3, 50);
    first.kill().unwrap();
    first.wait().unwrap();
    emu.clear_faults();
    let run = run_ok(roomchat(&emu, &dir.0, &args));
    assert!(
        run.stderr
            .contains("1 room(s) exported, 150 messages (and 150 from earlier runs), "),
        "{}",
        run.stderr
    );
    assert_eq!(ids(&dir.path("a.jsonl")).len(), 300);
}

#[test]
fn plain_progress_lines_come_every_2_s_while_a_page_is_slow() {
    use std::io::BufRead;
    let emu = emulator();
    emu.create_room(json!({"roomId": "alpha", "name": "Alpha"}));
    emu.seed_messages("alpha", None, 100);
    let dir = Scratch::new("cadence");
    // The second page takes 3 s: a line must come at 2 s, while it is awaited (lines came
    // once a page: at the first page, then only at the second's arrival).
    emu.add_fault(Fault {
        method: Some("GET".into()),
        path: listing("alpha"),
        times: 1,
        action: FaultAction::Delay(Duration::ZERO),
    });
    emu.add_fault(Fault {
        method: Some("GET".into()),
        path: listing("alpha"),
        times: 1,
        action: FaultAction::Delay(Duration::from_secs(3)),
    });
    let started = std::time::Instant::now();
    let mut child = roomchat(
        &emu,
        &dir.0,
        &["export", "alpha", "-o", "a.jsonl", "--page-size", "50"],
    )
    .stderr(std::process::Stdio::piped())
    .spawn()
    .unwrap();
    let lines: Vec<(Duration, String)> = std::io::BufReader::new(child.stderr.take().unwrap())
        .lines()
        .map(|l| (started.elapsed(), l.unwrap()))
        .collect();
    assert!(child.wait().unwrap().success(), "{lines:?}");
    let while_held: Vec<&String> = lines
        .iter()
        .filter(|(at, l)| {
            (Duration::from_millis(1_500)..Duration::from_millis(2_900)).contains(at)
                && l.starts_with("roomchat export: alpha: 50/100 messages")
        })
        .map(|(_, l)| l)
        .collect();
    assert_eq!(while_held.len(), 1, "{lines:?}");
}

#[cfg(unix)]
#[test]
fn ctrl_c_commits_what_was_fetched_and_says_how_to_resume() {
    let emu = emulator();
    emu.create_room(json!({"roomId": "alpha", "name": "Alpha"}));
    emu.seed_messages("alpha", None, 100);
    let dir = Scratch::new("ctrl-c");
    // Three pages at once (well within a commit's 200 ms), the fourth held until the test
    // lets it go (a `Hold` fault).
    for (times, action) in [
        (3, FaultAction::Delay(Duration::ZERO)),
        (1, FaultAction::Hold),
    ] {
        emu.add_fault(Fault {
            method: Some("GET".into()),
            path: listing("alpha"),
            times,
            action,
        });
    }
    let args = ["export", "alpha", "-o", "a.jsonl", "--page-size", "10"];
    let mut child = roomchat(&emu, &dir.0, &args)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while emu.held() == 0 {
        assert!(std::time::Instant::now() < deadline, "no fourth page held");
        std::thread::sleep(Duration::from_millis(5));
    }
    let kill = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    // The held call is cancelled: the command ends while its page is still held (it would
    // never come), not once it is let go.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            child.kill().unwrap();
            emu.clear_faults();
            panic!("still running 30 s after Ctrl-C, its page held");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(130), "{stderr}");
    assert!(
        stderr.contains("to resume, run the same command"),
        "{stderr}"
    );
    // The three pages fetched are committed.
    assert_eq!(
        checkpoint_skip(&dir.path("a.jsonl.roomchat-checkpoint")),
        Some(30),
        "{stderr}"
    );
    emu.clear_faults();
    emu.clear_journal();
    run_ok(roomchat(&emu, &dir.0, &args));
    let expected: Vec<String> = client(&emu)
        .iter_room_messages("alpha", &roomchat::RoomMessages::new())
        .map(|m| m.unwrap().id.unwrap())
        .collect();
    assert_eq!(ids(&dir.path("a.jsonl")), expected);
    assert_eq!(asked(&emu, &listing("alpha"))[0], (29, 11), "resumed at 30");
}

/// A room id too long for a file name (a file system holds 255 bytes) is exported into a
/// folder under its first 163 bytes and a digest of the whole, with its checkpoint beside
/// it while it runs: the README's File names.
#[test]
fn a_room_id_too_long_for_a_file_name_is_exported_into_a_folder() {
    let emu = emulator();
    let long = "r".repeat(250);
    for room in [long.as_str(), "short"] {
        emu.create_room(json!({"roomId": room, "name": room}));
        emu.add_messages(json!({"roomId": room, "messages": [
            {"message": "hello", "user": {"username": "ann"}},
        ]}));
    }
    let dir = Scratch::new("long-id");
    run_ok(roomchat(
        &emu,
        &dir.0,
        &["export", "--all-rooms", "-o", "history/"],
    ));
    let mut names: Vec<String> = std::fs::read_dir(dir.path("history"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names.len(), 2, "{names:?}");
    let (hashed, short) = (&names[0], &names[1]);
    assert_eq!(short, "short.jsonl");
    assert_eq!(hashed.len(), 180 + ".jsonl".len(), "{hashed}");
    assert!(
        hashed.starts_with(&format!("{}-", "r".repeat(163))),
        "{hashed}"
    );
    assert_eq!(lines(&dir.path(&format!("history/{hashed}"))).len(), 1);
}
