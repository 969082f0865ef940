//! The randomized fault harness of `roomchat export` and `roomchat import users` (issue 44,
//! item 25): from a seed, each case picks a room shape (messages with and without ids, odd
//! types, huge and pretty-printed pages, channels, many rooms and colliding names) and a
//! schedule (`kill -9` at random instants, deletions before and after the resume point,
//! posts during the export, 429s, 5xx, cut-off and slow answers, a full disk, concurrent
//! runs), runs the `roomchat` binary against an emulator, and checks the invariant against
//! the emulator's own state:
//!
//! - export: after the schedule and a final rerun of the same command without faults, the
//!   file holds exactly the room's messages not deleted before they were fetched, each once,
//!   in order, byte for byte as sent (jsonl, json: the record's bytes, only whitespace outside
//!   strings removed); colliding targets are refused (exit 2, nothing written for them, nothing
//!   fetched), identical ones exported once; a time filter keeps what it should;
//! - import: nobody created twice, nobody missing after the final rerun, and every row of every
//!   result file agrees with the emulator's users (`GET /_emulator/users`);
//! - `--all --output csv` listings lose no field of any item;
//! - never exit 101 (a panic), never a command that does not end.
//!
//! Not in `cargo test`'s default set (`test = false`): the test command runs it in release
//! with a fixed seed and a time budget; `scripts/fault-harness.sh` runs it longer with a seed
//! from the clock. Settings (environment):
//!
//! - `ROOMCHAT_HARNESS_SEED` (default 44): the seed; `ROOMCHAT_HARNESS_CASE=N` replays case N
//!   of it alone (a failure prints both);
//! - `ROOMCHAT_HARNESS_SECONDS` (default 60): no case starts after that; `ROOMCHAT_HARNESS_CASES`
//!   bounds the number of cases instead (or too);
//! - `ROOMCHAT_HARNESS_KINDS`: a comma-separated subset of the kinds (export, targets,
//!   concurrent, disk-full, time-filter, import, listing-csv);
//! - `ROOMCHAT_HARNESS_JOBS` (default 2): cases run at once;
//! - `ROOMCHAT_HARNESS_VERBOSE=1`: every case is printed, passed ones too.

#[path = "../export_common/mod.rs"]
mod export_common;

mod cases;
mod exports;
mod imports;
mod listings;
mod process;
mod room;
mod targets;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use cases::{Case, Kind};

/// The harness's settings, from the environment.
struct Settings {
    seed: u64,
    only_case: Option<u64>,
    budget: Duration,
    max_cases: u64,
    kinds: Vec<Kind>,
    jobs: usize,
    /// Print every case, passed ones too.
    verbose: bool,
}

fn env_number(name: &str) -> Option<u64> {
    let text = std::env::var(name).ok()?;
    Some(
        text.trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name}={text:?}: not a whole number")),
    )
}

impl Settings {
    fn from_env() -> Settings {
        let kinds = match std::env::var("ROOMCHAT_HARNESS_KINDS") {
            Ok(list) if !list.trim().is_empty() => list
                .split(',')
                .map(|k| {
                    Kind::parse(k.trim()).unwrap_or_else(|| {
                        panic!(
                            "ROOMCHAT_HARNESS_KINDS: {k:?} is none of {}",
                            Kind::ALL.map(Kind::name).join(", ")
                        )
                    })
                })
                .collect(),
            _ => Kind::ALL.to_vec(),
        };
        Settings {
            seed: env_number("ROOMCHAT_HARNESS_SEED").unwrap_or(44),
            only_case: env_number("ROOMCHAT_HARNESS_CASE"),
            budget: Duration::from_secs(env_number("ROOMCHAT_HARNESS_SECONDS").unwrap_or(60)),
            max_cases: env_number("ROOMCHAT_HARNESS_CASES").unwrap_or(u64::MAX),
            kinds,
            jobs: env_number("ROOMCHAT_HARNESS_JOBS").unwrap_or(2).max(1) as usize,
            verbose: std::env::var("ROOMCHAT_HARNESS_VERBOSE").is_ok_and(|v| v != "0"),
        }
    }
}

impl Settings {
    /// `ROOMCHAT_HARNESS_KINDS=…` when it was set (a case's kind depends on it), for replay lines.
    fn kinds_setting(&self) -> String {
        if self.kinds.len() == Kind::ALL.len() {
            String::new()
        } else {
            format!(
                " ROOMCHAT_HARNESS_KINDS={}",
                self.kinds
                    .iter()
                    .map(|k| k.name())
                    .collect::<Vec<_>>()
                    .join(",")
            )
        }
    }
}

#[test]
fn randomized_fault_schedules_keep_the_invariants() {
    let settings = Settings::from_env();
    let started = Instant::now();
    let disk_full = process::disk_full_available();
    if !disk_full.available {
        println!(
            "fault harness: disk-full schedules skipped ({}); they run as plain exports",
            disk_full.why
        );
    }
    let next = AtomicU64::new(settings.only_case.unwrap_or(0));
    let done = AtomicU64::new(0);
    // The cases that failed.
    let failures: Mutex<Vec<u64>> = Mutex::new(Vec::new());
    let by_kind: Mutex<Vec<(Kind, u64)>> = Mutex::new(Vec::new());
    let jobs = if settings.only_case.is_some() {
        1
    } else {
        settings.jobs
    };
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| loop {
                if started.elapsed() >= settings.budget {
                    break;
                }
                let n = next.fetch_add(1, Ordering::Relaxed);
                let first = settings.only_case.unwrap_or(0);
                if n - first >= settings.max_cases || settings.only_case.is_some_and(|o| n != o) {
                    break;
                }
                let case = Case::plan(settings.seed, n, &settings.kinds, disk_full.available);
                let description = case.describe();
                let case_started = Instant::now();
                let outcome = case.run();
                done.fetch_add(1, Ordering::Relaxed);
                {
                    let mut kinds = by_kind.lock().unwrap();
                    match kinds.iter_mut().find(|(k, _)| *k == case.kind) {
                        Some((_, count)) => *count += 1,
                        None => kinds.push((case.kind, 1)),
                    }
                }
                match outcome {
                    Ok(()) => {
                        if settings.only_case.is_some() || settings.verbose {
                            println!(
                                "fault harness: case {n} passed in {:.2} s: {description}",
                                case_started.elapsed().as_secs_f64()
                            );
                        }
                    }
                    Err(why) => {
                        let line = format!(
                            "fault harness: FAILED seed={} case={n} [{}] {description}\n  -> {why}\n  replay: ROOMCHAT_HARNESS_SEED={} ROOMCHAT_HARNESS_CASE={n}{} cargo test --release -p roomchat-cli --test fault_harness -- --nocapture",
                            settings.seed,
                            case.kind.name(),
                            settings.seed,
                            settings.kinds_setting()
                        );
                        println!("{line}");
                        failures.lock().unwrap().push(n);
                    }
                }
            });
        }
    });
    let elapsed = started.elapsed().as_secs_f64();
    let cases = done.load(Ordering::Relaxed);
    let mut failures = failures.into_inner().unwrap();
    failures.sort_unstable();
    let mut kinds = by_kind.into_inner().unwrap();
    kinds.sort_by_key(|(k, _)| Kind::ALL.iter().position(|a| a == k));
    let kinds: Vec<String> = kinds
        .iter()
        .map(|(k, n)| format!("{} {n}", k.name()))
        .collect();
    println!(
        "fault harness: seed {}: {cases} schedules in {elapsed:.1} s ({:.2} schedules/s; {}), {} failed{}",
        settings.seed,
        cases as f64 / elapsed.max(1e-9),
        kinds.join(", "),
        failures.len(),
        if failures.is_empty() {
            String::new()
        } else {
            format!(
                " (cases {})",
                failures
                    .iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
    );
    assert!(cases > 0, "no schedule ran");
    // Each failure was printed as it was found, with the line that replays it.
    assert!(
        failures.is_empty(),
        "{} of {cases} schedules broke an invariant (printed above, each with its replay line)",
        failures.len()
    );
}
