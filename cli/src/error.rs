//! The command line's one error type and its exit codes (documented in the README).

use std::fmt;

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
}

impl CliError {
    /// The process's exit code for this error.
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Usage(_) => 2,
            CliError::Io { .. } => 3,
            CliError::Interrupted { .. } => 130,
            CliError::Sdk(e) => output::exit_code_of(e.kind()),
        }
    }
}

use crate::output;

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Sdk(e) => write!(f, "{e}"),
            CliError::Usage(m) => write!(f, "{m}"),
            CliError::Io { path, source } => write!(f, "{path}: {source}"),
            CliError::Interrupted { resume } => write!(f, "interrupted; to resume: {resume}"),
        }
    }
}

impl From<roomchat::Error> for CliError {
    fn from(e: roomchat::Error) -> Self {
        CliError::Sdk(e)
    }
}
