//! Printing answers (json, jsonl, table, csv) and errors; the exit code of each error kind.

use std::io::{self, IsTerminal, Write};

use clap::{Arg, ArgMatches};
use roomchat::wire::{ParamKind, WireRequest};
use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{json, Value};

use crate::error::CliError;
use crate::export::{indented_text, record_line};

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

/// The `--output` flag of `export` and `import`, whose answers are files: it
/// makes their errors one JSON object on stderr, as on every other command.
pub fn error_output_arg() -> Arg {
    Arg::new("output")
        .long("output")
        .value_name("FORMAT")
        .value_parser(["json", "jsonl"])
        .help("json (or jsonl): an error ends stderr as one JSON object, {\"error\": {\"kind\", \"message\", \"exit_code\", …}}, as on every command")
}

/// The format `--output` names in `matches` or the matches of the
/// subcommand it ran (`import users … --output json`), if it was given.
pub fn asked_format(matches: &ArgMatches) -> Option<Format> {
    explicit_format(matches).or_else(|| {
        matches
            .subcommand()
            .and_then(|(_, inner)| asked_format(inner))
    })
}

/// Whether the command line asks for JSON (`--output json`, `--output=jsonl`,
/// …): how an error of the command line itself (clap's, before there are
/// matches) knows to be the JSON error object.
pub fn json_asked_in(args: &[std::ffi::OsString]) -> bool {
    let json = |v: &str| matches!(v, "json" | "jsonl");
    let mut words = args.iter().map(|a| a.to_string_lossy());
    while let Some(word) = words.next() {
        if word == "--" {
            break;
        }
        if word == "--output" {
            if words.next().is_some_and(|v| json(&v)) {
                return true;
            }
        } else if word.strip_prefix("--output=").is_some_and(json) {
            return true;
        }
    }
    false
}

/// A usage error of clap's as one line: its message and tips, without the
/// usage and the help pointer that follow them.
pub fn usage_message(error: &clap::Error) -> String {
    let text = error.render().to_string();
    let text = text.trim_start_matches("error: ");
    let end = text
        .find("\nUsage:")
        .or_else(|| text.find("\nFor more information"))
        .unwrap_or(text.len());
    let mut message = String::new();
    for line in text[..end].lines().map(str::trim).filter(|l| !l.is_empty()) {
        if !message.is_empty() {
            message.push_str(if message.ends_with(':') { " " } else { "; " });
        }
        message.push_str(line);
    }
    message
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
/// an object's one array of objects when no other field is an object
/// (`data`, `messages`, `bots`: a page or a list with its counts). Each item
/// is its text as the service sent it.
pub fn items_of(answer: &RawValue) -> Option<Vec<&RawValue>> {
    if is(answer, b'[') {
        return serde_json::from_str(answer.get()).ok();
    }
    let fields = Fields::of(answer)?;
    let mut arrays = fields.0.iter().filter(|(_, value)| is(value, b'['));
    let (_, list) = arrays.next()?;
    let only_scalars_beside =
        arrays.next().is_none() && !fields.0.iter().any(|(_, value)| is(value, b'{'));
    let items: Vec<&RawValue> = serde_json::from_str(list.get()).ok()?;
    let of_records = items.iter().all(|item| is(item, b'{'));
    (only_scalars_beside && of_records).then_some(items)
}

/// Whether the JSON text `raw` begins with `first` (`{` an object, `[` an array, `"` a string).
fn is(raw: &RawValue, first: u8) -> bool {
    raw.get().trim_start().as_bytes().first() == Some(&first)
}

/// A JSON object's fields in the order the service sent them, each value its
/// text as sent (a `serde_json::Value` sorts the keys and rounds a number past
/// `f64`). A name sent twice keeps its first place and its last value, the
/// value serde_json (so the SDK) reads.
#[derive(Debug, Default)]
pub struct Fields<'a>(Vec<(String, &'a RawValue)>);

impl<'a> Fields<'a> {
    /// The fields of `raw` when it is an object.
    fn of(raw: &'a RawValue) -> Option<Fields<'a>> {
        if !is(raw, b'{') {
            return None;
        }
        serde_json::from_str(raw.get()).ok()
    }

    /// The value of the field `name`.
    fn get(&self, name: &str) -> Option<&'a RawValue> {
        self.0.iter().find(|(n, _)| n == name).map(|(_, v)| *v)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Fields<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct InOrder;
        impl<'de> Visitor<'de> for InOrder {
            type Value = Fields<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Fields<'de>, M::Error> {
                let mut fields: Vec<(String, &'de RawValue)> = Vec::new();
                let mut places = std::collections::HashMap::new();
                while let Some((name, value)) = map.next_entry::<String, &'de RawValue>()? {
                    match places.get(&name) {
                        Some(&place) => fields[place] = (name, value),
                        None => {
                            places.insert(name.clone(), fields.len());
                            fields.push((name, value));
                        }
                    }
                }
                Ok(Fields(fields))
            }
        }
        deserializer.deserialize_map(InOrder)
    }
}

/// A row of a CSV or a table: a record, its fields as sent, or any other
/// value, shown in the column `value`.
#[derive(Debug)]
pub enum Row<'a> {
    /// An object's fields.
    Record(Fields<'a>),
    /// Anything but an object.
    Value(&'a RawValue),
}

impl<'a> Row<'a> {
    /// The row of the JSON text `raw`.
    pub fn of(raw: &'a RawValue) -> Row<'a> {
        Fields::of(raw).map_or(Row::Value(raw), Row::Record)
    }

    /// The value of column `column` (the row itself for the column `value` of a scalar).
    fn field(&self, column: &str) -> Option<&'a RawValue> {
        match self {
            Row::Record(fields) => fields.get(column),
            Row::Value(value) if column == "value" => Some(value),
            Row::Value(_) => None,
        }
    }
}

/// How rows become CSV or table cells.
#[derive(Debug, Clone, Copy, Default)]
pub struct Layout<'a> {
    /// The fields a listing's items declare ([`OperationSpec::item_fields`](roomchat::wire::OperationSpec)):
    /// a CSV's columns, whatever the rows hold. Empty: the columns are the rows' fields.
    pub declared: &'a [&'a str],
    /// `--raw-csv-cells`: CSV text cells as the service sent them, formulas included.
    pub raw_cells: bool,
    /// `--no-header`: no header row (to append to a CSV an earlier run began).
    pub no_header: bool,
}

/// The last column of a listing's CSV: every field of a row that is not
/// among the declared ones, as one JSON object (empty when there is none),
/// so that a field the declaration does not know is never dropped.
pub const EXTRA_COLUMN: &str = "_extra";

/// The columns of a CSV or a table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Columns {
    /// The fields shown each in a column of its own.
    pub names: Vec<String>,
    /// Whether a last column, [`EXTRA_COLUMN`], holds the fields not in `names`.
    pub extra: bool,
}

impl Columns {
    /// The columns of a CSV: the declared fields then [`EXTRA_COLUMN`], for
    /// every page alike (so a CSV resumed with `--no-header` gets the same
    /// columns); with none declared, every field of `rows`.
    pub fn for_csv(declared: &[&str], rows: &[Row<'_>]) -> Columns {
        if declared.is_empty() {
            return Columns {
                names: columns_of(rows),
                extra: false,
            };
        }
        Columns::declared(declared)
    }

    /// The columns of a table: the declared fields some row holds, in their
    /// order, then every other field of `rows` in the order first seen.
    pub fn for_table(declared: &[&str], rows: &[Row<'_>]) -> Columns {
        let seen = columns_of(rows);
        let mut names: Vec<String> = declared
            .iter()
            .filter(|d| seen.iter().any(|s| s == *d))
            .map(|d| (*d).to_owned())
            .collect();
        names.extend(seen.into_iter().filter(|s| !declared.contains(&s.as_str())));
        Columns {
            names,
            extra: false,
        }
    }

    /// The columns of a streamed listing's CSV, known before its first page:
    /// the declared fields, then [`EXTRA_COLUMN`] (with none declared, every
    /// field is in it).
    pub fn declared(declared: &[&str]) -> Columns {
        Columns {
            names: declared.iter().map(|d| (*d).to_owned()).collect(),
            extra: true,
        }
    }

    /// The header row.
    pub fn header(&self) -> Vec<String> {
        let mut header = self.names.clone();
        if self.extra {
            header.push(EXTRA_COLUMN.to_owned());
        }
        header
    }

    /// The fields of `row` that have no column of their own, as a JSON
    /// object's text (in the order sent, each value's text as sent); empty
    /// when there is none.
    fn extra_of(&self, row: &Row<'_>) -> String {
        let Row::Record(fields) = row else {
            return String::new();
        };
        let mut extra = String::new();
        for (name, value) in fields.0.iter().filter(|(n, _)| !self.names.contains(n)) {
            extra.push(if extra.is_empty() { '{' } else { ',' });
            extra.push_str(&Value::from(name.as_str()).to_string());
            extra.push(':');
            extra.push_str(&record_line(value));
        }
        if !extra.is_empty() {
            extra.push('}');
        }
        extra
    }

    /// The CSV cells of `row`: text through [`csv_cell`](crate::safe_text::csv_cell)
    /// unless `raw`; numbers, booleans and JSON (which no spreadsheet runs) as JSON.
    pub fn csv_row(&self, row: &Row<'_>, raw: bool) -> Vec<String> {
        let mut cells: Vec<String> = self
            .names
            .iter()
            .map(|name| match row.field(name).and_then(text_of) {
                Some(text) => crate::safe_text::csv_cell(&text, raw).into_owned(),
                None => cell(row, name),
            })
            .collect();
        if self.extra {
            cells.push(self.extra_of(row));
        }
        cells
    }
}

/// The text a JSON string holds, unescaped; `None` when `raw` is not a string.
fn text_of(raw: &RawValue) -> Option<String> {
    if is(raw, b'"') {
        serde_json::from_str(raw.get()).ok()
    } else {
        None
    }
}

/// The header cells of a CSV: a field name from the service's answer
/// (not a declared one) is a cell like any other.
fn csv_header(columns: &Columns, raw: bool) -> Vec<String> {
    columns
        .header()
        .into_iter()
        .map(|name| crate::safe_text::csv_cell(&name, raw).into_owned())
        .collect()
}

/// Prints `answer` (its JSON text as the service sent it) in `format` on stdout.
pub fn print_value(answer: &RawValue, format: Format, layout: Layout<'_>) -> Result<(), CliError> {
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    write_value(&mut out, answer, format, stdout_is_terminal(), layout)?;
    out.flush().map_err(write_error)
}

/// Writes `answer` in `format`; `pretty`: JSON indented. Every JSON text
/// keeps the service's key order and number text (`1.10`, a 30-digit id).
pub fn write_value(
    out: &mut impl Write,
    answer: &RawValue,
    format: Format,
    pretty: bool,
    layout: Layout<'_>,
) -> Result<(), CliError> {
    match format {
        Format::Json => {
            let text = if pretty {
                indented_text(answer)
            } else {
                record_line(answer).into_owned()
            };
            writeln!(out, "{text}").map_err(write_error)
        }
        Format::Jsonl => match items_of(answer) {
            Some(items) => {
                for item in items {
                    writeln!(out, "{}", record_line(item)).map_err(write_error)?;
                }
                Ok(())
            }
            None => writeln!(out, "{}", record_line(answer)).map_err(write_error),
        },
        Format::Table | Format::Csv => {
            // A listing's items are the rows; any other answer is one row.
            let (rows, declared): (Vec<Row<'_>>, &[&str]) = match items_of(answer) {
                Some(items) => (items.into_iter().map(Row::of).collect(), layout.declared),
                None => (vec![Row::of(answer)], &[]),
            };
            if format == Format::Csv {
                let columns = Columns::for_csv(declared, &rows);
                let mut csv = CsvRows::new(out, columns, layout)?;
                for row in &rows {
                    csv.write(row)?;
                }
                csv.flush()
            } else {
                write_table(out, &Columns::for_table(declared, &rows), &rows)
            }
        }
    }
}

/// The columns of `rows`: every key, in the order first seen, scalars first;
/// `value` when the rows are not records; none when there is no row (an empty
/// listing: its CSV is empty, not a header no later run's rows would match).
pub fn columns_of(rows: &[Row<'_>]) -> Vec<String> {
    let mut scalars: Vec<String> = Vec::new();
    let mut nested: Vec<String> = Vec::new();
    for row in rows {
        let Row::Record(fields) = row else {
            continue;
        };
        for (name, value) in &fields.0 {
            if scalars.contains(name) || nested.contains(name) {
                continue;
            }
            if is(value, b'{') || is(value, b'[') {
                nested.push(name.clone());
            } else {
                scalars.push(name.clone());
            }
        }
    }
    if scalars.is_empty() && nested.is_empty() && !rows.is_empty() {
        return vec!["value".into()];
    }
    scalars.extend(nested);
    scalars
}

/// A cell's text: strings as they are, null empty, anything else as the JSON
/// text the service sent (on one line).
pub fn cell(row: &Row<'_>, column: &str) -> String {
    match row.field(column) {
        None => String::new(),
        Some(value) if value.get() == "null" => String::new(),
        Some(value) => text_of(value).unwrap_or_else(|| record_line(value).into_owned()),
    }
}

/// A CSV written row by row (a streamed listing's pages as they come): the
/// header first unless `--no-header`, then each row's cells.
pub struct CsvRows<W: Write> {
    writer: csv::Writer<W>,
    columns: Columns,
    raw: bool,
}

fn csv_error(e: csv::Error) -> CliError {
    match e.into_kind() {
        csv::ErrorKind::Io(e) => write_error(e),
        other => write_error(io::Error::other(format!("{other:?}"))),
    }
}

impl<W: Write> CsvRows<W> {
    /// A CSV of `columns` on `out`, its header written unless `layout.no_header`.
    pub fn new(out: W, columns: Columns, layout: Layout<'_>) -> Result<Self, CliError> {
        let mut writer = csv::Writer::from_writer(out);
        // No columns (an empty listing that declares none): no header either.
        if !layout.no_header && !columns.header().is_empty() {
            writer
                .write_record(csv_header(&columns, layout.raw_cells))
                .map_err(csv_error)?;
        }
        Ok(CsvRows {
            writer,
            columns,
            raw: layout.raw_cells,
        })
    }

    /// Writes `row`'s cells.
    pub fn write(&mut self, row: &Row<'_>) -> Result<(), CliError> {
        self.writer
            .write_record(self.columns.csv_row(row, self.raw))
            .map_err(csv_error)
    }

    /// Writes what is buffered through to the writer below, and flushes it.
    pub fn flush(&mut self) -> Result<(), CliError> {
        self.writer.flush().map_err(write_error)
    }
}

/// The widest a table cell is shown (longer text ends in `…`).
const MAX_CELL: usize = 48;

fn write_table(out: &mut impl Write, columns: &Columns, rows: &[Row<'_>]) -> Result<(), CliError> {
    if columns.names.is_empty() {
        return Ok(());
    }
    let shown = |text: String| -> String {
        let one_line = text.replace(['\n', '\r', '\t'], " ");
        // Shown, not obeyed: an escape in a name would act on the terminal.
        let one_line = crate::safe_text::terminal_line(&one_line);
        if one_line.chars().count() > MAX_CELL {
            let mut cut: String = one_line.chars().take(MAX_CELL - 1).collect();
            cut.push('…');
            cut
        } else {
            one_line.into_owned()
        }
    };
    let header: Vec<String> = columns.names.iter().map(|c| shown(c.clone())).collect();
    let columns = &columns.names;
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|row| columns.iter().map(|c| shown(cell(row, c))).collect())
        .collect();
    let widths: Vec<usize> = header
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
/// URL with the key `REDACTED` and the body with any access token `REDACTED`,
/// the curl command reading them from the environment
/// (`"$ROOMCHAT_PRIVATE_KEY"`, `"$ROOMCHAT_ACCESS_TOKEN"`), so that nothing
/// secret is shown.
pub fn dry_run_json(request: &WireRequest, base_url: &str) -> Value {
    let body = body_shown(request, "REDACTED")
        .map(|b| serde_json::from_str(&b).unwrap_or(Value::String(b)))
        .unwrap_or(Value::Null);
    json!({
        "method": request.method,
        "url": request.url(base_url, Some("REDACTED")),
        "body": body,
        "curl": curl(request, base_url),
    })
}

/// The environment variable the curl command of a dry run reads an access token from.
pub const ACCESS_TOKEN_VARIABLE: &str = "ROOMCHAT_ACCESS_TOKEN";

/// The body of `request` with the value of every access token in it `mark` (core's rule).
fn body_shown(request: &WireRequest, mark: &str) -> Option<String> {
    request
        .body_hiding_access_tokens(mark)
        .map(std::borrow::Cow::into_owned)
}

/// The curl command of `request`, the key and any access token read from the environment.
pub fn curl(request: &WireRequest, base_url: &str) -> String {
    const KEY: &str = "ROOMCHATKEYPLACEHOLDER";
    const TOKEN: &str = "ROOMCHATTOKENPLACEHOLDER";
    let variable = match request.auth_param() {
        Some("publicKey") => "$ROOMCHAT_PUBLIC_KEY",
        _ => "$ROOMCHAT_PRIVATE_KEY",
    };
    let url = quoted_with(&request.url(base_url, Some(KEY)), KEY, variable);
    let mut command = format!("curl -sS -X {} {url}", request.method);
    if let Some(body) = body_shown(request, TOKEN) {
        command.push_str(" -H 'Content-Type: application/json' --data-raw ");
        command.push_str(&quoted_with(
            &body,
            TOKEN,
            &format!("${ACCESS_TOKEN_VARIABLE}"),
        ));
    }
    command
}

/// `text` as one word of a POSIX shell, each `mark` in it the value of `variable`.
fn quoted_with(text: &str, mark: &str, variable: &str) -> String {
    text.split(mark)
        .map(|piece| {
            if piece.is_empty() {
                String::new()
            } else {
                shell_quote(piece)
            }
        })
        .collect::<Vec<_>>()
        .join(&format!("\"{variable}\""))
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
    if let Some(body) = body_shown(request, "REDACTED") {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> Box<RawValue> {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn a_listings_items_and_columns_keep_the_text_and_order_sent() {
        let page = raw(
            r#"{"total": 2, "data": [{"z": 1.10, "a": {"y": 1, "b": 2}}, {"m": 1e400}], "skip": 0}"#,
        );
        let items = items_of(&page).unwrap();
        let texts: Vec<&str> = items.iter().map(|i| i.get()).collect();
        assert_eq!(
            texts,
            [r#"{"z": 1.10, "a": {"y": 1, "b": 2}}"#, r#"{"m": 1e400}"#]
        );
        let rows: Vec<Row<'_>> = items.into_iter().map(Row::of).collect();
        assert_eq!(columns_of(&rows), ["z", "m", "a"]);
        assert_eq!(cell(&rows[0], "a"), r#"{"y": 1, "b": 2}"#);
        assert_eq!(cell(&rows[1], "m"), "1e400");
        assert!(columns_of(&[]).is_empty());
        // As `serde_json` reads them: a top-level array is a listing; an object with an
        // object field, two arrays or an array of scalars is one record.
        assert_eq!(items_of(&raw("[1, \"a\"]")).map(|i| i.len()), Some(2));
        for one in [
            r#"{"a": {}, "d": [{}]}"#,
            r#"{"a": [], "d": [{}]}"#,
            r#"{"d": [1]}"#,
            "3",
        ] {
            assert!(items_of(&raw(one)).is_none(), "{one}");
        }
        // A name sent twice: its first place, its last value (the one the SDK decoded).
        let twice = raw(r#"{"n": 1, "d": [], "n": 2}"#);
        let fields = Fields::of(&twice).unwrap();
        let read: Vec<(&str, &str)> = fields
            .0
            .iter()
            .map(|(n, v)| (n.as_str(), v.get()))
            .collect();
        assert_eq!(read, [("n", "2"), ("d", "[]")]);
    }

    /// What `--output json` prints on a terminal (the end-to-end tests' stdout is a pipe).
    #[test]
    fn json_on_a_terminal_is_indented_as_sent() {
        let answer = raw(r#"{"z": 1.10, "a": [123456789012345678901234567890]}"#);
        let mut out = Vec::new();
        write_value(&mut out, &answer, Format::Json, true, Layout::default()).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "{\n  \"z\": 1.10,\n  \"a\": [\n    123456789012345678901234567890\n  ]\n}\n"
        );
    }
}
