//! The command tree (declared operations and the command line's own) and dispatch.

use std::ffi::OsString;
use std::io::Write;

use clap::{Arg, ArgMatches, Command};

use crate::{config, error::CliError, export, import, operations, output};

/// The top-level help: operations grouped by family, then the command line's own commands.
fn help_template() -> String {
    let mut text = String::from("{about-with-newline}\n{usage-heading} {usage}\n");
    for (family, ops) in operations::families() {
        text.push_str(&format!("\n{family}:\n"));
        for (name, summary) in ops {
            text.push_str(&format!("  {name:<26} {}\n", short(summary)));
        }
    }
    text.push_str(
        "\nCommands of the command line:\n\
         \x20 export                     Export rooms' message history (resumable)\n\
         \x20 import                     Import users from CSV or JSON lines (runs again safely)\n\
         \x20 completions                Shell completions: bash, zsh, fish, elvish, powershell\n\
         \x20 man                        The man page (roff) on stdout\n\
         \x20 help                       The help of a command\n\
         \nOptions:\n{options}\n{after-help}",
    );
    text
}

/// A summary's first sentence, cut to fit a line of the overview.
fn short(summary: &str) -> String {
    let first = summary
        .split_once(". ")
        .map_or(summary, |(first, _)| first)
        .trim_end_matches('.');
    if first.chars().count() > 72 {
        let cut: String = first.chars().take(71).collect();
        format!("{cut}…")
    } else {
        first.to_owned()
    }
}

/// The whole command tree.
pub fn command() -> Command {
    Command::new("roomchat")
        .version(env!("CARGO_PKG_VERSION"))
        .about("The chat service's REST API from the command line: every declared operation, export and import")
        .help_template(help_template())
        .after_help(
            "Keys come from ROOMCHAT_PRIVATE_KEY / ROOMCHAT_PUBLIC_KEY or a profile of \
             $XDG_CONFIG_HOME/roomchat/config.toml; `roomchat <command> --help` shows a \
             command's parameters, retry class and errors.",
        )
        .subcommand_required(true)
        .arg_required_else_help(true)
        .args(config::global_args())
        .subcommands(operations::commands())
        .subcommand(export::command())
        .subcommand(import::command())
        .subcommand(
            Command::new("completions")
                .about("Shell completions: bash, zsh, fish, elvish, powershell")
                .arg(
                    Arg::new("shell")
                        .required(true)
                        .value_parser(clap::value_parser!(clap_complete::Shell)),
                ),
        )
        .subcommand(Command::new("man").about("The man page (roff) on stdout"))
}

/// Parses `args`, runs the command, prints any error; the process's exit code.
pub fn run(args: impl IntoIterator<Item = OsString>) -> u8 {
    let matches = match command().try_get_matches_from(args) {
        Ok(m) => m,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                crate::error::EXIT_USAGE
            } else {
                0
            };
        }
    };
    let (result, asked) = match matches.subcommand() {
        Some(("export", m)) => (export::run(m), output::explicit_format(m)),
        Some(("import", m)) => (import::run(m), output::explicit_format(m)),
        Some(("completions", m)) => (completions(m), None),
        Some(("man", _)) => (man(), None),
        Some((name, m)) => (
            operations::run(name, m)
                .unwrap_or_else(|| Err(CliError::Usage(format!("unknown command {name}")))),
            output::explicit_format(m),
        ),
        None => (Err(CliError::Usage("no command given".into())), None),
    };
    match result {
        Ok(()) => 0,
        // The reader of stdout went away (`| head`): not an error of the command.
        Err(e) if output::is_broken_pipe(&e) => 0,
        Err(e) => {
            output::print_error(&e, asked);
            e.exit_code()
        }
    }
}

fn completions(matches: &ArgMatches) -> Result<(), CliError> {
    let shell = *matches
        .get_one::<clap_complete::Shell>("shell")
        .ok_or_else(|| CliError::Usage("completions: name a shell".into()))?;
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut command(), "roomchat", &mut out);
    std::io::stdout()
        .write_all(&out)
        .map_err(output::write_error)
}

fn man() -> Result<(), CliError> {
    let mut out = Vec::new();
    clap_mangen::Man::new(command())
        .render(&mut out)
        .map_err(output::write_error)?;
    std::io::stdout()
        .write_all(&out)
        .map_err(output::write_error)
}

#[cfg(test)]
mod tests {
    /// clap's own checks of the whole tree: ids, flags and groups, every
    /// declared operation's command included.
    #[test]
    fn the_command_tree_is_valid() {
        super::command().debug_assert();
    }
}
