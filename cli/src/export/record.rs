//! One message record of a page: its `_id` and `created`, and its line in the part file.

use std::borrow::Cow;

use serde_json::value::RawValue;

/// The `_id` and `created` of a message record (JSON text serde_json has checked already):
/// a scan of its top-level keys, much cheaper than a second parse of every field. A value
/// with escapes is unescaped through serde_json.
pub(super) fn head(raw: &str) -> (Option<Cow<'_, str>>, Option<Cow<'_, str>>) {
    let b = raw.as_bytes();
    let (mut id, mut created) = (None, None);
    let mut i = match b.iter().position(|&c| c == b'{') {
        Some(p) => p + 1,
        None => return (None, None),
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
        let key = &raw[i..key_end];
        i = key_end;
        while i < b.len() && (b[i] == b':' || b[i].is_ascii_whitespace()) {
            i += 1;
        }
        // Its value: a string, or anything else skipped by depth.
        let value_start = i;
        if i < b.len() && b[i] == b'"' {
            i = string_end(i);
            match key {
                "\"_id\"" => id = text_of(value_start, i),
                "\"created\"" => created = text_of(value_start, i),
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
        }
        if id.is_some() && created.is_some() {
            break;
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

/// Appends one line of the part file to `line`: the record as the service sent it (compacted
/// only if it spanned lines).
pub(super) fn write_record(line: &mut Vec<u8>, raw: &RawValue) {
    let text = raw.get();
    if text.contains('\n') || text.contains('\r') {
        let value: serde_json::Value = serde_json::from_str(text).expect("valid JSON");
        serde_json::to_writer(&mut *line, &value).expect("serializes");
    } else {
        line.extend_from_slice(text.as_bytes());
    }
    line.push(b'\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_head_of_a_record() {
        let cases = [
            (
                r#"{"_id":"a1","created":"t1","x":1}"#,
                Some("a1"),
                Some("t1"),
            ),
            (
                r#"{"user":{"_id":"u","created":"no"},"likes":[{"_id":"l"}],"message":"a \"}\" ,","_id":"m\u0031","created":"t"}"#,
                Some("m1"),
                Some("t"),
            ),
            (
                r#" { "created" : "c" , "_id" : "i" } "#,
                Some("i"),
                Some("c"),
            ),
            (r#"{"_id":null,"n":[1,[2,{"a":"}"}]]}"#, None, None),
            (r#"{}"#, None, None),
        ];
        for (raw, id, created) in cases {
            let (i, c) = head(raw);
            assert_eq!((i.as_deref(), c.as_deref()), (id, created), "{raw}");
        }
    }
}
