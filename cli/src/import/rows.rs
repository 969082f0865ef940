//! The import's input: the rows of a CSV or JSON-lines file, and the create-user request of
//! a row.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use roomchat::CreateUser;
use serde_json::{Map, Value};

use crate::error::CliError;
use crate::export::io_error;

/// One row of the file: the fields it gives, and what makes it unusable, if anything. A row
/// with a problem keeps every field that could be read, so that the result file still names
/// its identifier and username.
pub struct Row {
    /// Its line in the file (from 1; a CSV's header is line 1).
    pub line: usize,
    pub fields: Map<String, Value>,
    pub problem: Option<String>,
}

impl Row {
    /// A field as text for the result file: a string as it is, another value as JSON, an
    /// absent one empty.
    pub fn text(&self, key: &str) -> String {
        match self.fields.get(key) {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
        }
    }
}

/// The file of rows, opened for reading: a folder is a file that cannot be read (exit 3), as the
/// guide says, not text that fails to parse.
fn open_rows_file(path: &Path) -> Result<std::fs::File, CliError> {
    let file = std::fs::File::open(path).map_err(|e| io_error(path, e))?;
    match file.metadata() {
        Ok(m) if m.is_dir() => Err(io_error(
            path,
            std::io::Error::new(
                std::io::ErrorKind::IsADirectory,
                "a folder, not a file of rows",
            ),
        )),
        Ok(_) => Ok(file),
        Err(e) => Err(io_error(path, e)),
    }
}

/// CSV with a header row; empty cells are absent fields, `isModerator` a boolean, `meta` JSON.
pub fn read_csv(path: &Path) -> Result<Vec<Row>, CliError> {
    let file = open_rows_file(path)?;
    csv_rows(BufReader::new(file), &path.display().to_string())
}

/// The rows of CSV text (`shown` names its file in errors). Pure but for reading `input`:
/// the fuzz target calls it with any bytes.
pub fn csv_rows(input: impl Read, shown: &str) -> Result<Vec<Row>, CliError> {
    let mut reader = csv::ReaderBuilder::new()
        .flexible(true)
        .trim(csv::Trim::Headers)
        .from_reader(input);
    let headers = reader
        .headers()
        .map_err(|e| CliError::Usage(format!("{shown}: {e}")))?
        .clone();
    if !headers.iter().any(|h| h == "username") {
        return Err(CliError::Usage(format!(
            "{shown}: the header row names no username column (it has: {})",
            headers.iter().collect::<Vec<_>>().join(", ")
        )));
    }
    let mut rows = Vec::new();
    for (i, record) in reader.records().enumerate() {
        let line = i + 2;
        let mut row = Row {
            line,
            fields: Map::new(),
            problem: None,
        };
        let record = match record {
            Ok(record) => record,
            Err(e) => {
                row.problem = Some(format!("line {line}: {e}"));
                rows.push(row);
                continue;
            }
        };
        for (name, cell) in headers.iter().zip(record.iter()) {
            if cell.is_empty() || name.is_empty() {
                continue;
            }
            let value = match name {
                "isModerator" => match cell.trim().to_ascii_lowercase().as_str() {
                    "true" | "yes" | "1" | "on" => Value::Bool(true),
                    "false" | "no" | "0" | "off" => Value::Bool(false),
                    _ => {
                        row.problem
                            .get_or_insert(format!("isModerator {cell:?}: not true or false"));
                        continue;
                    }
                },
                "meta" => match serde_json::from_str(cell) {
                    Ok(v) => v,
                    Err(e) => {
                        row.problem.get_or_insert(format!("meta is not JSON: {e}"));
                        continue;
                    }
                },
                _ => Value::String(cell.to_owned()),
            };
            row.fields.insert(name.to_owned(), value);
        }
        rows.push(row);
    }
    Ok(rows)
}

/// One JSON object a line (blank lines skipped).
pub fn read_jsonl(path: &Path) -> Result<Vec<Row>, CliError> {
    let file = open_rows_file(path)?;
    jsonl_rows(BufReader::new(file), path)
}

/// The rows of JSON-lines text (`path` names its file in errors). Pure but for reading
/// `input`: the fuzz target calls it with any bytes.
pub fn jsonl_rows(input: impl BufRead, path: &Path) -> Result<Vec<Row>, CliError> {
    let mut rows = Vec::new();
    for (i, line) in input.lines().enumerate() {
        let line_no = i + 1;
        let text = line.map_err(|e| io_error(path, e))?;
        if text.trim().is_empty() {
            continue;
        }
        let (fields, problem) = match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(map)) => (map, None),
            Ok(_) => (Map::new(), Some("not a JSON object".into())),
            Err(e) => (Map::new(), Some(format!("not JSON: {e}"))),
        };
        rows.push(Row {
            line: line_no,
            fields,
            problem,
        });
    }
    Ok(rows)
}

/// The create-user request of a row's fields.
pub fn create_user_of(fields: &Map<String, Value>) -> Result<CreateUser, String> {
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
