//! The `export` command: its flags, and the run (targets decided, exported a few at once, a
//! summary, the exit code).

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Mutex;
use std::time::Instant;

use clap::{Arg, ArgAction};
use jiff::Timestamp;
use roomchat::{CallOptions, ErrorKind};

use crate::interrupt::Interrupts;

use super::fetch::{self, call_patiently};
use super::job::{interrupted, Job, Stats};
use super::lock::OutputLock;
use super::naming::{self, Target};
use super::progress::Progress;
use super::store::{self, Paths};
use super::time::parse_time;
use super::{commit, convert, dry_run, resume, Format};
use crate::error::CliError;

/// The `export` command.
pub fn command() -> clap::Command {
    clap::Command::new("export")
        .about("Export rooms' message history (resumable)")
        .arg(crate::output::error_output_arg())
        .long_about(
            "Export rooms' and channels' message history to files, resumable and lossless: \
             killed at any moment, the same command run again goes on where it stopped and \
             ends with every message exactly once, in order.",
        )
        .arg(
            Arg::new("export-targets")
                .value_name("ROOM[/CHANNEL]")
                .num_args(0..)
                .help("Rooms to export, or ROOM/CHANNEL for a channel's messages"),
        )
        .arg(
            Arg::new("export-all-rooms")
                .long("all-rooms")
                .action(ArgAction::SetTrue)
                .help("Every room of the account (the API lists no channels: name them as ROOM/CHANNEL)"),
        )
        .arg(
            Arg::new("export-format")
                .long("format")
                .short('f')
                .value_parser(Format::NAMES)
                .default_value("jsonl")
                .help("jsonl: each record as the service sent it; json: one array; csv; txt; html: a transcript page"),
        )
        .arg(
            Arg::new("export-output")
                .long("output-path")
                .short('o')
                .value_name("FILE|FOLDER")
                .value_parser(clap::value_parser!(PathBuf))
                .help("The file (one target) or folder (one file per room: ROOM.EXT, ROOM--CHANNEL.EXT); default: the current folder"),
        )
        .arg(
            Arg::new("export-after")
                .long("after")
                .value_name("TIME")
                .help("Only messages created after TIME (RFC 3339, e.g. 2024-01-15T15:00:00Z, or a date)"),
        )
        .arg(
            Arg::new("export-before")
                .long("before")
                .value_name("TIME")
                .help("Only messages created before TIME"),
        )
        .arg(
            Arg::new("export-jobs")
                .long("jobs")
                .short('j')
                .value_parser(clap::value_parser!(u16).range(1..=64))
                .default_value("4")
                .help("Rooms exported at once (all under the client's one rate budget)"),
        )
        .arg(
            Arg::new("export-page-size")
                .long("page-size")
                .value_parser(clap::value_parser!(u64).range(1..=1000))
                .default_value("200")
                .help("Messages asked for per request"),
        )
        .arg(
            Arg::new("export-restart")
                .long("restart")
                .action(ArgAction::SetTrue)
                .help("Ignore a checkpoint or finished file and export again from the start"),
        )
        .arg(
            Arg::new("export-quiet")
                .long("quiet")
                .short('q')
                .action(ArgAction::SetTrue)
                .help("No progress and no summary (errors only)"),
        )
}

/// Whether running the same command again can cure `error`: a passing failure of the service
/// or the network (after the retries), where the checkpoint lets the next run resume. Not an
/// unknown room or channel, a refused key, a usage error (another export's checkpoint), nor a
/// file that cannot be written (its message says what to do first).
fn rerun_helps(error: &CliError) -> bool {
    match error {
        CliError::Sdk(e) => matches!(
            e.kind(),
            ErrorKind::RateLimited
                | ErrorKind::ServerError
                | ErrorKind::UnexpectedStatus
                | ErrorKind::Timeout
                | ErrorKind::Connection
                | ErrorKind::Decode
                | ErrorKind::BudgetUnavailable
        ),
        _ => false,
    }
}

/// Whether `error` is how a target's export ends at Ctrl-C: interrupted, or a call cancelled.
fn is_interruption(error: &CliError) -> bool {
    match error {
        CliError::Interrupted { .. } => true,
        CliError::Sdk(e) => e.kind() == ErrorKind::Cancelled,
        _ => false,
    }
}

/// Runs `export`.
pub fn run(matches: &clap::ArgMatches) -> Result<(), CliError> {
    let format = Format::parse(
        matches
            .get_one::<String>("export-format")
            .expect("defaulted"),
    )
    .expect("clap checked the choice");
    let time_arg = |name: &str| -> Result<Option<(String, Timestamp)>, CliError> {
        match matches.get_one::<String>(&format!("export-{name}")) {
            None => Ok(None),
            Some(text) => parse_time(text).map(|at| Some((text.clone(), at))).ok_or_else(|| {
                CliError::Usage(format!(
                    "--{name} {text:?}: not a time (RFC 3339 such as 2024-01-15T15:00:00Z, or a date such as 2024-01-15)"
                ))
            }),
        }
    };
    let (after, before) = (time_arg("after")?, time_arg("before")?);
    let named: Vec<String> = matches
        .get_many::<String>("export-targets")
        .map(|v| v.cloned().collect())
        .unwrap_or_default();
    let all_rooms = matches.get_flag("export-all-rooms");
    if named.is_empty() && !all_rooms {
        return Err(CliError::Usage(
            "export: name rooms (ROOM or ROOM/CHANNEL), or --all-rooms".into(),
        ));
    }
    let mut pairs = naming::parse_targets(&named)?;

    if crate::config::dry_run(matches) {
        // The targets' files are checked as the export would (named targets only: the rooms'
        // listing is not asked for).
        let output = matches.get_one::<PathBuf>("export-output");
        let as_folder = naming::is_folder(output.map(PathBuf::as_path), pairs.len(), all_rooms);
        let folder = output.cloned().unwrap_or_else(|| PathBuf::from("."));
        naming::plan(pairs.clone(), as_folder, &folder, format)?;
        return dry_run::dry_run(matches, &pairs, all_rooms);
    }

    // Ctrl-C (SIGINT), for the export's duration: the calls in flight are cancelled, each
    // target commits what it fetched, and the run ends with 130 and how to resume. (Killed
    // any other way, at any instant, the checkpoint on disk is consistent all the same.)
    let interrupts = Interrupts::catch();
    let cancel = interrupts.cancel_token();
    let client = crate::config::client(matches)?.with_cancel(cancel.clone());
    // The export handles 429s itself (waits as long as the budget says, never gives up,
    // counts them); other transient failures are retried here too, a few times.
    let client = client.with_options(CallOptions::new().max_retries(0))?;
    let stats = Stats::default();
    if all_rooms {
        let rooms = call_patiently(&client, Some(&stats), &cancel, || client.list_chat_rooms())
            .map_err(|e| {
                if interrupts.requested() {
                    interrupted()
                } else {
                    e
                }
            })?;
        for room in rooms {
            if let Some(id) = room.room_id {
                naming::add(&mut pairs, id, None, room.name);
            }
        }
    }

    // Every target's file, decided (and collisions refused) before anything is fetched.
    let output = matches.get_one::<PathBuf>("export-output").cloned();
    let as_folder = naming::is_folder(output.as_deref(), pairs.len(), all_rooms);
    let folder = output.clone().unwrap_or_else(|| PathBuf::from("."));
    let targets = naming::plan(pairs, as_folder, &folder, format)?;
    // The folders of the output (`-o dir/`, or `-o newdir/sub/f.jsonl`'s), as `mkdir -p`.
    let folder_of_files = match as_folder {
        true => Some(folder.as_path()),
        false => folder.parent().filter(|p| !p.as_os_str().is_empty()),
    };
    if let Some(folder) = folder_of_files {
        std::fs::create_dir_all(folder).map_err(|e| store::io_error(folder, e))?;
    }

    let quiet = matches.get_flag("export-quiet");
    let progress = Progress::new(quiet);
    let job = Job {
        client,
        format,
        raw_csv_cells: crate::config::raw_csv_cells(matches),
        page_size: *matches
            .get_one::<u64>("export-page-size")
            .expect("defaulted"),
        after,
        before,
        restart: matches.get_flag("export-restart"),
        progress: &progress,
        stats: &stats,
        cancel: cancel.clone(),
    };
    let jobs = usize::from(*matches.get_one::<u16>("export-jobs").expect("defaulted"));
    let started = Instant::now();
    let queue = Mutex::new(targets.iter().collect::<VecDeque<_>>());
    let failures: Mutex<Vec<(String, CliError)>> = Mutex::new(Vec::new()); // in the order they came
    std::thread::scope(|scope| {
        for _ in 0..jobs.min(targets.len()) {
            scope.spawn(|| loop {
                if interrupts.requested() {
                    break;
                }
                let next = queue.lock().expect("queue").pop_front();
                let Some(target) = next else { break };
                match export_target(&job, target) {
                    Ok(()) => {}
                    // Stopped by Ctrl-C (its checkpoint committed): not a failure.
                    Err(e) if interrupts.requested() && is_interruption(&e) => break,
                    Err(e) => {
                        job.progress.failed(&target.label(), &e, rerun_helps(&e));
                        failures.lock().expect("failures").push((target.label(), e));
                    }
                }
            });
        }
    });
    let elapsed = started.elapsed();
    progress.finish();
    let failures = failures.into_inner().expect("failures");
    if !quiet {
        let messages = stats.messages.load(Ordering::Relaxed);
        let bytes = stats.bytes.load(Ordering::Relaxed);
        let skipped = stats.skipped.load(Ordering::Relaxed);
        let earlier = match stats.earlier.load(Ordering::Relaxed) {
            0 => String::new(),
            n => format!(" (and {n} from earlier runs)"),
        };
        // The rate is this run's: the messages it fetched, in its time.
        eprintln!(
            "roomchat export: {} room(s) exported{}{}, {messages} messages{earlier}, {bytes} bytes, {:.2} s ({:.0} messages/s), {} 429(s) met, {} retr{}",
            stats.rooms.load(Ordering::Relaxed),
            if skipped > 0 { format!(" ({skipped} already done)") } else { String::new() },
            if failures.is_empty() { String::new() } else { format!(", {} failed", failures.len()) },
            elapsed.as_secs_f64(),
            messages as f64 / elapsed.as_secs_f64().max(1e-9),
            stats.rate_limited.load(Ordering::Relaxed),
            stats.retries.load(Ordering::Relaxed),
            if stats.retries.load(Ordering::Relaxed) == 1 { "y" } else { "ies" },
        );
    }
    if interrupts.requested() {
        return Err(interrupted());
    }
    // The exit code is the first failure's (each was told as it came, and the summary counts
    // them): a file that cannot be written stays 3, a service error its kind's code.
    match failures.into_iter().next() {
        None => Ok(()),
        Some((_, first)) => Err(first),
    }
}

fn export_target(job: &Job<'_>, target: &Target) -> Result<(), CliError> {
    let paths = Paths::of(target.output.clone());
    // Held until the export of this target ends: no other run writes its files meanwhile.
    let _lock = OutputLock::take(&paths)?;
    let label = target.label();
    let Some(mut checkpoint) = resume::start(job, target, &paths)? else {
        return Ok(());
    };
    // What earlier runs fetched (a resumed export): not this run's to count.
    let earlier = checkpoint.messages;
    let bar = job
        .progress
        .room(&label, checkpoint.total, checkpoint.next_skip);
    // The first page before any file is made: a target that does not exist leaves nothing.
    let first = match checkpoint.fetched_all {
        true => None,
        false => Some(fetch::first_page(job, target, &checkpoint)?),
    };
    let staged = match (job.format, first) {
        (Format::Jsonl, None) => None,
        (Format::Jsonl, Some(first)) => {
            let part = store::open_part(&paths.part, checkpoint.part_bytes)?;
            commit::fetch_all(
                job,
                target,
                &paths,
                part,
                &mut checkpoint,
                &bar,
                None,
                first,
            )?;
            None
        }
        (_, first) => Some(convert::fetch_rendering(
            job,
            target,
            &paths,
            &mut checkpoint,
            &bar,
            first,
        )?),
    };
    let bytes = commit::finish(&paths, &checkpoint, staged)?;
    bar.done(checkpoint.messages, bytes);
    job.stats.rooms.fetch_add(1, Ordering::Relaxed);
    let this_run = checkpoint.messages.saturating_sub(earlier);
    job.stats.messages.fetch_add(this_run, Ordering::Relaxed);
    job.stats
        .earlier
        .fetch_add(checkpoint.messages - this_run, Ordering::Relaxed);
    job.stats.bytes.fetch_add(bytes, Ordering::Relaxed);
    Ok(())
}
