//! One subcommand per declared operation, built from core's catalog at run time.

use crate::error::CliError;

/// The subcommands of every declared operation.
pub fn commands() -> Vec<clap::Command> {
    Vec::new()
}

/// Runs the declared operation `name` with its matches; `None` when `name` is not one.
pub fn run(_name: &str, _matches: &clap::ArgMatches) -> Option<Result<(), CliError>> {
    None
}
