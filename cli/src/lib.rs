//! `roomchat`: the command line of the chat service's REST API, as a library
//! whose one entry point, [`run`], serves the binary of `cargo install
//! roomchat-cli`, the `roomchat` command of the Python package (through its
//! extension module) and that of the npm package (through its addon).
//!
//! Every declared operation is a subcommand built at run time from core's
//! catalog (`roomchat::wire::Operation::ALL`): no code names an operation.
//! Beside them, the commands of the command line's own: `export`, `import`,
//! `completions`, `man`.
//!
//! Layers: `app` builds the command tree and dispatches; `config` turns
//! flags, environment and profile into a client; `operations` is the generic
//! operation command; `output` prints answers and errors; `patience` waits
//! out the rate limit for a long job (`--all`); `safe_text` makes
//! the service's text safe for a spreadsheet cell or a terminal line; `export` and
//! `import` are the two jobs.

mod app;
mod config;
mod error;
mod export;
#[doc(hidden)]
pub mod fuzzing;
mod import;
mod interrupt;
mod operations;
mod output;
mod patience;
mod safe_text;

use std::ffi::OsString;

pub use operations::kebab as command_name;

/// Runs the command line on `args` (the program's name first, as
/// [`std::env::args_os`] gives them): parses, runs the command, prints its
/// output on stdout and any error on stderr. Returns the process's exit code
/// (0 on success; the codes per error kind are in the README).
///
/// Ctrl-C during a long command (`--all`, `export`, `import`) is caught for
/// that command's duration, so that it can stop cleanly and say how to go on;
/// the disposition SIGINT had before is put back when the command returns, so
/// a program that embeds the command line keeps its own Ctrl-C behaviour,
/// however often it calls `run`. A second Ctrl-C during a command does what
/// Ctrl-C did before it began.
pub fn run(args: impl IntoIterator<Item = OsString>) -> i32 {
    i32::from(app::run(args))
}

#[cfg(test)]
mod tests {
    use std::ffi::OsString;

    fn run(args: &[&str]) -> i32 {
        super::run(
            std::iter::once("roomchat")
                .chain(args.iter().copied())
                .map(OsString::from),
        )
    }

    /// What the Python and Node packages call: the exit code comes back, the
    /// process goes on (a code of 0 after help and version, clap's 2 after a
    /// bad command line, a command's own code after it ran).
    #[test]
    fn the_entry_point_returns_the_exit_code_and_the_process_goes_on() {
        assert_eq!(run(&["--version"]), 0);
        assert_eq!(run(&["list-users", "--help"]), 0);
        assert_eq!(run(&["no-such-operation"]), 2);
        assert_eq!(run(&["list-users", "--limit", "100000"]), 2);
        // Nothing is sent: no key, no service needed.
        assert_eq!(
            run(&[
                "--base-url",
                "https://api.example.com",
                "--dry-run",
                "list-users"
            ]),
            0
        );
    }
}
