//! The command line's parsers of outside input (`roomchat_cli::fuzzing`): the export's times
//! (`--after`/`--before`, a message's `created`), ids to file names, the import's CSV and
//! JSON-lines files, the config file, the records the service sends (the part file's line
//! and every renderer), and the text written into a CSV cell or a terminal line. Checks: no
//! panic, and each parser's invariants (see roomchat_cli::fuzzing).
#![no_main]

use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;
use roomchat_cli::fuzzing;

#[derive(Arbitrary, Debug)]
enum Input {
    Times { text: String, created: String },
    FileNames { room: String, channel: Option<String> },
    ImportRows(Vec<u8>),
    Config(String),
    Record(String),
    Text(String),
}

fuzz_target!(|input: Input| {
    match input {
        Input::Times { text, created } => fuzzing::times(&text, &created),
        Input::FileNames { room, channel } => fuzzing::file_names(&room, channel.as_deref()),
        Input::ImportRows(bytes) => fuzzing::import_rows(&bytes),
        Input::Config(text) => fuzzing::config(&text),
        Input::Record(json) => fuzzing::record(&json),
        Input::Text(text) => fuzzing::text(&text),
    }
});
