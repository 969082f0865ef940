//! The `roomchat` binary: [`roomchat_cli::run`] on the process's arguments.

fn main() -> std::process::ExitCode {
    // The codes are 0..=255 (see error.rs).
    let code = roomchat_cli::run(std::env::args_os());
    std::process::ExitCode::from(u8::try_from(code).unwrap_or(u8::MAX))
}
