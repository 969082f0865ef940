//! `roomchat import users FILE`: users from CSV or JSON lines, each created once.
//!
//! A user is recognised by its `uniqueUserIdentifier` (required in every row): the account's
//! users are listed first, and a row whose identifier is there already is not sent. A create
//! whose outcome is unknown is checked before it is sent again (`create`). So running the
//! same file again, or after a crash or Ctrl-C, creates nobody twice.
//!
//! Here: the command, and the run — read the rows (`rows`), list who is there, create the
//! others a few at a time (`create`), settle the users found by lookups, write the result
//! file (`results`), and exit with a code that says what was done.

mod create;
mod progress;
mod results;
mod rows;

// The parsers of outside input, for the fuzz target (crate::fuzzing).
pub(crate) use rows::{create_user_of, csv_rows, jsonl_rows};

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use clap::{Arg, ArgAction};
use roomchat::{CallOptions, Client, CreateUser, ErrorKind};
use serde_json::Value;

use crate::error::CliError;
use crate::interrupt::Interrupts;
use create::{Activity, Attempt, Creator, Outcome};
use progress::Progress;
use rows::{read_csv, read_jsonl, Row};

/// The `import` command.
pub fn command() -> clap::Command {
    clap::Command::new("import")
        .about("Import users from CSV or JSON lines (runs again safely)")
        .subcommand_required(true)
        .subcommand(
            clap::Command::new("users")
                .about("Create the users a CSV or JSON-lines file lists, each once")
                .arg(crate::output::error_output_arg())
                .long_about(
                    "Create the users a CSV (a header row of field names) or JSON-lines file \
                     lists: the create-user fields (username, uniqueUserIdentifier, email, \
                     profilePic, isModerator, chatRoom, externalUserId, meta, and any other \
                     passed through). Each row needs a uniqueUserIdentifier: users already \
                     there are recognised by it, so the same file can be run again, and a \
                     create whose outcome is unknown is checked before it is sent again. \
                     Ctrl-C sends no new create, settles those in flight, writes the result \
                     file and exits 130: running the same command again completes the import.",
                )
                .arg(
                    Arg::new("import-file")
                        .value_name("FILE")
                        .required(true)
                        .value_parser(clap::value_parser!(PathBuf))
                        .help("The users: .csv, or JSON lines (.jsonl, .ndjson, .json)"),
                )
                .arg(
                    Arg::new("import-format")
                        .long("input-format")
                        .value_parser(["csv", "jsonl"])
                        .help("The file's format (default: from its extension; csv otherwise)"),
                )
                .arg(
                    Arg::new("import-results")
                        .long("results")
                        .value_name("FILE")
                        .value_parser(clap::value_parser!(PathBuf))
                        .help("The result file (CSV: line, uniqueUserIdentifier, username, result, userId, reason; result: created, already there, failed or not attempted); default FILE.results.csv; - for standard output"),
                )
                .arg(
                    Arg::new("import-jobs")
                        .long("jobs")
                        .short('j')
                        .value_parser(clap::value_parser!(u16).range(1..=64))
                        .default_value("4")
                        .help("Users created at once (all under the client's one rate budget)"),
                )
                .arg(
                    Arg::new("import-create-timeout")
                        .long("create-timeout")
                        .value_name("SECONDS")
                        .value_parser(clap::value_parser!(f64))
                        .help("How long to wait for a create's answer before checking whether it took effect (default: the client's timeout)"),
                )
                .arg(
                    Arg::new("import-quiet")
                        .long("quiet")
                        .short('q')
                        .action(ArgAction::SetTrue)
                        .help("No progress and no summary (errors only)"),
                ),
        )
}

/// Runs `import`.
pub fn run(matches: &clap::ArgMatches) -> Result<(), CliError> {
    match matches.subcommand() {
        Some(("users", m)) => import_users(m),
        _ => Err(CliError::Usage("import: say what to import (users)".into())),
    }
}

/// How to go on after Ctrl-C: the same command, which finds the rows done `already there`.
const RESUME: &str = "the same command again: the rows done are found already there";

fn import_users(matches: &clap::ArgMatches) -> Result<(), CliError> {
    let file = matches
        .get_one::<PathBuf>("import-file")
        .expect("required")
        .clone();
    let format = match matches.get_one::<String>("import-format") {
        Some(f) => f.clone(),
        None => match file.extension().and_then(|e| e.to_str()) {
            Some("jsonl" | "ndjson" | "json") => "jsonl".into(),
            _ => "csv".into(),
        },
    };
    let results_path = matches
        .get_one::<PathBuf>("import-results")
        .cloned()
        .unwrap_or_else(|| {
            let mut name = file.file_name().unwrap_or_default().to_os_string();
            name.push(".results.csv");
            file.with_file_name(name)
        });
    let quiet = matches.get_flag("import-quiet");
    let raw_cells = crate::config::raw_csv_cells(matches);
    let jobs = usize::from(*matches.get_one::<u16>("import-jobs").expect("defaulted"));
    let create_timeout = match matches.get_one::<f64>("import-create-timeout") {
        Some(s) if s.is_finite() && *s > 0.0 && *s < 1e6 => Some(Duration::from_secs_f64(*s)),
        Some(s) => {
            return Err(CliError::Usage(format!(
                "--create-timeout {s}: a number of seconds above 0"
            )))
        }
        None => None,
    };
    let rows = if format == "csv" {
        read_csv(&file)?
    } else {
        read_jsonl(&file)?
    };
    // The results written over the rows they came from would lose the input (its other columns).
    if let (Ok(input), Ok(output)) = (
        std::fs::canonicalize(&file),
        std::fs::canonicalize(&results_path),
    ) {
        if input == output {
            return Err(CliError::Usage(format!(
                "--results {}: that is the file being imported; name another",
                results_path.display()
            )));
        }
    }

    if crate::config::dry_run(matches) {
        return dry_run(matches, &rows);
    }
    let destination = results::Destination::of(&results_path)?;

    let client = crate::config::client(matches)?;
    // Ctrl-C (or a script's `kill -INT`): no new create is sent; the creates in flight are
    // cancelled and their outcome looked up (with `client`, which Ctrl-C does not cancel);
    // the result file says what was done.
    let interrupts = Interrupts::catch();
    let cancellable = client.with_cancel(interrupts.cancel_token());
    let create_client = match create_timeout {
        Some(t) => cancellable.with_options(CallOptions::new().timeout(t))?,
        None => cancellable.clone(),
    };
    let started = Instant::now();

    let (mut attempts, requests) = check_rows(&rows);

    // Who is there already, by identifier (the listing shows active users).
    let existing = match active_users(&cancellable, None) {
        Ok(existing) => existing,
        Err(e) if interrupted(&e, &interrupts) => HashMap::new(),
        Err(e) => return Err(e.into()),
    };
    let mut work: Vec<Request<'_>> = Vec::new();
    for (i, uid, user) in requests {
        match existing.get(uid) {
            Some(id) => {
                attempts[i] = Some(Attempt::Done(Outcome::AlreadyThere {
                    user_id: id.clone(),
                    note: String::new(),
                }))
            }
            None => work.push((i, uid, user)),
        }
    }

    let progress = Progress::new(quiet, rows.len() as u64);
    for _ in 0..rows.len() - work.len() {
        progress.step();
    }
    let creator = Creator {
        create: &create_client,
        lookup: &client,
        interrupts: &interrupts,
    };
    let attempts = create_all(attempts, &work, &creator, jobs, &progress);
    progress.finish();
    let outcomes = settle_found(attempts, &cancellable, &interrupts);
    results::write(&results_path, &destination, &rows, &outcomes, raw_cells)?;
    // What the summary and the errors call it.
    let results_path = match destination {
        results::Destination::Stdout => PathBuf::from("standard output"),
        results::Destination::Stderr => PathBuf::from("standard error"),
        _ => results_path,
    };

    if !quiet {
        print_summary(&outcomes, started.elapsed(), &results_path);
    }
    verdict(&rows, &outcomes, &results_path, interrupts.requested())
}

/// A new row's request to send, by its index: (index, identifier, request).
type Request<'a> = (usize, &'a str, CreateUser);

/// The rows that fail whatever the service says (`Some` outcome), and the request of every
/// other one.
fn check_rows(rows: &[Row]) -> (Vec<Option<Attempt>>, Vec<Request<'_>>) {
    let mut attempts: Vec<Option<Attempt>> = Vec::with_capacity(rows.len());
    let mut requests = Vec::new();
    // The first row of each identifier: a later one is a duplicate within the file.
    let mut first_line: HashMap<&str, usize> = HashMap::new();
    for (i, row) in rows.iter().enumerate() {
        let failure = match (&row.problem, row.fields.get("uniqueUserIdentifier")) {
            (Some(problem), _) => Some(problem.clone()),
            (None, Some(Value::String(uid))) if !uid.is_empty() => {
                match (first_line.get(uid.as_str()), create_user_of(&row.fields)) {
                    (Some(line), _) => {
                        Some(format!("the same uniqueUserIdentifier as line {line}"))
                    }
                    (None, Err(reason)) => Some(reason),
                    (None, Ok(user)) => {
                        first_line.insert(uid, row.line);
                        requests.push((i, uid.as_str(), user));
                        None
                    }
                }
            }
            (None, _) => Some(
                "no uniqueUserIdentifier: a user is recognised by it on a second run, so every row needs one".into(),
            ),
        };
        attempts.push(failure.map(|reason| Attempt::Done(Outcome::failed(reason))));
    }

    (attempts, requests)
}

/// Sends the creates of `work`, `jobs` at a time, until done or Ctrl-C; the attempt of every
/// row (those Ctrl-C left `not attempted`).
fn create_all(
    attempts: Vec<Option<Attempt>>,
    work: &[Request<'_>],
    creator: &Creator<'_>,
    jobs: usize,
    progress: &Progress,
) -> Vec<Attempt> {
    let attempts: Vec<Mutex<Option<Attempt>>> = attempts.into_iter().map(Mutex::new).collect();
    let next = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..jobs.min(work.len()) {
            scope.spawn(|| loop {
                if creator.interrupts.requested() {
                    break;
                }
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some((i, uid, user)) = work.get(k) else {
                    break;
                };
                let attempt = creator.create_once(uid, user);
                *attempts[*i].lock().expect("attempt") = Some(attempt);
                progress.step();
            });
        }
    });
    attempts
        .into_iter()
        .map(|a| {
            a.into_inner().expect("attempt").unwrap_or_else(|| {
                Attempt::Done(Outcome::NotAttempted {
                    reason: "interrupted before it was sent".into(),
                })
            })
        })
        .collect()
}

/// `roomchat import users: 1000 rows: 998 created, 0 already there, 2 failed, 110.31 s;
/// results in users.csv.results.csv` (`, N not attempted` after Ctrl-C).
fn print_summary(outcomes: &[Outcome], elapsed: Duration, results_path: &std::path::Path) {
    let count = |name: &str| outcomes.iter().filter(|o| o.name() == name).count();
    let (created, there, failed, skipped) = (
        count("created"),
        count("already there"),
        count("failed"),
        count("not attempted"),
    );
    eprintln!(
        "roomchat import users: {} rows: {created} created, {there} already there, {failed} failed{}, {:.2} s; results in {}",
        outcomes.len(),
        if skipped > 0 { format!(", {skipped} not attempted") } else { String::new() },
        elapsed.as_secs_f64(),
        results_path.display()
    );
}

/// The command's end: 130 after Ctrl-C; 0 when no row failed; 4 (partial) when some users
/// were created or found; when every row failed, the first failure's code, as one create's
/// would be (2 for a row that is itself wrong).
fn verdict(
    rows: &[Row],
    outcomes: &[Outcome],
    results_path: &std::path::Path,
    interrupted: bool,
) -> Result<(), CliError> {
    let count = |name: &str| outcomes.iter().filter(|o| o.name() == name).count();
    let (created, there, failed) = (count("created"), count("already there"), count("failed"));
    if interrupted {
        return Err(CliError::Interrupted {
            resume: RESUME.into(),
        });
    }
    if failed == 0 {
        return Ok(());
    }
    if created + there > 0 {
        return Err(CliError::Partial(format!(
            "{failed} of {} users failed (their reasons are in {})",
            rows.len(),
            results_path.display()
        )));
    }
    // Nothing done: the code of the first failure, as a single create's would be.
    let (row, reason, cause) = rows
        .iter()
        .zip(outcomes)
        .find_map(|(row, o)| match o {
            Outcome::Failed { reason, cause } => Some((row, reason, cause)),
            _ => None,
        })
        .expect("failed > 0");
    let every = format!(
        "all {} rows failed (their reasons are in {}); the first, line {}",
        rows.len(),
        results_path.display(),
        row.line
    );
    match cause {
        Some(error) => {
            eprintln!("roomchat import users: {every}:");
            Err(CliError::Sdk(error.clone()))
        }
        None => Err(CliError::Usage(format!("{every}: {reason}"))),
    }
}

/// Whether `error` ended a call because of Ctrl-C.
fn interrupted(error: &roomchat::Error, interrupts: &Interrupts) -> bool {
    error.kind() == ErrorKind::Cancelled || interrupts.requested()
}

/// The account's active users (the listing shows no others), identifier to user id; with
/// `only`, stops once every identifier of it was seen.
fn active_users(
    client: &Client,
    only: Option<&HashSet<String>>,
) -> Result<HashMap<String, String>, roomchat::Error> {
    let mut users = HashMap::new();
    for user in client.users_with_page_size(200) {
        let user = user?;
        if let (Some(uid), Some(id)) = (user.unique_user_identifier, user.user_id.or(user.id)) {
            if only.is_none_or(|o| o.contains(&uid)) {
                users.insert(uid, id);
            }
        }
        if only.is_some_and(|o| o.len() == users.len()) {
            break;
        }
    }
    Ok(users)
}

/// The outcome of every row: the users the lookups found are settled by their record when it
/// says whether they are active, otherwise by one listing of the active users (skipped after
/// Ctrl-C: those rows say it was not checked).
fn settle_found(attempts: Vec<Attempt>, client: &Client, interrupts: &Interrupts) -> Vec<Outcome> {
    let unsettled: HashSet<String> = attempts
        .iter()
        .filter_map(|a| match a {
            Attempt::Found(found) if !found.settled_by_record() => Some(found.uid.clone()),
            _ => None,
        })
        .collect();
    let activity = if unsettled.is_empty() {
        Activity::Listed(HashSet::new())
    } else if interrupts.requested() {
        Activity::Unchecked("interrupted".into())
    } else {
        match active_users(client, Some(&unsettled)) {
            Ok(active) => Activity::Listed(active.into_keys().collect()),
            Err(e) if interrupted(&e, interrupts) => Activity::Unchecked("interrupted".into()),
            Err(e) => Activity::Unchecked(format!("the listing failed: {e}")),
        }
    };
    attempts
        .into_iter()
        .map(|a| match a {
            Attempt::Done(outcome) => outcome,
            Attempt::Found(found) => create::settle(found, &activity),
        })
        .collect()
}

/// `--dry-run`: the create-user request of every valid row, printed as the operation
/// commands print theirs; nothing is sent (not even the listing of who is there).
fn dry_run(matches: &clap::ArgMatches, rows: &[Row]) -> Result<(), CliError> {
    let base_url = crate::config::dry_run_base_url(matches)?;
    for row in rows.iter().filter(|row| row.problem.is_none()) {
        if let Ok(user) = create_user_of(&row.fields) {
            let request = roomchat::wire::create_user(&user)?;
            crate::output::print_dry_run(&request, &base_url, false)?;
        }
    }
    Ok(())
}
