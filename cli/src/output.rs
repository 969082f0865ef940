//! Printing answers (json, jsonl, table, csv) and errors; the exit code of each error kind.

use std::io::{self, IsTerminal, Write};

use clap::{Arg, ArgMatches};
use roomchat::wire::{ParamKind, WireRequest};
use serde_json::{json, Value};

use crate::error::CliError;

/// How an answer is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// JSON: indented on a terminal, one line when piped.
    Json,
    /// JSON lines: a listing's items one per line, anything else on one line.
    Jsonl,
    /// An aligned table of a listing's items (or of the one record).
    Table,
    /// CSV with a header row.
    Csv,
}

/// The `--output` flag of a command.
pub fn output_arg() -> Arg {
    Arg::new("output")
        .long("output")
        .value_name("FORMAT")
        .value_parser(["json", "jsonl", "table", "csv"])
        .help("How to print the answer: json (indented on a terminal, one line when piped), jsonl, table or csv")
}

/// The format `--output` names, if it was given.
pub fn explicit_format(matches: &ArgMatches) -> Option<Format> {
    match matches
        .try_get_one::<String>("output")
        .ok()
        .flatten()
        .map(String::as_str)
    {
        Some("json") => Some(Format::Json),
        Some("jsonl") => Some(Format::Jsonl),
        Some("table") => Some(Format::Table),
        Some("csv") => Some(Format::Csv),
        _ => None,
    }
}

/// The format `--output` names (json when the command has no such flag or it is not given).
pub fn format_of(matches: &ArgMatches) -> Format {
    explicit_format(matches).unwrap_or(Format::Json)
}

/// The exit code of an SDK error kind (the README's table): 10 plus the
/// kind's stable numeric code (`missing_auth` 11 … `not_found` 28).
pub fn exit_code_of(kind: roomchat::ErrorKind) -> u8 {
    u8::try_from(10 + kind.code()).unwrap_or(1)
}

/// Whether stdout is a terminal (a person reads it).
pub fn stdout_is_terminal() -> bool {
    io::stdout().is_terminal()
}

/// A write to stdout failed: a closed pipe (`| head`) ends the command quietly.
pub fn write_error(e: io::Error) -> CliError {
    CliError::Io {
        path: "<stdout>".into(),
        source: e,
    }
}

/// Whether `e` is stdout's reader going away.
pub fn is_broken_pipe(e: &CliError) -> bool {
    matches!(e, CliError::Io { source, .. } if source.kind() == io::ErrorKind::BrokenPipe)
}

/// The items of a listing answer: the answer itself when it is an array, or
/// an object's one array of objects when every other field is a scalar
/// (`data`, `messages`, `bots`: a page or a list with its counts).
pub fn items_of(value: &Value) -> Option<&Vec<Value>> {
    match value {
        Value::Array(items) => Some(items),
        Value::Object(fields) => {
            let mut arrays = fields.values().filter(|v| v.is_array());
            let items = arrays.next()?.as_array()?;
            let only_scalars_beside = arrays.next().is_none()
                && fields.values().all(|v| v.is_array() || !(v.is_object()));
            let of_records = items.iter().all(Value::is_object);
            (only_scalars_beside && of_records).then_some(items)
        }
        _ => None,
    }
}

/// Prints `value` in `format` on stdout.
pub fn print_value(value: &Value, format: Format) -> Result<(), CliError> {
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    write_value(&mut out, value, format, stdout_is_terminal())?;
    out.flush().map_err(write_error)
}

/// Writes `value` in `format`; `pretty`: JSON indented.
pub fn write_value(
    out: &mut impl Write,
    value: &Value,
    format: Format,
    pretty: bool,
) -> Result<(), CliError> {
    match format {
        Format::Json => {
            let text = if pretty {
                serde_json::to_string_pretty(value)
            } else {
                serde_json::to_string(value)
            }
            .unwrap_or_default();
            writeln!(out, "{text}").map_err(write_error)
        }
        Format::Jsonl => match items_of(value) {
            Some(items) => {
                for item in items {
                    writeln!(out, "{item}").map_err(write_error)?;
                }
                Ok(())
            }
            None => writeln!(out, "{value}").map_err(write_error),
        },
        Format::Table | Format::Csv => {
            let rows: Vec<&Value> = match items_of(value) {
                Some(items) => items.iter().collect(),
                None => vec![value],
            };
            let columns = columns_of(&rows);
            if format == Format::Csv {
                write_csv(out, &columns, &rows)
            } else {
                write_table(out, &columns, &rows)
            }
        }
    }
}

/// The columns of `rows`: every key, in the order first seen, scalars first.
pub fn columns_of(rows: &[&Value]) -> Vec<String> {
    let mut scalars: Vec<String> = Vec::new();
    let mut nested: Vec<String> = Vec::new();
    for row in rows {
        let Some(fields) = row.as_object() else {
            continue;
        };
        for (name, value) in fields {
            if scalars.contains(name) || nested.contains(name) {
                continue;
            }
            if value.is_object() || value.is_array() {
                nested.push(name.clone());
            } else {
                scalars.push(name.clone());
            }
        }
    }
    if scalars.is_empty() && nested.is_empty() {
        return vec!["value".into()];
    }
    scalars.extend(nested);
    scalars
}

/// A cell's text: strings as they are, null empty, anything else as JSON.
pub fn cell(row: &Value, column: &str) -> String {
    let value = match row {
        Value::Object(fields) => fields.get(column),
        other if column == "value" => Some(other),
        _ => None,
    };
    match value {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

fn write_csv(out: &mut impl Write, columns: &[String], rows: &[&Value]) -> Result<(), CliError> {
    let mut writer = csv::Writer::from_writer(out);
    let csv_error = |e: csv::Error| match e.into_kind() {
        csv::ErrorKind::Io(e) => write_error(e),
        other => write_error(io::Error::other(format!("{other:?}"))),
    };
    writer.write_record(columns).map_err(csv_error)?;
    for row in rows {
        writer
            .write_record(columns.iter().map(|c| cell(row, c)))
            .map_err(csv_error)?;
    }
    writer.flush().map_err(write_error)
}

/// The widest a table cell is shown (longer text ends in `…`).
const MAX_CELL: usize = 48;

fn write_table(out: &mut impl Write, columns: &[String], rows: &[&Value]) -> Result<(), CliError> {
    let shown = |text: String| -> String {
        let one_line = text.replace(['\n', '\r', '\t'], " ");
        if one_line.chars().count() > MAX_CELL {
            let mut cut: String = one_line.chars().take(MAX_CELL - 1).collect();
            cut.push('…');
            cut
        } else {
            one_line
        }
    };
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|row| columns.iter().map(|c| shown(cell(row, c))).collect())
        .collect();
    let widths: Vec<usize> = columns
        .iter()
        .enumerate()
        .map(|(i, c)| {
            cells
                .iter()
                .map(|r| r[i].chars().count())
                .chain([c.chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: &[String]| -> String {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c}{}", " ".repeat(w - c.chars().count())))
            .collect();
        padded.join("  ").trim_end().to_owned()
    };
    let header: Vec<String> = columns.iter().map(|c| shown(c.clone())).collect();
    writeln!(out, "{}", line(&header)).map_err(write_error)?;
    for row in &cells {
        writeln!(out, "{}", line(row)).map_err(write_error)?;
    }
    Ok(())
}

/// Prints `error` on stderr: a line naming its kind, status and message, or,
/// when `--output json` (or `jsonl`) was asked for, the error object of
/// [`CliError::to_json`] on one line.
pub fn print_error(error: &CliError, asked: Option<Format>) {
    let mut err = io::stderr().lock();
    if matches!(asked, Some(Format::Json | Format::Jsonl)) {
        let _ = writeln!(err, "{}", error.to_json());
        return;
    }
    let status = match error {
        CliError::Sdk(e) => e.status().map(|s| format!(" (status {s})")),
        _ => None,
    };
    let _ = writeln!(
        err,
        "roomchat: error: {}{}: {}",
        error.kind_name(),
        status.unwrap_or_default(),
        error.message()
    );
    if let CliError::Sdk(e) = error {
        if let Some(wait) = e.retry_after() {
            let _ = writeln!(err, "roomchat: retry after {:.1} s", wait.as_secs_f64());
        }
        if let Some(id) = e.event_id() {
            let _ = writeln!(err, "roomchat: event id {id} (quote it to support)");
        }
    }
}

/// The request `--dry-run` prints: `{"method", "url", "body", "curl"}`, the
/// URL with the key `REDACTED`, the curl command reading the key from the
/// environment (`"$ROOMCHAT_PRIVATE_KEY"`), so that nothing secret is shown.
pub fn dry_run_json(request: &WireRequest, base_url: &str) -> Value {
    let body = request
        .body
        .as_deref()
        .map(|b| serde_json::from_str(b).unwrap_or_else(|_| Value::String(b.to_owned())))
        .unwrap_or(Value::Null);
    json!({
        "method": request.method,
        "url": request.url(base_url, Some("REDACTED")),
        "body": body,
        "curl": curl(request, base_url),
    })
}

/// The curl command of `request`, the key read from the environment.
pub fn curl(request: &WireRequest, base_url: &str) -> String {
    const MARK: &str = "ROOMCHATKEYPLACEHOLDER";
    let url = request.url(base_url, Some(MARK));
    let variable = match request.auth_param() {
        Some("publicKey") => "$ROOMCHAT_PUBLIC_KEY",
        _ => "$ROOMCHAT_PRIVATE_KEY",
    };
    let quoted_url = url
        .split(MARK)
        .map(|piece| {
            if piece.is_empty() {
                String::new()
            } else {
                shell_quote(piece)
            }
        })
        .collect::<Vec<_>>()
        .join(&format!("\"{variable}\""));
    let mut command = format!("curl -sS -X {} {quoted_url}", request.method);
    if let Some(body) = &request.body {
        command.push_str(" -H 'Content-Type: application/json' --data-raw ");
        command.push_str(&shell_quote(body));
    }
    command
}

/// `text` in single quotes for a POSIX shell.
pub fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// Prints what `--dry-run` shows of `request`: with `as_json`, the object
/// of [`dry_run_json`] on one line; otherwise the method and URL, the body,
/// and the curl command.
pub fn print_dry_run(request: &WireRequest, base_url: &str, as_json: bool) -> Result<(), CliError> {
    let shown = dry_run_json(request, base_url);
    let stdout = io::stdout();
    let mut out = stdout.lock();
    if as_json {
        return writeln!(out, "{shown}").map_err(write_error);
    }
    writeln!(
        out,
        "{} {}",
        request.method,
        shown["url"].as_str().unwrap_or_default()
    )
    .map_err(write_error)?;
    if let Some(body) = &request.body {
        writeln!(out, "{body}").map_err(write_error)?;
    }
    writeln!(out, "\n{}", shown["curl"].as_str().unwrap_or_default()).map_err(write_error)
}

/// The JSON type a parameter's value has, as help text.
pub fn kind_text(kind: ParamKind) -> &'static str {
    match kind {
        ParamKind::Integer => "a whole number",
        ParamKind::Boolean => "true or false",
        ParamKind::Switch => "true or false (sent as on/off)",
        ParamKind::Json => "JSON text, or @FILE",
        ParamKind::Id => "an id",
        _ => "text",
    }
}
