//! `roomchat export` schedules of one target: through kills, deletions, posts and faults (also
//! several runs at once, a full disk, a time filter), then a final rerun without faults. (Several
//! targets in one command: [`crate::targets`].)

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use rand::seq::IndexedRandom;
use rand::{RngExt, SeedableRng};
use roomchat_emulator::{Emulator, Fault, FaultAction};
use serde_json::json;

use crate::cases::{CaseRng, Kind};
use crate::process::{self, tail, Ran, Stop};
use crate::room::{iso, Filter, Gone, Room, Style, FIRST_MS, JAN_1_MS, STEP_MS};

pub(crate) const FORMATS: [&str; 6] = ["jsonl", "jsonl", "json", "csv", "txt", "html"];

/// Every message listing of a room or channel (the faults' path).
pub(crate) const LISTINGS: &str = "/consumer/api/v1/chatRoom/*";

/// The longest a run may take: more is a command that does not end (the faults a run meets
/// cost a few seconds at most).
pub(crate) const RUN_LIMIT: Duration = Duration::from_secs(20);

/// When a run is killed.
#[derive(Debug, Clone)]
pub enum When {
    Never,
    /// Early: while it starts, or in its first pages.
    AfterMs(u64),
    /// Once the emulator served this fraction of the listing's pages (then within 2 ms), the
    /// pages slowed so that a checkpoint was made before: a resume from the middle.
    AfterPages(f64),
    /// Once the last page was served, within 5 ms: during the last commits, fsyncs, renames.
    AtEnd,
}

impl When {
    fn describe(&self) -> String {
        match self {
            When::Never => "not killed".into(),
            When::AfterMs(ms) => format!("kill -9 at {ms} ms"),
            When::AfterPages(f) => format!("kill -9 at {:.0}% of the pages", f * 100.0),
            When::AtEnd => "kill -9 at the end".into(),
        }
    }
}

/// How long a run killed in the middle of its pages lasts at least before its kill (the
/// export commits a checkpoint every 200 ms: it has made some by then).
const BEFORE_A_LATE_KILL_MS: u64 = 300;
/// ... and when deletions before the resume point are the case's point (item 2 of issue 44):
/// several checkpoints, the last one near the kill.
const BEFORE_A_LATE_KILL_MASS_MS: u64 = 900;

/// What is deleted once a run ended, before the next.
#[derive(Debug, Clone)]
pub enum Deletions {
    None,
    /// This many, anywhere in the room.
    Anywhere(usize),
    /// This fraction of what lies before the resume point (the checkpoint's `next_skip` when
    /// it can be read, else half the room).
    BeforeResume(f64),
    /// The last this many before the resume point (or all but 50 of them): every message the
    /// 1,000 ids the checkpoint remembered name (item 2 of issue 44).
    ManyBeforeResume(usize),
}

/// One run of the schedule (before the final one).
#[derive(Debug, Clone)]
pub struct RunPlan {
    stop: When,
    posts: bool,
    deletes: bool,
    faults: u32,
    after: Deletions,
    /// On a full disk of this many KiB.
    full_disk_kib: Option<u64>,
    /// Runs of the same command started at once, at these offsets (ms); empty: one run.
    together: Vec<u64>,
}

impl RunPlan {
    fn plain(stop: When) -> RunPlan {
        RunPlan {
            stop,
            posts: false,
            deletes: false,
            faults: 0,
            after: Deletions::None,
            full_disk_kib: None,
            together: Vec::new(),
        }
    }

    fn describe(&self) -> String {
        let mut parts = vec![if self.together.is_empty() {
            self.stop.describe()
        } else {
            format!(
                "{} runs at once (at {:?} ms), the first {}",
                self.together.len(),
                self.together,
                self.stop.describe()
            )
        }];
        if let Some(kib) = self.full_disk_kib {
            parts.push(format!("on a full disk of {kib} KiB"));
        }
        if self.posts {
            parts.push("posts during".into());
        }
        if self.deletes {
            parts.push("deletions during".into());
        }
        if self.faults > 0 {
            parts.push(format!("{} fault(s)", self.faults));
        }
        match self.after {
            Deletions::None => {}
            Deletions::Anywhere(n) => parts.push(format!("then {n} deleted anywhere")),
            Deletions::BeforeResume(f) => parts.push(format!(
                "then {:.0}% of what is before the resume point deleted",
                f * 100.0
            )),
            Deletions::ManyBeforeResume(n) => {
                parts.push(format!("then the {n} before the resume point deleted"))
            }
        }
        format!("[{}]", parts.join(", "))
    }
}

/// A schedule of one target's export.
pub struct Plan {
    format: &'static str,
    page_size: u64,
    size: usize,
    style: Style,
    channel: bool,
    pretty: bool,
    limit_cap: Option<u64>,
    page_delay_ms: u64,
    deleted_first: usize,
    to_file: bool,
    runs: Vec<RunPlan>,
    filter: Filter,
    /// A time argument with a non-ASCII character (or otherwise bad): a usage error.
    bad_time: Option<(&'static str, &'static str)>,
}

/// `--after`/`--before` values that are not times (non-ASCII characters among them; the
/// hand-written parser panicked on some).
const BAD_TIMES: [&str; 8] = [
    "2024-01-0é",
    "2024-01-1€",
    "2024-01-01T00:00:00Ž",
    "２０２４-01-01",
    "2024-01-01T0é:00:00Z",
    "é",
    "2024-01-01T00:00:00+0€:00",
    "last week",
];

/// `items` or a random `n` of them (in their order).
pub(crate) fn pick(rng: &mut CaseRng, items: &[usize], n: usize) -> Vec<usize> {
    let mut picked: Vec<usize> = items.sample(rng, n.min(items.len())).copied().collect();
    picked.sort_unstable();
    picked
}

/// A time near record `i`'s, in one of the forms the guide documents.
fn draw_time(rng: &mut CaseRng, size: usize) -> (String, i64) {
    let i = rng.random_range(0..size.max(1)) as i64;
    let exact = FIRST_MS + i * STEP_MS;
    match rng.random_range(0..4) {
        // A record's own time: strictly after (before) leaves it out.
        0 => (iso(exact, None), exact),
        1 => {
            let ms = exact - exact % 1000 + 1000;
            (format!("{}Z", &iso(ms, None)[..19]), ms)
        }
        2 => {
            let ms = exact + rng.random_range(-20_000..20_000);
            let offset = *[60, -90, 330].choose(rng).expect("offsets");
            (iso(ms, Some(offset)), ms)
        }
        _ => {
            let day = (exact - JAN_1_MS) / 86_400_000 + rng.random_range(0..=1);
            let ms = JAN_1_MS + day * 86_400_000;
            (iso(ms, None)[..10].to_owned(), ms)
        }
    }
}

impl Plan {
    pub fn draw(rng: &mut CaseRng, kind: Kind) -> Plan {
        // Item 2's edge: many deletions before the resume point of a big room.
        let mass = kind == Kind::Export && rng.random_bool(0.25);
        let format = *FORMATS.choose(rng).expect("formats");
        let size = if mass {
            rng.random_range(2_400..=3_400)
        } else {
            match rng.random_range(0..10) {
                0 => rng.random_range(0..=5),
                1..=4 => rng.random_range(20..=120),
                _ => rng.random_range(120..=700),
            }
        };
        let page_size = if mass {
            *[25, 40, 50, 100].choose(rng).expect("sizes")
        } else {
            *[1, 2, 3, 5, 7, 10, 25, 50, 50, 100, 200]
                .choose(rng)
                .expect("sizes")
        };
        let some = |rng: &mut CaseRng, p: f64, range: std::ops::Range<f64>| {
            if rng.random_bool(p) {
                rng.random_range(range)
            } else {
                0.0
            }
        };
        let mut style = Style {
            idless: match rng.random_range(0..10) {
                0 => 1.0,
                1..=4 => rng.random_range(0.02..0.3),
                _ => 0.0,
            },
            odd: some(rng, 0.4, 0.05..0.4),
            fancy: some(rng, 0.4, 0.1..0.6),
            huge: if size <= 300 {
                some(rng, 0.15, 0.01..0.08)
            } else {
                0.0
            },
            spaced: some(rng, 0.2, 0.05..0.3),
            junk_times: 0.0,
            well_typed: false,
        };
        if mass {
            // Plain records with ids, plain pages: deletions are what this case is about.
            style = Style {
                spaced: style.spaced,
                ..Style::default()
            };
        }
        let mut plan = Plan {
            format,
            page_size,
            size,
            style,
            channel: rng.random_bool(0.2),
            pretty: !mass && rng.random_bool(0.3),
            limit_cap: (!mass && page_size >= 4 && rng.random_bool(0.08)).then_some(page_size / 2),
            page_delay_ms: if mass {
                rng.random_range(0..=1)
            } else {
                *[0, 0, 1, 2, 3, 5, 8].choose(rng).expect("delays")
            },
            deleted_first: if size > 10 && rng.random_bool(0.2) {
                rng.random_range(1..=size / 10)
            } else {
                0
            },
            to_file: rng.random_bool(0.2),
            runs: Vec::new(),
            filter: Filter::default(),
            bad_time: None,
        };
        match kind {
            Kind::Export if mass => {
                plan.runs.push(RunPlan {
                    after: Deletions::ManyBeforeResume(rng.random_range(1_050..=1_500)),
                    ..RunPlan::plain(When::AfterPages(rng.random_range(0.75..0.97)))
                });
                if rng.random_bool(0.3) {
                    plan.runs.push(RunPlan {
                        after: Deletions::BeforeResume(rng.random_range(0.2..0.6)),
                        ..RunPlan::plain(When::AfterPages(rng.random_range(0.8..0.99)))
                    });
                }
            }
            Kind::Export | Kind::TimeFilter => {
                let runs = rng.random_range(0..=3);
                for _ in 0..runs {
                    let stop = match rng.random_range(0..8) {
                        0 | 1 => When::Never,
                        2 | 3 => When::AfterMs(rng.random_range(0..=30)),
                        4..=6 => When::AfterPages(rng.random_range(0.1..0.95)),
                        _ => When::AtEnd,
                    };
                    let after = match rng.random_range(0..6) {
                        0 | 1 => Deletions::Anywhere(rng.random_range(1..=(size / 5).max(1))),
                        2 => Deletions::BeforeResume(rng.random_range(0.05..0.5)),
                        _ => Deletions::None,
                    };
                    plan.runs.push(RunPlan {
                        posts: rng.random_bool(0.4),
                        deletes: rng.random_bool(0.3),
                        faults: if rng.random_bool(0.5) {
                            rng.random_range(1..=3)
                        } else {
                            0
                        },
                        after,
                        ..RunPlan::plain(stop)
                    });
                }
                if kind == Kind::TimeFilter {
                    plan.style.junk_times = rng.random_range(0.1..0.4);
                    let (a, b) = (draw_time(rng, size), draw_time(rng, size));
                    let (low, high) = if a.1 <= b.1 { (a, b) } else { (b, a) };
                    match rng.random_range(0..3) {
                        0 => plan.filter.after = Some(low),
                        1 => plan.filter.before = Some(high),
                        _ => {
                            plan.filter.after = Some(low);
                            plan.filter.before = Some(high);
                        }
                    }
                    if rng.random_bool(0.3) {
                        let flag = *["--after", "--before"].choose(rng).expect("flags");
                        plan.bad_time = Some((flag, *BAD_TIMES.choose(rng).expect("times")));
                    }
                }
            }
            Kind::Concurrent => {
                plan.page_delay_ms = rng.random_range(2..=6);
                let together = rng.random_range(2..=3);
                let offsets: Vec<u64> = (0..together).map(|_| rng.random_range(0..=40)).collect();
                plan.runs.push(RunPlan {
                    posts: rng.random_bool(0.3),
                    together: offsets,
                    ..RunPlan::plain(if rng.random_bool(0.3) {
                        When::AfterMs(rng.random_range(10..=200))
                    } else {
                        When::Never
                    })
                });
            }
            Kind::DiskFull => {
                plan.style.huge = 0.0;
                plan.size = rng.random_range(200..=1_200);
                plan.page_delay_ms = 0;
                // The output's size, roughly (a record is some 500 bytes; the formats other
                // than jsonl hold the part file and the rendering at once).
                let factor = if plan.format == "jsonl" { 1 } else { 2 };
                let bytes = plan.size as u64 * 500 * factor;
                let first = (bytes * rng.random_range(15..90) / 100 / 1024).max(16);
                plan.runs.push(RunPlan {
                    full_disk_kib: Some(first),
                    ..RunPlan::plain(When::Never)
                });
                if rng.random_bool(0.4) {
                    plan.runs.push(RunPlan {
                        full_disk_kib: Some(first * 2),
                        after: Deletions::Anywhere(rng.random_range(0..=20)),
                        ..RunPlan::plain(When::Never)
                    });
                }
            }
            Kind::Targets | Kind::Import | Kind::ListingCsv => unreachable!("not an export plan"),
        }
        plan
    }

    pub fn describe(&self) -> String {
        let mut shape = vec![self.style.describe()];
        if self.pretty {
            shape.push("pretty-printed pages".into());
        }
        if let Some(cap) = self.limit_cap {
            shape.push(format!("listing capped at {cap} a page"));
        }
        if self.deleted_first > 0 {
            shape.push(format!("{} deleted before the export", self.deleted_first));
        }
        let mut line = format!(
            "{} export of a {}{} messages ({}) to {}, page {}, {} ms a page",
            self.format,
            if self.channel {
                "channel of "
            } else {
                "room of "
            },
            self.size,
            shape.join("; "),
            if self.to_file {
                "-o FILE"
            } else {
                "-o FOLDER/"
            },
            self.page_size,
            self.page_delay_ms,
        );
        let filter = self.filter.args();
        if !filter.is_empty() {
            line += &format!(", {}", filter.join(" "));
        }
        if let Some((flag, value)) = self.bad_time {
            line += &format!(", {flag} {value:?} (not a time)");
            return line;
        }
        for run in &self.runs {
            line += &format!(" {}", run.describe());
        }
        line + " then a final run"
    }

    pub fn run(
        &self,
        rng: &mut CaseRng,
        emu: &Emulator,
        dir: &Path,
        room_id: &str,
    ) -> Result<(), String> {
        emu.create_room(json!({"roomId": room_id, "name": format!("Room {room_id}")}));
        let channel = self.channel.then(|| {
            emu.add_channel(room_id, json!({"channelName": "side"}))["_id"]
                .as_str()
                .expect("a channel id")
                .to_owned()
        });
        let mut room = Room::new(
            room_id,
            channel.as_deref(),
            self.style.clone(),
            rng.random(),
        );
        room.add(emu, rng, self.size);
        if self.pretty || self.limit_cap.is_some() {
            emu.set_listing(json!({
                "roomId": room_id, "channelId": channel, "pretty": self.pretty,
                "limitCap": self.limit_cap,
            }));
        }
        let first = pick(rng, &room.present(), self.deleted_first);
        room.delete(emu, &first, Gone::BeforeStart);
        std::fs::create_dir_all(dir.join("out")).expect("the output folder");
        let (out_arg, file) = if self.to_file {
            let name = format!("out/export.{}", self.format);
            (name.clone(), dir.join(name))
        } else {
            (
                "out/".to_owned(),
                dir.join("out")
                    .join(format!("{}.{}", stem(&room.target()), self.format)),
            )
        };
        let mut args: Vec<String> = [
            "export",
            &room.target(),
            "-f",
            self.format,
            "--page-size",
            &self.page_size.to_string(),
            "-o",
            &out_arg,
        ]
        .map(str::to_owned)
        .to_vec();
        args.extend(self.filter.args());

        if let Some((flag, value)) = self.bad_time {
            args.extend([flag.to_owned(), value.to_owned()]);
            let ran = run_to_its_end(emu, dir, &args);
            ran.broken(&format!("the export with {flag} {value:?}"))?;
            if ran.code != Some(2) {
                return Err(format!(
                    "{flag} {value:?}: {} (a usage error is exit 2): {}",
                    ran.summary(),
                    tail(&ran.stderr)
                ));
            }
            let written = files_in(&dir.join("out"));
            if !written.is_empty() {
                return Err(format!(
                    "{flag} {value:?} was refused, yet the export wrote {written:?}"
                ));
            }
            return Ok(());
        }

        let slow = |ms: u64| {
            (ms > 0).then(|| Fault {
                method: Some("GET".into()),
                path: LISTINGS.into(),
                times: u32::MAX,
                action: FaultAction::Delay(Duration::from_millis(ms)),
            })
        };
        // The listing's pages served (answered) since the journal was cleared.
        let pages_served = || {
            emu.journal()
                .iter()
                .filter(|e| e.method == "GET" && e.path.ends_with("/messages") && e.status != 0)
                .count() as u64
        };
        let room = Mutex::new(room);
        let checkpoint = PathBuf::from(format!("{}.roomchat-checkpoint", file.display()));
        let page = self
            .limit_cap
            .map_or(self.page_size, |cap| cap.min(self.page_size));
        for (k, run) in self.runs.iter().enumerate() {
            room.lock().unwrap().run_begins();
            let present = room.lock().unwrap().present().len() as u64;
            let pages = present / page + 1;
            let mut delay = self.page_delay_ms;
            let stop = match run.stop {
                When::Never => Stop::Never,
                When::AfterMs(ms) => Stop::After(Duration::from_millis(ms)),
                When::AfterPages(f) => {
                    let at = ((pages as f64 * f).ceil() as u64).clamp(1, pages);
                    let before = if matches!(run.after, Deletions::ManyBeforeResume(_)) {
                        BEFORE_A_LATE_KILL_MASS_MS
                    } else {
                        BEFORE_A_LATE_KILL_MS
                    };
                    delay = delay.max(before.div_ceil(at).min(50));
                    Stop::Progress {
                        progress: &pages_served,
                        at,
                        then: Duration::from_micros(rng.random_range(0..2_000)),
                        fallback: Duration::from_secs(10),
                    }
                }
                When::AtEnd => Stop::Progress {
                    progress: &pages_served,
                    at: pages,
                    then: Duration::from_micros(rng.random_range(0..5_000)),
                    fallback: Duration::from_secs(10),
                },
            };
            if !run.together.is_empty() {
                // Runs at once overlap: each lasts some 150 ms at least.
                delay = delay.max(150u64.div_ceil(pages).min(20));
            }
            let slow = slow(delay);
            emu.clear_faults();
            if let Some(slow) = &slow {
                emu.add_fault(slow.clone());
            }
            emu.clear_journal();
            let chaos_rng = CaseRng::seed_from_u64(rng.random());
            let ran = with_chaos(emu, &room, chaos_rng, run, slow.as_ref(), || {
                run_together(emu, dir, &args, run, &stop)
            });
            for (j, r) in ran.iter().enumerate() {
                let what = if ran.len() > 1 {
                    format!("run {} (of {} at once)", k + 1, ran.len())
                } else {
                    format!("run {}", k + 1)
                };
                r.broken(&format!("{what}, {}", run.describe()))?;
                if run.full_disk_kib.is_some() && r.code == Some(97) {
                    return Err(format!(
                        "the harness's full-disk script failed ({j}): {}",
                        tail(&r.stderr)
                    ));
                }
            }
            room.lock().unwrap().runs_ended(file.exists());
            emu.clear_faults();
            let mut room = room.lock().unwrap();
            let present = room.present();
            let picks = match run.after {
                Deletions::None => Vec::new(),
                Deletions::Anywhere(n) => pick(rng, &present, n),
                Deletions::BeforeResume(_) | Deletions::ManyBeforeResume(_) => {
                    let resume = process::checkpoint_skip(&checkpoint)
                        .map_or(present.len() / 2, |s| s as usize)
                        .min(present.len());
                    match run.after {
                        Deletions::ManyBeforeResume(n) => {
                            let n = n.min(resume.saturating_sub(50));
                            present[resume - n..resume].to_vec()
                        }
                        Deletions::BeforeResume(f) => {
                            pick(rng, &present[..resume], (resume as f64 * f) as usize)
                        }
                        _ => Vec::new(),
                    }
                }
            };
            room.delete(emu, &picks, Gone::Later);
        }

        emu.clear_faults();
        let mut room = room.into_inner().unwrap();
        room.run_begins();
        final_run(emu, dir, &args)?;
        room.runs_ended(true);
        no_leftovers(&file)?;
        room.check_file(&file, self.format, &self.filter)
    }
}

/// The names of the files in `dir` (and its folders), sorted.
pub(crate) fn files_in(dir: &Path) -> Vec<String> {
    let mut names = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if entry.path().is_dir() {
                names.extend(
                    files_in(&entry.path())
                        .into_iter()
                        .map(|n| format!("{name}/{n}")),
                );
            } else {
                names.push(name);
            }
        }
    }
    names.sort();
    names
}

/// `roomchat ARGS`, to its end (or [`RUN_LIMIT`]).
pub(crate) fn run_to_its_end(emu: &Emulator, dir: &Path, args: &[String]) -> Ran {
    process::run(
        process::roomchat(emu, dir, args),
        &Stop::Never,
        RUN_LIMIT,
        None,
    )
}

/// The final run, without faults: it must succeed.
pub(crate) fn final_run(emu: &Emulator, dir: &Path, args: &[String]) -> Result<(), String> {
    let ran = run_to_its_end(emu, dir, args);
    ran.broken("the final run")?;
    if !ran.ok() {
        return Err(format!(
            "the final run, without faults: {}: {}",
            ran.summary(),
            tail(&ran.stderr)
        ));
    }
    Ok(())
}

/// A finished export leaves no part file, checkpoint or staging file.
pub(crate) fn no_leftovers(file: &Path) -> Result<(), String> {
    for suffix in [".roomchat-part", ".roomchat-checkpoint", ".roomchat-tmp"] {
        let left = PathBuf::from(format!("{}{suffix}", file.display()));
        if left.exists() {
            return Err(format!(
                "the export succeeded but left {} behind",
                left.file_name().unwrap_or_default().to_string_lossy()
            ));
        }
    }
    Ok(())
}

/// A target's file name stem as the guide says (`ROOM`, `ROOM--CHANNEL`), for ids of letters,
/// digits, `-`, `_` and `.` (others are replaced by `_`).
pub(crate) fn stem(target: &str) -> String {
    let safe = |id: &str| -> String {
        id.chars()
            .map(|c| {
                if c.is_alphanumeric() || "-_.".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    match target.split_once('/') {
        Some((room, channel)) => format!("{}--{}", safe(room), safe(channel)),
        None => safe(target),
    }
}

/// A fault of the message listing: 429s, 5xx, a closed connection, a cut-off or non-JSON
/// answer, a slow one.
fn listing_fault(rng: &mut CaseRng) -> Fault {
    let respond = |status: u16, retry_after: Option<&str>, body: &str| FaultAction::Respond {
        status,
        headers: retry_after
            .map(|r| vec![("Retry-After".to_owned(), r.to_owned())])
            .unwrap_or_default(),
        body: body.into(),
        content_type: None,
    };
    let (times, action) = match rng.random_range(0..10) {
        0..=2 => (
            rng.random_range(1..=3),
            respond(429, Some("0"), r#"{"message":"Too many requests"}"#),
        ),
        3 => (
            1,
            respond(429, Some("1"), r#"{"message":"Too many requests"}"#),
        ),
        4 => (
            rng.random_range(1..=2),
            respond(
                500,
                None,
                r#"{"message":"Internal server error occurred","eventId":"ev-harness"}"#,
            ),
        ),
        5 => (1, respond(503, None, "")),
        6 => (1, FaultAction::CloseConnection),
        7 => (1, FaultAction::TruncatedBody),
        8 => (1, FaultAction::NotJson),
        _ => (
            rng.random_range(1..=3),
            FaultAction::Delay(Duration::from_millis(rng.random_range(50..250))),
        ),
    };
    Fault {
        method: Some("GET".into()),
        path: LISTINGS.into(),
        times,
        action,
    }
}

/// Runs `body` with, beside it, what the run plan does to the room while a run goes on:
/// posts, deletions, faults (each fault replaces the live ones; `slow` is added back after it).
fn with_chaos<T>(
    emu: &Emulator,
    room: &Mutex<Room>,
    mut rng: CaseRng,
    run: &RunPlan,
    slow: Option<&Fault>,
    body: impl FnOnce() -> T,
) -> T {
    if !run.posts && !run.deletes && run.faults == 0 {
        return body();
    }
    let stop = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let chaos = scope.spawn(|| {
            let mut faults_left = run.faults;
            // A run that goes on long (a stuck one, until its kill) must not empty the room
            // nor grow it without bound.
            let held = room.lock().unwrap().present().len();
            let (mut posts_left, mut deletions_left) = (200usize, held / 6 + 1);
            while !stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(rng.random_range(1..12)));
                match rng.random_range(0..6) {
                    0..=2 if run.posts && posts_left > 0 => {
                        let n = rng.random_range(1..=5).min(posts_left);
                        posts_left -= n;
                        room.lock().unwrap().add(emu, &mut rng, n);
                    }
                    3 | 4 if run.deletes && deletions_left > 0 => {
                        let mut room = room.lock().unwrap();
                        let n = rng.random_range(1..=3).min(deletions_left);
                        deletions_left -= n;
                        let picks = pick(&mut rng, &room.present(), n);
                        room.delete(emu, &picks, Gone::Later);
                    }
                    5 if faults_left > 0 => {
                        faults_left -= 1;
                        emu.clear_faults();
                        emu.add_fault(listing_fault(&mut rng));
                        if let Some(slow) = slow {
                            emu.add_fault(slow.clone());
                        }
                    }
                    _ => {}
                }
            }
        });
        let out = body();
        stop.store(true, Ordering::Relaxed);
        chaos.join().expect("the chaos thread");
        out
    })
}

/// The run (or the runs at once) of one step of the schedule.
fn run_together(
    emu: &Emulator,
    dir: &Path,
    args: &[String],
    run: &RunPlan,
    stop: &Stop<'_>,
) -> Vec<Ran> {
    let command = || match run.full_disk_kib {
        Some(kib) => process::roomchat_on_full_disk(emu, dir, args, kib),
        None => process::roomchat(emu, dir, args),
    };
    if run.together.is_empty() {
        return vec![process::run(command(), stop, RUN_LIMIT, None)];
    }
    std::thread::scope(|scope| {
        let handles: Vec<_> = run
            .together
            .iter()
            .enumerate()
            .map(|(k, &offset)| {
                let cmd = command();
                // The first is killed as the schedule says; the others run to their end.
                let stop = if k == 0 { *stop } else { Stop::Never };
                scope.spawn(move || {
                    std::thread::sleep(Duration::from_millis(offset));
                    process::run(cmd, &stop, RUN_LIMIT, None)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a run"))
            .collect()
    })
}
