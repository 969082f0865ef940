//! `roomchat import users FILE`: users from CSV or JSON lines, each created once.
//!
//! A user is recognised by its `uniqueUserIdentifier` (required in every row): the account's
//! users are listed first, and a row whose identifier is there already is not sent. A create
//! whose outcome is unknown (a timeout or a broken connection after the request may have
//! arrived, a 5xx) is checked by getting the user by its identifier before it is sent again;
//! a create the service refuses because the identifier is in use is checked the same way.
//! So running the same file again, or after a crash, creates nobody twice.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, IsTerminal};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use clap::{Arg, ArgAction};
use roomchat::{CallOptions, Client, CreateUser, ErrorKind};
use serde_json::{Map, Value};

use crate::error::CliError;

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
                     create whose outcome is unknown is checked before it is sent again.",
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
                        .help("The result file (CSV: line, uniqueUserIdentifier, username, result, userId, reason); default FILE.results.csv"),
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

/// What became of one row.
#[derive(Debug, Clone, PartialEq)]
enum Outcome {
    Created { user_id: String, note: String },
    AlreadyThere { user_id: String },
    Failed { reason: String },
}

impl Outcome {
    fn name(&self) -> &'static str {
        match self {
            Outcome::Created { .. } => "created",
            Outcome::AlreadyThere { .. } => "already there",
            Outcome::Failed { .. } => "failed",
        }
    }
}

/// One row of the file.
struct Row {
    line: usize,
    fields: Result<Map<String, Value>, String>,
}

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

    if crate::config::dry_run(matches) {
        return dry_run(matches, &rows);
    }

    let client = crate::config::client(matches)?;
    let create_client = match create_timeout {
        Some(t) => client.with_options(CallOptions::new().timeout(t))?,
        None => client.clone(),
    };
    let started = Instant::now();

    // Who is there already, by identifier (the listing shows active users).
    let mut existing: HashMap<String, String> = HashMap::new();
    for user in client.users_with_page_size(200) {
        let user = user?;
        if let (Some(uid), Some(id)) = (user.unique_user_identifier, user.user_id.or(user.id)) {
            existing.insert(uid, id);
        }
    }

    let progress = Progress::new(quiet, rows.len() as u64);
    let outcomes: Vec<Mutex<Option<Outcome>>> = rows.iter().map(|_| Mutex::new(None)).collect();
    // The first row of each identifier: a later one is a duplicate within the file.
    let mut first_line: HashMap<String, usize> = HashMap::new();
    let mut work = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        let outcome = match &row.fields {
            Err(reason) => Some(Outcome::Failed {
                reason: reason.clone(),
            }),
            Ok(fields) => match fields.get("uniqueUserIdentifier") {
                Some(Value::String(uid)) if !uid.is_empty() => {
                    if let Some(line) = first_line.get(uid) {
                        Some(Outcome::Failed {
                            reason: format!("the same uniqueUserIdentifier as line {line}"),
                        })
                    } else {
                        first_line.insert(uid.clone(), row.line);
                        existing.get(uid).map(|id| Outcome::AlreadyThere {
                            user_id: id.clone(),
                        })
                    }
                }
                _ => Some(Outcome::Failed {
                    reason: "no uniqueUserIdentifier: a user is recognised by it on a second run, so every row needs one".into(),
                }),
            },
        };
        match outcome {
            Some(o) => {
                *outcomes[i].lock().expect("outcome") = Some(o);
                progress.step();
            }
            None => work.push(i),
        }
    }

    let next = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..jobs.min(work.len()) {
            scope.spawn(|| loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some(&i) = work.get(k) else { break };
                let fields = rows[i].fields.as_ref().expect("only good rows are work");
                let outcome = create_once(&client, &create_client, fields);
                *outcomes[i].lock().expect("outcome") = Some(outcome);
                progress.step();
            });
        }
    });
    progress.finish();

    let outcomes: Vec<Outcome> = outcomes
        .into_iter()
        .map(|o| o.into_inner().expect("outcome").expect("every row has one"))
        .collect();
    write_results(&results_path, &rows, &outcomes)?;
    let count = |name: &str| outcomes.iter().filter(|o| o.name() == name).count();
    let (created, there, failed) = (count("created"), count("already there"), count("failed"));
    if !quiet {
        eprintln!(
            "roomchat import users: {} rows: {created} created, {there} already there, {failed} failed, {:.2} s; results in {}",
            rows.len(),
            started.elapsed().as_secs_f64(),
            results_path.display()
        );
    }
    if failed > 0 {
        return Err(CliError::Partial(format!(
            "{failed} of {} users failed (their reasons are in {})",
            rows.len(),
            results_path.display()
        )));
    }
    Ok(())
}

/// Creates the user of `fields` unless it is there, checking an unknown outcome before
/// sending again.
fn create_once(client: &Client, create_client: &Client, fields: &Map<String, Value>) -> Outcome {
    let uid = fields["uniqueUserIdentifier"]
        .as_str()
        .expect("checked before")
        .to_owned();
    let user = match create_user_of(fields) {
        Ok(u) => u,
        Err(reason) => return Outcome::Failed { reason },
    };
    let mut unknown = 0;
    loop {
        let error = match create_client.create_user(&user) {
            Ok(created) => {
                return Outcome::Created {
                    user_id: created.user_id,
                    note: if unknown > 0 {
                        format!("sent again after {unknown} unknown outcome(s)")
                    } else {
                        String::new()
                    },
                }
            }
            Err(e) => e,
        };
        let outcome_unknown = matches!(
            error.kind(),
            ErrorKind::Timeout | ErrorKind::Connection | ErrorKind::ServerError
        );
        let in_use = error.kind() == ErrorKind::InvalidRequest
            && error.message().contains("uniqueUserIdentifier");
        if error.kind() == ErrorKind::RateLimited {
            // Refused before it was handled: nothing happened; wait as the budget says.
            let wait = error.retry_after().unwrap_or(Duration::from_secs(1));
            std::thread::sleep(wait.min(Duration::from_secs(60)));
            continue;
        }
        if !outcome_unknown && !in_use {
            return Outcome::Failed {
                reason: error.to_string(),
            };
        }
        // Did it take effect? (A GET: the client retries it as a repeatable call.)
        match client.get_user(&uid) {
            Ok(profile) => {
                let user_id = profile.id.unwrap_or_default();
                return if in_use && unknown == 0 {
                    Outcome::AlreadyThere { user_id }
                } else {
                    Outcome::Created {
                        user_id,
                        note: format!(
                            "confirmed after an unknown outcome ({})",
                            error.kind().name()
                        ),
                    }
                };
            }
            Err(e) if e.kind() == ErrorKind::UserNotFound || e.kind() == ErrorKind::NotFound => {
                if in_use {
                    // In use, yet not found: a deactivated user holds the identifier.
                    return Outcome::Failed {
                        reason: format!("{error} (no active user has it: deactivated?)"),
                    };
                }
                unknown += 1;
                if unknown >= 5 {
                    return Outcome::Failed {
                        reason: format!("not created after {unknown} tries: {error}"),
                    };
                }
            }
            Err(e) => {
                return Outcome::Failed {
                    reason: format!("outcome unknown ({error}), and the check failed: {e}"),
                }
            }
        }
    }
}

/// The create-user request of a row's fields.
fn create_user_of(fields: &Map<String, Value>) -> Result<CreateUser, String> {
    let username = match fields.get("username") {
        Some(Value::String(u)) if !u.trim().is_empty() => u.clone(),
        _ => return Err("no username".into()),
    };
    let moderator = match fields.get("isModerator") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => return Err(format!("isModerator should be true or false, not {other}")),
    };
    let mut user = match (moderator, fields.get("chatRoom")) {
        (true, Some(Value::String(room))) => CreateUser::room_moderator(username, room.clone()),
        (true, None | Some(Value::Null)) => CreateUser::moderator(username),
        (false, None | Some(Value::Null)) => CreateUser::regular(username),
        (false, Some(_)) => {
            return Err(
                "chatRoom is given without isModerator: true (it names a moderator's room)".into(),
            )
        }
        (true, Some(other)) => return Err(format!("chatRoom should be text, not {other}")),
    };
    for (name, value) in fields {
        if !matches!(name.as_str(), "username" | "isModerator" | "chatRoom") && !value.is_null() {
            user = user.field(name.clone(), value.clone());
        }
    }
    Ok(user)
}

fn io_error(path: &Path, source: std::io::Error) -> CliError {
    CliError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// CSV with a header row; empty cells are absent fields, `isModerator` a boolean, `meta` JSON.
fn read_csv(path: &Path) -> Result<Vec<Row>, CliError> {
    let file = std::fs::File::open(path).map_err(|e| io_error(path, e))?;
    let mut reader = csv::ReaderBuilder::new()
        .flexible(true)
        .trim(csv::Trim::Headers)
        .from_reader(BufReader::new(file));
    let headers = reader
        .headers()
        .map_err(|e| CliError::Usage(format!("{}: {e}", path.display())))?
        .clone();
    if !headers.iter().any(|h| h == "username") {
        return Err(CliError::Usage(format!(
            "{}: the header row names no username column (it has: {})",
            path.display(),
            headers.iter().collect::<Vec<_>>().join(", ")
        )));
    }
    let mut rows = Vec::new();
    for (i, record) in reader.records().enumerate() {
        let line = i + 2;
        let fields = match record {
            Err(e) => Err(format!("line {line}: {e}")),
            Ok(record) => {
                let mut fields = Map::new();
                let mut bad = None;
                for (name, cell) in headers.iter().zip(record.iter()) {
                    if cell.is_empty() || name.is_empty() {
                        continue;
                    }
                    let value = match name {
                        "isModerator" => match cell.trim().to_ascii_lowercase().as_str() {
                            "true" | "yes" | "1" | "on" => Value::Bool(true),
                            "false" | "no" | "0" | "off" => Value::Bool(false),
                            _ => {
                                bad = Some(format!("isModerator {cell:?}: not true or false"));
                                break;
                            }
                        },
                        "meta" => match serde_json::from_str(cell) {
                            Ok(v) => v,
                            Err(e) => {
                                bad = Some(format!("meta is not JSON: {e}"));
                                break;
                            }
                        },
                        _ => Value::String(cell.to_owned()),
                    };
                    fields.insert(name.to_owned(), value);
                }
                match bad {
                    Some(reason) => Err(reason),
                    None => Ok(fields),
                }
            }
        };
        rows.push(Row { line, fields });
    }
    Ok(rows)
}

/// One JSON object a line (blank lines skipped).
fn read_jsonl(path: &Path) -> Result<Vec<Row>, CliError> {
    let file = std::fs::File::open(path).map_err(|e| io_error(path, e))?;
    let mut rows = Vec::new();
    for (i, line) in BufReader::new(file).lines().enumerate() {
        let line_no = i + 1;
        let text = line.map_err(|e| io_error(path, e))?;
        if text.trim().is_empty() {
            continue;
        }
        let fields = match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(map)) => Ok(map),
            Ok(_) => Err("not a JSON object".into()),
            Err(e) => Err(format!("not JSON: {e}")),
        };
        rows.push(Row {
            line: line_no,
            fields,
        });
    }
    Ok(rows)
}

/// The result file, in the input's order, written atomically. No access token in it.
fn write_results(path: &Path, rows: &[Row], outcomes: &[Outcome]) -> Result<(), CliError> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    let text = |fields: &Result<Map<String, Value>, String>, key: &str| {
        fields
            .as_ref()
            .ok()
            .and_then(|f| f.get(key))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    let csv_error = |e: csv::Error| CliError::Usage(format!("{}: {e}", path.display()));
    writer
        .write_record([
            "line",
            "uniqueUserIdentifier",
            "username",
            "result",
            "userId",
            "reason",
        ])
        .map_err(csv_error)?;
    for (row, outcome) in rows.iter().zip(outcomes) {
        let (user_id, reason) = match outcome {
            Outcome::Created { user_id, note } => (user_id.as_str(), note.as_str()),
            Outcome::AlreadyThere { user_id } => (user_id.as_str(), ""),
            Outcome::Failed { reason } => ("", reason.as_str()),
        };
        writer
            .write_record([
                row.line.to_string().as_str(),
                &text(&row.fields, "uniqueUserIdentifier"),
                &text(&row.fields, "username"),
                outcome.name(),
                user_id,
                reason,
            ])
            .map_err(csv_error)?;
    }
    let bytes = writer
        .into_inner()
        .map_err(|e| CliError::Usage(format!("{}: {e}", path.display())))?;
    let mut tmp_name = path.file_name().unwrap_or_default().to_os_string();
    tmp_name.push(".tmp");
    let tmp = path.with_file_name(tmp_name);
    std::fs::write(&tmp, bytes)
        .and_then(|()| std::fs::File::open(&tmp)?.sync_all())
        .map_err(|e| io_error(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| io_error(path, e))
}

/// A bar on a terminal, a line every 2 s otherwise, nothing when quiet.
struct Progress {
    bar: Option<indicatif::ProgressBar>,
    plain: bool,
    total: u64,
    done: AtomicUsize,
    started: Instant,
    last: Mutex<Instant>,
}

impl Progress {
    fn new(quiet: bool, total: u64) -> Progress {
        let terminal = !quiet && std::io::stderr().is_terminal();
        let bar = terminal.then(|| {
            let bar = indicatif::ProgressBar::with_draw_target(
                Some(total),
                indicatif::ProgressDrawTarget::stderr_with_hz(8),
            );
            bar.set_style(
                indicatif::ProgressStyle::with_template(
                    "import users [{bar:32.cyan/blue}] {human_pos}/{human_len}  {per_sec}  ETA {eta}",
                )
                .expect("a valid template")
                .progress_chars("=> "),
            );
            bar
        });
        Progress {
            bar,
            plain: !quiet && !terminal,
            total,
            done: AtomicUsize::new(0),
            started: Instant::now(),
            last: Mutex::new(Instant::now()),
        }
    }

    fn step(&self) {
        let done = self.done.fetch_add(1, Ordering::Relaxed) + 1;
        if let Some(bar) = &self.bar {
            bar.inc(1);
        } else if self.plain {
            let mut last = self.last.lock().expect("progress");
            if last.elapsed() >= Duration::from_secs(2) {
                *last = Instant::now();
                eprintln!(
                    "roomchat import users: {done}/{} rows, {:.0} rows/s",
                    self.total,
                    done as f64 / self.started.elapsed().as_secs_f64().max(1e-6)
                );
            }
        }
    }

    fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// `--dry-run`: the create-user request of every valid row, printed as the operation
/// commands print theirs; nothing is sent (not even the listing of who is there).
fn dry_run(matches: &clap::ArgMatches, rows: &[Row]) -> Result<(), CliError> {
    let base_url = crate::config::base_url(matches)?.unwrap_or_else(|| "https://BASE_URL".into());
    for row in rows {
        if let Ok(fields) = &row.fields {
            if let Ok(user) = create_user_of(fields) {
                let request = roomchat::wire::create_user(&user)?;
                crate::output::print_dry_run(&request, &base_url, false)?;
            }
        }
    }
    Ok(())
}
