//! `roomchat import users FILE`: users from CSV or JSON lines, each created once.

use crate::error::CliError;

/// The `import` command.
pub fn command() -> clap::Command {
    clap::Command::new("import").about("Import users from CSV or JSON lines (runs again safely)")
}

/// Runs `import`.
pub fn run(matches: &clap::ArgMatches) -> Result<(), CliError> {
    let _client = crate::config::client(matches)?;
    Err(CliError::Usage("import: not built yet".into()))
}
