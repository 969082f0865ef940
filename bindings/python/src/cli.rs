//! `roomchat._native.cli_main`: the command line of `roomchat-cli` (the same
//! `roomchat_cli::run` as the binary of `cargo install roomchat-cli`), run in
//! this process for the `roomchat` console script (`roomchat/_cli.py`).

use std::ffi::OsString;

use pyo3::prelude::*;

/// Runs `roomchat ARGV...` (the arguments after the program's name) with the
/// GIL released: output on the process's stdout and stderr, the exit code
/// returned. Arguments are `str` (os.fsencode's bytes on POSIX, so that a
/// file name Python decoded with surrogateescape arrives intact).
#[pyfunction]
pub fn cli_main(py: Python<'_>, argv: Vec<OsString>) -> i32 {
    let args = std::iter::once(OsString::from("roomchat")).chain(argv);
    crate::exiting::detach(py, move || roomchat_cli::run(args))
}
