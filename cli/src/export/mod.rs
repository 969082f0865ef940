//! `roomchat export`: rooms' histories to files, resumable and lossless.
//!
//! The service lists a room's messages oldest first, paged by `skip` from the oldest
//! (`room_messages`, `channel_messages`): a message posted during the export is appended
//! after the others and shifts no page, so `skip` is a sound resume point. Each room's export
//! appends every page's records, as the service sent them, to a part file and records in a
//! checkpoint (replaced atomically) how much of the part file is valid and the next `skip`
//! (see [`store`]). Pages overlap by one message, and the ids of the latest 1,000 messages are
//! kept: a message seen twice (a page read again, a shift after a deletion) is written once.
//! A jsonl export's final file is the part file, renamed once the listing's end is reached.
//! The other formats are rendered while the pages come: a converter thread writes the format's
//! opening to a staging file, renders what the part file held already (a resumed export), then
//! each page's new lines as the fetch hands them over, fsyncing every 200 ms; at the listing's
//! end it writes the closing, and the staging file is fsynced and renamed into place. The part
//! file stays the source of truth: a staging file left by a kill is rebuilt by the next run.
//! (Its last pages are not fsynced: the rendered file, fsynced and renamed, is the commit of
//! the listing's end; a stop before it resumes from the last checkpoint.)

mod formats;
mod progress;
pub(crate) mod store; // also the import's result file (write_atomically)

use std::borrow::Cow;
use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use clap::{Arg, ArgAction};
use roomchat::wire::Operation;
use roomchat::{CallOptions, Client, ErrorKind};
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::error::CliError;
use formats::Format;
use progress::Progress;
use store::{Checkpoint, Paths, RecentIds};

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

/// One room, or one channel of a room, to export.
#[derive(Debug, Clone)]
struct Target {
    room: String,
    channel: Option<String>,
    name: Option<String>,
    output: PathBuf,
}

impl Target {
    fn label(&self) -> String {
        match &self.channel {
            Some(c) => format!("{}/{c}", self.room),
            None => self.room.clone(),
        }
    }
}

/// What every room's export shares.
struct Job<'a> {
    client: Client,
    format: Format,
    raw_csv_cells: bool,
    page_size: u64,
    after: Option<(String, i64)>,
    before: Option<(String, i64)>,
    restart: bool,
    progress: &'a Progress,
    stats: &'a Stats,
}

#[derive(Default)]
struct Stats {
    rooms: AtomicU64,
    skipped: AtomicU64,
    messages: AtomicU64,
    bytes: AtomicU64,
    rate_limited: AtomicU64,
    retries: AtomicU64,
}

/// Runs `export`.
pub fn run(matches: &clap::ArgMatches) -> Result<(), CliError> {
    let format = Format::parse(
        matches
            .get_one::<String>("export-format")
            .expect("defaulted"),
    )
    .expect("clap checked the choice");
    let time_arg = |name: &str| -> Result<Option<(String, i64)>, CliError> {
        match matches.get_one::<String>(&format!("export-{name}")) {
            None => Ok(None),
            Some(text) => parse_time(text).map(|ms| Some((text.clone(), ms))).ok_or_else(|| {
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
    let mut pairs = Vec::new();
    for t in &named {
        let (room, channel) = match t.split_once('/') {
            Some((r, c)) => (r, Some(c)),
            None => (t.as_str(), None),
        };
        if room.is_empty() || channel.is_some_and(|c| c.is_empty() || c.contains('/')) {
            return Err(CliError::Usage(format!(
                "export: {t:?} is not ROOM or ROOM/CHANNEL"
            )));
        }
        pairs.push((room.to_owned(), channel.map(str::to_owned), None));
    }

    if crate::config::dry_run(matches) {
        return dry_run(matches, &pairs, all_rooms);
    }

    let client = crate::config::client(matches)?;
    // Killed at any moment the export resumes (the checkpoint and part files are
    // consistent whenever the process stops), so Ctrl-C only says how to go on.
    let _ = ctrlc::set_handler(|| {
        eprintln!(
            "\nroomchat: export interrupted; run the same command again to resume where it stopped"
        );
        std::process::exit(i32::from(crate::error::EXIT_INTERRUPTED));
    });
    // The export handles 429s itself (waits as long as the budget says, never gives up,
    // counts them); other transient failures are retried here too, a few times.
    let client = client.with_options(CallOptions::new().max_retries(0))?;
    let stats = Stats::default();
    if all_rooms {
        for room in call_patiently(&client, Some(&stats), || client.list_chat_rooms())? {
            if let Some(id) = room.room_id {
                if !pairs.iter().any(|(r, c, _)| *r == id && c.is_none()) {
                    pairs.push((id, None, room.name));
                }
            }
        }
    }

    let output = matches.get_one::<PathBuf>("export-output").cloned();
    let as_folder = match &output {
        None => true,
        Some(p) => {
            pairs.len() > 1
                || all_rooms
                || p.is_dir()
                || p.as_os_str().to_string_lossy().ends_with('/')
        }
    };
    let folder = output.clone().unwrap_or_else(|| PathBuf::from("."));
    if as_folder {
        std::fs::create_dir_all(&folder).map_err(|e| store::io_error(&folder, e))?;
    }
    let targets: Vec<Target> = pairs
        .into_iter()
        .map(|(room, channel, name)| {
            let output = if as_folder {
                let stem = match &channel {
                    Some(c) => format!("{}--{}", safe_file_name(&room), safe_file_name(c)),
                    None => safe_file_name(&room),
                };
                folder.join(format!("{stem}.{}", format.extension()))
            } else {
                folder.clone()
            };
            Target {
                room,
                channel,
                name,
                output,
            }
        })
        .collect();

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
    };
    let jobs = usize::from(*matches.get_one::<u16>("export-jobs").expect("defaulted"));
    let started = Instant::now();
    let queue = Mutex::new(targets.iter().collect::<VecDeque<_>>());
    let failures: Mutex<Vec<(String, CliError)>> = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..jobs.min(targets.len()) {
            scope.spawn(|| loop {
                let next = queue.lock().expect("queue").pop_front();
                let Some(target) = next else { break };
                if let Err(e) = export_target(&job, target) {
                    job.progress.failed(&target.label(), &e);
                    failures.lock().expect("failures").push((target.label(), e));
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
        eprintln!(
            "roomchat export: {} room(s) exported{}{}, {messages} messages, {bytes} bytes, {:.2} s ({:.0} messages/s), {} 429(s) met, {} retr{}",
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
    match failures.len() {
        0 => Ok(()),
        1 => Err(failures.into_iter().next().expect("one").1),
        n => {
            let (label, first) = failures.into_iter().next().expect("some");
            Err(match first {
                CliError::Sdk(e) => CliError::Sdk(e),
                other => CliError::Usage(format!(
                    "{n} exports failed (first: {label}: {other}); run the same command again to resume"
                )),
            })
        }
    }
}

/// A room id as a file name: path separators and other awkward bytes replaced.
fn safe_file_name(id: &str) -> String {
    let name: String = id
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    if name.starts_with('.') || name.is_empty() {
        format!("_{name}")
    } else {
        name
    }
}

/// Sends a repeatable call until it succeeds: through any number of 429s (the client's budget
/// holds every caller off as long as the service asked), and up to 5 retries of other
/// transient failures (timeouts, connections, 5xx) with a growing pause.
fn call_patiently<T>(
    client: &Client,
    stats: Option<&Stats>,
    mut call: impl FnMut() -> roomchat::Result<T>,
) -> Result<T, CliError> {
    let mut transient = 0u32;
    let mut limited = 0u32;
    loop {
        let error = match call() {
            Ok(v) => return Ok(v),
            Err(e) => e,
        };
        let is_429 = error.kind() == ErrorKind::RateLimited;
        let is_transient = matches!(
            error.kind(),
            ErrorKind::Timeout | ErrorKind::Connection | ErrorKind::ServerError
        ) || error.status() == Some(503);
        if let Some(stats) = stats {
            if is_429 && error.status() == Some(429) {
                stats.rate_limited.fetch_add(1, Ordering::Relaxed);
            } else if is_transient {
                stats.retries.fetch_add(1, Ordering::Relaxed);
            }
        }
        if is_429 {
            limited = limited.saturating_add(1);
            // The budget already holds off every call for the service's Retry-After; without
            // one, a pause growing to 30 s.
            if client.rate_limit_state().blocked_for.is_none() {
                let pause = error
                    .retry_after()
                    .unwrap_or(Duration::from_millis(500) * 2u32.saturating_pow(limited.min(6)));
                std::thread::sleep(pause.min(Duration::from_secs(30)));
            }
            continue;
        }
        if is_transient && transient < 5 {
            transient += 1;
            std::thread::sleep(Duration::from_millis(250) * 2u32.pow(transient));
            continue;
        }
        return Err(CliError::Sdk(error));
    }
}

/// One page of messages, borrowed from the answer's body.
#[derive(Deserialize)]
struct PageView<'a> {
    #[serde(rename = "totalRecords", default)]
    total_records: Option<u64>,
    #[serde(borrow, default)]
    messages: Option<Vec<&'a RawValue>>,
    #[serde(default)]
    success: Option<bool>,
}

/// The `_id` and `created` of a message record (JSON text serde_json has checked already):
/// a scan of its top-level keys, much cheaper than a second parse of every field. A value
/// with escapes is unescaped through serde_json.
fn head(raw: &str) -> (Option<Cow<'_, str>>, Option<Cow<'_, str>>) {
    let b = raw.as_bytes();
    let (mut id, mut created) = (None, None);
    let mut i = match b.iter().position(|&c| c == b'{') {
        Some(p) => p + 1,
        None => return (None, None),
    };
    // The end of the string starting at `at` (a quote), one past its closing quote.
    let string_end = |mut at: usize| -> usize {
        at += 1;
        while at < b.len() {
            match b[at] {
                b'\\' => at += 2,
                b'"' => return at + 1,
                _ => at += 1,
            }
        }
        b.len()
    };
    let text_of = |from: usize, to: usize| -> Option<Cow<'_, str>> {
        let slice = raw.get(from..to)?;
        if slice.contains('\\') {
            serde_json::from_str::<String>(slice).ok().map(Cow::Owned)
        } else {
            slice.get(1..slice.len().checked_sub(1)?).map(Cow::Borrowed)
        }
    };
    while i < b.len() {
        // A key.
        while i < b.len() && b[i] != b'"' {
            if b[i] == b'}' {
                return (id, created);
            }
            i += 1;
        }
        if i >= b.len() {
            break;
        }
        let key_end = string_end(i);
        let key = &raw[i..key_end];
        i = key_end;
        while i < b.len() && (b[i] == b':' || b[i].is_ascii_whitespace()) {
            i += 1;
        }
        // Its value: a string, or anything else skipped by depth.
        let value_start = i;
        if i < b.len() && b[i] == b'"' {
            i = string_end(i);
            match key {
                "\"_id\"" => id = text_of(value_start, i),
                "\"created\"" => created = text_of(value_start, i),
                _ => {}
            }
        } else {
            let mut depth = 0usize;
            while i < b.len() {
                match b[i] {
                    b'"' => {
                        i = string_end(i);
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' if depth == 0 => break,
                    b'}' | b']' => depth -= 1,
                    b',' if depth == 0 => break,
                    _ => {}
                }
                i += 1;
            }
        }
        if id.is_some() && created.is_some() {
            break;
        }
        // Past the comma (or at the closing brace).
        while i < b.len() && b[i] != b',' && b[i] != b'}' {
            i += 1;
        }
        if i < b.len() && b[i] == b'}' {
            break;
        }
        i += 1;
    }
    (id, created)
}

/// The body of one page of the room's (or channel's) listing.
fn fetch_page(
    client: &Client,
    stats: &Stats,
    target: &Target,
    skip: u64,
    limit: u64,
) -> Result<Vec<u8>, CliError> {
    let mut params = serde_json::json!({"roomId": target.room, "limit": limit, "skip": skip});
    let operation = match &target.channel {
        Some(channel) => {
            params["channelId"] = channel.as_str().into();
            Operation::ChannelMessages
        }
        None => Operation::RoomMessages,
    };
    call_patiently(client, Some(stats), || {
        client.call_declared_with(operation, &params, |response| {
            if (200..300).contains(&response.status) {
                Ok(response.body.clone())
            } else {
                Err(operation
                    .decode(response)
                    .err()
                    .unwrap_or_else(|| roomchat::Error::new(ErrorKind::Decode, "an error answer")))
            }
        })
    })
}

/// Parses a page's body; an answer that is not a page is the error the declaration's decode
/// gives it (`"success": false`, another shape).
fn parse_page<'b>(
    operation: Operation,
    body: &'b [u8],
    label: &str,
) -> Result<PageView<'b>, CliError> {
    match serde_json::from_slice::<PageView<'_>>(body) {
        Ok(page) if page.success != Some(false) && page.messages.is_some() => Ok(page),
        parsed => {
            let response = roomchat::wire::WireResponse::new(200, Vec::new(), body.to_vec());
            let error = match operation.decode(&response) {
                Err(e) => e,
                Ok(_) => roomchat::Error::new(
                    ErrorKind::Decode,
                    format!(
                        "a page of {label} has no \"messages\" array{}",
                        parsed.err().map(|e| format!(": {e}")).unwrap_or_default()
                    ),
                ),
            };
            Err(CliError::Sdk(error))
        }
    }
}

fn export_target(job: &Job<'_>, target: &Target) -> Result<(), CliError> {
    let paths = Paths::of(target.output.clone());
    let label = target.label();
    if job.restart {
        for p in [
            &paths.checkpoint,
            &paths.part,
            &paths.staging,
            &paths.output,
        ] {
            store::remove_if_there(p)?;
        }
    }
    let mut checkpoint = match store::load_checkpoint(&paths.checkpoint)? {
        Some(c) => {
            let wanted = (
                target.room.as_str(),
                target.channel.as_deref(),
                job.after.as_ref().map(|a| a.0.as_str()),
                job.before.as_ref().map(|b| b.0.as_str()),
            );
            let has = (
                c.room.as_str(),
                c.channel.as_deref(),
                c.after.as_deref(),
                c.before.as_deref(),
            );
            if wanted != has {
                return Err(CliError::Usage(format!(
                    "{}: the checkpoint is of another export ({} {:?} after {:?} before {:?}); \
                     run that one again, or use --restart",
                    paths.checkpoint.display(),
                    c.room,
                    c.channel,
                    c.after,
                    c.before
                )));
            }
            c
        }
        None if paths.output.exists() => {
            // A part file left by a stop just after the rendered file was put in place.
            store::remove_if_there(&paths.part)?;
            job.stats.skipped.fetch_add(1, Ordering::Relaxed);
            job.progress.note(&format!(
                "{label}: {} is there already (use --restart to export again)",
                paths.output.display()
            ));
            return Ok(());
        }
        None => Checkpoint::new(
            &target.room,
            target.channel.as_deref(),
            job.after.as_ref().map(|a| a.0.clone()),
            job.before.as_ref().map(|b| b.0.clone()),
        ),
    };

    if checkpoint.fetched_all && !paths.part.exists() && paths.output.exists() {
        // Killed between the final rename and the checkpoint's removal.
        store::remove_if_there(&paths.checkpoint)?;
        job.stats.rooms.fetch_add(1, Ordering::Relaxed);
        return Ok(());
    }
    if checkpoint.fetched_all && paths.part.exists() {
        // Stopped while the final file was being written: the listing's end was reached then;
        // ask again from there, for what was posted since (one page when nothing was).
        checkpoint.fetched_all = false;
    }
    let bar = job
        .progress
        .room(&label, checkpoint.total, checkpoint.next_skip);
    let staged = if job.format == Format::Jsonl {
        if !checkpoint.fetched_all {
            let part = store::open_part(&paths.part, checkpoint.part_bytes)?;
            fetch_all(job, target, &paths, part, &mut checkpoint, &bar, None)?;
        }
        None
    } else {
        Some(fetch_rendering(job, target, &paths, &mut checkpoint, &bar)?)
    };
    let bytes = finish(&paths, &checkpoint, staged)?;
    bar.done(checkpoint.messages, bytes);
    job.stats.rooms.fetch_add(1, Ordering::Relaxed);
    job.stats
        .messages
        .fetch_add(checkpoint.messages, Ordering::Relaxed);
    job.stats.bytes.fetch_add(bytes, Ordering::Relaxed);
    Ok(())
}

/// How often the part file is fsynced and the checkpoint replaced.
const COMMIT_EVERY: Duration = Duration::from_millis(200);

/// ... or once this many bytes were written since the last one, so that the last fsync, which
/// the export waits for, has at most this much left however fast the pages come (at 300,000
/// messages/s, 200 ms was some 20 MB: a tenth of a 100,000-message export's time on a disk).
const COMMIT_BYTES: usize = 4 << 20;

/// How many pages the fetch may be ahead of the converter (then it waits for it).
const PAGES_AHEAD: usize = 8;

/// The final file of a format other than jsonl, being rendered into the staging file.
type Staged = formats::Renderer<BufWriter<File>>;

/// [`fetch_all`] (unless the listing's end was reached already) with a converter thread
/// rendering the records into the staging file as they come (see [`convert`]); the rendering,
/// all but its closing. A converter's error ends the fetch (its next page finds the channel
/// closed) and is the one returned; a fetch's error ends the converter (the channel closes).
fn fetch_rendering(
    job: &Job<'_>,
    target: &Target,
    paths: &Paths,
    checkpoint: &mut Checkpoint,
    bar: &progress::RoomBar<'_>,
) -> Result<Staged, CliError> {
    // The title comes first: the room's name is asked for now, when it is not known.
    let room_name = match (&target.name, job.format) {
        (Some(n), _) => Some(n.clone()),
        (None, Format::Html | Format::Txt) => job
            .client
            .get_chat_room(&target.room)
            .ok()
            .and_then(|r| r.name),
        _ => None,
    };
    let title = formats::Title {
        room: &target.room,
        room_name: room_name.as_deref(),
        channel: target.channel.as_deref(),
    };
    // Cut back to what the checkpoint vouches for before the converter reads that much.
    let part = if checkpoint.fetched_all {
        None
    } else {
        Some(store::open_part(&paths.part, checkpoint.part_bytes)?)
    };
    let (format, prefix) = (job.format, checkpoint.part_bytes);
    let (pages, received) = std::sync::mpsc::sync_channel(PAGES_AHEAD);
    let result = std::thread::scope(|scope| {
        let title = &title;
        let converter =
            scope.spawn(move || convert(format, job.raw_csv_cells, paths, title, prefix, received));
        let fetched = match part {
            Some(part) => fetch_all(job, target, paths, part, checkpoint, bar, Some(&pages)),
            None => Ok(()),
        };
        drop(pages);
        let converted = converter.join().unwrap_or_else(|_| {
            Err(CliError::Usage(format!(
                "{}: the converter stopped unexpectedly; run the same command again",
                paths.staging.display()
            )))
        });
        // The converter fails only of its own (a closed channel ends it well): its error
        // first, a fetch that stopped for it having no other to tell.
        match (fetched, converted) {
            (_, Err(e)) | (Err(e), Ok(_)) => Err(e),
            (Ok(()), Ok(staged)) => Ok(staged),
        }
    });
    if result.is_err() {
        // Rebuilt from the part file by the next run anyway.
        let _ = std::fs::remove_file(&paths.staging);
    }
    result
}

/// The converter: creates the staging file, writes the format's opening, renders the part
/// file's first `prefix` bytes (what a resumed export had), then every page's lines received,
/// flushing the staging file and fsyncing it (on a thread of its own) about every 200 ms, so
/// that the final fsync has little left. Ends when the fetch closes the channel, or at its own
/// error (which closes it).
fn convert(
    format: Format,
    raw_csv_cells: bool,
    paths: &Paths,
    title: &formats::Title<'_>,
    prefix: u64,
    pages: Receiver<Vec<u8>>,
) -> Result<Staged, CliError> {
    let staging = |e| store::io_error(&paths.staging, e);
    let input = File::open(&paths.part).map_err(|e| store::io_error(&paths.part, e))?;
    let file = File::create(&paths.staging).map_err(staging)?;
    let mut out =
        formats::Renderer::begin(format, BufWriter::with_capacity(256 * 1024, file), title)
            .map_err(staging)?
            .with_raw_csv_cells(raw_csv_cells);
    let mut last_sync = Instant::now();
    let mut unsynced = 0usize;
    let mut input = BufReader::with_capacity(256 * 1024, input.take(prefix));
    out.records(&mut input).map_err(staging)?;
    if input.into_inner().limit() > 0 {
        return Err(CliError::Usage(format!(
            "{}: shorter than its checkpoint says ({prefix} bytes); use --restart",
            paths.part.display()
        )));
    }
    // The fsyncs run on a thread of their own: the rendering goes on meanwhile.
    let syncing = out.get_ref().get_ref().try_clone().map_err(staging)?;
    std::thread::scope(|scope| {
        let (kick, kicks) = std::sync::mpsc::sync_channel::<()>(1);
        let syncer = scope.spawn(move || kicks.iter().try_for_each(|()| syncing.sync_data()));
        let render = || -> std::io::Result<()> {
            for page in pages {
                out.chunk(&page)?;
                unsynced += page.len();
                if unsynced >= COMMIT_BYTES || last_sync.elapsed() >= COMMIT_EVERY {
                    out.flush()?;
                    match kick.try_send(()) {
                        // Full: the last fsync is still running; this one waits for the next.
                        Ok(()) | Err(TrySendError::Full(())) => {}
                        // The syncer stopped at an error, told below.
                        Err(TrySendError::Disconnected(())) => break,
                    }
                    last_sync = Instant::now();
                    unsynced = 0;
                }
            }
            Ok(())
        };
        let rendered = render();
        drop(kick);
        let synced = syncer.join().unwrap_or_else(|_| {
            Err(std::io::Error::other(
                "the staging file's fsync thread stopped unexpectedly",
            ))
        });
        rendered.and(synced).map_err(staging)
    })?;
    Ok(out)
}

/// Fetches the listing from the checkpoint on, appending each page's new records to the part
/// file (`part`, cut back to the checkpoint already) and, with `pages`, handing them to the
/// converter; commits every 200 ms or 4 MiB ([`COMMIT_EVERY`], [`COMMIT_BYTES`]) and at the end.
///
/// Those commits run on a committer thread: the part file's fsync (all it got since the
/// last one, some 20 MB at full speed every 200 ms) and the checkpoint's replacement took
/// the fetch off the wire meanwhile, which made a 100,000-message export to a disk 0.7-0.9x
/// the SDK iterator's rate where it was 1.1-1.5x to tmpfs. A checkpoint still vouches only
/// for what is durable: the fetch flushes the part file's buffer before it hands the
/// committer a copy of the checkpoint, and the committer fsyncs the part file before it
/// writes that copy. The committer takes them in order, one queued behind the one running
/// at most (a commit due when both are taken is dropped; the next one due comes 200 ms or
/// 4 MiB later), and is done before the listing's end is committed here or [`finish`]
/// commits it: no late copy can replace a later checkpoint or outlive the export.
fn fetch_all(
    job: &Job<'_>,
    target: &Target,
    paths: &Paths,
    part: File,
    checkpoint: &mut Checkpoint,
    bar: &progress::RoomBar<'_>,
    pages: Option<&SyncSender<Vec<u8>>>,
) -> Result<(), CliError> {
    let syncing = part
        .try_clone()
        .map_err(|e| store::io_error(&paths.part, e))?;
    std::thread::scope(|scope| {
        let (commits, to_commit) = std::sync::mpsc::sync_channel::<Checkpoint>(1);
        let committer = scope.spawn(move || -> Result<(), CliError> {
            to_commit
                .iter()
                .try_for_each(|copy| commit(&syncing, paths, &copy))
        });
        let fetched = fetch_pages(job, target, paths, part, checkpoint, bar, pages, &commits);
        drop(commits);
        let committed = committer.join().unwrap_or_else(|_| {
            Err(CliError::Usage(format!(
                "{}: the committer stopped unexpectedly; run the same command again",
                paths.checkpoint.display()
            )))
        });
        // The committer's error first: a fetch that stopped for it has no other to tell.
        let at_end = committed.and(fetched)?;
        if let Some(mut part) = at_end {
            // A jsonl export's end, committed once every earlier commit is done: the part
            // file (the final file) durable, then the checkpoint saying the listing is done.
            part.flush().map_err(|e| store::io_error(&paths.part, e))?;
            commit(part.get_ref(), paths, checkpoint)?;
        }
        Ok(())
    })
}

/// One commit: the part file's data made durable, then `checkpoint`, which vouches for it,
/// put in place (the part file's writes it covers were flushed before).
fn commit(part: &File, paths: &Paths, checkpoint: &Checkpoint) -> Result<(), CliError> {
    part.sync_data()
        .map_err(|e| store::io_error(&paths.part, e))?;
    store::save_checkpoint(&paths.checkpoint, checkpoint)
}

/// [`fetch_all`]'s fetch: to the listing's end, handing every commit due but the last to
/// `commits`; the part file when the listing's end is left to commit (jsonl), `None` when
/// [`finish`] commits it (the other formats).
#[allow(clippy::too_many_arguments)]
fn fetch_pages(
    job: &Job<'_>,
    target: &Target,
    paths: &Paths,
    part: File,
    checkpoint: &mut Checkpoint,
    bar: &progress::RoomBar<'_>,
    pages: Option<&SyncSender<Vec<u8>>>,
    commits: &SyncSender<Checkpoint>,
) -> Result<Option<BufWriter<File>>, CliError> {
    let mut part = BufWriter::with_capacity(256 * 1024, part);
    let mut recent = RecentIds::from_list(&checkpoint.recent_ids);
    // Uncommitted progress: written to the part file's buffer, not yet vouched for.
    let (mut next_skip, mut messages, mut part_bytes) = (
        checkpoint.next_skip,
        checkpoint.messages,
        checkpoint.part_bytes,
    );
    let mut total = checkpoint.total;
    let mut last_commit = (Instant::now(), part_bytes);
    // This page's new lines, for the part file (and the converter).
    let mut lines = Vec::with_capacity(64 * 1024);
    loop {
        // One message of overlap: the page must begin with the last message already listed.
        let overlap = u64::from(next_skip > 0);
        let skip = next_skip - overlap;
        let limit = job.page_size + overlap;
        let body = fetch_page(&job.client, job.stats, target, skip, limit)?;
        let operation = if target.channel.is_some() {
            Operation::ChannelMessages
        } else {
            Operation::RoomMessages
        };
        let page = parse_page(operation, &body, &target.label())?;
        let items = page.messages.unwrap_or_default();
        if let Some(t) = page.total_records {
            total = Some(t);
        }
        let mut anchored = false;
        if overlap == 1 {
            let first_id = items.first().and_then(|raw| head(raw.get()).0);
            let first_id = first_id.as_deref();
            anchored = first_id.is_some_and(|id| recent.last() == Some(id));
            if !anchored && next_skip > 0 {
                // Messages before this point were deleted (or the listing changed order):
                // step back a page and let the recent ids drop what was seen already.
                let known = first_id.is_some_and(|id| recent.contains(id));
                if !known || items.is_empty() {
                    next_skip = next_skip.saturating_sub(job.page_size);
                    continue;
                }
            }
        }
        for (k, raw) in items.iter().enumerate() {
            if anchored && k == 0 {
                continue; // the last message already written
            }
            let (id, created) = head(raw.get());
            let Some(id) = id.as_deref() else {
                // No id: nothing to recognise it by; kept (never dropped).
                write_record(&mut lines, raw);
                messages += 1;
                continue;
            };
            // Anchored, the page goes on from the last message written: nothing to look up.
            if !anchored && recent.contains(id) {
                continue;
            }
            recent.push(id);
            if !keep(job, created.as_deref()) {
                continue;
            }
            write_record(&mut lines, raw);
            messages += 1;
        }
        part.write_all(&lines)
            .map_err(|e| store::io_error(&paths.part, e))?;
        part_bytes += lines.len() as u64;
        match pages {
            Some(pages) if !lines.is_empty() => {
                let room_for_next = lines.len() + lines.len() / 4;
                let page = std::mem::replace(&mut lines, Vec::with_capacity(room_for_next));
                // Closed: the converter stopped at an error, which is the one told.
                pages.send(page).map_err(|_| {
                    CliError::Usage(format!(
                        "{}: the converter stopped",
                        paths.staging.display()
                    ))
                })?;
            }
            _ => lines.clear(),
        }
        next_skip = skip + items.len() as u64;
        let at_end = (items.len() as u64) < limit;
        bar.update(next_skip, total);
        if at_end
            || last_commit.0.elapsed() >= COMMIT_EVERY
            || part_bytes - last_commit.1 >= COMMIT_BYTES as u64
        {
            checkpoint.next_skip = next_skip;
            checkpoint.messages = messages;
            checkpoint.part_bytes = part_bytes;
            checkpoint.recent_ids = recent.to_list();
            checkpoint.total = total;
            checkpoint.fetched_all = at_end;
            // With a converter (any format but jsonl), the listing's end is committed by
            // `finish`: the rendered file fsynced and renamed into place, then the checkpoint
            // and the part file removed. Making the part file durable first would be work
            // thrown away (an fsync of all it got since the last commit); a stop before that
            // resumes from the last commit.
            if at_end {
                return Ok(pages.is_none().then_some(part));
            }
            part.flush().map_err(|e| store::io_error(&paths.part, e))?;
            match commits.try_send(checkpoint.clone()) {
                // Full: one commit runs and one waits; this one is left for the next due.
                Ok(()) | Err(TrySendError::Full(_)) => last_commit = (Instant::now(), part_bytes),
                // The committer stopped at an error, which `fetch_all` tells.
                Err(TrySendError::Disconnected(_)) => return Ok(None),
            }
        }
    }
}

/// Appends one line of the part file to `line`: the record as the service sent it (compacted
/// only if it spanned lines).
fn write_record(line: &mut Vec<u8>, raw: &RawValue) {
    let text = raw.get();
    if text.contains('\n') || text.contains('\r') {
        let value: serde_json::Value = serde_json::from_str(text).expect("valid JSON");
        serde_json::to_writer(&mut *line, &value).expect("serializes");
    } else {
        line.extend_from_slice(text.as_bytes());
    }
    line.push(b'\n');
}

/// Whether the time filter keeps a message created at `created` (one without a readable time
/// is kept: the filter cannot place it).
fn keep(job: &Job<'_>, created: Option<&str>) -> bool {
    if job.after.is_none() && job.before.is_none() {
        return true;
    }
    let Some(ms) = created.and_then(parse_time) else {
        return true;
    };
    job.after.as_ref().is_none_or(|(_, a)| ms > *a)
        && job.before.as_ref().is_none_or(|(_, b)| ms < *b)
}

/// Puts the final file in place: jsonl's part file renamed, or `staged` (every record
/// rendered) closed, fsynced and renamed; then the checkpoint and the part file removed. Its size.
fn finish(paths: &Paths, checkpoint: &Checkpoint, staged: Option<Staged>) -> Result<u64, CliError> {
    match staged {
        None => {
            // The part file is the jsonl export: fsynced at the last commit, renamed into place.
            if paths.part.exists() {
                std::fs::rename(&paths.part, &paths.output)
                    .map_err(|e| store::io_error(&paths.output, e))?;
                store::sync_parent(&paths.output)?;
            }
            store::remove_if_there(&paths.checkpoint)?;
            store::sync_parent(&paths.checkpoint)?;
        }
        Some(staged) => {
            let exported_at = now_rfc3339();
            let footer = formats::Footer {
                messages: checkpoint.messages,
                exported_at: &exported_at,
            };
            let out = staged
                .end(&footer)
                .map_err(|e| store::io_error(&paths.staging, e))?;
            let file = out
                .into_inner()
                .map_err(|e| store::io_error(&paths.staging, e.into_error()))?;
            file.sync_all()
                .map_err(|e| store::io_error(&paths.staging, e))?;
            drop(file);
            std::fs::rename(&paths.staging, &paths.output)
                .map_err(|e| store::io_error(&paths.output, e))?;
            store::sync_parent(&paths.output)?;
            // The checkpoint before the part file: a stop between the two leaves the export
            // done and a stray part file (the next run removes it), never a checkpoint whose
            // part file is gone.
            store::remove_if_there(&paths.checkpoint)?;
            store::sync_parent(&paths.checkpoint)?;
            store::remove_if_there(&paths.part)?;
        }
    }
    Ok(std::fs::metadata(&paths.output)
        .map(|m| m.len())
        .unwrap_or_default())
}

/// Now, as `2024-01-15T15:21:44Z`.
fn now_rfc3339() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or_default();
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Days since 1970-01-01 from a civil date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Milliseconds since the epoch of an RFC 3339 time (`2024-01-15T15:21:44.293Z`,
/// `2024-01-15T16:21:44+01:00`, `2024-01-15 15:21`) or a date (`2024-01-15`, midnight UTC).
pub fn parse_time(text: &str) -> Option<i64> {
    let t = text.trim();
    let b = t.as_bytes();
    let num = |s: &str| -> Option<i64> {
        (!s.is_empty() && s.bytes().all(|c| c.is_ascii_digit())).then(|| s.parse().ok())?
    };
    if b.len() < 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let (y, mo, d) = (num(&t[..4])?, num(&t[5..7])?, num(&t[8..10])?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) {
        return None;
    }
    let mut ms = days_from_civil(y, mo, d) * 86_400_000;
    let rest = &t[10..];
    if rest.is_empty() {
        return Some(ms);
    }
    let rest = rest.strip_prefix(['T', 't', ' '])?;
    // hh:mm[:ss[.fff]] then Z, ±hh:mm or nothing (UTC).
    let zone_at = rest.find(['Z', 'z', '+', '-']).unwrap_or(rest.len());
    let (clock, zone) = rest.split_at(zone_at);
    let mut parts = clock.split(':');
    let h = num(parts.next()?)?;
    let mi = num(parts.next()?)?;
    let (s, frac) = match parts.next() {
        None => (0, 0),
        Some(sec) => {
            let (whole, frac) = sec.split_once('.').unwrap_or((sec, ""));
            let frac_ms = if frac.is_empty() {
                0
            } else {
                let digits: String = frac.chars().chain("000".chars()).take(3).collect();
                num(&digits)?
            };
            (num(whole)?, frac_ms)
        }
    };
    if parts.next().is_some() || h > 23 || mi > 59 || s > 60 {
        return None;
    }
    ms += ((h * 60 + mi) * 60 + s) * 1000 + frac;
    match zone {
        "" | "Z" | "z" => {}
        z => {
            let sign = if z.starts_with('-') { -1 } else { 1 };
            let (zh, zm) = z[1..].split_once(':').unwrap_or((&z[1..], "00"));
            ms -= sign * (num(zh)? * 60 + num(zm)?) * 60_000;
        }
    }
    Some(ms)
}

/// `--dry-run`: the first request of each target (the rooms' listing with `--all-rooms`),
/// printed as the operation commands print theirs; nothing is sent.
fn dry_run(
    matches: &clap::ArgMatches,
    pairs: &[(String, Option<String>, Option<String>)],
    all_rooms: bool,
) -> Result<(), CliError> {
    let base_url = crate::config::base_url(matches)?.unwrap_or_else(|| "https://BASE_URL".into());
    let limit = *matches
        .get_one::<u64>("export-page-size")
        .expect("defaulted");
    let mut requests = Vec::new();
    if all_rooms {
        requests.push(Operation::ListChatRooms.build(&serde_json::json!({}))?);
    }
    for (room, channel, _) in pairs {
        let mut params = serde_json::json!({"roomId": room, "limit": limit, "skip": 0});
        let operation = match channel {
            Some(channel) => {
                params["channelId"] = channel.as_str().into();
                Operation::ChannelMessages
            }
            None => Operation::RoomMessages,
        };
        requests.push(operation.build(&params)?);
    }
    for request in &requests {
        crate::output::print_dry_run(request, &base_url, false)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_head_of_a_record() {
        let cases = [
            (
                r#"{"_id":"a1","created":"t1","x":1}"#,
                Some("a1"),
                Some("t1"),
            ),
            (
                r#"{"user":{"_id":"u","created":"no"},"likes":[{"_id":"l"}],"message":"a \"}\" ,","_id":"m\u0031","created":"t"}"#,
                Some("m1"),
                Some("t"),
            ),
            (
                r#" { "created" : "c" , "_id" : "i" } "#,
                Some("i"),
                Some("c"),
            ),
            (r#"{"_id":null,"n":[1,[2,{"a":"}"}]]}"#, None, None),
            (r#"{}"#, None, None),
        ];
        for (raw, id, created) in cases {
            let (i, c) = head(raw);
            assert_eq!((i.as_deref(), c.as_deref()), (id, created), "{raw}");
        }
    }

    #[test]
    fn times() {
        assert_eq!(parse_time("1970-01-01"), Some(0));
        assert_eq!(parse_time("1970-01-01T00:00:01.5Z"), Some(1500));
        assert_eq!(
            parse_time("2024-01-15T15:21:44.293Z"),
            Some(1_705_332_104_293)
        );
        assert_eq!(
            parse_time("2024-01-15T16:21:44.293+01:00"),
            Some(1_705_332_104_293)
        );
        assert_eq!(parse_time("2024-01-15 15:21"), Some(1_705_332_060_000));
        assert_eq!(parse_time("yesterday"), None);
        assert_eq!(parse_time("2024-13-01"), None);
        assert_eq!(civil_from_days(days_from_civil(2024, 2, 29)), (2024, 2, 29));
    }

    #[test]
    fn rendered_page_by_page_as_rendered_whole() {
        let records = [
            r#"{"_id":"a","created":"2024-01-15T15:21:44.293Z","message":"one\ntwo, \"three\"","user":{"username":"ann","isModerator":true,"uniqueUserIdentifier":"u\u00e9"}}"#,
            r#"{"_id":"b","created":"later <today>","message":"<b>&</b>","channel":"c1","file":{"url":"https://f.example/x?a&b","fileName":"x.png"},"likes":[{"_id":"l"}]}"#,
            r#"{"_id":"c","message":"pick","user":{"username":"bot"},"actionButtons":[{"displayText":"A","url":"https://a.example"},{"payload":"p"}]}"#,
            r#"{"_id":"d","created":"2024-01-15T15:21:44Z","message":"","user":null,"file":null}"#,
        ];
        let part: String = records.iter().map(|r| format!("{r}\n")).collect();
        let title = formats::Title {
            room: "r",
            room_name: Some("Room"),
            channel: Some("c1"),
        };
        let footer = formats::Footer {
            messages: 4,
            exported_at: "2024-01-16T00:00:00Z",
        };
        for format in Format::NAMES.map(|n| Format::parse(n).unwrap()) {
            let mut whole = Vec::new();
            formats::render(format, part.as_bytes(), &mut whole, &title, &footer).unwrap();
            // A resumed export: the part file's first record, then pages of one and two.
            let first = records[0].len() + 1;
            let mut pieces = formats::Renderer::begin(format, Vec::new(), &title).unwrap();
            pieces.records(&part.as_bytes()[..first]).unwrap();
            pieces
                .chunk(&part.as_bytes()[first..first + records[1].len() + 1])
                .unwrap();
            pieces
                .chunk(&part.as_bytes()[first + records[1].len() + 1..])
                .unwrap();
            let pieces = pieces.end(&footer).unwrap();
            assert_eq!(
                String::from_utf8(pieces).unwrap(),
                String::from_utf8(whole.clone()).unwrap(),
                "{format:?}"
            );
            let text = String::from_utf8(whole).unwrap();
            match format {
                Format::Jsonl => assert_eq!(text, part),
                Format::Json => {
                    let all: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
                    assert_eq!(all.len(), 4);
                }
                Format::Csv => assert_eq!(
                    csv::Reader::from_reader(text.as_bytes()).records().count(),
                    4
                ),
                Format::Txt => {
                    assert!(text.starts_with("Room Room (r), channel c1\n"), "{text}");
                    assert!(
                        text.contains(
                            "[2024-01-15 15:21:44 UTC] ann (moderator): one\n    two, \"three\"\n"
                        ),
                        "{text}"
                    );
                    assert!(text.contains("[later <today>] ?: <b>&</b>\n    [file: x.png https://f.example/x?a&b]\n"), "{text}");
                    assert!(
                        text.contains("bot (bot): pick\n    buttons: [A] [p]\n"),
                        "{text}"
                    );
                    assert!(
                        text.ends_with("\n\n4 messages, exported 2024-01-16T00:00:00Z\n"),
                        "{text}"
                    );
                }
                Format::Html => {
                    assert!(
                        text.contains(
                            "<time datetime=\"later &lt;today&gt;\">later &lt;today&gt;</time>"
                        ),
                        "{text}"
                    );
                    assert!(text.ends_with("<footer class=\"page\"><p>4 messages, exported 2024-01-16T00:00:00Z</p></footer>\n</main>\n</body>\n</html>\n"), "{text}");
                }
            }
        }
    }

    #[test]
    fn a_line_that_is_not_a_record_is_an_error() {
        let title = formats::Title {
            room: "r",
            room_name: None,
            channel: None,
        };
        for format in [Format::Csv, Format::Txt, Format::Html] {
            let mut out = formats::Renderer::begin(format, Vec::new(), &title).unwrap();
            let e = out.chunk(b"{\"_id\":\"a\"}\nnot json\n").unwrap_err();
            assert_eq!(e.kind(), std::io::ErrorKind::InvalidData, "{format:?}");
        }
        let mut out = formats::Renderer::begin(Format::Json, Vec::new(), &title).unwrap();
        let e = out.chunk(b"\xff\n").unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidData);
    }

    #[test]
    fn html_escapes_everything() {
        let line = r#"{"_id":"a<b","created":"2024-01-15T15:21:44.293Z","message":"<script>alert(1)</script> & \"x\"","user":{"username":"<img src=x onerror=alert(1)>"},"file":{"url":"javascript:alert(1)","fileName":"<b>f</b>"},"actionButtons":[{"type":"url","displayText":"<i>go</i>","url":"https://e.example/?a=1&b=\"2\""}]}"#;
        let mut out = Vec::new();
        let title = formats::Title {
            room: "r<1>",
            room_name: Some("<Room>"),
            channel: None,
        };
        let footer = formats::Footer {
            messages: 1,
            exported_at: "now<",
        };
        formats::render(Format::Html, line.as_bytes(), &mut out, &title, &footer).unwrap();
        let html = String::from_utf8(out).unwrap();
        for bad in [
            "<script>",
            "<img",
            "<b>f",
            "<i>go",
            "javascript:",
            "<Room>",
            "r<1>",
            "now<",
        ] {
            assert!(!html.contains(bad), "{bad} in {html}");
        }
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;x&quot;"));
        assert!(html.contains("href=\"https://e.example/?a=1&amp;b=&quot;2&quot;\""));
        assert!(html.contains("prefers-color-scheme: dark"));
    }
}
