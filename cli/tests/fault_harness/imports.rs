//! `roomchat import users` schedules: a file of new users, users already there, identifiers
//! a deactivated user holds, repeated identifiers and bad rows; runs killed or met by faults
//! on the creates (an answer cut off after the user was made, a lost answer, a closed
//! connection, 5xx, 429) and on the lookups, sometimes two at once; then a final run without
//! faults. Every result file a run wrote must agree with the emulator's users, and in the end
//! nobody is created twice and nobody is missing.

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use rand::seq::{IndexedRandom, SliceRandom};
use rand::RngExt;
use roomchat::{Client, RateLimitConfig, RawRequest};
use roomchat_emulator::{Emulator, Fault, FaultAction};
use serde_json::{json, Map, Value};

use crate::cases::CaseRng;
use crate::process::{self, Ran, Stop};

const CREATE: &str = "/consumer/api/v1/user";
const LISTING: &str = "/consumer/api/v2/users";
const LOOKUP: &str = "/consumer/api/v2/user/*";
/// `--create-timeout`: a create answered later is an unknown outcome (checked by a lookup).
const CREATE_TIMEOUT_S: f64 = 0.3;
const RUN_LIMIT: Duration = Duration::from_secs(30);

/// What a row is, and so what its result must be.
#[derive(Debug, Clone, PartialEq)]
enum Class {
    /// A new user: `created` (or `already there` once an earlier run created it).
    Fresh,
    /// A user there before the import: `already there`.
    Present,
    /// An identifier a deactivated user holds: `failed`, the reason saying so.
    Deactivated,
    /// The identifier of an earlier line: `failed`.
    Repeated,
    /// Not a valid user: `failed`, never created.
    Bad(&'static str),
}

struct Row {
    /// The file's line it is on.
    line: usize,
    uid: Option<String>,
    fields: Map<String, Value>,
    class: Class,
    /// The text of a JSON-lines row that is not JSON at all.
    raw: Option<String>,
}

#[derive(Debug, Clone, Copy)]
enum ImportFault {
    /// The create takes effect, its answer is cut off (item 12).
    CutAfterEffect,
    /// The create takes effect, its answer comes after `--create-timeout`.
    LostAnswer,
    Closed,
    ServerError,
    RateLimited,
    /// The users' listing (the first step) fails once.
    ListingError,
    /// A lookup (the check of an unknown outcome) fails once.
    LookupError,
}

struct ImportRun {
    /// SIGKILL once this many creates arrived (then within 3 ms).
    kill_after: Option<u64>,
    /// The first this many creates go through untouched.
    skip: u32,
    faults: Vec<(ImportFault, u32)>,
    /// Two runs of the same file at once (their own result files).
    together: bool,
}

pub struct Plan {
    csv: bool,
    fresh: usize,
    present: usize,
    deactivated: usize,
    repeated: usize,
    bad: usize,
    jobs: u16,
    runs: Vec<ImportRun>,
}

impl Plan {
    pub fn draw(rng: &mut CaseRng) -> Plan {
        let faults = [
            ImportFault::CutAfterEffect,
            ImportFault::CutAfterEffect,
            ImportFault::LostAnswer,
            ImportFault::Closed,
            ImportFault::ServerError,
            ImportFault::RateLimited,
            ImportFault::ListingError,
            ImportFault::LookupError,
        ];
        // Mostly one faulted run or more: the faults are what most cases are about.
        let runs = (0..*[0, 1, 1, 2, 3].choose(rng).expect("runs"))
            .map(|k| ImportRun {
                kill_after: rng.random_bool(0.35).then(|| rng.random_range(0..=30)),
                skip: rng.random_range(0..=6),
                // The first run meets faults: later ones find most users created.
                faults: (0..rng.random_range(usize::from(k == 0)..=3))
                    .map(|_| {
                        (
                            *faults.choose(rng).expect("faults"),
                            rng.random_range(1..=2),
                        )
                    })
                    .collect(),
                together: k == 0 && rng.random_bool(0.15),
            })
            .collect();
        Plan {
            csv: rng.random_bool(0.5),
            fresh: rng.random_range(3..=40),
            present: rng.random_range(0..=4),
            deactivated: rng.random_range(0..=3),
            repeated: rng.random_range(0..=2),
            bad: rng.random_range(0..=4),
            jobs: *[1, 2, 4, 8].choose(rng).expect("jobs"),
            runs,
        }
    }

    pub fn describe(&self) -> String {
        let runs: Vec<String> = self
            .runs
            .iter()
            .map(|r| {
                let mut parts = Vec::new();
                if r.together {
                    parts.push("two at once".to_owned());
                }
                if let Some(n) = r.kill_after {
                    parts.push(format!("kill -9 after {n} creates"));
                }
                if !r.faults.is_empty() {
                    parts.push(format!(
                        "after {} creates: {}",
                        r.skip,
                        r.faults
                            .iter()
                            .map(|(f, n)| format!("{f:?} x{n}"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ));
                }
                if parts.is_empty() {
                    parts.push("plain".into());
                }
                format!("[{}]", parts.join(", "))
            })
            .collect();
        format!(
            "import of a {} file: {} new, {} there already, {} held by deactivated users, {} repeated, {} bad; -j {}; runs {} then a final run",
            if self.csv { "CSV" } else { "JSON-lines" },
            self.fresh,
            self.present,
            self.deactivated,
            self.repeated,
            self.bad,
            self.jobs,
            if runs.is_empty() { "none".into() } else { runs.join(" ") }
        )
    }

    /// The rows, in the file's order.
    fn rows(&self, rng: &mut CaseRng) -> Vec<Row> {
        let mut rows = Vec::new();
        let user = |uid: &str, name: String| {
            let mut fields = Map::new();
            fields.insert("username".into(), json!(name));
            fields.insert("uniqueUserIdentifier".into(), json!(uid));
            fields
        };
        for k in 0..self.fresh {
            let uid = format!("new-{k}");
            let mut fields = user(&uid, format!("New {k} Zoë"));
            match k % 4 {
                1 => {
                    fields.insert("email".into(), json!(format!("new{k}@example.com")));
                }
                2 => {
                    fields.insert("isModerator".into(), json!(true));
                    fields.insert("chatRoom".into(), json!("lobby"));
                }
                3 => {
                    fields.insert("meta".into(), json!({"plan": "gold", "n": k}));
                }
                _ => {}
            }
            rows.push((Some(uid), fields, Class::Fresh, None));
        }
        for (count, prefix, class) in [
            (self.present, "there", Class::Present),
            (self.deactivated, "gone", Class::Deactivated),
        ] {
            for k in 0..count {
                let uid = format!("{prefix}-{k}");
                let fields = user(&uid, format!("{prefix} {k}"));
                rows.push((Some(uid), fields, class.clone(), None));
            }
        }
        for k in 0..self.bad {
            let uid = format!("bad-{k}");
            let mut fields = user(&uid, format!("Bad {k}"));
            let mut raw = None;
            let why = match k % 5 {
                0 => {
                    fields.remove("username");
                    "no username"
                }
                1 => {
                    fields.remove("uniqueUserIdentifier");
                    "no uniqueUserIdentifier"
                }
                2 => {
                    fields.insert("isModerator".into(), json!("maybe"));
                    "isModerator maybe"
                }
                3 => {
                    fields.insert("chatRoom".into(), json!("lobby"));
                    "chatRoom without isModerator"
                }
                _ if self.csv => {
                    fields.insert("meta".into(), json!("{not json"));
                    "meta not JSON"
                }
                _ => {
                    raw = Some(format!("{{\"username\": \"Bad {k}\", not json"));
                    "a line that is not JSON"
                }
            };
            let uid = fields.contains_key("uniqueUserIdentifier").then_some(uid);
            rows.push((uid, fields, Class::Bad(why), raw));
        }
        rows.shuffle(rng);
        // Repeats come after the line they repeat.
        for k in 0..self.repeated {
            let firsts: Vec<usize> = (0..rows.len())
                .filter(|&i| matches!(rows[i].2, Class::Fresh | Class::Present))
                .collect();
            let Some(&of) = firsts.choose(rng) else { break };
            let uid = rows[of].0.clone().expect("a fresh row has one");
            let at = rng.random_range(of + 1..=rows.len());
            rows.insert(
                at,
                (
                    Some(uid.clone()),
                    user(&uid, format!("Again {k}")),
                    Class::Repeated,
                    None,
                ),
            );
        }
        let first_line = if self.csv { 2 } else { 1 };
        rows.into_iter()
            .enumerate()
            .map(|(i, (uid, fields, class, raw))| Row {
                line: first_line + i,
                uid,
                fields,
                class,
                raw,
            })
            .collect()
    }

    pub fn run(&self, rng: &mut CaseRng, emu: &Emulator, dir: &Path) -> Result<(), String> {
        emu.create_room(json!({"roomId": "lobby", "name": "Lobby"}));
        let client = Client::builder(emu.private_key())
            .base_url(emu.base_url())
            .rate_limit(RateLimitConfig::new(1_000_000, Duration::from_secs(60)))
            .build()
            .expect("a client");
        let call = |method: &str, path: &str, body: Value| {
            client
                .raw_request(&RawRequest::new(method, path).body(body))
                .unwrap_or_else(|e| panic!("{method} {path}: {e}"));
        };
        for k in 0..self.present {
            call(
                "POST",
                CREATE,
                json!({"username": format!("Was there {k}"), "uniqueUserIdentifier": format!("there-{k}")}),
            );
        }
        for k in 0..self.deactivated {
            let uid = format!("gone-{k}");
            call(
                "POST",
                CREATE,
                json!({"username": format!("Gone {k}"), "uniqueUserIdentifier": uid}),
            );
            call(
                "DELETE",
                "/consumer/api/v2/user/deactivate",
                json!({"uniqueUserIdentifier": uid}),
            );
        }
        let users_before_import = emu.users().len();
        let rows = self.rows(rng);
        let input = dir.join(if self.csv { "users.csv" } else { "users.jsonl" });
        write_rows(&input, &rows, self.csv);

        let args = |results: &str| -> Vec<String> {
            [
                "import",
                "users",
                &input.display().to_string(),
                "--results",
                results,
                "-j",
                &self.jobs.to_string(),
                "--create-timeout",
                &CREATE_TIMEOUT_S.to_string(),
                "--quiet",
            ]
            .map(str::to_owned)
            .to_vec()
        };
        // What every run broke (all are told: one case may show several defects).
        let mut problems: Vec<String> = Vec::new();
        // The creates that arrived since the journal was cleared.
        let creates = || {
            emu.journal()
                .iter()
                .filter(|e| e.method == "POST" && e.path == CREATE)
                .count() as u64
        };
        for (k, run) in self.runs.iter().enumerate() {
            emu.clear_faults();
            emu.clear_journal();
            add_faults(emu, run);
            let before = Users::of(emu);
            let names: Vec<String> = if run.together {
                vec![format!("results-{k}-a.csv"), format!("results-{k}-b.csv")]
            } else {
                vec![format!("results-{k}.csv")]
            };
            let stop = match run.kill_after {
                Some(at) => Stop::Progress {
                    progress: &creates,
                    at,
                    then: Duration::from_micros(rng.random_range(0..3_000)),
                    fallback: Duration::from_secs(10),
                },
                None => Stop::Never,
            };
            let ran: Vec<Ran> = std::thread::scope(|scope| {
                let handles: Vec<_> = names
                    .iter()
                    .enumerate()
                    .map(|(j, name)| {
                        let cmd = process::roomchat(emu, dir, &args(name));
                        let stop = if j == 0 { stop } else { Stop::Never };
                        scope.spawn(move || process::run(cmd, &stop, RUN_LIMIT, None))
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().expect("a run"))
                    .collect()
            });
            emu.clear_faults();
            let after = Users::of(emu);
            for (r, name) in ran.iter().zip(&names) {
                let what = format!("run {} ({})", k + 1, self.runs_describe(k));
                let garbled = run
                    .faults
                    .iter()
                    .any(|(f, _)| matches!(f, ImportFault::CutAfterEffect));
                let conditions = Conditions {
                    together: run.together,
                    garbled,
                };
                if let Err(e) = check_run(r, &dir.join(name), &rows, &before, &after, conditions) {
                    problems.push(format!("{what}: {e}"));
                }
            }
        }

        let before = Users::of(emu);
        let ran = process::run(
            process::roomchat(emu, dir, &args("results-final.csv")),
            &Stop::Never,
            RUN_LIMIT,
            None,
        );
        let after = Users::of(emu);
        let results = dir.join("results-final.csv");
        if !results.exists() {
            problems.push(format!(
                "the final run, without faults: {}, no result file: {}",
                ran.summary(),
                process::tail(&ran.stderr)
            ));
        } else if let Err(e) = check_run(
            &ran,
            &results,
            &rows,
            &before,
            &after,
            Conditions::default(),
        ) {
            problems.push(format!("the final run ({}): {e}", ran.summary()));
        }

        // Nobody missing, nobody twice, nobody else.
        let all = emu.users();
        let holders = |uid: &str| -> Vec<&Value> {
            all.iter()
                .filter(|u| u["uniqueUserIdentifier"] == uid)
                .collect()
        };
        for row in &rows {
            let Some(uid) = &row.uid else { continue };
            let found = holders(uid);
            let active = found.iter().filter(|u| u["active"] == true).count();
            let fine = match row.class {
                Class::Fresh | Class::Present | Class::Repeated => found.len() == 1 && active == 1,
                Class::Deactivated => found.len() == 1 && active == 0,
                Class::Bad(_) => found.is_empty(),
            };
            if !fine {
                problems.push(format!(
                    "after the final run, line {} ({uid}, {:?}) has {} user(s), {active} active",
                    row.line,
                    row.class,
                    found.len()
                ));
                break;
            }
        }
        let fresh = rows.iter().filter(|r| r.class == Class::Fresh).count();
        if all.len() != users_before_import + fresh {
            problems.push(format!(
                "the emulator has {} users: {users_before_import} before the import and {fresh} new ones in the file",
                all.len()
            ));
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join(" || "))
        }
    }

    fn runs_describe(&self, k: usize) -> String {
        let run = &self.runs[k];
        let mut parts = Vec::new();
        if let Some(n) = run.kill_after {
            parts.push(format!("kill -9 after {n} creates"));
        }
        parts.extend(run.faults.iter().map(|(f, n)| format!("{f:?} x{n}")));
        if parts.is_empty() {
            "plain".into()
        } else {
            parts.join(", ")
        }
    }
}

/// The faults of one run: the first `skip` creates untouched, then each fault in turn.
fn add_faults(emu: &Emulator, run: &ImportRun) {
    let respond = |status: u16, retry_after: Option<&str>| FaultAction::Respond {
        status,
        headers: retry_after
            .map(|r| vec![("Retry-After".to_owned(), r.to_owned())])
            .unwrap_or_default(),
        body: if status == 429 {
            r#"{"message":"Too many requests"}"#.into()
        } else {
            r#"{"message":"Internal server error occurred","eventId":"ev-harness"}"#.into()
        },
        content_type: None,
    };
    let fault = |method: &str, path: &str, times: u32, action: FaultAction| Fault {
        method: Some(method.into()),
        path: path.into(),
        times,
        action,
    };
    if run.skip > 0 && !run.faults.is_empty() {
        emu.add_fault(fault(
            "POST",
            CREATE,
            run.skip,
            FaultAction::Delay(Duration::ZERO),
        ));
    }
    for &(kind, times) in &run.faults {
        emu.add_fault(match kind {
            ImportFault::CutAfterEffect => {
                fault("POST", CREATE, times, FaultAction::TruncatedAfterEffect)
            }
            ImportFault::LostAnswer => fault(
                "POST",
                CREATE,
                times,
                FaultAction::Delay(Duration::from_secs_f64(CREATE_TIMEOUT_S + 0.3)),
            ),
            ImportFault::Closed => fault("POST", CREATE, times, FaultAction::CloseConnection),
            ImportFault::ServerError => fault("POST", CREATE, times, respond(500, None)),
            ImportFault::RateLimited => fault("POST", CREATE, times, respond(429, Some("0"))),
            // Once: the client's own retries (two) get the answer.
            ImportFault::ListingError => fault("GET", LISTING, 1, respond(500, None)),
            ImportFault::LookupError => fault("GET", LOOKUP, 1, respond(503, None)),
        });
    }
}

/// The input file.
fn write_rows(path: &Path, rows: &[Row], csv: bool) {
    if csv {
        let columns = [
            "username",
            "uniqueUserIdentifier",
            "email",
            "isModerator",
            "chatRoom",
            "meta",
        ];
        let mut writer = csv::Writer::from_path(path).expect("the input file");
        writer.write_record(columns).expect("written");
        for row in rows {
            let cells: Vec<String> = columns
                .iter()
                .map(|c| match row.fields.get(*c) {
                    None => String::new(),
                    Some(Value::String(s)) => s.clone(),
                    Some(v) => v.to_string(),
                })
                .collect();
            writer.write_record(&cells).expect("written");
        }
        writer.flush().expect("written");
    } else {
        let text: String = rows
            .iter()
            .map(|row| match &row.raw {
                Some(raw) => format!("{raw}\n"),
                None => format!("{}\n", Value::Object(row.fields.clone())),
            })
            .collect();
        std::fs::write(path, text).expect("the input file");
    }
}

/// The emulator's users by identifier: (userId, active), every user, deactivated ones too.
struct Users(HashMap<String, Vec<(String, bool)>>);

impl Users {
    fn of(emu: &Emulator) -> Users {
        let mut map: HashMap<String, Vec<(String, bool)>> = HashMap::new();
        for u in emu.users() {
            if let Some(uid) = u["uniqueUserIdentifier"].as_str() {
                map.entry(uid.to_owned()).or_default().push((
                    u["userId"].as_str().unwrap_or_default().to_owned(),
                    u["active"] == true,
                ));
            }
        }
        Users(map)
    }

    /// The active user holding `uid`, if any.
    fn active(&self, uid: &str) -> Option<&str> {
        self.0
            .get(uid)?
            .iter()
            .find(|(_, active)| *active)
            .map(|(id, _)| id.as_str())
    }
}

/// Checks one run: no panic, no hang, and its result file (a killed run may have written none;
/// a run stopped at an error before any row neither, if it created nobody).
fn check_run(
    ran: &Ran,
    results: &Path,
    rows: &[Row],
    before: &Users,
    after: &Users,
    conditions: Conditions,
) -> Result<(), String> {
    ran.broken("it")?;
    if !results.exists() {
        if ran.killed || before.0 == after.0 {
            return Ok(());
        }
        return Err(format!(
            "{}, no result file, yet users were created: {}",
            ran.summary(),
            process::tail(&ran.stderr)
        ));
    }
    check_results(results, rows, before, after, conditions)
}

/// What else a run met, which the result file's check allows for.
#[derive(Debug, Clone, Copy, Default)]
struct Conditions {
    /// Another run went on at the same time: an identifier it created is `already there` here.
    together: bool,
    /// Answers were cut off: a refusal's reason may be unreadable (a deactivated user's row is
    /// still `failed`, its reason may not say why).
    garbled: bool,
}

/// Checks a result file against the rows and the emulator's users before and after its run.
/// (Two runs at once may both say `created` of one user: one created it, the other's create
/// was lost and its lookup found the user; that nobody is created twice is the emulator's
/// count, checked at the end.)
fn check_results(
    path: &Path,
    rows: &[Row],
    before: &Users,
    after: &Users,
    run: Conditions,
) -> Result<(), String> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut reader = csv::Reader::from_path(path).map_err(|e| format!("{name}: {e}"))?;
    let headers = reader
        .headers()
        .map_err(|e| format!("{name}: {e}"))?
        .clone();
    let column = |title: &str| {
        headers
            .iter()
            .position(|h| h == title)
            .ok_or_else(|| format!("{name} has no column {title}"))
    };
    let (line_at, result_at, id_at, reason_at) = (
        column("line")?,
        column("result")?,
        column("userId")?,
        column("reason")?,
    );
    let records = process::csv_rows(&mut reader, &name, rows.len())?;
    // The disagreements, one example of each kind (a row's class and result) shown.
    let mut wrongs: Vec<((String, String), String)> = Vec::new();
    for (row, record) in rows.iter().zip(&records) {
        let line = record.get(line_at).unwrap_or_default();
        if line != row.line.to_string() {
            return Err(format!(
                "{name}: the row of line {} says line {line:?}",
                row.line
            ));
        }
        let result = record.get(result_at).unwrap_or_default();
        let user_id = record.get(id_at).unwrap_or_default();
        let reason = record.get(reason_at).unwrap_or_default();
        let uid = row.uid.as_deref().unwrap_or("");
        let said = format!(
            "line {} ({uid}, {:?}) is {result:?}{}",
            row.line,
            row.class,
            if reason.is_empty() {
                String::new()
            } else {
                format!(" ({})", process::shorten(reason, 200))
            }
        );
        let (then, now) = (before.active(uid), after.active(uid));
        let wrong = match &row.class {
            Class::Bad(_) | Class::Repeated => (result != "failed").then(|| "expected failed".to_owned()),
            Class::Deactivated => (result != "failed"
                || !(run.garbled || reason.to_lowercase().contains("deactivated")))
                .then(|| "expected failed, its reason saying the identifier's user is deactivated".to_owned()),
            Class::Fresh | Class::Present => match result {
                "created" => {
                    if then.is_some() {
                        Some(format!("the user was there before this run ({})", then.unwrap_or_default()))
                    } else if now != Some(user_id) {
                        Some(format!("the emulator's active user with it is {now:?}, not {user_id:?}"))
                    } else {
                        None
                    }
                }
                "already there" => {
                    let there = if run.together { now } else { then };
                    (there != Some(user_id)).then(|| {
                        format!("the emulator's active user with it was {there:?} (before: {then:?}, after: {now:?})")
                    })
                }
                "failed" => now.map(|id| {
                    format!("yet the emulator has an active user with it ({id}; before this run: {then:?})")
                }),
                other => Some(format!("{other:?} is no result")),
            },
        };
        if let Some(wrong) = wrong {
            let kind = (format!("{:?}", row.class), result.to_owned());
            wrongs.push((kind, format!("{said}: {wrong}")));
        }
    }
    if wrongs.is_empty() {
        return Ok(());
    }
    let mut kinds: Vec<&(String, String)> = Vec::new();
    let mut examples: Vec<&str> = Vec::new();
    for (kind, text) in &wrongs {
        if !kinds.contains(&kind) {
            kinds.push(kind);
            examples.push(text);
        }
    }
    Err(format!(
        "{name}: {} row(s) disagree with the emulator's users; one of each kind: {}",
        wrongs.len(),
        examples.join("; ")
    ))
}
