//! `roomchat export` against the emulator: a 100,000-message room in every format (rate beside
//! the SDK's own item iterator, peak RSS), killed with SIGKILL half-way and run again (with and
//! without messages posted meanwhile), several rooms and a channel, the time filter.
//!
//! `cargo test --release -p roomchat-cli --test export -- --nocapture` runs them on 100,000
//! messages and prints the `cli export:` figures (the test command's step); a debug build
//! (`cargo test --workspace`) runs the same tests on 20,000, to stay quick.

mod export_common;

use std::collections::HashSet;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use export_common::{emulator, roomchat, run_measured, run_ok, Scratch};
use roomchat::{Client, RateLimitConfig, RoomMessages};
use roomchat_emulator::Emulator;
use serde_json::{json, Value};

/// The big room's size: 100,000 in a release build, 20,000 in a debug one.
const BIG: usize = if cfg!(debug_assertions) {
    20_000
} else {
    100_000
};

fn client(emu: &Emulator) -> Client {
    Client::builder(emu.private_key())
        .base_url(emu.base_url())
        .rate_limit(RateLimitConfig::new(1_000_000, Duration::from_secs(60)))
        .build()
        .unwrap()
}

/// A room of `count` messages (every 50th with a file).
fn seeded_room(emu: &Emulator, room: &str, count: usize) {
    emu.create_room(json!({"roomId": room, "name": format!("Room {room}")}));
    let total = emu.add_messages(json!({
        "roomId": room, "count": count, "text": "a message of the webinar's transcript, number",
        "attachmentEvery": 50,
    }))["total"]
        .as_u64();
    assert_eq!(total, Some(count as u64));
}

/// Every message id of the room, in the service's order, through the SDK.
fn room_ids(client: &Client, room: &str) -> Vec<String> {
    client
        .iter_room_messages(room, &RoomMessages::new())
        .map(|m| m.unwrap().id.unwrap())
        .collect()
}

/// The ids of a jsonl export, in the file's order.
fn jsonl_ids(path: &Path) -> Vec<String> {
    #[derive(serde::Deserialize)]
    struct Id {
        #[serde(rename = "_id")]
        id: String,
    }
    BufReader::new(std::fs::File::open(path).unwrap())
        .lines()
        .map(|l| serde_json::from_str::<Id>(&l.unwrap()).unwrap().id)
        .collect()
}

fn assert_exactly(ids: &[String], expected: &[String], what: &str) {
    let distinct: HashSet<&String> = ids.iter().collect();
    assert_eq!(distinct.len(), ids.len(), "{what}: a message twice");
    assert_eq!(ids.len(), expected.len(), "{what}: count");
    let first_off = ids.iter().zip(expected).position(|(a, b)| a != b);
    assert_eq!(first_off, None, "{what}: out of order or lost");
}

#[test]
fn a_100k_room_in_every_format_at_the_sdk_rate_in_flat_memory() {
    let emu = emulator();
    seeded_room(&emu, "big", BIG);
    seeded_room(&emu, "tenth", BIG / 10);
    let sdk = client(&emu);
    room_ids(&sdk, "tenth"); // warm
    let dir = Scratch::new("formats");
    let small = run_ok(roomchat(
        &emu,
        &dir.0,
        &["export", "tenth", "-o", "tenth.jsonl", "--quiet"],
    ));
    // The best of a few rounds (a release build): the machine is shared, the figure the
    // fastest the code can go. Each round runs the SDK's iterator, then an export in every
    // format, so that the SDK's figure and the exports' are taken over the same stretch of
    // time: measured once before them, the SDK's best swung from 264,000 to 355,000 msg/s
    // between two runs of the test command while the exports' stayed within 1%.
    let rounds = if cfg!(debug_assertions) { 1 } else { 5 };
    const FORMATS: [&str; 5] = ["jsonl", "json", "csv", "txt", "html"];
    let mut expected = Vec::new();
    let mut sdk_best = Duration::MAX;
    let mut best = [Duration::MAX; FORMATS.len()];
    let mut peak = [0f64; FORMATS.len()];
    for round in 0..rounds {
        let started = Instant::now();
        expected = room_ids(&sdk, "big");
        sdk_best = sdk_best.min(started.elapsed());
        for (i, format) in FORMATS.iter().enumerate() {
            let file = format!("big.{format}");
            if round > 0 {
                std::fs::remove_file(dir.path(&file)).unwrap();
            }
            let run = run_ok(roomchat(
                &emu,
                &dir.0,
                &["export", "big", "-f", format, "-o", &file, "--quiet"],
            ));
            best[i] = best[i].min(run.elapsed);
            peak[i] = peak[i].max(run.peak_rss_mib);
        }
    }
    let sdk_rate = BIG as f64 / sdk_best.as_secs_f64();
    assert_eq!(expected.len(), BIG);

    let mut line = format!(
        "cli export: {BIG} messages, best of {rounds} interleaved rounds; SDK iter_room_messages {sdk_rate:.0} msg/s;"
    );
    for (i, format) in FORMATS.iter().enumerate() {
        let (format, peak) = (*format, peak[i]);
        let file = format!("big.{format}");
        let rate = BIG as f64 / best[i].as_secs_f64();
        line += &format!(
            " {format} {rate:.0} msg/s ({:.2}x), peak RSS {:.1} MiB;",
            rate / sdk_rate,
            peak
        );
        let path = dir.path(&file);
        let text_len = std::fs::metadata(&path).unwrap().len();
        assert!(text_len > 10 * BIG as u64, "{format}: {text_len} bytes");
        // No part file, no checkpoint, no temporary file left.
        let leftovers: Vec<_> = std::fs::read_dir(&dir.0)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains(".roomchat-"))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
        match format {
            "jsonl" => {
                assert_exactly(&jsonl_ids(&path), &expected, "jsonl");
                // Lossless: each line is the record as the service sent it.
                let first = BufReader::new(std::fs::File::open(&path).unwrap())
                    .lines()
                    .next()
                    .unwrap()
                    .unwrap();
                let page = sdk
                    .raw_request(
                        &roomchat::RawRequest::new("GET", "/consumer/api/v1/chatRoom/big/messages")
                            .query("limit", "1"),
                    )
                    .unwrap()
                    .body;
                let sent: Value = serde_json::from_str(&first).unwrap();
                assert_eq!(sent, page["messages"][0]);
                assert!(peak < 30.0, "peak RSS {peak} MiB");
                assert!(
                    peak < small.peak_rss_mib + 5.0,
                    "memory grows with the room: {peak} MiB for {BIG}, {} MiB for {}",
                    small.peak_rss_mib,
                    BIG / 10
                );
            }
            "json" => {
                #[derive(serde::Deserialize)]
                struct Id {
                    #[serde(rename = "_id")]
                    id: String,
                }
                let all: Vec<Id> =
                    serde_json::from_reader(BufReader::new(std::fs::File::open(&path).unwrap()))
                        .unwrap();
                let ids: Vec<String> = all.into_iter().map(|m| m.id).collect();
                assert_exactly(&ids, &expected, "json");
            }
            "csv" => {
                let mut reader = csv::Reader::from_path(&path).unwrap();
                assert_eq!(&reader.headers().unwrap()[0], "id");
                let ids: Vec<String> = reader.records().map(|r| r.unwrap()[0].to_owned()).collect();
                assert_exactly(&ids, &expected, "csv");
            }
            "txt" => {
                let text = std::fs::read_to_string(&path).unwrap();
                let messages = text.lines().filter(|l| l.starts_with("[20")).count();
                assert_eq!(messages, BIG);
                // The count is the footer, known once the last message is written.
                let last = text.lines().last().unwrap();
                assert!(
                    last.starts_with(&format!("{BIG} messages, exported 20")),
                    "{last}"
                );
                assert!(
                    text.contains("seed-author: a message of the webinar's transcript, number 1\n")
                );
                assert!(text.contains("[file: "));
            }
            "html" => {
                let text = std::fs::read_to_string(&path).unwrap();
                assert_eq!(text.matches("<article class=\"msg\"").count(), BIG);
                assert!(text.contains(&format!("id=\"m-{}\"", expected[BIG - 1])));
                assert!(text.trim_end().ends_with("</html>"));
                assert_eq!(html_ids(&text), expected, "html");
                let footer = text.rfind("<footer class=\"page\">").unwrap();
                assert!(footer > text.rfind("</article>").unwrap());
                assert!(text[footer..].starts_with(&format!(
                    "<footer class=\"page\"><p>{BIG} messages, exported 20"
                )));
            }
            _ => unreachable!(),
        }
        std::fs::remove_file(&path).unwrap();
    }
    line += &format!(
        " jsonl of {} messages: peak RSS {:.1} MiB",
        BIG / 10,
        small.peak_rss_mib
    );
    println!("{line}");
}

/// The checkpoint's `next_skip`, once there is one.
fn checkpoint_skip(path: &Path) -> Option<u64> {
    let text = std::fs::read(path).ok()?;
    serde_json::from_slice::<Value>(&text).ok()?["next_skip"].as_u64()
}

/// The message ids of an html export (its articles' `id="m-…"`), in the page's order.
fn html_ids(text: &str) -> Vec<String> {
    text.split("<article class=\"msg\" id=\"m-")
        .skip(1)
        .map(|rest| rest[..rest.find('"').unwrap()].to_owned())
        .collect()
}

/// Runs `export big -o big.jsonl` and SIGKILLs it past half the room (see
/// [`kill_half_way_as`]); the checkpoint's skip then.
fn kill_half_way(emu: &Emulator, dir: &Scratch) -> u64 {
    kill_half_way_as(emu, dir, "big.jsonl", &[])
}

/// The export's page (its default `--page-size`).
const PAGE: usize = 200;

/// The CLI's commit period (`COMMIT_EVERY` in cli/src/export/job.rs: it commits at the
/// first page that comes at least this long after its last commit), and a margin.
const COMMIT_PERIOD: Duration = Duration::from_millis(250);

/// [`kill_half_way`] of `export big -o FILE ARGS`: the emulator holds one page of the
/// second half back (a `Hold` fault) and the process is SIGKILLed while it waits for it,
/// so the kill lands where it means to however fast or slow the machine: the checkpoint
/// past half the room, and 0 to 3 pages (chosen at random) written past it. The first half
/// passes at full speed; the next 2 pages each come a commit period late, so a commit of
/// more than half the room lands (the test waits for it in the checkpoint file, a state);
/// then the chosen pages at full speed, past that checkpoint, then the held one.
fn kill_half_way_as(emu: &Emulator, dir: &Scratch, file: &str, args: &[&str]) -> u64 {
    let path = "/consumer/api/v1/chatRoom/big/messages";
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    let past = nanos % 4;
    let half = (BIG / PAGE / 2) as u32;
    for (times, action) in [
        (half, roomchat_emulator::FaultAction::Delay(Duration::ZERO)),
        (2, roomchat_emulator::FaultAction::Delay(COMMIT_PERIOD)),
        (past, roomchat_emulator::FaultAction::Delay(Duration::ZERO)),
        (1, roomchat_emulator::FaultAction::Hold),
    ] {
        if times > 0 {
            emu.add_fault(roomchat_emulator::Fault {
                method: Some("GET".into()),
                path: path.into(),
                times,
                action,
            });
        }
    }
    let held_page = half + 2 + past + 1;
    assert!(
        (held_page as usize) < BIG / PAGE,
        "a page before the listing's end"
    );
    let mut cmd = roomchat(
        emu,
        &dir.0,
        &[&["export", "big", "-o", file, "--quiet"], args].concat(),
    );
    let mut child = cmd.spawn().unwrap();
    let checkpoint = dir.path(&format!("{file}.roomchat-checkpoint"));
    let deadline = Instant::now() + Duration::from_secs(120);
    // Polled states: the page held, and the commit past half in the checkpoint file.
    while emu.held() == 0 || checkpoint_skip(&checkpoint).is_none_or(|s| s <= BIG as u64 / 2) {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the export ended before its held page"
        );
        assert!(
            Instant::now() < deadline,
            "no hold at page {held_page}, or no checkpoint past half: {} held, checkpoint {:?}",
            emu.held(),
            checkpoint_skip(&checkpoint)
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    child.kill().unwrap(); // SIGKILL, while its page is held
    child.wait().unwrap();
    emu.clear_faults(); // lets the held answer go
    let at = checkpoint_skip(&checkpoint).unwrap();
    assert!(
        at > BIG as u64 / 2 && at <= u64::from(held_page - 1) * PAGE as u64,
        "killed at page {held_page}, the checkpoint at {at}"
    );
    assert!(!dir.path(file).exists(), "not finished when killed");
    at
}

/// The listing requests of the room since the journal was cleared.
fn pages_asked(emu: &Emulator) -> usize {
    emu.journal()
        .iter()
        .filter(|e| e.path.ends_with("/big/messages"))
        .count()
}

#[test]
fn killed_half_way_and_run_again_every_message_once_in_order() {
    let emu = emulator();
    seeded_room(&emu, "big", BIG);
    let dir = Scratch::new("resume");
    let at = kill_half_way(&emu, &dir);
    emu.clear_journal();
    let run = run_ok(roomchat(
        &emu,
        &dir.0,
        &["export", "big", "-o", "big.jsonl"],
    ));
    // Resumed, not started again: about the second half's pages.
    let pages = pages_asked(&emu);
    let left = (BIG as u64 - at) as usize / 200 + 2;
    assert!(
        pages <= left,
        "{pages} pages asked, {left} left at the kill"
    );
    assert!(run.stderr.contains("1 room(s) exported"), "{}", run.stderr);
    let expected = room_ids(&client(&emu), "big");
    assert_exactly(&jsonl_ids(&dir.path("big.jsonl")), &expected, "resumed");
    assert!(!dir.path("big.jsonl.roomchat-checkpoint").exists());
    assert!(!dir.path("big.jsonl.roomchat-part").exists());
    // Once more: finished, nothing is fetched again.
    emu.clear_journal();
    let again = run_ok(roomchat(
        &emu,
        &dir.0,
        &["export", "big", "-o", "big.jsonl"],
    ));
    assert_eq!(pages_asked(&emu), 0);
    assert!(
        again.stderr.contains("is there already"),
        "{}",
        again.stderr
    );
}

#[test]
fn an_html_export_killed_half_way_and_run_again_every_message_once_in_order() {
    let emu = emulator();
    seeded_room(&emu, "big", BIG);
    let dir = Scratch::new("resume-html");
    kill_half_way_as(&emu, &dir, "big.html", &["-f", "html"]);
    // Killed while the converter was rendering: its staging file is thrown away and rebuilt
    // from the part file.
    assert!(dir.path("big.html.roomchat-tmp").exists());
    emu.clear_journal();
    run_ok(roomchat(
        &emu,
        &dir.0,
        &["export", "big", "-f", "html", "-o", "big.html", "--quiet"],
    ));
    let text = std::fs::read_to_string(dir.path("big.html")).unwrap();
    let expected = room_ids(&client(&emu), "big");
    assert_exactly(&html_ids(&text), &expected, "html resumed");
    assert!(text.contains(&format!("<p>{BIG} messages, exported ")));
    let leftovers: Vec<_> = std::fs::read_dir(&dir.0)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".roomchat-"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn a_failing_converter_is_a_typed_error_that_stops_the_fetch_and_keeps_the_part() {
    let emu = emulator();
    emu.create_room(json!({"roomId": "alpha", "name": "Alpha"}));
    emu.seed_messages("alpha", None, 2_000);
    let dir = Scratch::new("converter");
    let listed = |emu: &Emulator| {
        emu.journal()
            .iter()
            .filter(|e| e.path.ends_with("/alpha/messages"))
            .count()
    };

    // The staging file cannot be created (a folder is in the way): the converter fails at
    // once, and the fetch stops at its next page. It may have run ahead of the converter by
    // the pages the channel holds (8) before the converter's thread even began: at most those,
    // the one in hand and the one whose hand-over failed, of the room's 40.
    std::fs::create_dir(dir.path("a.txt.roomchat-tmp")).unwrap();
    emu.clear_journal();
    let run = run_measured(roomchat(
        &emu,
        &dir.0,
        &[
            "export",
            "alpha",
            "-f",
            "txt",
            "-o",
            "a.txt",
            "--page-size",
            "50",
        ],
    ));
    assert_eq!(run.status.code(), Some(3), "{}", run.stderr);
    assert!(run.stderr.contains("a.txt.roomchat-tmp"), "{}", run.stderr);
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    let pages = listed(&emu);
    assert!(
        pages <= 10,
        "{pages} pages fetched after the converter failed"
    );
    assert!(!dir.path("a.txt").exists());
    // Out of the way, the same command finishes the export.
    std::fs::remove_dir(dir.path("a.txt.roomchat-tmp")).unwrap();
    run_ok(roomchat(
        &emu,
        &dir.0,
        &["export", "alpha", "-f", "txt", "-o", "a.txt", "--quiet"],
    ));
    let text = std::fs::read_to_string(dir.path("a.txt")).unwrap();
    assert_eq!(text.lines().filter(|l| l.starts_with("[20")).count(), 2_000);
    let last = text.lines().last().unwrap();
    assert!(last.starts_with("2000 messages, exported "), "{last}");

    // A line of the part file that is not a record (changed behind the export's back): the
    // render's error, typed, naming the file; the part file and the checkpoint are kept.
    std::fs::write(dir.path("b.csv.roomchat-part"), "not a record\n").unwrap();
    std::fs::write(
        dir.path("b.csv.roomchat-checkpoint"),
        r#"{"version":1,"room":"alpha","channel":null,"after":null,"before":null,"next_skip":0,"messages":1,"part_bytes":13,"recent_ids":[],"fetched_all":false,"total":null}"#,
    )
    .unwrap();
    let run = run_measured(roomchat(
        &emu,
        &dir.0,
        &["export", "alpha", "-f", "csv", "-o", "b.csv", "--quiet"],
    ));
    assert_eq!(run.status.code(), Some(3), "{}", run.stderr);
    assert!(run.stderr.contains("b.csv.roomchat-tmp"), "{}", run.stderr);
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    assert!(dir.path("b.csv.roomchat-part").exists());
    assert!(dir.path("b.csv.roomchat-checkpoint").exists());
    assert!(!dir.path("b.csv.roomchat-tmp").exists());
    assert!(!dir.path("b.csv").exists());
}

#[test]
fn messages_posted_during_the_export_are_all_there_once_in_order() {
    let emu = emulator();
    seeded_room(&emu, "big", BIG);
    let dir = Scratch::new("live");
    let stop = AtomicBool::new(false);
    let posted = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            while !stop.load(Ordering::Relaxed) {
                emu.add_messages(json!({"roomId": "big", "count": 20, "text": "live"}));
                posted.fetch_add(20, Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(10));
            }
        });
        kill_half_way(&emu, &dir);
        let before_rerun = posted.load(Ordering::Relaxed);
        run_ok(roomchat(
            &emu,
            &dir.0,
            &["export", "big", "-o", "big.jsonl"],
        ));
        stop.store(true, Ordering::Relaxed);
        let ids = jsonl_ids(&dir.path("big.jsonl"));
        let expected = room_ids(&client(&emu), "big");
        assert!(expected.len() >= ids.len());
        assert_exactly(&ids, &expected[..ids.len()], "with messages arriving");
        assert!(
            ids.len() >= BIG + before_rerun,
            "{} exported, {BIG} seeded and {before_rerun} posted before the second run",
            ids.len()
        );
    });
}

#[test]
fn several_rooms_a_channel_and_a_time_filter() {
    let emu = emulator();
    emu.create_room(json!({"roomId": "alpha", "name": "Alpha <b>"}));
    emu.create_room(json!({"roomId": "beta", "name": "Beta"}));
    let channel = emu.add_channel("alpha", json!({"channelName": "side"}));
    let channel = channel["_id"].as_str().unwrap().to_owned();
    let at = |day: u32| format!("2024-01-{day:02}T12:00:00.000Z");
    let messages: Vec<Value> = (1..=20)
        .map(|d| json!({"message": format!("day {d}"), "created": at(d), "user": {"username": "ann"}}))
        .collect();
    emu.add_messages(json!({"roomId": "alpha", "messages": messages}));
    emu.seed_messages("beta", None, 450);
    emu.seed_messages("alpha", Some(&channel), 30);
    let dir = Scratch::new("rooms");

    // Every room (the channel named), into a folder, 2 at a time, small pages; two 429s met
    // on the way are waited out.
    emu.add_fault(roomchat_emulator::Fault {
        method: Some("GET".into()),
        path: "/consumer/api/v1/chatRoom/beta/messages".into(),
        times: 2,
        action: roomchat_emulator::FaultAction::Respond {
            status: 429,
            headers: vec![("Retry-After".into(), "1".into())],
            body: r#"{"message":"Too many requests"}"#.into(),
            content_type: None,
        },
    });
    let target = format!("alpha/{channel}");
    let run = run_ok(roomchat(
        &emu,
        &dir.0,
        &[
            "export",
            "--all-rooms",
            &target,
            "-o",
            "out",
            "--page-size",
            "7",
            "-j",
            "2",
        ],
    ));
    assert!(
        run.stderr.contains("3 room(s) exported, 500 messages"),
        "{}",
        run.stderr
    );
    assert_eq!(jsonl_ids(&dir.path("out/alpha.jsonl")).len(), 20);
    assert_eq!(jsonl_ids(&dir.path("out/beta.jsonl")).len(), 450);
    let side = jsonl_ids(&dir.path(&format!("out/alpha--{channel}.jsonl")));
    assert_eq!(side.len(), 30);

    // The time filter: after the 5th, before the 10th (strictly).
    run_ok(roomchat(
        &emu,
        &dir.0,
        &[
            "export",
            "alpha",
            "-f",
            "txt",
            "-o",
            "days.txt",
            "--after",
            "2024-01-05T12:00:00Z",
            "--before",
            "2024-01-10",
        ],
    ));
    let text = std::fs::read_to_string(dir.path("days.txt")).unwrap();
    let days: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with('['))
        .map(|l| l.rsplit(": ").next().unwrap())
        .collect();
    assert_eq!(days, ["day 6", "day 7", "day 8", "day 9"]);
    assert!(text.starts_with("Room Alpha <b> (alpha)\n"), "{text}");

    // A resumed export must be the same export: another filter is refused.
    std::fs::write(
        dir.path("x.jsonl.roomchat-checkpoint"),
        r#"{"version":1,"room":"alpha","channel":null,"after":"2024-01-01","before":null,"next_skip":0,"messages":0,"part_bytes":0,"recent_ids":[],"fetched_all":false,"total":null}"#,
    )
    .unwrap();
    let refused = run_measured(roomchat(
        &emu,
        &dir.0,
        &["export", "alpha", "-o", "x.jsonl"],
    ));
    assert_eq!(refused.status.code(), Some(2), "{}", refused.stderr);
    assert!(refused.stderr.contains("--restart"), "{}", refused.stderr);
    // Bad input: a clear error and an exit code, no panic.
    for (args, code, says) in [
        (vec!["export"], 2, "--all-rooms"),
        (
            vec!["export", "alpha", "--after", "last week"],
            2,
            "not a time",
        ),
        (vec!["export", "alpha", "-f", "pdf"], 2, "pdf"),
        (vec!["export", "nope"], -1, "nope"),
    ] {
        let run = run_measured(roomchat(&emu, &dir.0, &args));
        assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
        if code < 0 {
            // The service's error: the exit code of its kind (the README's table), not 0.
            assert!(!matches!(run.status.code(), Some(0) | None), "{args:?}");
        } else {
            assert_eq!(run.status.code(), Some(code), "{args:?}: {}", run.stderr);
        }
        assert!(run.stderr.contains(says), "{args:?}: {}", run.stderr);
    }
}
