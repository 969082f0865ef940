//! `roomchat`: the command line of the chat service's REST API.
//!
//! Every declared operation is a subcommand built at run time from core's
//! catalog (`roomchat::wire::Operation::ALL`): no code names an operation.
//! Beside them, the commands of the command line's own: `export`, `import`,
//! `completions`, `man`.
//!
//! Layers: `app` builds the command tree and dispatches; `config` turns
//! flags, environment and profile into a client; `operations` is the generic
//! operation command; `output` prints answers and errors; `export` and
//! `import` are the two jobs.

mod app;
mod config;
mod error;
mod export;
mod import;
mod operations;
mod output;

fn main() -> std::process::ExitCode {
    app::main(std::env::args_os())
}
