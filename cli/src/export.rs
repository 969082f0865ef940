//! `roomchat export`: rooms' histories to files, resumable and lossless.

use crate::error::CliError;

/// The `export` command.
pub fn command() -> clap::Command {
    clap::Command::new("export").about("Export rooms' message history (resumable)")
}

/// Runs `export`.
pub fn run(matches: &clap::ArgMatches) -> Result<(), CliError> {
    let _client = crate::config::client(matches)?;
    Err(CliError::Usage("export: not built yet".into()))
}
