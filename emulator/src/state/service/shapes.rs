//! The admin API's shapes of a room's listing, for tests of a client's edge cases (the
//! command line's fault harness uses them): records stored verbatim (any fields, types, key
//! order and number text, with or without an `_id`), messages deleted one by one, pages
//! pretty-printed, and a `limit` capped below what was asked.

use super::*;

/// How a room's (or channel's) message listing is served; the default is the service's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct ListingShape {
    /// Each page indented (two spaces a level): only whitespace outside strings differs.
    pub pretty: bool,
    /// A page holds at most this many messages, whatever `limit` asked (and its `limit` says so).
    pub limit_cap: Option<u64>,
}

/// `text` (JSON) indented by two spaces a level, a member or element a line: only whitespace
/// outside strings changes (what was there is dropped), so every record keeps its key order,
/// number text and escapes.
pub(super) fn pretty_json(text: &str) -> String {
    fn newline(out: &mut String, depth: usize) {
        out.push('\n');
        for _ in 0..depth {
            out.push_str("  ");
        }
    }
    let is_space = |c: &char| matches!(c, ' ' | '\t' | '\n' | '\r');
    let mut out = String::with_capacity(text.len() + text.len() / 2);
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        match c {
            '"' => {
                in_string = true;
                out.push(c);
            }
            '{' | '[' => {
                out.push(c);
                while chars.next_if(is_space).is_some() {}
                // An empty object or array stays on its line.
                match chars.next_if(|c| matches!(c, '}' | ']')) {
                    Some(close) => out.push(close),
                    None => {
                        depth += 1;
                        newline(&mut out, depth);
                    }
                }
            }
            '}' | ']' => {
                depth = depth.saturating_sub(1);
                newline(&mut out, depth);
                out.push(c);
            }
            ',' => {
                out.push(c);
                newline(&mut out, depth);
            }
            ':' => out.push_str(": "),
            c if is_space(&c) => {}
            c => out.push(c),
        }
    }
    out
}

/// The room id and optional channel id an admin spec names (`roomId`, `channelId`).
fn container_of(spec: &Value) -> Result<(String, Option<String>), String> {
    let room_id = spec["roomId"]
        .as_str()
        .ok_or("roomId (string) is required")?
        .to_owned();
    match &spec["channelId"] {
        Value::Null => Ok((room_id, None)),
        Value::String(c) => Ok((room_id, Some(c.clone()))),
        _ => Err("channelId should be a string".into()),
    }
}

impl MessageLog {
    /// Removes the messages whose id `gone` says; how many it removed.
    fn remove_where(&mut self, mut gone: impl FnMut(&str) -> bool) -> usize {
        let mut kept = 0usize;
        let new_index: Vec<Option<usize>> = self
            .items
            .iter()
            .map(|m| {
                (!gone(&m.id)).then(|| {
                    kept += 1;
                    kept - 1
                })
            })
            .collect();
        self.with_file = self
            .with_file
            .iter()
            .filter_map(|&i| new_index[i])
            .collect();
        let mut at = 0;
        self.items.retain(|_| {
            at += 1;
            new_index[at - 1].is_some()
        });
        new_index.len() - kept
    }
}

impl State {
    /// The message log `spec` names, or the admin error.
    fn named_log(&mut self, spec: &Value) -> Result<&mut MessageLog, String> {
        let (room_id, channel_id) = container_of(spec)?;
        let channel = channel_id.as_deref();
        self.log_mut(&room_id, channel)
            .ok_or_else(|| match channel {
                None => format!("no room {room_id}; create it first"),
                Some(c) => format!("no channel {c} in room {room_id}"),
            })
    }

    /// `POST /_emulator/messages` with `records`: each a JSON object's text, stored and served
    /// verbatim (its bytes in every page), appended in order; their handles: a record's `_id`
    /// when it is a string, else a new id the record does not show. All are checked first: a
    /// bad one adds none.
    pub(super) fn push_records(
        &mut self,
        room_id: &str,
        channel_id: Option<&str>,
        records: &Value,
    ) -> Result<Vec<String>, String> {
        let items = records
            .as_array()
            .ok_or("records should be an array of JSON texts")?;
        let mut checked = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let text = item
                .as_str()
                .ok_or_else(|| format!("records[{i}] should be a string: a JSON object's text"))?;
            let fields = match serde_json::from_str::<Value>(text) {
                Ok(Value::Object(fields)) => fields,
                Ok(_) => return Err(format!("records[{i}] is not a JSON object")),
                Err(e) => return Err(format!("records[{i}] is not JSON: {e}")),
            };
            let id = fields.get("_id").and_then(Value::as_str).map(str::to_owned);
            let has_file = fields.get("file").is_some_and(|f| !f.is_null());
            checked.push((text.to_owned(), id, has_file));
        }
        let mut handles = Vec::with_capacity(checked.len());
        for (text, id, has_file) in checked {
            let handle = id.unwrap_or_else(|| self.new_id());
            self.log_mut(room_id, channel_id)
                .ok_or("the room or channel is gone")?
                .push(handle.clone(), text, has_file);
            handles.push(handle);
        }
        Ok(handles)
    }

    /// `DELETE /_emulator/messages`: `{"roomId", "channelId"?, "ids": [...]}` (message ids, or
    /// the handles `records` gave) → `{"deleted", "total"}`; ids it does not hold are ignored.
    pub fn delete_messages(&mut self, spec: &Value) -> Result<Value, String> {
        let ids: HashSet<String> = spec["ids"]
            .as_array()
            .and_then(|ids| {
                ids.iter()
                    .map(|id| id.as_str().map(str::to_owned))
                    .collect()
            })
            .ok_or("ids (an array of strings) is required")?;
        let log = self.named_log(spec)?;
        let deleted = log.remove_where(|id| ids.contains(id));
        Ok(json!({"deleted": deleted, "total": log.items.len()}))
    }

    /// `PUT /_emulator/listing`: `{"roomId", "channelId"?, "pretty"?: bool, "limitCap"?: N | null}`
    /// (a field absent stays as it was; `limitCap` null lifts the cap) → the shape now.
    pub fn set_listing(&mut self, spec: &Value) -> Result<Value, String> {
        let pretty = match &spec["pretty"] {
            Value::Null => None,
            Value::Bool(b) => Some(*b),
            _ => return Err("pretty should be a boolean".into()),
        };
        let limit_cap = match spec.get("limitCap") {
            None => None,
            Some(Value::Null) => Some(None),
            Some(v) => {
                Some(Some(v.as_u64().filter(|n| *n >= 1).ok_or(
                    "limitCap should be a whole number from 1, or null",
                )?))
            }
        };
        let (room_id, channel_id) = container_of(spec)?;
        let log = self.named_log(spec)?;
        if let Some(pretty) = pretty {
            log.shape.pretty = pretty;
        }
        if let Some(cap) = limit_cap {
            log.shape.limit_cap = cap;
        }
        Ok(json!({
            "roomId": room_id,
            "channelId": channel_id,
            "pretty": log.shape.pretty,
            "limitCap": log.shape.limit_cap,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pretty_printing_changes_only_whitespace_outside_strings() {
        let page = r#"{"limit":2,"messages":[{"z":1,"a":123456789012345678901234567890,"s":"a, \"b\": [c]\\","e":{},"l":[ ],"n":[1,[2,{"k":null}]]},{ "_id" : "x" }]}"#;
        let pretty = pretty_json(page);
        assert!(
            pretty.contains("\n  \"messages\": [\n    {\n      \"z\": 1,"),
            "{pretty}"
        );
        assert!(pretty.contains("\"e\": {},\n"), "{pretty}");
        assert!(pretty.contains("\"l\": [],\n"), "{pretty}");
        assert!(pretty.contains(r#""s": "a, \"b\": [c]\\","#), "{pretty}");
        assert!(
            pretty.contains("123456789012345678901234567890"),
            "{pretty}"
        );
        // Only whitespace differs: without any, both are the same text (the strings' own
        // spaces go from both alike), and both are the same JSON.
        let bare = |t: &str| t.split_whitespace().collect::<String>();
        assert_eq!(bare(&pretty), bare(page));
        let (a, b): (Value, Value) = (
            serde_json::from_str(page).unwrap(),
            serde_json::from_str(&pretty).unwrap(),
        );
        assert_eq!(a, b);
    }
}
