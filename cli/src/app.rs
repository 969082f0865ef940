//! The command tree (declared operations and the command line's own) and dispatch.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Arg, ArgMatches, Command};
use clap_mangen::roff::{bold, roman, Roff};

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
         \x20 man                        The man page (roff) on stdout, or every page into a folder\n\
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
        .subcommand(
            Command::new("man")
                .about("The man page (roff) on stdout, or with --all every page into a folder")
                .arg(
                    Arg::new("man-all")
                        .long("all")
                        .value_name("DIR")
                        .value_parser(clap::value_parser!(PathBuf))
                        .help("Write roomchat.1 and a page per command (roomchat-list-users.1, …) into DIR"),
                ),
        )
}

/// Parses `args`, runs the command, prints any error; the process's exit code.
pub fn run(args: impl IntoIterator<Item = OsString>) -> u8 {
    let args: Vec<OsString> = args.into_iter().collect();
    let matches = match command().try_get_matches_from(&args) {
        Ok(m) => m,
        // Help and version are not errors: printed as they are.
        Err(e) if !e.use_stderr() => {
            let _ = e.print();
            return 0;
        }
        Err(e) if output::json_asked_in(&args) => {
            let error = CliError::Usage(output::usage_message(&e));
            output::print_error(&error, Some(output::Format::Json));
            return error.exit_code();
        }
        Err(e) => {
            let _ = e.print();
            return crate::error::EXIT_USAGE;
        }
    };
    let (result, asked) = match matches.subcommand() {
        Some(("export", m)) => (export::run(m), output::asked_format(m)),
        Some(("import", m)) => (import::run(m), output::asked_format(m)),
        Some(("completions", m)) => (completions(m), None),
        Some(("man", m)) => (man(m.get_one::<PathBuf>("man-all")), None),
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

/// `roomchat man`: the page of `roomchat` on stdout; with `--all DIR`, it and
/// a page per command (`roomchat-list-users.1`, `roomchat-import-users.1`, …)
/// written into `DIR`, so that every page a page names is there.
fn man(all: Option<&PathBuf>) -> Result<(), CliError> {
    let mut root = command().disable_help_subcommand(true);
    // Gives each command its page's name (`roomchat-list-users`).
    root.build();
    let Some(folder) = all else {
        return std::io::stdout()
            .write_all(&man_page(&root, true))
            .map_err(output::write_error);
    };
    let io = |path: &Path| {
        let path = path.display().to_string();
        move |source| CliError::Io { path, source }
    };
    std::fs::create_dir_all(folder).map_err(io(folder))?;
    let mut pages = vec![(root.clone(), true)];
    let mut index = 0;
    while index < pages.len() {
        let subcommands: Vec<Command> = pages[index].0.get_subcommands().cloned().collect();
        pages.extend(subcommands.into_iter().map(|c| (c, false)));
        index += 1;
    }
    for (page, is_root) in &pages {
        let name = page.get_display_name().unwrap_or_else(|| page.get_name());
        let path = folder.join(format!("{name}.1"));
        std::fs::write(&path, man_page(page, *is_root)).map_err(io(&path))?;
    }
    Ok(())
}

/// One man page, in roff: clap_mangen's sections, the commands named as
/// `roomchat man --all` writes their pages, an EXIT STATUS of the exit-code
/// table, and SEE ALSO.
fn man_page(page: &Command, is_root: bool) -> Vec<u8> {
    let man = clap_mangen::Man::new(page.clone())
        .source(format!("roomchat {}", env!("CARGO_PKG_VERSION")));
    let mut out = Vec::new();
    let mut render = |section: &dyn Fn(&mut Vec<u8>) -> std::io::Result<()>| {
        let _ = section(&mut out);
    };
    render(&|w| man.render_title(w));
    render(&|w| man.render_name_section(w));
    render(&|w| man.render_synopsis_section(w));
    render(&|w| man.render_description_section(w));
    if page.get_arguments().any(|a| !a.is_hide_set()) {
        render(&|w| man.render_options_section(w));
    }
    let mut roff = Roff::new();
    let name = page.get_display_name().unwrap_or_else(|| page.get_name());
    let commands: Vec<&Command> = page.get_subcommands().collect();
    if !commands.is_empty() {
        roff.control("SH", ["COMMANDS"]);
        for command in &commands {
            roff.control("TP", []);
            roff.text([bold(command.get_name())]);
            if let Some(about) = command.get_about() {
                roff.text([roman(about.to_string())]);
            }
        }
    }
    if let Some(after) = page.get_after_long_help().or_else(|| page.get_after_help()) {
        roff.control("SH", ["NOTES"]);
        for line in after.to_string().lines() {
            roff.text([roman(line)]);
        }
    }
    roff.control("SH", ["EXIT STATUS"]);
    for (code, meaning) in crate::error::exit_statuses() {
        roff.control("TP", []);
        roff.text([bold(code.to_string())]);
        roff.text([roman(meaning)]);
    }
    roff.control("SH", ["SEE ALSO"]);
    let mut see_also = Vec::new();
    if !is_root {
        see_also.push("roomchat(1)".to_owned());
    }
    if !commands.is_empty() {
        // The pages `man --all` writes beside this one: named only when they are written.
        see_also.push(format!(
            "{name}-COMMAND(1), a page per command, which `roomchat man --all DIR` writes"
        ));
    }
    see_also.push("`roomchat COMMAND --help`; cli/README.md".to_owned());
    roff.text([roman(see_also.join("; "))]);
    let _ = roff.to_writer(&mut out);
    // Each section rendered alone begins with the same two lines defining `Aq`: once is enough.
    let text = String::from_utf8_lossy(&out).into_owned();
    let preamble = ".ie \\n(.g .ds Aq \\(aq\n.el .ds Aq '\n";
    match text.split_once(preamble) {
        Some((before, after)) => format!("{before}{preamble}{}", after.replace(preamble, "")),
        None => text,
    }
    .into_bytes()
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
