//! Core's catalog (`core/src/wire/operation/catalog.rs`): the `Operation` enum, each
//! operation's declaration as a static `OperationSpec`, and the build and
//! decode dispatch.

use std::collections::BTreeSet;
use std::fmt::Write;

use serde::Deserialize;

use crate::declaration::{
    read_table, snake, Auth, Declarations, Field, Location, Operation, Pages, Param, ParamKind,
    Record, Retry, RetryWords,
};
use crate::rust_struct::{self, Member, Struct};
use crate::text::{line, wrap};
use crate::GENERATED;

pub const PATH: &str = "core/src/wire/operation/catalog.rs";
pub const RECORDS_PATH: &str = "core/src/wire/operation/records.rs";
pub const PARAMS_PATH: &str = "core/src/wire/operation/params.rs";
pub const REQUESTS_PATH: &str = "core/src/wire/operation/requests.rs";
pub const METHODS_PATH: &str = "core/src/api/methods.rs";

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
        "use super::spec::{\n    DeclaredError, OperationSpec, Paging, ParamKind, ParamLocation, ParamSpec, RetryClass,\n};",
    );
    line(w, "use crate::error::{ErrorKind, Result};");
    let records: BTreeSet<&str> = d.records.iter().map(|r| r.name.as_str()).collect();
    let (declared, models): (BTreeSet<String>, BTreeSet<String>) = d
        .operations
        .iter()
        .filter_map(|op| model_of(&op.rust_result()))
        .partition(|name| records.contains(name.as_str()));
    if !models.is_empty() {
        let list: Vec<String> = models.into_iter().collect();
        line(
            w,
            &format!("use crate::wire::models::{{{}}};", list.join(", ")),
        );
    }
    if !declared.is_empty() {
        let list: Vec<String> = declared.into_iter().collect();
        line(w, &format!("use super::records::{{{}}};", list.join(", ")));
    }
    line(w, "use crate::wire::models::RawAuth;");
    line(w, "use crate::wire::{WireRequest, WireResponse};");
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
    line(w, "        self.decode_as(response)");
    line(w, "    }");
    line(w, "");
    line(
        w,
        "    /// [`decode`](Self::decode) as JSON text, written from the typed record at",
    );
    line(
        w,
        "    /// once (its fields in their declared order, then the unknown ones): no",
    );
    line(
        w,
        "    /// JSON value is built in between, for a caller that hands the text on.",
    );
    line(
        w,
        "    pub fn decode_text(self, response: &WireResponse) -> Result<String> {",
    );
    line(w, "        self.decode_as(response)");
    line(w, "    }");
    line(w, "");
    line(
        w,
        "    fn decode_as<F: super::Answer>(self, response: &WireResponse) -> Result<F> {",
    );
    line(w, "        match self {");
    for op in &d.operations {
        line(
            w,
            &format!(
                "            Operation::{} => super::answer::<{}, F>(response),",
                op.type_name(),
                op.rust_result()
            ),
        );
    }
    line(
        w,
        "            Operation::Raw => super::decode_raw(response).map(F::from_value),",
    );
    line(w, "        }");
    line(w, "    }");
    line(w, "}");

    for op in &d.operations {
        line(w, "");
        spec(w, op, d);
    }
    out
}

fn spec(w: &mut String, op: &Operation, d: &Declarations) {
    line(
        w,
        &format!(
            "pub(super) static {}: OperationSpec = OperationSpec {{",
            op.name.to_uppercase()
        ),
    );
    line(w, &format!("    name: {:?},", op.name));
    line(w, &format!("    summary: {:?},", op.summary));
    line(w, &format!("    family: {:?},", op.family));
    line(w, &format!("    method: {:?},", op.method));
    line(w, &format!("    path: {:?},", op.path));
    let auth = match op.auth {
        Auth::PrivateKey => "PrivateKey",
        Auth::PublicKey => "PublicKey",
    };
    line(w, &format!("    auth: RawAuth::{auth},"));
    let retry = match op.retry {
        Retry::Repeatable => "Repeatable",
        Retry::Never => "Never",
    };
    line(w, &format!("    retry: RetryClass::{retry},"));
    let pages = match op.pages {
        Pages::None => "None",
        Pages::Total => "Total",
        Pages::TotalRecords => "TotalRecords",
    };
    line(w, &format!("    pages: Paging::{pages},"));
    line(w, &format!("    result: {:?},", op.rust_result()));
    // `load` checked that every listing that pages has them.
    let items = d.item_fields(op).unwrap_or_default();
    line(w, &format!("    item_fields: &[{}],", quoted(&items)));
    let items_field = d.items_field(op).unwrap_or_default();
    line(w, &format!("    items_field: {items_field:?},"));
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
    if op.errors.is_empty() {
        line(w, "    errors: &[],");
    } else {
        line(w, "    errors: &[");
        for e in &op.errors {
            line(
                w,
                &format!(
                    "        DeclaredError {{ kind: ErrorKind::{}, when: {:?} }},",
                    camel(&e.kind),
                    e.when
                ),
            );
        }
        line(w, "    ],");
    }
    line(w, "};");
}

/// `user_not_found` as `UserNotFound`: an `ErrorKind` variant's name.
fn camel(snake: &str) -> String {
    snake
        .split('_')
        .map(|word| {
            let mut chars = word.chars();
            chars.next().map_or(String::new(), |c| {
                c.to_ascii_uppercase().to_string() + chars.as_str()
            })
        })
        .collect()
}

fn param(w: &mut String, p: &Param) {
    let location = match p.location {
        Location::Path => "Path",
        Location::Query => "Query",
        Location::Body => "Body",
    };
    let kind = match p.kind {
        ParamKind::String => "String",
        ParamKind::Id => "Id",
        ParamKind::Integer => "Integer",
        ParamKind::Boolean => "Boolean",
        ParamKind::Switch => "Switch",
        ParamKind::Json => "Json",
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
        match p.kind {
            ParamKind::Switch => notes.push("a boolean, sent as `\"on\"`/`\"off\"`".to_owned()),
            ParamKind::Json => notes.push("any JSON".to_owned()),
            ParamKind::String | ParamKind::Id | ParamKind::Integer | ParamKind::Boolean => {}
        }
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

// ---- records.rs -----------------------------------------------------------------------

/// The records' Rust types: every field optional, unknown fields kept in `extra`.
pub fn generate_records(d: &Declarations) -> String {
    let mut out = String::new();
    let w = &mut out;
    line(w, &format!("// {GENERATED}"));
    line(w, "");
    line(
        w,
        "//! The typed records of the answers of the generated operations: made from",
    );
    line(
        w,
        "//! `api/operations.toml`. Every field the service may leave out is an `Option`;",
    );
    line(
        w,
        "//! the fields a record does not name are kept in `extra`, never dropped.",
    );
    line(w, "");
    line(w, "use serde::{Deserialize, Serialize};");
    line(w, "use serde_json::{Map, Value};");
    line(w, "");
    line(w, "use crate::wire::Decoded;");
    if d.records.iter().flat_map(|r| &r.fields).any(|f| f.secret) {
        line(w, "");
        line(
            w,
            "/// A secret field's value (`secret = true`) as `Debug` shows it: its length, never its text.",
        );
        line(w, "struct Hidden<'a>(&'a String);");
        line(w, "");
        line(w, "impl std::fmt::Debug for Hidden<'_> {");
        line(
            w,
            "    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {",
        );
        line(
            w,
            "        write!(f, \"[hidden: {} characters]\", self.0.chars().count())",
        );
        line(w, "    }");
        line(w, "}");
    }
    for record in &d.records {
        line(w, "");
        emit_record(w, record);
    }
    out
}

fn emit_record(w: &mut String, record: &Record) {
    let members = record
        .fields
        .iter()
        .map(|field| {
            let mut member = Member::of(field, format!("Option<{}>", rust_type(field)));
            member.doc = format!("`{}`: {}", field.name, field.doc);
            member.serde.push("default".to_owned());
            member
                .serde
                .push("skip_serializing_if = \"Option::is_none\"".to_owned());
            if field.secret {
                member.hidden = Some(format!("&self.{}.as_ref().map(Hidden)", member.name));
            }
            member
        })
        .collect();
    rust_struct::emit(
        w,
        &Struct {
            name: &record.name,
            doc: &record.doc,
            derives: "Clone, PartialEq, Default, Serialize, Deserialize",
            non_exhaustive: true,
            members,
            extra_doc: "Every other field the service sent, as it came.",
            debug_note: None,
            extra_ty: None,
        },
    );
    line(w, "");
    line(w, &format!("impl Decoded for {} {{", record.name));
    line(w, "    fn may_report_failure(&self) -> bool {");
    if record.has_success() {
        line(w, "        self.success != Some(true)");
    } else {
        line(
            w,
            "        self.extra.get(\"success\") == Some(&Value::Bool(false))",
        );
    }
    line(w, "    }");
    line(w, "}");
}

fn rust_type(field: &Field) -> String {
    let scalar = |kind: &str| -> String {
        match kind {
            "string" => "String".into(),
            "boolean" => "bool".into(),
            "integer" => "i64".into(),
            "number" => "f64".into(),
            "json" => "Value".into(),
            record => record.into(),
        }
    };
    match field.record() {
        Some(inner) if field.is_list() => format!("Vec<{inner}>"),
        _ => scalar(&field.kind),
    }
}

// ---- methods.rs -----------------------------------------------------------------------

/// Rust's published shape of an operation that predates the declarations
/// (`[operation.rust]`), and its doc example.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RustShape {
    /// The published parameters type (`crate::wire::models`, generated by
    /// `core_params.rs`) the typed method takes by reference; its
    /// `declared_params()` gives the declaration's JSON params.
    pub params: Option<String>,
    /// The doc example's lines (a doctest; `# ` hides a line).
    pub example: Option<String>,
    /// The parameters type's doc, its lines as published (a doctest may be in it).
    pub doc: Option<String>,
    /// Its derives.
    pub derives: Option<String>,
    /// Its fields, in order (none: it is the enum that picks the one param of
    /// the exactly_one group).
    #[serde(default)]
    pub fields: Vec<RustField>,
}

/// A field of a published parameters struct: a param (by its wire name), the
/// param an enum of `[operation.enums]` gives (`role`, `pathForm`: the field
/// is that enum), or `extra`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RustField {
    pub name: String,
    pub doc: String,
    /// The published integer type, where it is not `u64`.
    #[serde(rename = "type")]
    pub ty: Option<String>,
    /// A constant published with the declared maximum.
    pub max: Option<RustConst>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RustConst {
    pub name: String,
    pub doc: String,
}

pub fn rust_shape(op: &Operation) -> Result<RustShape, String> {
    Ok(read_table(op.rust.as_ref(), &op.table_at("rust"))?.unwrap_or_default())
}

/// The arguments a typed method (and its wire builder) takes after `&self`:
/// the path's parameters and the other required ones as `&str`, in declared
/// order, then the parameters type when there are optional ones (or a
/// hand-written type holding them all).
fn method_args<'a>(
    op: &'a Operation,
    shape: &RustShape,
) -> (Vec<String>, Vec<&'a Param>, Option<String>) {
    if let Some(ty) = &shape.params {
        return (vec![format!("params: &{ty}")], Vec::new(), Some(ty.clone()));
    }
    let positional = positional(op);
    let mut args: Vec<String> = positional
        .iter()
        .map(|p| format!("{}: {}", snake(&p.name), argument_type(p)))
        .collect();
    let ty = has_params_type(op).then(|| op.type_name());
    if let Some(ty) = &ty {
        args.push(format!("params: &{ty}"));
    }
    (args, positional, ty)
}

/// The type of a parameter the method takes as its own argument.
fn argument_type(p: &Param) -> &'static str {
    match p.kind {
        ParamKind::Integer => "u64",
        ParamKind::Boolean | ParamKind::Switch => "bool",
        ParamKind::Json => "&Value",
        ParamKind::String | ParamKind::Id => "&str",
    }
}

/// The parameters a method takes one by one (`Operation::argument_params`).
fn positional(op: &Operation) -> Vec<&Param> {
    op.argument_params()
}

/// The optional parameters a generated parameters type holds.
fn optional(op: &Operation) -> Vec<&Param> {
    op.named_params()
        .into_iter()
        .filter(|p| !p.required)
        .collect()
}

fn has_params_type(op: &Operation) -> bool {
    !optional(op).is_empty() || op.extra
}

/// The parameters types of the generated operations (the wire layer's: the
/// builders take them too).
pub fn generate_params(d: &Declarations) -> Result<String, String> {
    let mut out = String::new();
    let w = &mut out;
    line(w, &format!("// {GENERATED}"));
    line(w, "");
    line(
        w,
        "//! The parameters the generated operations take, each sent only when set:",
    );
    line(w, "//! made from `api/operations.toml`.");
    line(w, "");
    line(w, "#[allow(unused_imports)] // as the operations need them");
    line(w, "use serde_json::{Map, Value};");
    for op in &d.operations {
        if rust_shape(op)?.params.is_none() && has_params_type(op) {
            line(w, "");
            emit_params(w, op);
        }
    }
    Ok(out)
}

/// The typed `Client` method of every operation.
pub fn generate_methods(d: &Declarations) -> Result<String, String> {
    let mut out = String::new();
    let w = &mut out;
    line(w, &format!("// {GENERATED}"));
    line(w, "");
    line(
        w,
        "//! The typed `Client` method of every operation: made from `api/operations.toml`.",
    );
    line(w, "");
    line(w, "#[allow(unused_imports)] // as the operations need them");
    line(w, "use serde_json::{Map, Value};");
    line(w, "");
    line(w, "use crate::error::Result;");
    line(w, "use crate::send::client::Client;");
    line(w, "use crate::wire::models::*;");
    line(w, "use crate::wire::operation::params::*;");
    line(w, "use crate::wire::operation::records::*;");
    line(w, "use crate::wire::Operation;");
    line(w, "");
    line(w, "impl Client {");
    let mut first = true;
    for op in &d.operations {
        if !first {
            line(w, "");
        }
        first = false;
        emit_method(w, op, &rust_shape(op)?);
        if is_paged(op) {
            line(w, "");
            emit_paging_methods(w, op)?;
        }
    }
    line(w, "}");
    let mut page_records = BTreeSet::new();
    for op in d.operations.iter().filter(|op| is_paged(op)) {
        if page_records.insert(op.result_record()) {
            line(w, "");
            emit_page_impl(w, op, d)?;
        }
    }
    Ok(out)
}

/// Whether the operation gets the generic iterators (`Client::iter_<name>`,
/// `Client::<name>_pages`): a newer listing that pages; the older `list_users`
/// keeps its own (`users()`, `user_pages()`).
fn is_paged(op: &Operation) -> bool {
    op.pages != Pages::None && !op.is_older()
}

/// `Client::<name>_pages` and `Client::iter_<name>`: the generic iterators
/// (`crate::api::pages`) over the operation's typed method.
fn emit_paging_methods(w: &mut String, op: &Operation) -> Result<(), String> {
    let at = |what: &str| format!("api/operations.toml, operation {:?}: {what}", op.name);
    let limit = op
        .params
        .iter()
        .find(|p| {
            p.name == "limit" && p.location == Location::Query && p.kind == ParamKind::Integer
        })
        .ok_or_else(|| at("a listing that pages needs an integer query param `limit`"))?;
    if !op
        .params
        .iter()
        .any(|p| p.name == "skip" && p.location == Location::Query && p.kind == ParamKind::Integer)
    {
        return Err(at(
            "a listing that pages needs an integer query param `skip`",
        ));
    }
    let page_size = limit
        .max
        .map_or("crate::DEFAULT_ITER_PAGE_SIZE".to_owned(), |max| {
            format!("{}", max.min(200))
        });
    let (args, positional, params_type) = method_args(op, &RustShape::default());
    let params_type = params_type.ok_or_else(|| at("a listing has a params type"))?;
    let record = op.result_record();
    let mut all = vec!["&self".to_owned()];
    all.extend(args);
    let owned: Vec<String> = positional.iter().map(|p| snake(&p.name)).collect();
    let size_doc = match limit.max {
        Some(max) => format!("1 to {max}, default {}", max.min(200)),
        None => "default 200".to_owned(),
    };
    let doc = format!(
        "Every page of [`Client::{name}`] in turn, lazily: `params.limit` records a page ({size_doc}), from `params.skip` (default 0). An error is an `Err` item and the next step fetches the same page again; see [`Pages`](crate::Pages).",
        name = op.name
    );
    for text in wrap(&doc, 88) {
        line(w, &format!("    /// {text}"));
    }
    line(
        w,
        &format!(
            "    pub fn {}_pages({}) -> crate::Pages<{record}> {{",
            op.name,
            all.join(", ")
        ),
    );
    for name in &owned {
        line(w, &format!("        let {name} = {name}.to_owned();"));
    }
    line(w, "        let params = params.clone();");
    line(w, "        crate::Pages::new(");
    line(w, "            self.clone(),");
    line(
        w,
        &format!("            params.limit.unwrap_or({page_size}),"),
    );
    line(w, "            params.skip.unwrap_or(0),");
    line(w, "            move |client, limit, skip| {");
    line(
        w,
        &format!("                let page = {params_type} {{ limit: Some(limit), skip: Some(skip), ..params.clone() }};"),
    );
    let mut call: Vec<String> = owned.iter().map(|n| format!("&{n}")).collect();
    call.push("&page".to_owned());
    line(
        w,
        &format!("                client.{}({})", op.name, call.join(", ")),
    );
    line(w, "            },");
    line(w, "        )");
    line(w, "    }");
    line(w, "");
    let doc = format!(
        "Every record of [`Client::{name}`], fetched lazily page by page as [`Client::{name}_pages`] fetches them. An error is an `Err` item and the next step fetches the same page again; [`PageItems::next_skip`](crate::PageItems::next_skip) is where to resume after a stop. See [`PageItems`](crate::PageItems).",
        name = op.name
    );
    for text in wrap(&doc, 88) {
        line(w, &format!("    /// {text}"));
    }
    line(
        w,
        &format!(
            "    pub fn iter_{}({}) -> crate::PageItems<{record}> {{",
            op.name,
            all.join(", ")
        ),
    );
    let call: Vec<String> = owned
        .iter()
        .cloned()
        .chain(std::iter::once("params".to_owned()))
        .collect();
    line(
        w,
        &format!(
            "        crate::PageItems::new(self.{}_pages({}))",
            op.name,
            call.join(", ")
        ),
    );
    line(w, "    }");
    Ok(())
}

/// The page record's `Page` impl: its records are its one list field, its
/// total the field `pages` names.
fn emit_page_impl(w: &mut String, op: &Operation, d: &Declarations) -> Result<(), String> {
    let name = op.result_record();
    let at = |what: &str| {
        format!(
            "api/operations.toml, record {name:?} (a page of {:?}): {what}",
            op.name
        )
    };
    let record = d
        .records
        .iter()
        .find(|r| r.name == name)
        .ok_or_else(|| at("no such record"))?;
    let lists: Vec<&Field> = record
        .fields
        .iter()
        .filter(|f| f.is_list() && f.record().is_some())
        .collect();
    let [items] = lists.as_slice() else {
        return Err(at("a page record has exactly one list of records"));
    };
    let total_name = match op.pages {
        Pages::Total => "total",
        Pages::TotalRecords => "totalRecords",
        Pages::None => return Err(at("an operation that does not page has no page")),
    };
    let total = record
        .fields
        .iter()
        .find(|f| f.name == total_name && f.kind == "integer")
        .ok_or_else(|| at(&format!("no integer field `{total_name}`")))?;
    let item = items.record().unwrap_or_default();
    let (field, total) = (items.snake(), total.snake());
    line(w, &format!("impl crate::Page for {name} {{"));
    line(w, &format!("    type Item = {item};"));
    line(w, "");
    line(w, &format!("    fn items(&self) -> &[{item}] {{"));
    line(
        w,
        &format!("        self.{field}.as_deref().unwrap_or_default()"),
    );
    line(w, "    }");
    line(w, "");
    line(w, &format!("    fn into_items(self) -> Vec<{item}> {{"));
    line(w, &format!("        self.{field}.unwrap_or_default()"));
    line(w, "    }");
    line(w, "");
    line(w, "    fn total(&self) -> Option<u64> {");
    line(
        w,
        &format!("        self.{total}.and_then(|n| u64::try_from(n).ok())"),
    );
    line(w, "    }");
    line(w, "}");
    Ok(())
}

/// The Rust type of a parameter's value, and what its setter takes.
fn param_type(p: &Param) -> (&'static str, &'static str) {
    match p.kind {
        ParamKind::Integer => ("u64", "u64"),
        ParamKind::Boolean | ParamKind::Switch => ("bool", "bool"),
        ParamKind::Json => ("Value", "impl Into<Value>"),
        ParamKind::String | ParamKind::Id => ("String", "impl Into<String>"),
    }
}

fn param_doc(p: &Param) -> String {
    let mut notes = p.bounds();
    if !p.choices.is_empty() {
        let choices: Vec<String> = p.choices.iter().map(|c| format!("`{c:?}`")).collect();
        notes.push(choices.join(" or "));
    }
    let mut doc = format!("`{}`", p.name);
    if !notes.is_empty() {
        doc.push_str(&format!(" ({})", notes.join("; ")));
    }
    doc
}

fn emit_params(w: &mut String, op: &Operation) {
    let ty = op.type_name();
    // Required parameters are the method's own arguments (see `positional`).
    let required: Vec<&Param> = Vec::new();
    line(
        w,
        &format!(
            "/// The parameters of [`Client::{0}`](crate::Client::{0}): each is sent only when set.",
            op.name
        ),
    );
    line(w, "#[derive(Debug, Clone, PartialEq, Default)]");
    line(w, "#[non_exhaustive]");
    line(w, &format!("pub struct {ty} {{"));
    for p in optional(op) {
        line(w, &format!("    /// {}.", param_doc(p)));
        let (rust, _) = param_type(p);
        if p.required {
            line(w, &format!("    pub {}: {rust},", snake(&p.name)));
        } else {
            line(w, &format!("    pub {}: Option<{rust}>,", snake(&p.name)));
        }
    }
    if op.extra {
        line(
            w,
            "    /// Body fields the declaration does not type, sent as they are.",
        );
        line(w, "    pub extra: Map<String, Value>,");
    }
    line(w, "}");
    line(w, "");
    line(w, &format!("impl {ty} {{"));
    let args: Vec<String> = required
        .iter()
        .map(|p| format!("{}: {}", snake(&p.name), param_type(p).1))
        .collect();
    if required.is_empty() {
        line(w, "    /// Parameters with none set.");
    } else {
        line(w, "    /// Parameters with the required ones.");
    }
    line(
        w,
        &format!("    pub fn new({}) -> Self {{", args.join(", ")),
    );
    if required.is_empty() {
        line(w, "        Self::default()");
        line(w, "    }");
    } else {
        line(w, &format!("        {ty} {{"));
        for p in &required {
            let into = if param_type(p).0 == "String" || param_type(p).0 == "Value" {
                ".into()"
            } else {
                ""
            };
            line(
                w,
                &format!("            {}: {}{into},", snake(&p.name), snake(&p.name)),
            );
        }
        line(w, "            ..Default::default()");
        line(w, "        }");
        line(w, "    }");
    }
    for p in optional(op) {
        let (rust, takes) = param_type(p);
        let into = if rust == "String" || rust == "Value" {
            ".into()"
        } else {
            ""
        };
        let name = snake(&p.name);
        line(w, "");
        line(w, &format!("    /// Sets {}.", param_doc(p)));
        line(
            w,
            &format!("    pub fn {name}(mut self, value: {takes}) -> Self {{"),
        );
        line(w, &format!("        self.{name} = Some(value{into});"));
        line(w, "        self");
        line(w, "    }");
    }
    if op.extra {
        line(w, "");
        line(
            w,
            "    /// Sets a body field the declaration does not type, sent as it is.",
        );
        line(
            w,
            "    pub fn field(mut self, name: impl Into<String>, value: impl Into<Value>) -> Self {",
        );
        line(w, "        self.extra.insert(name.into(), value.into());");
        line(w, "        self");
        line(w, "    }");
    }
    line(w, "");
    line(
        w,
        "    /// The JSON params of the declaration's generic builder.",
    );
    line(
        w,
        "    pub(crate) fn write_params(&self, params: &mut Map<String, Value>) {",
    );
    if op.extra {
        line(w, "        params.extend(self.extra.clone());");
    }
    for p in optional(op) {
        let name = snake(&p.name);
        if p.required {
            line(
                w,
                &format!(
                    "        params.insert({:?}.into(), self.{name}.clone().into());",
                    p.name
                ),
            );
        } else {
            // A JSON value goes in as it is (`.into()` would convert it to itself).
            let value = match p.kind {
                ParamKind::Integer | ParamKind::Boolean | ParamKind::Switch => "(*value).into()",
                ParamKind::Json => "value.clone()",
                ParamKind::String | ParamKind::Id => "value.clone().into()",
            };
            line(w, &format!("        if let Some(value) = &self.{name} {{"));
            line(
                w,
                &format!("            params.insert({:?}.into(), {value});", p.name),
            );
            line(w, "        }");
        }
    }
    line(w, "    }");
    line(w, "}");
}

/// The method's doc: what it does, how it is sent, and its example.
fn method_doc(w: &mut String, op: &Operation, shape: &RustShape) {
    let mut doc = op.summary.clone();
    if let Some(key) = op.auth.sentence("public key", " ([`ClientBuilder::public_key`](crate::ClientBuilder::public_key); without one, [`ErrorKind::Configuration`](crate::ErrorKind::Configuration) and nothing is sent)") {
        doc.push(' ');
        doc.push_str(&key);
    }
    let mut paragraphs = vec![
        doc,
        format!("`{} {}`. {}", op.method, op.path, retry_doc(op)),
    ];
    if op.pages != Pages::None && !op.is_older() {
        paragraphs.push(format!(
            "Every page in turn: [`Client::{0}_pages`]; every item: [`Client::iter_{0}`].",
            op.name
        ));
    }
    for (i, paragraph) in paragraphs.iter().enumerate() {
        if i > 0 {
            line(w, "    ///");
        }
        for text in wrap(paragraph, 88) {
            line(w, &format!("    /// {text}"));
        }
    }
    if let Some(example) = &shape.example {
        line(w, "    ///");
        line(w, "    /// ```");
        line(
            w,
            "    /// # let emu = roomchat_emulator::Emulator::start(Default::default()).unwrap();",
        );
        line(w, "    /// # let client = roomchat::Client::builder(emu.private_key()).base_url(emu.base_url()).chat_url(emu.chat_url()).public_key(emu.public_key()).build()?;");
        for text in example.lines() {
            line(w, format!("    /// {text}").trim_end());
        }
        line(w, "    /// # Ok::<(), roomchat::Error>(())");
        line(w, "    /// ```");
    }
    errors_doc(w, op);
}

/// The method doc's `# Errors` section: a value outside the declared limits,
/// then the errors the declaration names, each by its `ErrorKind`.
fn errors_doc(w: &mut String, op: &Operation) {
    let mut items = Vec::new();
    if !op
        .params
        .iter()
        .all(|p| p.bounds().is_empty() && p.choices.is_empty())
        || !op.exactly_one.is_empty()
    {
        items.push(format!(
            "{}: a value outside the declared limits{}; nothing is sent.",
            error_kind_link("validation"),
            if op.exactly_one.is_empty() {
                ""
            } else {
                ", or not exactly one of a group"
            }
        ));
    }
    for error in &op.errors {
        items.push(format!("{}: {}.", error_kind_link(&error.kind), error.when));
    }
    if items.is_empty() {
        return;
    }
    line(w, "    ///");
    line(w, "    /// # Errors");
    line(w, "    ///");
    line(
        w,
        "    /// Besides those of every call (the key, the network, the rate limit, a 5xx):",
    );
    line(w, "    ///");
    for item in items {
        let mut first = true;
        for text in wrap(&item, 86) {
            let bullet = if first { "-" } else { " " };
            line(w, &format!("    /// {bullet} {text}"));
            first = false;
        }
    }
}

/// `not_found` → a link to `ErrorKind::NotFound`.
fn error_kind_link(kind: &str) -> String {
    let variant = crate::declaration::pascal(kind);
    format!("[`ErrorKind::{variant}`](crate::ErrorKind::{variant})")
}

/// The retry sentence of a method's doc.
fn retry_doc(op: &Operation) -> String {
    op.retry.sentence(RetryWords {
        label: true,
        never: "Never",
        timeout: true,
        unless: &format!(
            " {}, unless the client allows it ([`ClientBuilder::retry_non_idempotent`](crate::ClientBuilder::retry_non_idempotent))",
            Retry::REASON
        ),
    })
}

/// The JSON params of a call, built from the method's arguments (`json`).
fn emit_json_params(
    w: &mut String,
    positional: &[&Param],
    params_type: Option<&str>,
    hand_written: bool,
) {
    if hand_written {
        line(w, "        let json = params.declared_params();");
        return;
    }
    if positional.is_empty() && params_type.is_none() {
        line(w, "        let json = Value::Null;");
        return;
    }
    line(w, "        let mut map = Map::new();");
    for p in positional {
        let value = match p.kind {
            ParamKind::Json => format!("{}.clone()", snake(&p.name)),
            ParamKind::String
            | ParamKind::Id
            | ParamKind::Integer
            | ParamKind::Boolean
            | ParamKind::Switch => format!("{}.into()", snake(&p.name)),
        };
        line(
            w,
            &format!("        map.insert({:?}.into(), {value});", p.name),
        );
    }
    if params_type.is_some() {
        line(w, "        params.write_params(&mut map);");
    }
    line(w, "        let json = Value::Object(map);");
}

fn emit_method(w: &mut String, op: &Operation, shape: &RustShape) {
    method_doc(w, op, shape);
    let (args, positional, params_type) = method_args(op, shape);
    let mut all = vec!["&self".to_owned()];
    all.extend(args);
    line(
        w,
        &format!(
            "    pub fn {}({}) -> Result<{}> {{",
            op.name,
            all.join(", "),
            op.rust_result()
        ),
    );
    emit_json_params(
        w,
        &positional,
        params_type.as_deref(),
        shape.params.is_some(),
    );
    line(
        w,
        &format!(
            "        self.call_declared(Operation::{}, &json)",
            op.type_name()
        ),
    );
    line(w, "    }");
}

// ---- requests.rs ----------------------------------------------------------------------

/// Every operation's wire builder and decoder, for callers with their own HTTP
/// stack (re-exported by `crate::wire`).
pub fn generate_requests(d: &Declarations) -> Result<String, String> {
    let mut out = String::new();
    let w = &mut out;
    line(w, &format!("// {GENERATED}"));
    line(w, "");
    line(
        w,
        "//! Every operation's wire builder and decoder (re-exported by [`crate::wire`]):",
    );
    line(w, "//! made from `api/operations.toml`.");
    line(w, "");
    line(w, "use serde_json::{Map, Value};");
    line(w, "");
    line(
        w,
        "#[allow(unused_imports)] // the parameters types of the generated operations",
    );
    line(w, "use super::params::*;");
    line(w, "use super::records::*;");
    line(w, "use super::Operation;");
    line(w, "use crate::error::Result;");
    line(
        w,
        "#[allow(unused_imports)] // the models the operations take and give",
    );
    line(w, "use crate::wire::models::*;");
    line(
        w,
        "use crate::wire::{decode_json, WireRequest, WireResponse};",
    );
    for op in &d.operations {
        let shape = rust_shape(op)?;
        let (args, positional, params_type) = method_args(op, &shape);
        if !op.is_hand_written() {
            line(w, "");
            let doc = format!(
                "The request of [`Client::{name}`](crate::Client::{name}): {} `{}`, checked against the declaration (a validation error, nothing to send).",
                op.method, op.path, name = op.name
            );
            for text in wrap(&doc, 92) {
                line(w, &format!("/// {text}"));
            }
            if op.params.is_empty() {
                line(w, &format!("pub fn {}() -> WireRequest {{", op.name));
                line(
                    w,
                    &format!(
                        "    super::catalog::{}.request_without_params()",
                        op.name.to_uppercase()
                    ),
                );
                line(w, "}");
            } else {
                line(
                    w,
                    &format!(
                        "pub fn {}({}) -> Result<WireRequest> {{",
                        op.name,
                        args.join(", ")
                    ),
                );
                let mut body = String::new();
                emit_json_params(
                    &mut body,
                    &positional,
                    params_type.as_deref(),
                    shape.params.is_some(),
                );
                for text in body.lines() {
                    line(w, &format!("    {}", text.trim_start()));
                }
                line(
                    w,
                    &format!("    Operation::{}.build(&json)", op.type_name()),
                );
                line(w, "}");
            }
        }
        line(w, "");
        let doc = format!(
            "Decodes the answer of [`Client::{name}`](crate::Client::{name}): a non-2xx answer, or one that says `\"success\": false`, is the error it stands for.",
            name = op.name
        );
        for text in wrap(&doc, 92) {
            line(w, &format!("/// {text}"));
        }
        line(
            w,
            &format!(
                "pub fn decode_{}(response: &WireResponse) -> Result<{}> {{",
                op.name,
                op.rust_result()
            ),
        );
        line(w, "    decode_json(response)");
        line(w, "}");
    }
    Ok(out)
}
