//! Printing answers (json, jsonl, table, csv) and errors; the exit code of each error kind.

/// The exit code of an SDK error kind (the README's table).
pub fn exit_code_of(_kind: roomchat::ErrorKind) -> u8 {
    1
}
