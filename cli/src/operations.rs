//! One subcommand per declared operation, built from core's catalog at run time.
//!
//! Nothing here names an operation: the command, its arguments, their types,
//! limits and choices, its help (summary, request, retry class, errors) and
//! whether it pages all follow from [`OperationSpec`]. The request is built by
//! core ([`Operation::build`]: the same checks as every SDK), sent and decoded
//! as [`roomchat::Client::call_operation`] does it (see [`call_as_sent`]).

use std::io::{self, Write};

use clap::builder::{BoolishValueParser, PossibleValuesParser};
use clap::{Arg, ArgAction, ArgGroup, ArgMatches, Command};
use roomchat::wire::{
    Operation, OperationSpec, Paging, ParamKind, ParamLocation, ParamSpec, RetryClass,
};
use roomchat::ErrorKind;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::error::{exit_code_of, CliError};
use crate::interrupt::Interrupts;
use crate::patience::Patience;
use crate::{config, output};

/// The family of an operation that declares none.
const NO_FAMILY: &str = "Other operations";

/// The command name of a snake_case operation or parameter name, in kebab case
/// (`create_chat_room` → `create-chat-room`, `uniqueUserIdentifier` → `unique-user-identifier`).
pub fn kebab(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 8);
    let mut previous_lower = false;
    for c in name.chars() {
        if c == '_' {
            out.push('-');
            previous_lower = false;
        } else if c.is_ascii_uppercase() {
            if previous_lower {
                out.push('-');
            }
            out.push(c.to_ascii_lowercase());
            previous_lower = false;
        } else {
            out.push(c);
            previous_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        }
    }
    out
}

/// Every declared operation (those core has a declaration of), in catalog order.
pub fn declared() -> impl Iterator<Item = (Operation, &'static OperationSpec)> {
    Operation::ALL
        .into_iter()
        .filter_map(|op| op.spec().map(|spec| (op, spec)))
}

/// The declared operation whose command is `command`.
pub fn by_command(command: &str) -> Option<(Operation, &'static OperationSpec)> {
    declared().find(|(_, spec)| kebab(spec.name) == command)
}

/// The families of the declared operations, in order of first appearance,
/// each with its operations' commands and summaries.
pub fn families() -> Vec<(&'static str, Vec<(String, &'static str)>)> {
    let mut families: Vec<(&'static str, Vec<(String, &'static str)>)> = Vec::new();
    for (_, spec) in declared() {
        let family = if spec.family.is_empty() {
            NO_FAMILY
        } else {
            spec.family
        };
        let entry = (kebab(spec.name), spec.summary);
        match families.iter_mut().find(|(f, _)| *f == family) {
            Some((_, ops)) => ops.push(entry),
            None => families.push((family, vec![entry])),
        }
    }
    families
}

/// The argument id of a parameter: its wire name under a prefix of its own,
/// so that no parameter can take the id of a flag of the command line's.
fn param_id(name: &str) -> String {
    format!("param.{name}")
}

/// The flags of the command line's own an operation's command has (besides the global ones).
const OWN_FLAGS: [&str; 8] = [
    "output",
    "all",
    "page-size",
    "max-items",
    "no-header",
    "extra",
    "help",
    "version",
];

/// The long flag of a parameter: its name in kebab case, or, should that be
/// a flag of the command line's own (`--output`, `--timeout`, …),
/// `--param-` and its name.
pub fn param_long(name: &str) -> String {
    let long = kebab(name);
    let global = config::global_args();
    let taken = OWN_FLAGS.contains(&long.as_str())
        || global.iter().any(|a| a.get_long() == Some(long.as_str()));
    if taken {
        format!("param-{long}")
    } else {
        long
    }
}

/// Whether the operation's listing pages by `limit` and `skip` parameters (`--all` then works).
fn pages(spec: &OperationSpec) -> bool {
    spec.pages != Paging::None && spec.param("limit").is_some() && spec.param("skip").is_some()
}

/// Whether a parameter is a positional argument: a path parameter the call must give.
fn positional(param: &ParamSpec) -> bool {
    param.location == ParamLocation::Path && param.default.is_none()
}

/// The subcommands of every declared operation.
pub fn commands() -> Vec<Command> {
    declared().map(|(_, spec)| command(spec)).collect()
}

fn command(spec: &'static OperationSpec) -> Command {
    let mut command = Command::new(kebab(spec.name))
        .about(spec.summary)
        .after_long_help(details(spec))
        .arg(output::output_arg());
    for param in spec.params {
        command = command.arg(param_arg(spec, param));
    }
    if spec.extra {
        command = command.arg(Arg::new("extra").long("extra").value_name("JSON").help(
            "Body fields the declaration does not type, sent as they are: a JSON object, or @FILE",
        ));
    }
    for (i, group) in spec.exactly_one.iter().enumerate() {
        command = command.group(
            ArgGroup::new(format!("exactly-one-{i}"))
                .args(group.iter().map(|name| param_id(name)))
                .required(true)
                .multiple(false),
        );
    }
    if pages(spec) {
        let limit = spec.param("limit");
        let mut page_size = Arg::new("page-size")
            .long("page-size")
            .value_name("N")
            .requires("all")
            .conflicts_with(param_id("limit"))
            .help("With --all: the items each request asks for (the limit)");
        page_size = page_size.value_parser(clap::value_parser!(u64).range(
            limit.and_then(|l| l.min).unwrap_or(1)..=limit.and_then(|l| l.max).unwrap_or(u64::MAX),
        ));
        command = command
            .arg(Arg::new("all").long("all").action(ArgAction::SetTrue).help(
                "Every item of the listing, page after page, as JSON lines (or CSV), from --skip",
            ))
            .arg(page_size)
            .arg(
                Arg::new("max-items")
                    .long("max-items")
                    .value_name("N")
                    .requires("all")
                    .value_parser(clap::value_parser!(u64))
                    .help("With --all: stop after this many items"),
            )
            .arg(
                Arg::new("no-header")
                    .long("no-header")
                    .action(ArgAction::SetTrue)
                    .help("With --output csv: no header row (to append a resumed run to the CSV the first began)"),
            );
    }
    command
}

/// The long help's end: the request, the retry class, the errors, paging.
fn details(spec: &OperationSpec) -> String {
    let key = match spec.auth {
        roomchat::RawAuth::PublicKey => "the public key (ROOMCHAT_PUBLIC_KEY)",
        _ => "the private key",
    };
    let mut text = format!(
        "Request: {} {} (authenticated by {key})\n",
        spec.method, spec.path
    );
    text.push_str(match spec.retry {
        RetryClass::Repeatable => {
            "Retry class: repeatable (sent again after a 5xx, a timeout or a lost answer)\n"
        }
        _ => "Retry class: never (not sent again once it may have reached the service, unless --retry-non-idempotent)\n",
    });
    if !spec.errors.is_empty() {
        text.push_str("Errors:\n");
        for error in spec.errors {
            text.push_str(&format!(
                "  {} (exit {}): {}\n",
                error.kind.name(),
                exit_code_of(error.kind),
                error.when
            ));
        }
    }
    if pages(spec) {
        text.push_str(
            "Paging: one page by default (--limit, --skip); --all streams every item as JSON lines \
             (or CSV), waiting out the rate limit (--max-retry-wait bounds a wait), --max-items \
             stops early, and an interrupted run prints the command to resume with.\n",
        );
    }
    for group in spec.exactly_one {
        let flags: Vec<String> = group
            .iter()
            .map(|n| format!("--{}", param_long(n)))
            .collect();
        text.push_str(&format!("Give exactly one of {}.\n", flags.join(", ")));
    }
    text
}

fn param_arg(spec: &OperationSpec, param: &'static ParamSpec) -> Arg {
    let mut arg = Arg::new(param_id(param.name));
    let mut help = output::kind_text(param.kind).to_owned();
    if positional(param) {
        // The service's ids may begin with `-` (a room's is 9 characters of the
        // URL-safe alphabet, `-` among them): taken as the value, not a flag.
        arg = arg
            .value_name(upper_snake(param.name))
            .required(param.required)
            .allow_hyphen_values(true);
    } else {
        arg = arg
            .long(param_long(param.name))
            .required(param.required && !spec.exactly_one.iter().any(|g| g.contains(&param.name)));
    }
    match param.kind {
        ParamKind::Integer => {
            let (min, max) = (param.min.unwrap_or(0), param.max.unwrap_or(u64::MAX));
            arg = arg
                .value_name("N")
                .value_parser(clap::value_parser!(u64).range(min..=max));
            if param.min.is_some() || param.max.is_some() {
                help = format!("{help}, {min} to {max}");
            }
        }
        ParamKind::Boolean | ParamKind::Switch => {
            arg = arg
                .value_name("BOOL")
                .num_args(0..=1)
                .require_equals(false)
                .default_missing_value("true")
                .value_parser(BoolishValueParser::new());
        }
        ParamKind::Json => {
            arg = arg.value_name("JSON");
        }
        _ => {
            arg = arg.value_name(upper_snake(param.name));
            if !param.choices.is_empty() {
                arg = arg.value_parser(PossibleValuesParser::new(param.choices.iter().copied()));
            } else {
                let max_len = param.max_len;
                let must_not_be_empty = param.kind == ParamKind::Id;
                arg = arg.value_parser(move |text: &str| -> Result<String, String> {
                    if must_not_be_empty && text.is_empty() {
                        return Err("must not be empty".into());
                    }
                    match max_len {
                        Some(max) if text.chars().count() > max => Err(format!(
                            "at most {max} characters, not {}",
                            text.chars().count()
                        )),
                        _ => Ok(text.to_owned()),
                    }
                });
                if let Some(max) = max_len {
                    help = format!("{help}, at most {max} characters");
                }
            }
        }
    }
    if let Some(default) = param.default {
        help = format!("{help} [default: {default}]");
    }
    help = format!("{} ({help})", param.name);
    arg.help(help)
}

/// `roomId` → `ROOM_ID`.
fn upper_snake(name: &str) -> String {
    kebab(name).replace('-', "_").to_uppercase()
}

/// JSON text, or the JSON of the file `@PATH` names.
pub fn json_argument(flag: &str, text: &str) -> Result<Value, CliError> {
    let (source, content) = match text.strip_prefix('@') {
        Some(path) => (
            path.to_owned(),
            std::fs::read_to_string(path).map_err(|source| CliError::Io {
                path: path.to_owned(),
                source,
            })?,
        ),
        None => ("the value".to_owned(), text.to_owned()),
    };
    serde_json::from_str(&content).map_err(|e| {
        CliError::Usage(format!(
            "--{flag}: {source} is not JSON ({e}); text needs quotes: '\"text\"'"
        ))
    })
}

/// The JSON params of a call, with the wire names, from the command's matches.
pub fn params_of(spec: &OperationSpec, matches: &ArgMatches) -> Result<Value, CliError> {
    let mut params = Map::new();
    for param in spec.params {
        let value = match param.kind {
            ParamKind::Integer => matches
                .get_one::<u64>(&param_id(param.name))
                .map(|n| Value::from(*n)),
            ParamKind::Boolean | ParamKind::Switch => matches
                .get_one::<bool>(&param_id(param.name))
                .map(|b| Value::Bool(*b)),
            ParamKind::Json => match matches.get_one::<String>(&param_id(param.name)) {
                Some(text) => Some(json_argument(&param_long(param.name), text)?),
                None => None,
            },
            _ => matches
                .get_one::<String>(&param_id(param.name))
                .map(|s| Value::String(s.clone())),
        };
        if let Some(value) = value {
            params.insert(param.name.to_owned(), value);
        }
    }
    if let Some(text) = matches.try_get_one::<String>("extra").ok().flatten() {
        match json_argument("extra", text)? {
            Value::Object(extra) => {
                for (name, value) in extra {
                    if spec.param(&name).is_some() {
                        return Err(CliError::Usage(format!(
                            "--extra: {name} is a parameter of its own: give it as --{}",
                            param_long(&name)
                        )));
                    }
                    params.insert(name, value);
                }
            }
            _ => return Err(CliError::Usage("--extra must be a JSON object".into())),
        }
    }
    if let Some(size) = matches.try_get_one::<u64>("page-size").ok().flatten() {
        params.insert("limit".into(), Value::from(*size));
    }
    Ok(Value::Object(params))
}

/// Runs the declared operation `name` with its matches; `None` when `name` is not one.
pub fn run(name: &str, matches: &ArgMatches) -> Option<Result<(), CliError>> {
    let (op, spec) = by_command(name)?;
    Some(run_operation(op, spec, matches))
}

fn run_operation(
    op: Operation,
    spec: &OperationSpec,
    matches: &ArgMatches,
) -> Result<(), CliError> {
    let params = params_of(spec, matches)?;
    let all = matches.try_get_one::<bool>("all").ok().flatten() == Some(&true);
    let asked = output::explicit_format(matches);
    let layout = output::Layout {
        declared: spec.item_fields,
        raw_cells: config::raw_csv_cells(matches),
        no_header: matches.try_get_one::<bool>("no-header").ok().flatten() == Some(&true),
    };
    if layout.no_header && asked != Some(output::Format::Csv) {
        return Err(CliError::Usage(
            "--no-header is for --output csv (a CSV to append to)".into(),
        ));
    }
    if config::dry_run(matches) {
        // Built as the SDK builds it: refused here exactly when the SDK refuses it.
        let mut first = params.clone();
        if all && first.get("limit").is_none() {
            first["limit"] = Value::from(page_size(spec, &first));
        }
        let request = op.build(&first)?;
        let base_url = config::dry_run_base_url(matches)?;
        return output::print_dry_run(
            &request,
            &base_url,
            matches!(asked, Some(output::Format::Json | output::Format::Jsonl)),
        );
    }
    // Checked before the client is made: a bad call fails the same way with or without a key.
    op.build(&params)?;
    let client = config::client(matches)?;
    if all {
        let max = matches
            .try_get_one::<u64>("max-items")
            .ok()
            .flatten()
            .copied();
        let patience = Patience {
            max_wait: config::max_retry_wait(matches)?,
            transient_retries: 0,
        };
        return stream_all(
            op,
            spec,
            &client,
            Listing {
                params,
                max,
                asked,
                layout,
                patience,
            },
        );
    }
    let (_, answer) = call_as_sent(&client, op, &params)?;
    output::print_value(&answer, output::format_of(matches), layout)
}

/// Calls `op` as [`roomchat::Client::call_operation`] does (the same request,
/// retries and decoding: an answer the SDK refuses is refused here with the
/// same error), and gives its decoded JSON and the answer's text as the
/// service sent it. The text is what is printed: the decoded JSON is the
/// SDK's model written again, its keys sorted and its numbers `f64`s
/// (`1.10` is `1.1`, a 30-digit number loses its last 13 digits).
fn call_as_sent(
    client: &roomchat::Client,
    op: Operation,
    params: &Value,
) -> roomchat::Result<(Value, Box<RawValue>)> {
    client.call_declared_with(op, params, |response| {
        let decoded = op.decode(response)?;
        // An answer decoded without a JSON body (an empty one) is shown as decoded.
        let sent = serde_json::from_slice::<Box<RawValue>>(&response.body)
            .or_else(|_| serde_json::value::to_raw_value(&decoded))
            .unwrap_or_else(|_| RawValue::NULL.to_owned());
        Ok((decoded, sent))
    })
}

/// The page size of `--all`: the given limit, else the limit's declared
/// maximum (at most 200) or its default.
fn page_size(spec: &OperationSpec, params: &Value) -> u64 {
    if let Some(n) = params.get("limit").and_then(Value::as_u64) {
        return n;
    }
    let limit = spec.param("limit");
    let declared_max = limit
        .and_then(|l| l.max)
        .unwrap_or(roomchat::DEFAULT_ITER_PAGE_SIZE);
    declared_max.min(roomchat::DEFAULT_ITER_PAGE_SIZE)
}

/// The total a page says the listing holds (`total`, `totalRecords`).
fn total_of(spec: &OperationSpec, page: &Value) -> Option<u64> {
    let field = match spec.pages {
        Paging::Total => "total",
        _ => "totalRecords",
    };
    page.get(field).and_then(Value::as_u64)
}

/// What `--all` was asked for.
struct Listing<'a> {
    /// The call's params (`skip` where to begin).
    params: Value,
    /// `--max-items`.
    max: Option<u64>,
    /// `--output`.
    asked: Option<output::Format>,
    /// The CSV's columns and cells.
    layout: output::Layout<'a>,
    /// How long the rate limit may hold it off.
    patience: Patience,
}

/// Where a stopped `--all` goes on from: the flags that make the same command
/// write what is left, and only that (`>>` appends it to the first run's output).
fn resume_flags(skip: u64, max: Option<u64>, written: u64, csv: bool) -> String {
    let mut flags = format!("--skip {skip}");
    if let Some(max) = max {
        flags.push_str(&format!(" --max-items {}", max.saturating_sub(written)));
    }
    if csv {
        flags.push_str(" --no-header");
    }
    flags
}

/// `--all`: every item from `skip` on, page after page, each written as soon
/// as its page came (one page in memory); the rate limit is waited out as
/// export waits it out; Ctrl-C or an error says the flags to resume with.
fn stream_all(
    op: Operation,
    spec: &OperationSpec,
    client: &roomchat::Client,
    listing: Listing<'_>,
) -> Result<(), CliError> {
    let Listing {
        mut params,
        max,
        asked,
        layout,
        patience,
    } = listing;
    let csv = asked == Some(output::Format::Csv);
    if asked == Some(output::Format::Table) {
        return Err(CliError::Usage(
            "--all streams JSON lines (or --output csv); a table needs one page: drop --all".into(),
        ));
    }
    let size = page_size(spec, &params);
    params["limit"] = Value::from(size);
    let mut skip = params.get("skip").and_then(Value::as_u64).unwrap_or(0);
    let interrupts = Interrupts::catch();
    let client = client.with_cancel(interrupts.cancel_token());
    let stdout = io::stdout();
    let out = io::BufWriter::new(stdout.lock());
    let mut sink = if csv {
        // The declared fields, then `_extra`: the same columns on every page and every resume.
        let columns = output::Columns::declared(layout.declared);
        Sink::Csv(Box::new(output::CsvRows::new(out, columns, layout)?))
    } else {
        Sink::Jsonl(out)
    };
    let mut written = 0u64;
    let resume = |skip: u64, written: u64| CliError::Interrupted {
        resume: format!(
            "the same command with {}",
            resume_flags(skip, max, written, csv)
        ),
    };
    loop {
        if max.is_some_and(|m| written >= m) {
            break;
        }
        if interrupts.requested() {
            let _ = sink.flush();
            return Err(resume(skip, written));
        }
        params["skip"] = Value::from(skip);
        let answer = patience.call(
            &client,
            &|| interrupts.requested(),
            |_| {},
            || call_as_sent(&client, op, &params),
        );
        let (page, sent) = match answer {
            Ok(page) => page,
            Err(e) if e.kind() == ErrorKind::Cancelled || interrupts.requested() => {
                let _ = sink.flush();
                return Err(resume(skip, written));
            }
            Err(e) => {
                let _ = sink.flush();
                eprintln!(
                    "roomchat: stopped after {written} items; to resume, run the same command with {}",
                    resume_flags(skip, max, written, csv)
                );
                return Err(e.into());
            }
        };
        let items = output::items_of(&sent).unwrap_or_default();
        let count = items.len() as u64;
        for item in items {
            if max.is_some_and(|m| written >= m) {
                break;
            }
            sink.write(item)?;
            written += 1;
            skip += 1;
        }
        sink.flush()?;
        let done = match total_of(spec, &page) {
            Some(total) => count == 0 || skip >= total,
            None => count < size,
        };
        if done || count == 0 {
            break;
        }
    }
    sink.flush()
}

/// Where `--all` writes its items.
enum Sink<W: Write> {
    /// One JSON object a line, its text as the service sent it.
    Jsonl(W),
    /// CSV rows, under the header written first.
    Csv(Box<output::CsvRows<W>>),
}

impl<W: Write> Sink<W> {
    /// Writes `item`, its text as the service sent it.
    fn write(&mut self, item: &RawValue) -> Result<(), CliError> {
        match self {
            Sink::Jsonl(out) => {
                writeln!(out, "{}", crate::export::record_line(item)).map_err(output::write_error)
            }
            Sink::Csv(rows) => rows.write(&output::Row::of(item)),
        }
    }

    /// Writes what is buffered through to stdout: a stop leaves whole items only.
    fn flush(&mut self) -> Result<(), CliError> {
        match self {
            Sink::Jsonl(out) => out.flush().map_err(output::write_error),
            Sink::Csv(rows) => rows.flush(),
        }
    }
}
