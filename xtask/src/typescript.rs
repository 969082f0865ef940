//! TypeScript text the Node generators share (`node.rs`, `node_models.rs`):
//! JSDoc comments and property names.

use crate::declaration::Field;
use crate::text::{line, wrap};

/// Whether JS takes `name` as a bare identifier.
pub fn is_identifier(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
}

/// A string literal in single quotes.
pub fn ts_quote(text: &str) -> String {
    format!("'{}'", text.replace('\\', "\\\\").replace('\'', "\\'"))
}

/// A property name: as it is when JS takes it bare, else quoted.
pub fn ts_property(name: &str) -> String {
    if is_identifier(name) {
        name.to_owned()
    } else {
        ts_quote(name)
    }
}

/// A JSDoc comment at `indent`: one line when it fits, else wrapped.
pub fn jsdoc(w: &mut String, indent: &str, text: &str) {
    let one = format!("{indent}/** {text} */");
    if one.chars().count() <= 110 {
        line(w, &one);
        return;
    }
    line(w, &format!("{indent}/**"));
    for part in wrap(text, 100 - indent.len()) {
        line(w, &format!("{indent} * {part}"));
    }
    line(w, &format!("{indent} */"));
}

/// The type of a record's or a model's field: the record (`Room`, `Room[]`), or
/// its plain type's (an `epoch_seconds` field is a `Date`: index.js makes it one).
pub fn ts_field_type(field: &Field) -> String {
    if let Some(record) = field.record() {
        return if field.is_list() {
            format!("{record}[]")
        } else {
            record.to_owned()
        };
    }
    match field.kind.as_str() {
        "integer" | "number" | "unsigned" => "number",
        "boolean" => "boolean",
        "json" => "unknown",
        "epoch_seconds" => "Date",
        _ => "string",
    }
    .to_owned()
}
