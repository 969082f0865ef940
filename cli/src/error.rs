//! The command line's one error type and its exit codes (documented in the README).

use std::fmt;

use serde_json::{json, Value};

use crate::output;

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

impl CliError {
    /// The process's exit code for this error.
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Usage(_) => EXIT_USAGE,
            CliError::Io { .. } => EXIT_IO,
            CliError::Partial(_) => EXIT_PARTIAL,
            CliError::Interrupted { .. } => EXIT_INTERRUPTED,
            CliError::Sdk(e) => output::exit_code_of(e.kind()),
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

    /// The error as a JSON object: `{"error": {"kind", "status", "message", "exit_code", …}}`.
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
    fn from(e: roomchat::Error) -> Self {
        CliError::Sdk(e)
    }
}
