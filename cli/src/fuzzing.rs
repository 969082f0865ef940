//! The command line's parsers of outside input, for the fuzz target `cli_inputs` (fuzz/):
//! not an API (hidden from the docs, no stability promise). Each function runs one parser
//! on any input and checks the invariants the code promises; a broken invariant panics, as
//! a fuzz target's finding should.
//!
//! What reaches these parsers from outside: `--after`/`--before` and every message's
//! `created` (the export's time filter), room and channel ids (file names), the import's CSV
//! and JSON-lines files, the config file, and every record the service sends (the part
//! file's lines and the renderers).

use std::io::Cursor;
use std::path::Path;

use crate::export;
use crate::import;

/// `--after`/`--before` and a message's `created`: parsed or refused, never a panic; a time
/// that parses is kept by a filter around it and dropped by one at it (to the nanosecond);
/// the filter and the renderers agree on whether `created` is a time, and which.
pub fn times(text: &str, created: &str) {
    let parsed = export::parse_time(text);
    if let Some(at) = parsed {
        assert_eq!(
            export::parse_time(&format!(" {text}\t")),
            Some(at),
            "{text:?}"
        );
    }
    // A message's time (RFC 3339 with its zone) is a time of the argument's wider shape.
    if let Some(at) = export::created_time(text) {
        assert_eq!(parsed, Some(at), "{text:?}");
    }
    // `created` as a string, and as a number when it is one (seconds or milliseconds).
    let mut values = vec![(
        export::Created::Text(created.into()),
        serde_json::to_string(created).expect("a string serializes"),
    )];
    // As a record holds it: `head` and the renderers read a number without the blanks
    // around it, which JSON allows (the fuzzer found `\n\n6` read as 6 by one, none by
    // the other when handed with its blanks).
    if created.trim() == created && serde_json::from_str::<serde_json::Number>(created).is_ok() {
        values.push((export::Created::Number(created), created.to_owned()));
    }
    let one_nanosecond = jiff::SignedDuration::from_nanos(1);
    for (value, json) in &values {
        let created_at = value.time();
        // The renderers read the same time (or none) from the record.
        let record = format!(r#"{{"created":{json}}}"#);
        let (_, shown) = export::shown_id_and_time(&record).expect("a record renders");
        assert_eq!(shown, created_at, "{record}");
        // A message without a readable time is kept, whatever the filter.
        let kept = export::keep_time(parsed, parsed, Some(value));
        if created_at.is_none() {
            assert!(kept, "{value:?} has no readable time and must be kept");
        }
        if let Some(c) = created_at {
            assert!(export::keep_time(
                c.checked_sub(one_nanosecond).ok(),
                c.checked_add(one_nanosecond).ok(),
                Some(value)
            ));
            assert!(
                !export::keep_time(Some(c), None, Some(value)),
                "after is strict"
            );
            assert!(
                !export::keep_time(None, Some(c), Some(value)),
                "before is strict"
            );
        }
    }
    let _ = export::keep_time(None, None, None);
}

/// A room's and a channel's ids as a file name: portable (ASCII letters, digits, `-`, `_`,
/// `.`), no leading or trailing dot, no name Windows reserves, the format's extension, and
/// two different targets never one name unless their ids map to the same safe name.
pub fn file_names(room: &str, channel: Option<&str>) {
    for format in export::FORMAT_NAMES {
        let format = export::Format::parse(format).expect("a known format");
        let name = export::file_name(room, channel, format);
        let ext = format!(".{}", format.extension());
        assert!(name.ends_with(&ext), "{name:?}");
        let stem = &name[..name.len() - ext.len()];
        assert!(stem.len() <= export::LONGEST_STEM, "{name:?}");
        assert!(
            !stem.is_empty() && !stem.starts_with('.') && !stem.ends_with('.'),
            "{name:?}"
        );
        assert!(
            stem.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b)),
            "{name:?}"
        );
        let first = stem
            .split('.')
            .next()
            .unwrap_or_default()
            .to_ascii_uppercase();
        let reserved = ["CON", "PRN", "AUX", "NUL"].contains(&first.as_str())
            || (first.len() == 4
                && (first.starts_with("COM") || first.starts_with("LPT"))
                && matches!(first.as_bytes()[3], b'1'..=b'9'));
        assert!(!reserved, "{name:?} is a Windows device name");
    }
}

/// The import's input file as CSV and as JSON lines: rows or a usage error, never a panic;
/// every row's create request built or refused with a reason; a row's text for the result
/// file made of any field.
pub fn import_rows(bytes: &[u8]) {
    let csv = import::csv_rows(Cursor::new(bytes), "users.csv");
    let jsonl = import::jsonl_rows(Cursor::new(bytes), Path::new("users.jsonl"));
    for rows in [csv, jsonl].into_iter().flatten() {
        for row in rows {
            assert!(row.line >= 1);
            for key in [
                "username",
                "uniqueUserIdentifier",
                "isModerator",
                "meta",
                "",
            ] {
                let _ = row.text(key);
            }
            if row.problem.is_none() {
                let _ = import::create_user_of(&row.fields);
            }
        }
    }
}

/// The config file: every profile read as a command would read it, or a configuration error;
/// never a panic.
pub fn config(text: &str) {
    let _ = crate::config::check_profiles(text);
}

/// A record the service sent (any JSON text): its part-file line is one line, means the same
/// JSON, and keeps the record's bytes when it was on one line; every format renders it.
pub fn record(json: &str) {
    let Ok(raw) = serde_json::from_str::<Box<serde_json::value::RawValue>>(json) else {
        return;
    };
    let line = export::record_line(&raw);
    assert!(!line.contains('\n') && !line.contains('\r'), "{line:?}");
    if !raw.get().contains('\n') && !raw.get().contains('\r') {
        assert_eq!(line, raw.get());
    }
    // The export's `_id` and `created` (its identity and time filter) are the renderers'.
    let (id, created) = export::record_head(&line);
    let (shown_id, shown_time) =
        export::shown_id_and_time(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"));
    if let Some(id) = id {
        assert_eq!(shown_id.as_deref(), Some(&*id), "{line:?}");
    }
    assert_eq!(created.and_then(|c| c.time()), shown_time, "{line:?}");
    // (A lone surrogate, `"\ud800"`, is JSON text a RawValue keeps but a Value refuses.)
    if let Ok(sent) = serde_json::from_str::<serde_json::Value>(raw.get()) {
        let written: serde_json::Value =
            serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"));
        assert_eq!(sent, written, "{line:?}");
    }
    for format in export::FORMAT_NAMES {
        let format = export::Format::parse(format).expect("a known format");
        let mut out = Vec::new();
        export::render_one(format, line.as_bytes(), &mut out)
            .unwrap_or_else(|e| panic!("{format:?} failed on {line:?}: {e}"));
        if matches!(format.extension(), "txt") {
            let text = String::from_utf8_lossy(&out);
            let starts = text.lines().filter(|l| l.starts_with('[')).count();
            assert!(starts <= 1, "a field started a line of its own: {text:?}");
        }
    }
}

/// A cell and a line of text the service sent: no formula in the cell, no control character
/// left in the line.
pub fn text(text: &str) {
    let cell = crate::safe_text::csv_cell(text, false);
    assert!(
        !cell.starts_with(['=', '+', '-', '@', '\t', '\r', '\n']),
        "{cell:?}"
    );
    let line = crate::safe_text::terminal_line(text);
    assert!(!line.chars().any(char::is_control), "{line:?}");
}

/// The inputs the issue named, and what the fuzz target found: kept as tests the test run
/// runs (the fuzz target itself needs nightly).
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parsers_hold_their_invariants_on_hostile_input() {
        for t in [
            "2024-01-0é",
            "2024-01-1€T10:00:00Z",
            "",
            "2024-02-30",
            "9999-12-31T23:59:59Z",
            "2024-01-15 15:21",
            "2024-01-15T15:21:44.0000000001Z",
            "2020-01-01T00:00:00+01",
            "1704499200000.5",
            "1705332104.2930001",
            "1.705332104293e12",
            "-0",
            "-1e-10",
            "1e-99999999999999999999",
            "1e400",
            "-9999-01-01T00:00:00Z",
        ] {
            times(t, t);
            times("2024-01-15", t);
        }
        for id in [
            "CON", "con.txt", "COM1", "lpt9.x", ".", "..", "a b", "a/b", "é", "", "x.",
        ] {
            file_names(id, None);
            file_names("r", Some(id));
        }
        for bytes in [
            &b"username,uniqueUserIdentifier,isModerator,meta\nAnn,u1,maybe,{\n"[..],
            b"\xff\xfe\x00",
            b"{\"username\": 1, \"uniqueUserIdentifier\": null}\n[]\n\"x\"\n",
            b"username\n\"unterminated",
        ] {
            import_rows(bytes);
        }
        for text in [
            "[default]\nrate_limit = -1\n",
            "[a]\nb = [1, {c = 2}]\n",
            "= 1",
            "[default]\ntimeout = 1e400\n",
        ] {
            config(text);
        }
        for json in [
            "{\n  \"_id\": 1,\n  \"n\": 123456789012345678901234567890,\n  \"s\": \"a\\n[2024-01-15 15:21:44 UTC] admin: x\"\n}",
            "[1,\n2]",
            "\"\\ud800\"",
            "{\"user\": {\"username\": \"a\\r\\u2028b\"}, \"created\": 1705332104293}",
            "{\"_id\":\"a\",\"created\":\"2020-01-01T00:00:00Z\",\"cr\\u0065ated\":\"2025-01-01T00:00:00Z\",\"_id\":\"b\"}",
            "[{\"_id\":\"a\",\"created\":\"2020-01-01T00:00:00Z\"}]",
        ] {
            record(json);
        }
        text("=HYPERLINK(\"x\")\u{1b}[2J\u{202e}");
    }
}
