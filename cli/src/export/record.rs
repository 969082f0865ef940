//! One message record of a page: its `_id` and `created`, and its line in the part file.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::time::Created;

/// What tells a listed message from the others: its `_id` when it has one (a string), else
/// its record's bytes as its part-file line holds them (see [`write_record`]). So a record
/// without an id is still recognised as the page of overlap's first (the export goes on
/// instead of stepping back for ever), and two such records differ as soon as one byte does.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum Identity {
    Id(String),
    Record(String),
}

impl Identity {
    /// The identity of `raw`, whose `_id` (as [`head`] reads it) is `id`.
    pub(super) fn of(raw: &RawValue, id: Option<&str>) -> Identity {
        match id {
            Some(id) => Identity::Id(id.to_owned()),
            None => Identity::Record(line_text(raw).into_owned()),
        }
    }

    /// The identity of a part-file line (without its line feed): the same as that of the
    /// record it was written from.
    pub(super) fn of_line(line: &str) -> Identity {
        match head(line).0 {
            Some(id) => Identity::Id(id.into_owned()),
            None => Identity::Record(line.to_owned()),
        }
    }

    /// Whether `raw`, whose `_id` is `id`, is this message (without building its identity).
    pub(super) fn is(&self, raw: &RawValue, id: Option<&str>) -> bool {
        match (self, id) {
            (Identity::Id(known), Some(id)) => known == id,
            (Identity::Record(known), None) => *known == line_text(raw),
            _ => false,
        }
    }
}

/// The `_id` and `created` of a message record (JSON text serde_json has checked already):
/// a scan of its top-level keys, much cheaper than a second parse of every field. A key or a
/// value with escapes is unescaped through serde_json (`"cr\u0065ated"` is `created`); a key
/// given twice counts once, the last (as JavaScript and the renderers read it), so every key
/// is scanned. An `_id` that is not a string is none; a `created` that is neither a string nor
/// a number is none.
pub(crate) fn head(raw: &str) -> (Option<Cow<'_, str>>, Option<Created<'_>>) {
    let b = raw.as_bytes();
    let (mut id, mut created) = (None, None);
    // An object's keys only: a record that is not one (an array, a string) has no time and
    // no id, whatever its text holds (the renderers show it whole).
    let mut i = match b
        .iter()
        .position(|c| !matches!(c, b' ' | b'\t' | b'\n' | b'\r'))
    {
        Some(p) if b[p] == b'{' => p + 1,
        _ => return (None, None),
    };
    // The end of the string starting at `at` (a quote), one past its closing quote.
    let string_end = |mut at: usize| -> usize {
        at += 1;
        while at < b.len() {
            match b[at] {
                b'\\' => at += 2,
                b'"' => return at + 1,
                _ => at += 1,
            }
        }
        b.len()
    };
    let text_of = |from: usize, to: usize| -> Option<Cow<'_, str>> {
        let slice = raw.get(from..to)?;
        if slice.contains('\\') {
            serde_json::from_str::<String>(slice).ok().map(Cow::Owned)
        } else {
            slice.get(1..slice.len().checked_sub(1)?).map(Cow::Borrowed)
        }
    };
    while i < b.len() {
        // A key.
        while i < b.len() && b[i] != b'"' {
            if b[i] == b'}' {
                return (id, created);
            }
            i += 1;
        }
        if i >= b.len() {
            break;
        }
        let key_end = string_end(i);
        let key = text_of(i, key_end);
        let key = key.as_deref();
        i = key_end;
        while i < b.len() && (b[i] == b':' || b[i].is_ascii_whitespace()) {
            i += 1;
        }
        // Its value: a string, or anything else skipped by depth.
        let value_start = i;
        if i < b.len() && b[i] == b'"' {
            i = string_end(i);
            match key {
                Some("_id") => id = text_of(value_start, i),
                Some("created") => created = text_of(value_start, i).map(Created::Text),
                _ => {}
            }
        } else {
            let mut depth = 0usize;
            while i < b.len() {
                match b[i] {
                    b'"' => {
                        i = string_end(i);
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' if depth == 0 => break,
                    b'}' | b']' => depth -= 1,
                    b',' if depth == 0 => break,
                    _ => {}
                }
                i += 1;
            }
            match key {
                Some("_id") => id = None,
                Some("created") => {
                    created = match b.get(value_start) {
                        Some(b'-' | b'0'..=b'9') => raw
                            .get(value_start..i)
                            .map(|n| Created::Number(n.trim_end())),
                        _ => None,
                    }
                }
                _ => {}
            }
        }
        // Past the comma (or at the closing brace).
        while i < b.len() && b[i] != b',' && b[i] != b'}' {
            i += 1;
        }
        if i < b.len() && b[i] == b'}' {
            break;
        }
        i += 1;
    }
    (id, created)
}

/// Appends one line of the part file to `line`: [`line_text`], then a line feed.
pub(super) fn write_record(line: &mut Vec<u8>, raw: &RawValue) {
    line.extend_from_slice(line_text(raw).as_bytes());
    line.push(b'\n');
}

/// A record's line in the part file: the record as the service sent it, byte for byte (key
/// order, number text, string escapes). A record that spans lines (a pretty-printed page) has
/// the whitespace outside its strings removed, the only bytes JSON gives no meaning; a record
/// on one line is left as it is.
pub(crate) fn line_text(raw: &RawValue) -> Cow<'_, str> {
    let text = raw.get();
    if !(text.contains('\n') || text.contains('\r')) {
        return Cow::Borrowed(text);
    }
    reflowed(text, None).into()
}

/// `raw` indented as `serde_json::to_string_pretty` indents (two spaces, `"key": value`, `[]`
/// and `{}` when empty), every byte of its tokens kept: the key order and the number text as
/// sent, which a trip through `serde_json::Value` would lose (sorted keys, rounded numbers).
pub(crate) fn indented_text(raw: &RawValue) -> String {
    reflowed(raw.get(), Some("  "))
}

/// `json` (valid JSON text) with the whitespace outside its strings replaced: none at all
/// (`indent` `None`), or a line per value indented by `indent` per level. Inside a string
/// every byte is kept (an escaped quote does not end it).
fn reflowed(json: &str, indent: Option<&str>) -> String {
    let mut out = Vec::with_capacity(json.len() + json.len() / 4);
    let new_line = |out: &mut Vec<u8>, depth: usize| {
        if let Some(indent) = indent {
            out.push(b'\n');
            for _ in 0..depth {
                out.extend_from_slice(indent.as_bytes());
            }
        }
    };
    let (mut in_string, mut escaped) = (false, false);
    // `just_opened`: a `{` or `[` was written, its first value not yet (an empty one stays `{}`).
    let (mut depth, mut just_opened) = (0usize, false);
    for &c in json.as_bytes() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == b'\\' {
                escaped = true;
            } else if c == b'"' {
                in_string = false;
            }
            continue;
        }
        if matches!(c, b' ' | b'\t' | b'\n' | b'\r') {
            continue;
        }
        let first_inside = std::mem::take(&mut just_opened);
        match c {
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                if !first_inside {
                    new_line(&mut out, depth);
                }
                out.push(c);
                continue;
            }
            _ if first_inside => new_line(&mut out, depth),
            _ => {}
        }
        match c {
            b'{' | b'[' => {
                out.push(c);
                depth += 1;
                just_opened = true;
            }
            b',' => {
                out.push(c);
                new_line(&mut out, depth);
            }
            b':' => {
                out.push(c);
                if indent.is_some() {
                    out.push(b' ');
                }
            }
            _ => {
                in_string = c == b'"';
                out.push(c);
            }
        }
    }
    // Only ASCII blanks outside strings were dropped or added: still UTF-8.
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_head_of_a_record() {
        let text = |t: &'static str| Some(Created::Text(t.into()));
        let cases = [
            (
                r#"{"_id":"a1","created":"t1","x":1}"#,
                Some("a1"),
                text("t1"),
            ),
            (
                r#"{"user":{"_id":"u","created":"no"},"likes":[{"_id":"l"}],"message":"a \"}\" ,","_id":"m\u0031","created":"t"}"#,
                Some("m1"),
                text("t"),
            ),
            (
                r#" { "created" : "c" , "_id" : "i" } "#,
                Some("i"),
                text("c"),
            ),
            // A number is the filter's too (seconds or milliseconds since 1970).
            (
                r#"{"created": 1705332104000 ,"_id":"n"}"#,
                Some("n"),
                Some(Created::Number("1705332104000")),
            ),
            (
                r#"{"_id":"e","created":-1.5e3}"#,
                Some("e"),
                Some(Created::Number("-1.5e3")),
            ),
            (r#"{"_id":"b","created":true}"#, Some("b"), None),
            (r#"{"_id":null,"n":[1,[2,{"a":"}"}]]}"#, None, None),
            (r#"{}"#, None, None),
            // Not an object: shown whole, no time.
            (r#"[{"_id":"a","created":"t"}]"#, None, None),
            (r#""{\"_id\":\"a\",\"created\":\"t\"}""#, None, None),
            // A key given twice counts once, the last (as the renderers read it).
            (
                r#"{"_id":"first","created":"t1","created":"t2","_id":"last"}"#,
                Some("last"),
                text("t2"),
            ),
            (
                r#"{"_id":"a","created":"t","created":null,"_id":5}"#,
                None,
                None,
            ),
            (
                r#"{"created":1,"_id":"n","created":2}"#,
                Some("n"),
                Some(Created::Number("2")),
            ),
            // An escaped key is its unescaped text.
            (
                r#"{"\u005fid":"e","cr\u0065ated":"t","c\"reated":"no"}"#,
                Some("e"),
                text("t"),
            ),
        ];
        for (raw, id, created) in cases {
            let (i, c) = head(raw);
            assert_eq!((i.as_deref(), c), (id, created), "{raw}");
        }
    }

    #[test]
    fn a_record_keeps_its_bytes_and_loses_only_the_blanks_between_lines() {
        let pretty = "{\n  \"_id\" : \"m1\",\n\t\"zeta\": 1.50,\r\n  \"big\": 123456789012345678901234567890,\n  \"text\": \"a  b\\n \\\" }\\\\\",\n  \"alpha\": [ 1, { } ]\n}";
        let raw: Box<RawValue> = serde_json::from_str(pretty).unwrap();
        let mut line = Vec::new();
        write_record(&mut line, &raw);
        assert_eq!(
            String::from_utf8(line).unwrap(),
            "{\"_id\":\"m1\",\"zeta\":1.50,\"big\":123456789012345678901234567890,\"text\":\"a  b\\n \\\" }\\\\\",\"alpha\":[1,{}]}\n"
        );
        // On one line: exactly as sent, blanks and all.
        let one = r#"{ "_id": "m2", "n": 1e400 }"#;
        let raw: Box<RawValue> = serde_json::from_str(one).unwrap();
        let mut line = Vec::new();
        write_record(&mut line, &raw);
        assert_eq!(line, format!("{one}\n").into_bytes());
    }

    #[test]
    fn indented_as_serde_json_indents_keeping_key_order_and_number_text() {
        // Where a `Value` loses nothing (sorted keys, numbers an f64 writes as sent), the
        // text is serde_json's own pretty text, whatever the blanks it came with.
        let values = [
            serde_json::json!({"a": 1, "b": [1, 2.5, {"c": null, "d": []}, {}], "e": {"f": "x, y: {z}"}}),
            serde_json::json!([]),
            serde_json::json!({}),
            serde_json::json!("a \"quoted\" \\ string\n"),
            serde_json::json!([[[]], [{}], -0.5, true, "é ☃"]),
        ];
        for value in values {
            let pretty = serde_json::to_string_pretty(&value).unwrap();
            for text in [
                value.to_string(),
                pretty.clone(),
                pretty.replace('\n', " \r\n\t "),
            ] {
                let raw: Box<RawValue> = serde_json::from_str(&text).unwrap();
                assert_eq!(indented_text(&raw), pretty, "{text}");
            }
        }
        // Key order and number text as sent.
        let raw: Box<RawValue> =
            serde_json::from_str(r#"{"z":1.10,"a":123456789012345678901234567890,"m":[]}"#)
                .unwrap();
        assert_eq!(
            indented_text(&raw),
            "{\n  \"z\": 1.10,\n  \"a\": 123456789012345678901234567890,\n  \"m\": []\n}"
        );
    }
}
