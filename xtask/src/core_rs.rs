//! Core's catalog (`core/src/operation/catalog.rs`): the `Operation` enum, each
//! operation's declaration as a static `OperationSpec`, and the build and
//! decode dispatch.

use std::collections::BTreeSet;
use std::fmt::Write;

use crate::declaration::{Declarations, Operation, Param};
use crate::GENERATED;

pub const PATH: &str = "core/src/operation/catalog.rs";

pub fn generate(d: &Declarations) -> String {
    let mut out = String::new();
    let w = &mut out;
    line(w, &format!("// {GENERATED}"));
    line(w, "");
    line(
        w,
        "//! Every operation's declaration as core reads it, and the dispatch by",
    );
    line(w, "//! operation: made from `api/operations.toml`.");
    line(w, "");
    line(w, "use serde_json::Value;");
    line(w, "");
    line(
        w,
        "use super::spec::{OperationSpec, Paging, ParamKind, ParamLocation, ParamSpec, RetryClass};",
    );
    line(w, "use crate::error::Result;");
    let models: BTreeSet<String> = d
        .operations
        .iter()
        .filter_map(|op| model_of(&op.result))
        .collect();
    if !models.is_empty() {
        let list: Vec<String> = models.into_iter().collect();
        line(w, &format!("use crate::models::{{{}}};", list.join(", ")));
    }
    line(w, "use crate::models::RawAuth;");
    line(
        w,
        "use crate::wire::{decode_json, WireRequest, WireResponse};",
    );
    line(w, "");

    // The enum.
    line(w, "/// An operation of the service, by its stable name.");
    line(w, "///");
    line(w, "/// ```");
    line(w, "/// use roomchat::wire::Operation;");
    line(w, "/// use serde_json::json;");
    line(w, "///");
    line(
        w,
        "/// let op = Operation::from_name(\"list_users\").unwrap();",
    );
    line(
        w,
        "/// let request = op.build(&json!({\"limit\": 10, \"skip\": 20}))?;",
    );
    line(
        w,
        "/// assert_eq!(request.url(\"https://api.example.com\", Some(\"REDACTED\")),",
    );
    line(w, "///            \"https://api.example.com/consumer/api/v2/users?auth=REDACTED&limit=10&skip=20\");");
    line(w, "/// # Ok::<(), roomchat::Error>(())");
    line(w, "/// ```");
    line(w, "#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]");
    line(w, "#[non_exhaustive]");
    line(w, "pub enum Operation {");
    for op in &d.operations {
        let doc = format!(
            "`{}`: {} `{}`. {} Params: {}.",
            op.name,
            op.method,
            op.path,
            op.summary,
            json_params_doc(op)
        );
        for text in wrap(&doc, 88) {
            line(w, &format!("    /// {text}"));
        }
        line(w, &format!("    {},", op.type_name()));
    }
    line(
        w,
        "    /// `raw`: a request the caller shapes. Params: `method`, `path`, `query`? (pairs of",
    );
    line(
        w,
        "    /// strings), `body`?, `auth`? (`private_key` | `public_key` | `none`).",
    );
    line(w, "    Raw,");
    line(w, "}");
    line(w, "");

    // Names, specs, dispatch.
    let count = d.operations.len() + 1;
    line(w, "impl Operation {");
    line(w, "    /// Every operation.");
    line(w, &format!("    pub const ALL: [Operation; {count}] = ["));
    for op in &d.operations {
        line(w, &format!("        Operation::{},", op.type_name()));
    }
    line(w, "        Operation::Raw,");
    line(w, "    ];");
    line(w, "");
    line(w, "    /// The stable snake_case name.");
    line(w, "    pub fn name(self) -> &'static str {");
    line(w, "        match self {");
    for op in &d.operations {
        line(
            w,
            &format!(
                "            Operation::{} => {:?},",
                op.type_name(),
                op.name
            ),
        );
    }
    line(w, "            Operation::Raw => \"raw\",");
    line(w, "        }");
    line(w, "    }");
    line(w, "");
    line(
        w,
        "    /// The operation's declaration; `None` for [`Operation::Raw`], which is",
    );
    line(w, "    /// whatever the caller sends.");
    line(
        w,
        "    pub fn spec(self) -> Option<&'static OperationSpec> {",
    );
    line(w, "        match self {");
    for op in &d.operations {
        line(
            w,
            &format!(
                "            Operation::{} => Some(&{}),",
                op.type_name(),
                op.name.to_uppercase()
            ),
        );
    }
    line(w, "            Operation::Raw => None,");
    line(w, "        }");
    line(w, "    }");
    line(w, "");
    line(
        w,
        "    /// The wire request for `params` (a JSON object, or null for none), checked",
    );
    line(
        w,
        "    /// as the typed builders check it: unknown parameters and wrong types are",
    );
    line(w, "    /// validation errors, and nothing is sent.");
    line(
        w,
        "    pub fn build(self, params: &Value) -> Result<WireRequest> {",
    );
    line(w, "        match self {");
    for op in &d.operations {
        if op.is_hand_written() {
            line(
                w,
                &format!(
                    "            Operation::{} => super::build_{}(params),",
                    op.type_name(),
                    op.name
                ),
            );
        } else {
            line(
                w,
                &format!(
                    "            Operation::{} => {}.build(params),",
                    op.type_name(),
                    op.name.to_uppercase()
                ),
            );
        }
    }
    line(w, "            Operation::Raw => super::build_raw(params),");
    line(w, "        }");
    line(w, "    }");
    line(w, "");
    line(
        w,
        "    /// The result of `response` as JSON with the service's field names (fields",
    );
    line(
        w,
        "    /// that were absent stay absent, unknown ones are kept); `raw` gives",
    );
    line(
        w,
        "    /// `{\"status\", \"body\"}`. A non-2xx answer is the error it stands for.",
    );
    line(
        w,
        "    pub fn decode(self, response: &WireResponse) -> Result<Value> {",
    );
    line(w, "        match self {");
    for op in &d.operations {
        line(
            w,
            &format!(
                "            Operation::{} => super::to_json(decode_json::<{}>(response)),",
                op.type_name(),
                op.result
            ),
        );
    }
    line(
        w,
        "            Operation::Raw => super::decode_raw(response),",
    );
    line(w, "        }");
    line(w, "    }");
    line(w, "}");

    for op in &d.operations {
        line(w, "");
        spec(w, op);
    }
    out
}

fn spec(w: &mut String, op: &Operation) {
    line(
        w,
        &format!(
            "static {}: OperationSpec = OperationSpec {{",
            op.name.to_uppercase()
        ),
    );
    line(w, &format!("    name: {:?},", op.name));
    line(w, &format!("    summary: {:?},", op.summary));
    line(w, &format!("    method: {:?},", op.method));
    line(w, &format!("    path: {:?},", op.path));
    let auth = match op.auth.as_str() {
        "public_key" => "PublicKey",
        _ => "PrivateKey",
    };
    line(w, &format!("    auth: RawAuth::{auth},"));
    let retry = match op.retry.as_str() {
        "repeatable" => "Repeatable",
        _ => "Never",
    };
    line(w, &format!("    retry: RetryClass::{retry},"));
    let pages = match op.pages.as_str() {
        "total" => "Total",
        "total_records" => "TotalRecords",
        _ => "None",
    };
    line(w, &format!("    pages: Paging::{pages},"));
    line(w, &format!("    result: {:?},", op.result));
    if op.params.is_empty() {
        line(w, "    params: &[],");
    } else {
        line(w, "    params: &[");
        for p in &op.params {
            param(w, p);
        }
        line(w, "    ],");
    }
    let groups: Vec<String> = op
        .exactly_one
        .iter()
        .map(|g| format!("&[{}]", quoted(g)))
        .collect();
    line(w, &format!("    exactly_one: &[{}],", groups.join(", ")));
    line(w, &format!("    extra: {},", op.extra));
    line(w, "};");
}

fn param(w: &mut String, p: &Param) {
    let location = match p.location.as_str() {
        "path" => "Path",
        "query" => "Query",
        _ => "Body",
    };
    let kind = match p.kind.as_str() {
        "id" => "Id",
        "integer" => "Integer",
        "boolean" => "Boolean",
        _ => "String",
    };
    let opt = |v: Option<u64>| v.map_or("None".to_owned(), |n| format!("Some({n})"));
    line(w, "        ParamSpec {");
    line(w, &format!("            name: {:?},", p.name));
    line(
        w,
        &format!("            location: ParamLocation::{location},"),
    );
    line(w, &format!("            kind: ParamKind::{kind},"));
    line(w, &format!("            required: {},", p.required));
    line(w, &format!("            min: {},", opt(p.min)));
    line(w, &format!("            max: {},", opt(p.max)));
    line(w, &format!("            max_len: {},", opt(p.max_len)));
    line(
        w,
        &format!("            choices: &[{}],", quoted(&p.choices)),
    );
    let default = p
        .default_text()
        .map_or("None".to_owned(), |d| format!("Some({d:?})"));
    line(w, &format!("            default: {default},"));
    line(w, "        },");
}

/// The params as the JSON form takes them, for the enum's docs.
fn json_params_doc(op: &Operation) -> String {
    if let Some(doc) = &op.json_params {
        return doc.clone();
    }
    if op.params.is_empty() {
        return "none".into();
    }
    let mut parts = Vec::new();
    for p in &op.params {
        let mut part = format!("`{}`", p.name);
        if !p.required {
            part.push('?');
        }
        let mut notes = Vec::new();
        if let (Some(min), Some(max)) = (p.min, p.max) {
            notes.push(format!("{min} to {max}"));
        }
        if let Some(max) = p.max_len {
            notes.push(format!("at most {max} characters"));
        }
        if !p.choices.is_empty() {
            let choices: Vec<String> = p.choices.iter().map(|c| format!("`{c}`")).collect();
            notes.push(choices.join(" | "));
        }
        if !notes.is_empty() {
            write!(part, " ({})", notes.join("; ")).unwrap();
        }
        parts.push(part);
    }
    let mut doc = parts.join(", ");
    for group in &op.exactly_one {
        let names: Vec<String> = group.iter().map(|n| format!("`{n}`")).collect();
        write!(doc, "; exactly one of {}", names.join(", ")).unwrap();
    }
    if op.extra {
        doc.push_str("; other body fields are sent as they are");
    }
    doc
}

/// The model a result names, to import (`Vec<Message>` → `Message`); none for JSON.
fn model_of(result: &str) -> Option<String> {
    let inner = result
        .strip_prefix("Vec<")
        .and_then(|r| r.strip_suffix('>'))
        .unwrap_or(result);
    (!inner.contains("::")).then(|| inner.to_owned())
}

fn quoted(items: &[String]) -> String {
    items
        .iter()
        .map(|s| format!("{s:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn line(w: &mut String, text: &str) {
    w.push_str(text);
    w.push('\n');
}

/// `text` in lines of at most `width` characters, broken at spaces.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut current = String::new();
    for word in text.split(' ') {
        if !current.is_empty() && current.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut current));
        }
        if !current.is_empty() {
            current.push(' ');
        }
        current.push_str(word);
    }
    lines.push(current);
    lines
}
