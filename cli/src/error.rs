//! The command line's one error type and its exit codes (documented in the README).

use std::fmt;

use serde_json::{json, Value};

/// What made a command fail.
#[derive(Debug)]
pub enum CliError {
    /// The service or the SDK refused or failed a call (its kind decides the exit code).
    Sdk(roomchat::Error),
    /// The command line was wrong: an unknown flag, a value out of its limits, bad JSON.
    Usage(String),
    /// A file could not be read or written.
    Io {
        path: String,
        source: std::io::Error,
    },
    /// Interrupted (Ctrl-C): what to run to go on.
    Interrupted { resume: String },
    /// A job of many items (an import) ended with some of them failed; the others were done.
    Partial(String),
}

/// The exit code of a usage error (also clap's).
pub const EXIT_USAGE: u8 = 2;
/// The exit code of a file that could not be read or written.
pub const EXIT_IO: u8 = 3;
/// The exit code of a job of many items that ended with some of them failed.
pub const EXIT_PARTIAL: u8 = 4;
/// The exit code after Ctrl-C (128 + SIGINT, as shells report it).
pub const EXIT_INTERRUPTED: u8 = 130;

/// The exit code of an SDK error kind (the README's table): 10 plus the
/// kind's stable numeric code (`missing_auth` 11 … `not_found` 28).
pub fn exit_code_of(kind: roomchat::ErrorKind) -> u8 {
    u8::try_from(10 + kind.code()).unwrap_or(1)
}

impl CliError {
    /// The process's exit code for this error.
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Usage(_) => EXIT_USAGE,
            CliError::Io { .. } => EXIT_IO,
            CliError::Partial(_) => EXIT_PARTIAL,
            CliError::Interrupted { .. } => EXIT_INTERRUPTED,
            CliError::Sdk(e) => exit_code_of(e.kind()),
        }
    }

    /// The stable name of what failed: the SDK's error kind (`not_found`,
    /// `rate_limited`, …), or `usage`, `io`, `partial`, `interrupted`.
    pub fn kind_name(&self) -> &'static str {
        match self {
            CliError::Sdk(e) => e.kind().name(),
            CliError::Usage(_) => "usage",
            CliError::Io { .. } => "io",
            CliError::Partial(_) => "partial",
            CliError::Interrupted { .. } => "interrupted",
        }
    }

    /// The error as a JSON object: `{"error": {"kind", "status", "message", "exit_code", …}}`;
    /// an SDK error adds `retry_after`, `event_id` and the service's texts
    /// (`service_message`, `service_error`, `service_error_message`) it has.
    pub fn to_json(&self) -> Value {
        let mut error = json!({
            "kind": self.kind_name(),
            "status": Value::Null,
            "message": self.message(),
            "exit_code": self.exit_code(),
        });
        match self {
            CliError::Sdk(e) => {
                error["status"] = e.status().map_or(Value::Null, Value::from);
                if let Some(wait) = e.retry_after() {
                    error["retry_after"] = json!(wait.as_secs_f64());
                }
                if let Some(id) = e.event_id() {
                    error["event_id"] = json!(id);
                }
                // Each text of the service's error body, as the SDK's error keeps it.
                for (name, text) in [
                    ("service_message", e.service_message()),
                    ("service_error", e.service_error()),
                    ("service_error_message", e.service_error_message()),
                ] {
                    if let Some(text) = text {
                        error[name] = json!(text);
                    }
                }
            }
            CliError::Io { path, .. } => error["path"] = json!(path),
            CliError::Interrupted { resume } => error["resume"] = json!(resume),
            CliError::Usage(_) | CliError::Partial(_) => {}
        }
        json!({ "error": error })
    }

    /// The message alone, without the kind.
    pub fn message(&self) -> String {
        match self {
            CliError::Sdk(e) => e.message().to_owned(),
            other => other.to_string(),
        }
    }
}

/// How the command line's user sets a setting an SDK error names as the way
/// past a refusal: an SDK message tells a program what to call, the command
/// line's user what to type.
fn remedy_name(remedy: roomchat::Remedy) -> &'static str {
    match remedy {
        roomchat::Remedy::AllowInsecureHttp => {
            "--allow-insecure-http (allow_insecure_http = true in a profile)"
        }
        _ => remedy.rust_name(),
    }
}

/// Every exit code and what it means: the README's table (a test holds them
/// equal) and the man page's EXIT STATUS.
pub fn exit_statuses() -> Vec<(u8, String)> {
    let mut table: Vec<(u8, String)> = vec![
        (0, "done".into()),
        (
            EXIT_USAGE,
            "usage: an unknown command or flag, a value out of its limits or not among its choices, \
             malformed JSON, a required parameter missing, not exactly one of a group"
                .into(),
        ),
        (
            EXIT_IO,
            "a file could not be read or written (`@FILE`, `--ca-file`, the config file)".into(),
        ),
        (
            EXIT_PARTIAL,
            "partly done: `import` created or found some users and failed others (each reason in \
             the result file; when every row failed, the first failure's code instead)"
                .into(),
        ),
    ];
    for kind in roomchat::ErrorKind::ALL {
        table.push((
            exit_code_of(kind),
            format!("`{}`: {}", kind.name(), meaning(kind)),
        ));
    }
    table.push((
        EXIT_INTERRUPTED,
        "interrupted (Ctrl-C); stderr says how to resume".into(),
    ));
    table
}

/// What an SDK error kind means, for the exit-code table.
fn meaning(kind: roomchat::ErrorKind) -> &'static str {
    use roomchat::ErrorKind as K;
    match kind {
        K::MissingAuth => "the service says the key is missing",
        K::InvalidAuth => "the service rejected the key",
        K::InvalidRequest => "the service rejected a parameter or the body",
        K::UserNotFound => "no such user, or already deactivated",
        K::PlanUpgradeRequired => "not part of the account's plan",
        K::RateLimited => "over the rate limit (a 429, or the budget gave no slot in time)",
        K::ServerError => "the service failed (5xx; the event id is printed)",
        K::UnexpectedStatus => "a status the contract does not describe",
        K::Timeout => "the connect or overall timeout ran out",
        K::Connection => "no connection, or it broke",
        K::Decode => "the answer could not be decoded",
        K::ResponseTooLarge => "the answer was larger than the cap",
        K::Validation => "the client refused the request (nothing was sent)",
        K::Configuration => "no key or base URL, a bad setting, a profile file others can write (or read, when it holds a key)",
        K::Cancelled => "the call was cancelled",
        K::BudgetUnavailable => "the shared (Redis) budget could not be consulted",
        K::Tls => "the TLS handshake failed",
        K::NotFound => "the room, channel, message, bot or membership does not exist",
        _ => "an error of the SDK (see its kind)",
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Sdk(e) => write!(f, "{e}"),
            CliError::Usage(m) | CliError::Partial(m) => write!(f, "{m}"),
            CliError::Io { path, source } => write!(f, "{path}: {source}"),
            CliError::Interrupted { resume } => write!(f, "stopped; to resume, run {resume}"),
        }
    }
}

impl std::error::Error for CliError {}

impl From<roomchat::Error> for CliError {
    /// The SDK's error, a setting it names named as the command line's flag.
    fn from(e: roomchat::Error) -> Self {
        CliError::Sdk(match e.remedy() {
            Some(remedy) => e.name_remedy(remedy_name(remedy)),
            None => e,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The guide's exit-code table is the code's, row for row (the man page's
    /// EXIT STATUS is made from the same list).
    #[test]
    fn the_guides_exit_code_table_is_the_codes() {
        let guide = include_str!("../README.md");
        let start = guide
            .find("| code | meaning |\n|---|---|\n")
            .expect("the README's exit-code table");
        let rows: Vec<&str> = guide[start..]
            .lines()
            .skip(2)
            .take_while(|l| l.starts_with('|'))
            .collect();
        let expected: Vec<String> = exit_statuses()
            .iter()
            .map(|(code, meaning)| format!("| {code} | {meaning} |"))
            .collect();
        assert_eq!(rows, expected);
    }

    /// A command-line user is told the flag, not the SDK's method.
    #[test]
    fn the_sdks_settings_are_named_as_flags() {
        let error =
            CliError::from(roomchat::check_base_url("http://api.example.com", false).unwrap_err());
        for text in [error.message(), error.to_string()] {
            assert!(text.contains("--allow-insecure-http"), "{text}");
            assert!(!text.contains("allow_insecure_http(true)"), "{text}");
        }
    }
}
