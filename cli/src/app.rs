//! The command tree (declared operations and the command line's own) and dispatch.

use std::ffi::OsString;
use std::process::ExitCode;

use crate::{config, error::CliError, export, import, operations};

/// The whole command tree.
pub fn command() -> clap::Command {
    clap::Command::new("roomchat")
        .version(env!("CARGO_PKG_VERSION"))
        .about("The chat service's REST API from the command line")
        .subcommand_required(true)
        .args(config::global_args())
        .subcommands(operations::commands())
        .subcommand(export::command())
        .subcommand(import::command())
}

/// Parses `args`, runs the command, prints any error; the process's exit code.
pub fn main(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    let matches = match command().try_get_matches_from(args) {
        Ok(m) => m,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    let result = match matches.subcommand() {
        Some(("export", m)) => export::run(m),
        Some(("import", m)) => import::run(m),
        Some((name, m)) => operations::run(name, m)
            .unwrap_or_else(|| Err(CliError::Usage(format!("unknown command {name}")))),
        None => Err(CliError::Usage("no command given".into())),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("roomchat: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}
