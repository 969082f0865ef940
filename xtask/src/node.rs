//! The Node surface of every declared operation, made from the declarations:
//!
//! - `bindings/node/operations.js`: the `Client` methods, which index.js
//!   installs on `Client.prototype`; each hands its arguments to the client's
//!   one call path (index.js `#operation`: the per-call options, `AbortSignal`s
//!   and `withResponse` of every other method), which runs the operation by its
//!   name through the addon's `callOperation` on the package's threads.
//! - `bindings/node/operations.d.ts`: their types (the params, the records, the
//!   older operations' models (`node_models.rs`), the methods with their
//!   `withResponse` overloads), merged into `Client` by index.d.ts.
//! - `bindings/node/src/records.rs`: how the addon decodes each operation's
//!   answer and writes it as the JS layer returns it, on the pool thread (the
//!   event loop only parses it): a declared record by its fields' wire and JS
//!   names (`shape::record`), one of core's models by its generated writer
//!   (`src/models.rs`, `node_models.rs`); and the params object of an `[operation.node]` table as
//!   core's JSON params.
//!
//! Names: the required params are the first arguments, the path's first
//! (unless a table's `arguments` names others), camelCase (`roomId`); the
//! other params are fields of a params
//! object named as on the wire (`webhookURL`); a record's fields are named as
//! on the wire with a leading `_` dropped (`_id` → `id`), nested records shaped
//! the same way, unknown fields kept in `extra`.
//! The operations that predate the declarations keep their published shapes
//! through their `[operation.node]` tables ([`NodeShape`]).

use std::collections::{BTreeSet, HashSet};

use serde::Deserialize;

use crate::declaration::{
    camel, read_table, snake, Declarations, ExtraField, ExtraKind, Field, Location, Operation,
    Pages, Param, ParamKind, Record, Retry, RetryWords,
};
use crate::node_models::{self, NodeModel};
use crate::text::{line, wrap};
use crate::typescript::{is_identifier, jsdoc, ts_field_type, ts_property, ts_quote};
use crate::GENERATED;

pub const JS_PATH: &str = "bindings/node/operations.js";
pub const DTS_PATH: &str = "bindings/node/operations.d.ts";
pub const RECORDS_PATH: &str = "bindings/node/src/records.rs";

/// An operation's `[operation.node]` table: the published Node shapes of an
/// operation that predates the declarations, which they do not say. Each key
/// is documented in api/operations.toml under "Published shapes: Node".
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeShape {
    /// The params the method takes as its own first arguments, in order,
    /// instead of its path params (`[]`: every param in the params object).
    arguments: Option<Vec<String>>,
    /// The answer is decoded into core's view borrowed from the body
    /// (`wire::decode_<name>_view`) and written by `shape::<result>_view`.
    #[serde(default)]
    view: bool,
    /// `object`: the fields the declaration does not type come as one `extra`
    /// object of the params (the JSON param of core's hand-written builder),
    /// not at the params' top level.
    extra: Option<String>,
    /// A declared boolean param that stands for the `role` JSON param of
    /// core's hand-written builder: true is `moderator`, or `room_moderator`
    /// with `chatRoom`; false or absent is the builder's default.
    role_flag: Option<String>,
}

/// An operation with its Node table (empty when it has none).
struct NodeOp<'a> {
    op: &'a Operation,
    shape: NodeShape,
}

/// Every file this generator writes: (path from the repository's root, contents).
pub fn files(d: &Declarations) -> Result<Vec<(&'static str, String)>, String> {
    let ops = node_ops(d)?;
    check(d, &ops)?;
    let paged = paged(d, &ops)?;
    let models = node_models::read(d)?;
    Ok(vec![
        (JS_PATH, js(d, &ops, &paged)),
        (DTS_PATH, dts(d, &ops, &paged, &models)),
        (RECORDS_PATH, crate::rustfmt(&records_rs(d, &ops, &paged))?),
        (
            node_models::PATH,
            crate::rustfmt(&node_models::rust(&models))?,
        ),
    ])
}

/// Every declared operation, each with its Node table read.
fn node_ops(d: &Declarations) -> Result<Vec<NodeOp<'_>>, String> {
    d.operations
        .iter()
        .map(|op| {
            let shape = read_table(op.node.as_ref(), &op.table_at("node"))?.unwrap_or_default();
            Ok(NodeOp { op, shape })
        })
        .collect()
}

/// The method's name: a snake_case operation name in camelCase.
fn method_name(op: &Operation) -> String {
    camel(&op.name)
}

/// A param's argument name: `roomId`, `webhookURL` → `webhookUrl`.
fn argument_name(p: &Param) -> String {
    camel(&snake(&p.name))
}

/// A record field's name in JS: the wire name, a leading `_` dropped.
fn js_name(field: &Field) -> &str {
    field.name.strip_prefix('_').unwrap_or(&field.name)
}

/// The name of an operation's params type: `UpdateBotParams`.
fn params_type(op: &Operation) -> String {
    format!("{}Params", op.type_name())
}

impl NodeOp<'_> {
    /// The params the method takes as its own arguments (`Operation::argument_params`),
    /// unless its table says.
    fn arguments(&self) -> Vec<&Param> {
        match &self.shape.arguments {
            None => self.op.argument_params(),
            Some(names) => names
                .iter()
                .filter_map(|name| self.op.params.iter().find(|p| &p.name == name))
                .collect(),
        }
    }

    /// The params of the params object, in declared order.
    fn object_params(&self) -> Vec<&Param> {
        let arguments: Vec<&str> = self.arguments().iter().map(|p| p.name.as_str()).collect();
        self.op
            .params
            .iter()
            .filter(|p| !arguments.contains(&p.name.as_str()))
            .collect()
    }

    /// Whether the method takes a params object (params beyond its arguments, or extra fields).
    fn takes_params(&self) -> bool {
        !self.object_params().is_empty() || self.op.extra
    }

    /// Whether a call must give the params object: a required param, or a group of which one is needed.
    fn params_required(&self) -> bool {
        self.object_params().iter().any(|p| p.required) || !self.op.exactly_one.is_empty()
    }

    /// Whether the fields the declaration does not type come as one `extra` object of
    /// the params: an older operation's whose table says so, and every newer one with
    /// `extra = true` (an object keeps TypeScript's check of the typed fields' names,
    /// which an index signature would switch off: a misspelt `passwordProtcted` is an
    /// error, not a field sent as given).
    fn extra_object(&self) -> bool {
        self.shape.extra.as_deref() == Some("object") || self.flattens_extra()
    }

    /// Whether the `extra` object's fields are sent beside the typed ones (a newer
    /// operation's: core takes them at the params' top level), not as core's `extra`.
    fn flattens_extra(&self) -> bool {
        self.op.extra && !self.op.is_older()
    }

    /// Whether the addon turns the params object into core's JSON params (its table says how).
    fn translates_params(&self) -> bool {
        !self.op.extra_fields.is_empty() || self.extra_object() || self.shape.role_flag.is_some()
    }
}

const RESERVED: &[&str] = &[
    "arguments",
    "await",
    "break",
    "case",
    "catch",
    "class",
    "const",
    "continue",
    "debugger",
    "default",
    "delete",
    "do",
    "else",
    "enum",
    "eval",
    "export",
    "extends",
    "false",
    "finally",
    "for",
    "function",
    "if",
    "implements",
    "import",
    "in",
    "instanceof",
    "interface",
    "let",
    "new",
    "null",
    "options",
    "params",
    "return",
    "run",
    "static",
    "super",
    "switch",
    "this",
    "throw",
    "try",
    "typeof",
];

/// What the declarations' checks (declaration.rs) leave to each language: the
/// names this one makes must be usable JS names, distinct where they meet, and
/// a Node table must name what the declaration has.
fn check(d: &Declarations, ops: &[NodeOp<'_>]) -> Result<(), String> {
    for node in ops {
        let op = node.op;
        let at = |what: String| format!("api/operations.toml, operation {:?}: {what}", op.name);
        for name in node.shape.arguments.iter().flatten() {
            if !op.params.iter().any(|p| &p.name == name) {
                return Err(at(format!(
                    "[operation.node] arguments names {name:?}, not a param"
                )));
            }
        }
        for p in node.arguments() {
            let name = argument_name(p);
            if !is_identifier(&name) || RESERVED.contains(&name.as_str()) {
                return Err(at(format!(
                    "param {:?} makes the Node argument name {name:?}, which JS cannot take",
                    p.name
                )));
            }
        }
        if node.shape.arguments.is_some() {
            for group in &op.exactly_one {
                if node.arguments().iter().any(|p| group.contains(&p.name)) {
                    return Err(at(
                        "an argument of its own cannot be one of an exactly_one group".into(),
                    ));
                }
            }
        }
        if node.shape.view && (op.result.contains('<') || op.result.contains("::")) {
            return Err(at("[operation.node] view needs a model's view".into()));
        }
        for field in &node.op.extra_fields {
            if op.params.iter().any(|p| p.name == field.name) || field.name == "extra" {
                return Err(at(format!(
                    "[operation.node] field {:?} is declared already",
                    field.name
                )));
            }
        }
        if let Some(extra) = &node.shape.extra {
            if extra != "object" || !op.extra || !op.is_hand_written() {
                return Err(at(format!(
                    "[operation.node] extra {extra:?}: only \"object\", for a hand-written builder's extra fields"
                )));
            }
        }
        if !node.op.extra_fields.is_empty() && !node.extra_object() {
            return Err(at(
                "[operation.node] fields are sent through extra = \"object\"".into(),
            ));
        }
        if let Some(flag) = &node.shape.role_flag {
            if !op.is_hand_written()
                || !op
                    .params
                    .iter()
                    .any(|p| &p.name == flag && p.kind == ParamKind::Boolean)
            {
                return Err(at(format!(
                    "[operation.node] role_flag {flag:?}: a boolean param of an operation with a hand-written builder"
                )));
            }
        }
    }
    for record in &d.records {
        let mut names = HashSet::new();
        for field in &record.fields {
            let name = js_name(field);
            if name.is_empty() || name == "extra" || !names.insert(name) {
                return Err(format!(
                    "api/operations.toml, record {:?}, field {:?}: its Node name {name:?} is taken",
                    record.name, field.name
                ));
            }
        }
    }
    Ok(())
}

/// The declared records the operations' answers hold, each once, in declaration order.
fn reachable_records<'d>(d: &'d Declarations, ops: &[NodeOp<'d>]) -> Vec<&'d Record> {
    let mut wanted: BTreeSet<&str> = BTreeSet::new();
    let mut todo: Vec<&str> = ops.iter().map(|node| node.op.result_record()).collect();
    while let Some(name) = todo.pop() {
        if !wanted.insert(name) {
            continue;
        }
        if let Some(record) = d.records.iter().find(|r| r.name == name) {
            todo.extend(record.fields.iter().filter_map(Field::record));
        }
    }
    d.records
        .iter()
        .filter(|r| wanted.contains(r.name.as_str()))
        .collect()
}

/// A listing that pages (`pages` other than `none`), with its lazy iterators: an
/// older one's (`list_users`) are hand-written (`users()`, `userPages()`).
struct Paged<'a> {
    node: &'a NodeOp<'a>,
    /// The page's record (`MessagePage`).
    page: &'a Record,
    /// Its list of items (`messages`) and their record (`ChatMessage`).
    list: &'a Field,
    item: &'a Record,
}

/// The paging limit's and offset's wire names: the iterators set them.
const PAGING_PARAMS: [&str; 2] = ["limit", "skip"];

fn paged<'a>(d: &'a Declarations, ops: &'a [NodeOp<'a>]) -> Result<Vec<Paged<'a>>, String> {
    let mut out = Vec::new();
    for node in ops
        .iter()
        .filter(|n| n.op.pages != Pages::None && !n.op.is_older())
    {
        let at = |what: &str| format!("api/operations.toml, operation {:?}: {what}", node.op.name);
        let page = declared_record(d, &node.op.result)
            .filter(|_| !node.op.result_is_list())
            .ok_or_else(|| at("a listing that pages answers one page record"))?;
        let list = page
            .fields
            .iter()
            .find(|f| f.is_list() && f.record().is_some())
            .ok_or_else(|| at("its page record has no list of records"))?;
        let item = list
            .record()
            .and_then(|name| d.records.iter().find(|r| r.name == name))
            .ok_or_else(|| at("its page's items are no record"))?;
        if !PAGING_PARAMS.iter().all(|name| {
            node.op
                .params
                .iter()
                .any(|p| &p.name == name && p.location == Location::Query)
        }) {
            return Err(at(
                "a listing that pages takes `limit` and `skip` in its query",
            ));
        }
        out.push(Paged {
            node,
            page,
            list,
            item,
        });
    }
    Ok(out)
}

impl Paged<'_> {
    /// `iterRoomMessages`.
    fn items_method(&self) -> String {
        format!("iter{}", self.node.op.type_name())
    }

    /// `roomMessagesPages`.
    fn pages_method(&self) -> String {
        format!("{}Pages", method_name(self.node.op))
    }

    /// `IterRoomMessagesParams`.
    fn params_type(&self) -> String {
        format!("Iter{}Params", self.node.op.type_name())
    }

    /// The params of the iterators' params object besides `pageSize` and `skip`.
    fn filters(&self) -> Vec<&Param> {
        self.node
            .object_params()
            .into_iter()
            .filter(|p| !PAGING_PARAMS.contains(&p.name.as_str()))
            .collect()
    }

    /// The declared maximum of a page (`limit`'s), if any.
    fn max_page(&self) -> Option<u64> {
        self.node
            .op
            .params
            .iter()
            .find(|p| p.name == "limit")
            .and_then(|p| p.max)
    }
}

/// A result that is one of core's hand-written models (not a declared record):
/// its element's model when it is a list (`Vec<Message>` → `Message`), `None` for any JSON.
fn model_of<'a>(d: &Declarations, result: &'a str) -> Option<&'a str> {
    if is_any_json(result) || declared_record(d, result).is_some() {
        return None;
    }
    Some(list_element(result).unwrap_or(result))
}

/// The declared record a result is (`Room`) or lists (`[Room]`), if it is one.
fn declared_record<'d>(d: &'d Declarations, result: &str) -> Option<&'d Record> {
    let name = result
        .strip_prefix('[')
        .and_then(|r| r.strip_suffix(']'))
        .unwrap_or(result);
    d.records.iter().find(|r| r.name == name)
}

/// `Vec<Message>` → `Message`.
fn list_element(result: &str) -> Option<&str> {
    result
        .strip_prefix("Vec<")
        .and_then(|r| r.strip_suffix('>'))
}

fn is_any_json(result: &str) -> bool {
    result == "serde_json::Value"
}

/// The result's TS type: the record or model, `Message[]` for a list (`Vec<Message>` or
/// `[Room]`), `unknown` for any JSON.
fn ts_result(result: &str) -> String {
    if is_any_json(result) {
        return "unknown".into();
    }
    if let Some(record) = result.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
        return format!("{record}[]");
    }
    match list_element(result) {
        Some(element) => format!("{element}[]"),
        None => result.to_owned(),
    }
}

/// A JSDoc comment at `indent`: `text` wrapped, then one `@tag` line each (wrapped, their
/// later lines indented); without tags as [`jsdoc`] writes it.
fn jsdoc_tagged(w: &mut String, indent: &str, text: &str, tags: &[String]) {
    if tags.is_empty() {
        jsdoc(w, indent, text);
        return;
    }
    line(w, &format!("{indent}/**"));
    for part in wrap(text, 100 - indent.len()) {
        line(w, &format!("{indent} * {part}"));
    }
    for tag in tags {
        for (i, part) in wrap(tag, 98 - indent.len()).into_iter().enumerate() {
            let lead = if i == 0 { "" } else { "  " };
            line(w, &format!("{indent} * {lead}{part}"));
        }
    }
    line(w, &format!("{indent} */"));
}

/// The `@throws` lines of a method's doc: each declared error, by its kind and code.
fn throws_doc(op: &Operation) -> Vec<String> {
    op.errors
        .iter()
        .map(|e| {
            format!(
                "@throws {{RoomchatError}} `{}` (`ROOMCHAT_{}`) when {}.",
                e.kind,
                e.kind.to_ascii_uppercase(),
                e.when.trim_end_matches('.')
            )
        })
        .collect()
}

/// What a method's doc says after its summary: how it is retried.
fn retry_doc(op: &Operation) -> String {
    op.retry.sentence(RetryWords {
        label: true,
        never: "Not",
        timeout: true,
        unless: &format!(" {} unless `retryNonIdempotent`", Retry::REASON),
    })
}

/// What a method's doc says of its key, when it is not the private key.
fn auth_doc(op: &Operation) -> String {
    op.auth
        .sentence(
            "account's public key",
            " (`publicKey`): without it, a `ROOMCHAT_CONFIGURATION` error",
        )
        .map_or(String::new(), |key| format!(" {key}"))
}

fn method_doc(op: &Operation) -> String {
    format!(
        "{} `{}`: {}{} {} Parameters are checked before anything is sent (a `RoomchatValidationError`).",
        op.method,
        op.path,
        op.summary,
        auth_doc(op),
        retry_doc(op)
    )
}

// ---- operations.js ---------------------------------------------------------------------

fn js(d: &Declarations, ops: &[NodeOp<'_>], paged: &[Paged<'_>]) -> String {
    let mut out = String::new();
    let w = &mut out;
    line(w, &format!("// {GENERATED}"));
    line(w, "'use strict'");
    line(
        w,
        "// The `Client` methods of the declared operations. index.js installs them on",
    );
    line(
        w,
        "// `Client.prototype`; each hands its arguments to the client's one call path,",
    );
    line(
        w,
        "// `run(client, operation, what, argumentParams, params, options)`: the per-call",
    );
    line(
        w,
        "// options of every method, the parameters checked by core against the",
    );
    line(
        w,
        "// declaration (nothing is sent on a bad one). Types and docs: operations.d.ts.",
    );
    line(w, "");
    line(
        w,
        "/** The methods, by name, each running through `run` with `this` as the client. */",
    );
    line(w, "function operationMethods(run) {");
    line(w, "  return {");
    for (i, node) in ops.iter().enumerate() {
        let op = node.op;
        if i > 0 {
            line(w, "");
        }
        jsdoc(
            w,
            "    ",
            &format!("{} `{}`: {}", op.method, op.path, op.summary),
        );
        let mut args: Vec<String> = node.arguments().iter().map(|p| argument_name(p)).collect();
        let own: Vec<String> = node
            .arguments()
            .iter()
            .map(|p| {
                let arg = argument_name(p);
                if arg == p.name {
                    arg
                } else {
                    format!("{}: {arg}", ts_quote(&p.name))
                }
            })
            .collect();
        let own = if own.is_empty() {
            "undefined".to_owned()
        } else {
            format!("{{ {} }}", own.join(", "))
        };
        let params = if node.takes_params() {
            args.push("params = undefined".into());
            "params"
        } else {
            "undefined"
        };
        args.push("options = undefined".into());
        line(
            w,
            &format!("    {}({}) {{", method_name(op), args.join(", ")),
        );
        line(
            w,
            &format!(
                "      return run(this, {}, {}, {own}, {params}, options)",
                ts_quote(&op.name),
                ts_quote(&method_name(op))
            ),
        );
        line(w, "    },");
    }
    line(w, "  }");
    line(w, "}");
    line(w, "");
    line(
        w,
        "/** Each operation's result, by its TS type (index.js finishes some records, e.g. with a `Date`). */",
    );
    line(w, "const operationResults = Object.freeze({");
    for node in ops {
        line(
            w,
            &format!(
                "  {}: {},",
                node.op.name,
                ts_quote(&ts_result(&node.op.result))
            ),
        );
    }
    line(w, "})");
    line(w, "");
    line(w, "");
    line(w, "/**");
    line(
        w,
        " * The lazy iterators of the listings that page, by name, each made by",
    );
    line(
        w,
        " * `iterate(client, operation, what, items, argumentParams, params, options)`:",
    );
    line(
        w,
        " * over the items when `items`, else page by page (core's iterator, as `users()`).",
    );
    line(w, " */");
    line(w, "function pagingMethods(iterate) {");
    line(w, "  return {");
    for (i, paging) in paged.iter().enumerate() {
        let node = paging.node;
        if i > 0 {
            line(w, "");
        }
        let args: Vec<String> = node.arguments().iter().map(|p| argument_name(p)).collect();
        let own: Vec<String> = node
            .arguments()
            .iter()
            .map(|p| {
                let arg = argument_name(p);
                if arg == p.name {
                    arg
                } else {
                    format!("{}: {arg}", ts_quote(&p.name))
                }
            })
            .collect();
        let own = if own.is_empty() {
            "undefined".to_owned()
        } else {
            format!("{{ {} }}", own.join(", "))
        };
        let mut signature = args.clone();
        signature.push("params = undefined".into());
        signature.push("options = undefined".into());
        for (method, items, what) in [
            (paging.items_method(), true, "item by item"),
            (paging.pages_method(), false, "page by page"),
        ] {
            if !items {
                line(w, "");
            }
            jsdoc(
                w,
                "    ",
                &format!("`{}`, {what}, fetched lazily.", method_name(node.op)),
            );
            line(w, &format!("    {method}({}) {{", signature.join(", ")));
            line(
                w,
                &format!(
                    "      return iterate(this, {}, {}, {items}, {own}, params, options)",
                    ts_quote(&node.op.name),
                    ts_quote(&method)
                ),
            );
            line(w, "    },");
        }
    }
    line(w, "  }");
    line(w, "}");
    line(w, "");
    record_secrets(w, d);
    line(
        w,
        "module.exports = { operationMethods, operationResults, pagingMethods, recordSecrets }",
    );
    out
}

/// `recordSecrets`: each record with a field declared `secret` or holding such a
/// record (in a field or a list), by name: `hidden`, the fields `util.inspect`
/// shows by their length only; `inner`, the fields holding such records, by the
/// record's name. index.js hides them in every answer that holds one.
fn record_secrets(w: &mut String, d: &Declarations) {
    let mut holding: BTreeSet<&str> = BTreeSet::new();
    loop {
        let before = holding.len();
        for record in &d.records {
            if record
                .fields
                .iter()
                .any(|f| f.secret || f.record().is_some_and(|r| holding.contains(r)))
            {
                holding.insert(&record.name);
            }
        }
        if holding.len() == before {
            break;
        }
    }
    line(w, "");
    line(w, "/**");
    line(
        w,
        " * The records with a field declared `secret = true` (an access token, a webhook URL), or",
    );
    line(
        w,
        " * holding such a record: `hidden`, the fields `util.inspect` shows by their length only;",
    );
    line(
        w,
        " * `inner`, the fields holding such records (or lists of them), by the record's name.",
    );
    line(w, " */");
    line(w, "const recordSecrets = Object.freeze({");
    for record in d
        .records
        .iter()
        .filter(|r| holding.contains(r.name.as_str()))
    {
        let js_name = |f: &Field| ts_quote(f.name.trim_start_matches('_'));
        let hidden: Vec<String> = record
            .fields
            .iter()
            .filter(|f| f.secret)
            .map(js_name)
            .collect();
        let inner: Vec<String> = record
            .fields
            .iter()
            .filter_map(|f| {
                f.record().filter(|r| holding.contains(r)).map(|r| {
                    format!(
                        "{}: {}",
                        ts_property(f.name.trim_start_matches('_')),
                        ts_quote(r)
                    )
                })
            })
            .collect();
        let inner = if inner.is_empty() {
            "{}".to_owned()
        } else {
            format!("{{ {} }}", inner.join(", "))
        };
        line(
            w,
            &format!(
                "  {}: {{ hidden: [{}], inner: {inner} }},",
                record.name,
                hidden.join(", "),
            ),
        );
    }
    line(w, "})");
    line(w, "");
}

// ---- operations.d.ts -------------------------------------------------------------------

fn ts_param_type(p: &Param) -> String {
    if !p.choices.is_empty() {
        return p
            .choices
            .iter()
            .map(|c| ts_quote(c))
            .collect::<Vec<_>>()
            .join(" | ");
    }
    match p.kind {
        ParamKind::Integer => "number",
        // A switch is sent as "on"/"off": a boolean for the caller.
        ParamKind::Boolean | ParamKind::Switch => "boolean",
        ParamKind::Json => "unknown",
        ParamKind::String | ParamKind::Id => "string",
    }
    .to_owned()
}

/// A param's doc: its limits and documented default, if any.
fn param_doc(p: &Param) -> Option<String> {
    let mut notes = p.bounds();
    if let Some(default) = p.default_text() {
        notes.push(if p.location == Location::Path {
            format!("`{default}` when not given")
        } else {
            format!("the service's default: {default}")
        });
    }
    if notes.is_empty() {
        return None;
    }
    let mut doc = notes.join("; ");
    doc[..1].make_ascii_uppercase();
    doc.push('.');
    Some(doc)
}

fn ts_extra_type(field: &ExtraField) -> &'static str {
    match field.kind {
        ExtraKind::Json => "unknown",
        ExtraKind::String => "string",
    }
}

/// The params object's type: an interface, or with exactly_one groups a type
/// that says so (`{ userId: string; uniqueUserIdentifier?: never } | …`).
fn params_decl(w: &mut String, node: &NodeOp<'_>) {
    let op = node.op;
    let in_group = |p: &Param| op.exactly_one.iter().any(|g| g.contains(&p.name));
    let mut doc = format!(
        "The parameters of `{}`, named as on the wire: {} sent only when given.",
        method_name(op),
        if node.object_params().iter().any(|p| p.required) {
            "the optional ones are"
        } else {
            "each is"
        }
    );
    for group in &op.exactly_one {
        let names: Vec<String> = group.iter().map(|n| format!("`{n}`")).collect();
        doc.push_str(&format!(
            " Exactly one of {}: {} is a `RoomchatValidationError`, before anything is sent.",
            names.join(" and "),
            if group.len() == 2 {
                "both or neither"
            } else {
                "more or none"
            }
        ));
    }
    jsdoc(w, "", &doc);
    let mut fields: Vec<String> = Vec::new();
    for p in node.object_params().into_iter().filter(|p| !in_group(p)) {
        let mut text = String::new();
        if let Some(doc) = param_doc(p) {
            jsdoc(&mut text, "  ", &doc);
        }
        let optional = if p.required { "" } else { "?" };
        text.push_str(&format!(
            "  {}{optional}: {}",
            ts_property(&p.name),
            ts_param_type(p)
        ));
        fields.push(text);
    }
    for field in &node.op.extra_fields {
        fields.push(format!(
            "  {}?: {}",
            ts_property(&field.name),
            ts_extra_type(field)
        ));
    }
    if node.extra_object() {
        fields.push(
            "  /** Other fields, sent as they are (they may not override the fields above). */\n  extra?: Record<string, unknown>"
                .into(),
        );
    } else if op.extra {
        fields.push("  /** Other fields, sent as they are. */\n  [field: string]: unknown".into());
    }
    if op.exactly_one.is_empty() {
        line(w, &format!("export interface {} {{", params_type(op)));
        for field in fields {
            line(w, &field);
        }
        line(w, "}");
        return;
    }
    let unions: Vec<Vec<String>> = op
        .exactly_one
        .iter()
        .map(|group| {
            group
                .iter()
                .map(|given| {
                    let members: Vec<String> = group
                        .iter()
                        .map(|name| match op.params.iter().find(|p| &p.name == name) {
                            Some(p) if name == given => {
                                format!("{}: {}", ts_property(name), ts_param_type(p))
                            }
                            _ => format!("{}?: never", ts_property(name)),
                        })
                        .collect();
                    format!("{{ {} }}", members.join("; "))
                })
                .collect()
        })
        .collect();
    if fields.is_empty() && unions.len() == 1 {
        line(w, &format!("export type {} =", params_type(op)));
        for member in &unions[0] {
            line(w, &format!("  | {member}"));
        }
        return;
    }
    let mut parts: Vec<String> = Vec::new();
    if !fields.is_empty() {
        parts.push(format!("{{\n{}\n}}", fields.join("\n")));
    }
    parts.extend(
        unions
            .iter()
            .map(|members| format!("({})", members.join(" | "))),
    );
    line(
        w,
        &format!("export type {} = {}", params_type(op), parts.join(" & ")),
    );
}

fn dts(
    d: &Declarations,
    ops: &[NodeOp<'_>],
    paged: &[Paged<'_>],
    models: &[NodeModel<'_>],
) -> String {
    let mut out = String::new();
    let w = &mut out;
    line(w, &format!("// {GENERATED}"));
    line(w, "//");
    line(
        w,
        "// Types of the declared operations (operations.js): their parameters, the",
    );
    line(
        w,
        "// records they answer with (the older ones' models too: index.d.ts re-exports them), and",
    );
    line(
        w,
        "// their `Client` methods, which index.d.ts merges into `Client`.",
    );
    line(w, "");
    let mut imports: BTreeSet<&str> = ["CallOptions", "WithResponse", "WithResponseOptions"].into();
    if !paged.is_empty() {
        imports.insert("PagingIterator");
    }
    line(
        w,
        &format!(
            "import type {{ {} }} from './index.js'",
            imports.into_iter().collect::<Vec<_>>().join(", ")
        ),
    );
    line(w, "");
    let names: Vec<String> = ops.iter().map(|node| ts_quote(&node.op.name)).collect();
    line(
        w,
        "/** The stable names of the declared operations (as `wire` takes them). */",
    );
    if names.is_empty() {
        line(w, "export type GeneratedOperationName = never");
    } else {
        line(w, "export type GeneratedOperationName =");
        for name in &names {
            line(w, &format!("  | {name}"));
        }
    }

    node_models::dts(w, models);

    for record in reachable_records(d, ops) {
        line(w, "");
        jsdoc(
            w,
            "",
            &format!(
                "{} Fields the service left out are `undefined`.",
                record.doc
            ),
        );
        line(w, &format!("export interface {} {{", record.name));
        for field in &record.fields {
            let mut doc = field.doc.clone();
            if js_name(field) != field.name {
                doc.push_str(&format!(" `{}` on the wire.", field.name));
            }
            jsdoc(w, "  ", &doc);
            line(
                w,
                &format!(
                    "  {}?: {}",
                    ts_property(js_name(field)),
                    ts_field_type(field)
                ),
            );
        }
        line(
            w,
            "  /** Every other field the service sent, as it came. */",
        );
        line(w, "  extra: Record<string, unknown>");
        line(w, "}");
    }

    for node in ops.iter().filter(|node| node.takes_params()) {
        line(w, "");
        params_decl(w, node);
    }

    for paging in paged {
        line(w, "");
        jsdoc(
            w,
            "",
            &format!(
                "The parameters of `{}` and `{}`: the page size, where to start, and `{}`'s other parameters, named as on the wire.",
                paging.items_method(),
                paging.pages_method(),
                method_name(paging.node.op)
            ),
        );
        line(w, &format!("export interface {} {{", paging.params_type()));
        let bound = match paging.max_page() {
            Some(max) => format!("1 to {max}"),
            None => "at least 1".to_owned(),
        };
        jsdoc(
            w,
            "  ",
            &format!(
                "{} a request ({bound}; default 200{}).",
                paging.list.name[..1].to_ascii_uppercase() + &paging.list.name[1..],
                if paging.max_page().is_some_and(|m| m < 200) {
                    ", at most the maximum"
                } else {
                    ""
                }
            ),
        );
        line(w, "  pageSize?: number");
        jsdoc(
            w,
            "  ",
            "How many to pass over first (default 0): a stopped iterator's `nextSkip` resumes it.",
        );
        line(w, "  skip?: number");
        for p in paging.filters() {
            if let Some(doc) = param_doc(p) {
                jsdoc(w, "  ", &doc);
            }
            line(
                w,
                &format!("  {}?: {}", ts_property(&p.name), ts_param_type(p)),
            );
        }
        line(w, "}");
    }

    line(w, "");
    line(
        w,
        "/** The `Client` methods of the declared operations (index.d.ts merges them into `Client`). */",
    );
    line(w, "export interface OperationMethods {");
    for node in ops {
        let op = node.op;
        jsdoc_tagged(w, "  ", &method_doc(op), &throws_doc(op));
        let mut args: Vec<String> = node
            .arguments()
            .iter()
            .map(|p| {
                let kind = ts_param_type(p);
                if p.required {
                    format!("{}: {kind}", argument_name(p))
                } else {
                    format!("{}: {kind} | undefined", argument_name(p))
                }
            })
            .collect();
        let params_required = node.params_required();
        let mut with_response = args.clone();
        if node.takes_params() {
            let kind = params_type(op);
            with_response.push(if params_required {
                format!("params: {kind}")
            } else {
                format!("params: {kind} | undefined")
            });
            args.push(if params_required {
                format!("params: {kind}")
            } else {
                format!("params?: {kind}")
            });
        }
        with_response.push("options: WithResponseOptions".into());
        args.push("options?: CallOptions & { withResponse?: false }".into());
        let name = method_name(op);
        let result = ts_result(&op.result);
        line(
            w,
            &format!(
                "  {name}({}): Promise<WithResponse<{result}>>",
                with_response.join(", "),
            ),
        );
        line(
            w,
            &format!("  {name}({}): Promise<{result}>", args.join(", ")),
        );
    }
    for paging in paged {
        let op = paging.node.op;
        let mut args: Vec<String> = paging
            .node
            .arguments()
            .iter()
            .map(|p| format!("{}: {}", argument_name(p), ts_param_type(p)))
            .collect();
        args.push(format!("params?: {}", paging.params_type()));
        args.push("options?: CallOptions".into());
        let rule = "An error never ends it: a `next()` rejects and the next one fetches the same page again. It ends on a short or empty page, or when the total is reached; `nextSkip` says where a stopped one would resume.";
        jsdoc_tagged(
            w,
            "  ",
            &format!(
                "Every {} of `{}`, fetched a page at a time when needed (`for await`). {rule}",
                paging.item.name,
                method_name(op)
            ),
            &throws_doc(op),
        );
        line(
            w,
            &format!(
                "  {}({}): PagingIterator<{}>",
                paging.items_method(),
                args.join(", "),
                paging.item.name
            ),
        );
        jsdoc_tagged(
            w,
            "  ",
            &format!(
                "`{}` page by page, fetched when needed (`for await`). {rule}",
                method_name(op)
            ),
            &throws_doc(op),
        );
        line(
            w,
            &format!(
                "  {}({}): PagingIterator<{}>",
                paging.pages_method(),
                args.join(", "),
                paging.page.name
            ),
        );
    }
    line(w, "}");
    out
}

// ---- src/records.rs --------------------------------------------------------------------

fn static_name(record: &str) -> String {
    snake(record).to_ascii_uppercase()
}

/// The expression that decodes `response` and writes the answer as the JS layer returns it.
fn answer_expr(d: &Declarations, node: &NodeOp<'_>) -> String {
    let op = node.op;
    if let Some(record) = declared_record(d, &op.result) {
        let write = if op.result_is_list() {
            "records"
        } else {
            "record"
        };
        return format!(
            "operation.decode(response).map(|r| shape::{write}(&r, &{}))",
            static_name(&record.name)
        );
    }
    match model_of(d, &op.result) {
        None => "operation.decode(response).map(|r| shape::json(&r))".into(),
        Some(_) if node.shape.view => format!(
            "wire::decode_{}_view(response).map(|r| shape::js_text(&r))",
            op.name
        ),
        Some(_) => format!(
            "wire::decode_{}(response).map(|r| shape::js_text(&r))",
            op.name
        ),
    }
}

fn records_rs(d: &Declarations, ops: &[NodeOp<'_>], paged: &[Paged<'_>]) -> String {
    let mut out = String::new();
    let w = &mut out;
    line(w, &format!("// {GENERATED}"));
    line(w, "");
    for text in [
        "//! How the addon answers each declared operation, as the JS layer returns it",
        "//! (on a pool thread: the event loop only parses the text): a declared record",
        "//! by its fields' wire names and JS names (a leading `_` dropped), written by",
        "//! `shape::record` with the unknown fields under `extra`; one of core's models",
        "//! by its generated writer (models.rs, `shape::js_text`). And the params objects whose Node",
        "//! shapes predate the declarations, as core's JSON params take them (args.rs).",
    ] {
        line(w, text);
    }
    line(w, "");
    line(w, "use roomchat::wire::{self, Operation, WireResponse};");
    line(w, "use roomchat::{Client, Error};");
    line(w, "use serde_json::Value;");
    line(w, "");
    line(w, "use crate::args::{self, Args, ExtraKind, ParamsShape};");
    line(w, "use crate::paged::{self, PagedSteps};");
    line(
        w,
        "use crate::shape::{self, FieldShape, Paging, RecordShape};",
    );
    line(w, "");
    line(
        w,
        "/// The answer of `operation` in `response`, as the JS layer returns it: a non-2xx",
    );
    line(
        w,
        "/// answer, or one that says it failed, is the error it stands for.",
    );
    line(
        w,
        "pub fn answer(operation: Operation, response: &WireResponse) -> Result<String, Error> {",
    );
    line(w, "match operation {");
    for node in ops {
        line(
            w,
            &format!(
                "Operation::{} => {},",
                node.op.type_name(),
                answer_expr(d, node)
            ),
        );
    }
    line(
        w,
        "// An operation of core's that is declared nowhere here: its JSON as it came.",
    );
    line(
        w,
        "_ => operation.decode(response).map(|r| shape::json(&r)),",
    );
    line(w, "}");
    line(w, "}");
    line(w, "");
    line(
        w,
        "/// How the params object of `operation` becomes core's JSON params, where its",
    );
    line(
        w,
        "/// Node shape is not the declaration's (`[operation.node]` in api/operations.toml).",
    );
    line(
        w,
        "pub fn params_of(operation: Operation) -> Option<&'static ParamsShape> {",
    );
    let translated: Vec<&NodeOp<'_>> = ops.iter().filter(|n| n.translates_params()).collect();
    if translated.is_empty() {
        line(w, "let _ = operation;");
        line(w, "None");
    } else {
        line(w, "match operation {");
        for node in &translated {
            line(
                w,
                &format!(
                    "Operation::{} => Some(&{}_PARAMS),",
                    node.op.type_name(),
                    node.op.name.to_ascii_uppercase()
                ),
            );
        }
        line(w, "_ => None,");
        line(w, "}");
    }
    line(w, "}");
    for node in &translated {
        line(w, "");
        line(
            w,
            &format!("/// `{}`'s params object.", method_name(node.op)),
        );
        line(
            w,
            &format!(
                "static {}_PARAMS: ParamsShape = ParamsShape {{",
                node.op.name.to_ascii_uppercase()
            ),
        );
        let params: Vec<String> = node
            .op
            .params
            .iter()
            .map(|p| format!("{:?}", p.name))
            .collect();
        line(w, &format!("params: &[{}],", params.join(", ")));
        let fields: Vec<String> = node
            .op
            .extra_fields
            .iter()
            .map(|f| {
                let kind = match f.kind {
                    ExtraKind::String => "String",
                    ExtraKind::Json => "Json",
                };
                format!("({:?}, ExtraKind::{kind})", f.name)
            })
            .collect();
        line(w, &format!("fields: &[{}],", fields.join(", ")));
        line(
            w,
            &format!(
                "extra_object: {},",
                node.extra_object() && !node.flattens_extra()
            ),
        );
        line(w, &format!("flatten_extra: {},", node.flattens_extra()));
        line(
            w,
            &format!(
                "role_flag: {},",
                match &node.shape.role_flag {
                    Some(flag) => format!("Some({flag:?})"),
                    None => "None".into(),
                }
            ),
        );
        line(w, "};");
    }
    line(w, "");
    line(w, "");
    for text in [
        "/// The lazy iterator of a listing that pages (core's, over its items when",
        "/// `items`, else page by page) for `params`: the JSON of the method's own",
        "/// arguments and its params object (`pageSize`, `skip` and the listing's other",
        "/// params, by their wire names); `what` names the method in errors.",
    ] {
        line(w, text);
    }
    line(
        w,
        "pub fn open_paged(client: &Client, operation: Operation, what: &str, items: bool, params: &Value) -> Result<Box<dyn PagedSteps>, Error> {",
    );
    line(w, "let p = Args::new(what, params)?;");
    if !paged.is_empty() {
        line(w, "match operation {");
    }
    for paging in paged {
        let op = paging.node.op;
        let mut known: Vec<String> = paging
            .node
            .arguments()
            .iter()
            .map(|p| format!("{:?}", p.name))
            .collect();
        known.push("\"pageSize\"".into());
        known.push("\"skip\"".into());
        known.extend(paging.filters().iter().map(|p| format!("{:?}", p.name)));
        line(w, &format!("Operation::{} => {{", op.type_name()));
        line(w, &format!("p.only(&[{}])?;", known.join(", ")));
        line(
            w,
            &format!("let mut query = roomchat::{}::new();", op.type_name()),
        );
        // The page size is the `limit` of each request, checked against the declared
        // limit's bounds here so that an error names what the caller passed (`pageSize`).
        let limit = op.params.iter().find(|p| p.name == PAGING_PARAMS[0]);
        let least = limit.and_then(|p| p.min).unwrap_or(1).max(1);
        let most = limit
            .and_then(|p| p.max)
            .map_or("args::MAX_SAFE_INTEGER".to_owned(), |max| max.to_string());
        line(
            w,
            &format!("if let Some(size) = p.whole(\"pageSize\", {least}, {most})? {{ query = query.limit(size); }}"),
        );
        line(
            w,
            "if let Some(skip) = p.whole(\"skip\", 0, args::MAX_SAFE_INTEGER)? { query = query.skip(skip); }",
        );
        for filter in paging.filters() {
            let read = match filter.kind {
                ParamKind::Boolean | ParamKind::Switch => format!("p.boolean({:?})?", filter.name),
                ParamKind::Integer => {
                    format!("p.whole({:?}, 0, args::MAX_SAFE_INTEGER)?", filter.name)
                }
                // A JSON filter is read as its text, as a string's is.
                ParamKind::String | ParamKind::Id | ParamKind::Json => {
                    format!("p.string({:?})?", filter.name)
                }
            };
            line(
                w,
                &format!(
                    "if let Some(value) = {read} {{ query = query.{}(value); }}",
                    snake(&filter.name)
                ),
            );
        }
        let mut call_args: Vec<String> = Vec::new();
        for (i, arg) in paging.node.arguments().iter().enumerate() {
            line(
                w,
                &format!("let arg{i} = p.required_string({:?})?;", arg.name),
            );
            call_args.push(format!("&arg{i}"));
        }
        call_args.push("&query".into());
        let static_paging = format!("&{}_PAGING", op.name.to_ascii_uppercase());
        line(w, "Ok(if items {");
        line(
            w,
            &format!(
                "paged::items(client.iter_{}({}), {static_paging})",
                op.name,
                call_args.join(", ")
            ),
        );
        line(w, "} else {");
        line(
            w,
            &format!(
                "paged::pages(client.{}_pages({}), {static_paging})",
                op.name,
                call_args.join(", ")
            ),
        );
        line(w, "})");
        line(w, "}");
    }
    if paged.is_empty() {
        line(w, "let _ = (client, operation, items, p);");
        line(
            w,
            "Err(args::invalid(format!(\"{what}: no listing pages\")))",
        );
    } else {
        line(
            w,
            "_ => Err(args::invalid(format!(\"{what}: {} is not a listing that pages\", operation.name()))),",
        );
        line(w, "}");
    }
    line(w, "}");
    for paging in paged {
        line(w, "");
        line(
            w,
            &format!("/// `{}`'s pages and items.", method_name(paging.node.op)),
        );
        line(
            w,
            &format!(
                "static {}_PAGING: Paging = Paging {{ page: &{}, item: &{} }};",
                paging.node.op.name.to_ascii_uppercase(),
                static_name(&paging.page.name),
                static_name(&paging.item.name)
            ),
        );
    }
    for record in reachable_records(d, ops) {
        line(w, "");
        for text in wrap(&format!("`{}`: {}", record.name, record.doc), 88) {
            line(w, &format!("/// {text}"));
        }
        line(
            w,
            &format!(
                "static {}: RecordShape = RecordShape {{ fields: &[",
                static_name(&record.name)
            ),
        );
        for field in &record.fields {
            let inner = match field.record() {
                Some(inner) => format!("Some(&{})", static_name(inner)),
                None => "None".to_owned(),
            };
            line(
                w,
                &format!(
                    "FieldShape {{ wire: {:?}, js: {:?}, record: {inner} }},",
                    field.name,
                    js_name(field)
                ),
            );
        }
        line(w, "] };");
    }
    out
}
