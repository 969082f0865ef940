//! The Node surface of the generated operations, made from the declarations:
//!
//! - `bindings/node/operations.js`: the `Client` methods, which index.js
//!   installs on `Client.prototype`; each hands its arguments to the client's
//!   one call path (index.js `#operation`: the per-call options, `AbortSignal`s
//!   and `withResponse` of every other method), which runs the operation by its
//!   name through the addon's `callOperation` on the package's threads.
//! - `bindings/node/operations.d.ts`: their types (the params, the records, the
//!   methods with their `withResponse` overloads), merged into `Client` by index.d.ts.
//! - `bindings/node/src/records.rs`: each record's fields by wire name and JS
//!   name, by which the addon's `shape::record` writes an answer on the pool
//!   thread (the event loop only parses it).
//!
//! Names: path params are the first arguments, camelCase (`roomId`); the other
//! params are fields of a params object named as on the wire (`webhookURL`); a
//! record's fields are named as on the wire with a leading `_` dropped (`_id` →
//! `id`), nested records shaped the same way, unknown fields kept in `extra`.

use std::collections::{BTreeSet, HashSet};

use crate::declaration::{camel, snake, Declarations, Field, Operation, Param, Record};
use crate::text::{line, wrap};
use crate::GENERATED;

pub const JS_PATH: &str = "bindings/node/operations.js";
pub const DTS_PATH: &str = "bindings/node/operations.d.ts";
pub const RECORDS_PATH: &str = "bindings/node/src/records.rs";

/// Every file this generator writes: (path from the repository's root, contents).
pub fn files(d: &Declarations) -> Result<Vec<(&'static str, String)>, String> {
    check(d)?;
    Ok(vec![
        (JS_PATH, js(d)),
        (DTS_PATH, dts(d)),
        (RECORDS_PATH, crate::rustfmt(&records_rs(d))?),
    ])
}

fn generated(d: &Declarations) -> impl Iterator<Item = &Operation> {
    d.operations.iter().filter(|op| op.is_generated())
}

/// The method's name: a snake_case operation name in camelCase.
fn method_name(op: &Operation) -> String {
    camel(&op.name)
}

/// A path param's argument name: `roomId`, `webhookURL` → `webhookUrl`.
fn argument_name(p: &Param) -> String {
    camel(&snake(&p.name))
}

/// A record field's name in JS: the wire name, a leading `_` dropped.
fn js_name(field: &Field) -> &str {
    field.name.strip_prefix('_').unwrap_or(&field.name)
}

/// The name of an operation's params interface: `UpdateBotParams`.
fn params_type(op: &Operation) -> String {
    format!("{}Params", op.type_name())
}

/// Whether the method takes a params object (body or query params, or extra fields).
fn takes_params(op: &Operation) -> bool {
    !op.named_params().is_empty() || op.extra
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

fn is_identifier(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
}

/// What the declarations' checks (declaration.rs) leave to each language: the
/// names this one makes must be usable JS names, distinct where they meet.
fn check(d: &Declarations) -> Result<(), String> {
    for op in generated(d) {
        let at = |what: String| format!("api/operations.toml, operation {:?}: {what}", op.name);
        for p in op.positional_params() {
            let name = argument_name(p);
            if !is_identifier(&name) || RESERVED.contains(&name.as_str()) {
                return Err(at(format!(
                    "path param {:?} makes the Node argument name {name:?}, which JS cannot take",
                    p.name
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

/// The records the generated operations' answers hold, each once, in declaration order.
fn reachable_records(d: &Declarations) -> Vec<&Record> {
    let mut wanted: BTreeSet<&str> = BTreeSet::new();
    let mut todo: Vec<&str> = generated(d).map(|op| op.result.as_str()).collect();
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

/// A JSDoc comment at `indent`: one line when it fits, else wrapped.
fn jsdoc(w: &mut String, indent: &str, text: &str) {
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

/// What a method's doc says after its summary: how it is retried.
fn retry_doc(op: &Operation) -> &'static str {
    match op.retry.as_str() {
        "repeatable" => "Repeatable: sent again after a 5xx, a timeout or a lost answer, as a GET is.",
        _ => "Not sent again after a 5xx, a timeout or a lost answer (a repeat could do it twice) unless `retryNonIdempotent`.",
    }
}

fn method_doc(op: &Operation) -> String {
    format!(
        "{} `{}`: {} {} Parameters are checked before anything is sent (a `RoomchatValidationError`).",
        op.method,
        op.path,
        op.summary,
        retry_doc(op)
    )
}

// ---- operations.js ---------------------------------------------------------------------

fn js(d: &Declarations) -> String {
    let mut out = String::new();
    let w = &mut out;
    line(w, &format!("// {GENERATED}"));
    line(w, "'use strict'");
    line(
        w,
        "// The `Client` methods of the operations whose surfaces are generated. index.js",
    );
    line(
        w,
        "// installs them on `Client.prototype`; each hands its arguments to the client's",
    );
    line(
        w,
        "// one call path, `run(client, operation, what, pathParams, params, options)`:",
    );
    line(
        w,
        "// the per-call options of every method, the parameters checked by core against",
    );
    line(
        w,
        "// the declaration (nothing is sent on a bad one). Types and docs: operations.d.ts.",
    );
    line(w, "");
    line(
        w,
        "/** The methods, by name, each running through `run` with `this` as the client. */",
    );
    line(w, "function operationMethods(run) {");
    line(w, "  return {");
    let ops: Vec<&Operation> = generated(d).collect();
    for (i, op) in ops.iter().enumerate() {
        if i > 0 {
            line(w, "");
        }
        jsdoc(
            w,
            "    ",
            &format!("{} `{}`: {}", op.method, op.path, op.summary),
        );
        let mut args: Vec<String> = op
            .positional_params()
            .iter()
            .map(|p| argument_name(p))
            .collect();
        let path: Vec<String> = op
            .positional_params()
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
        let path = if path.is_empty() {
            "{}".to_owned()
        } else {
            format!("{{ {} }}", path.join(", "))
        };
        let params = if takes_params(op) {
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
                "      return run(this, {}, {}, {path}, {params}, options)",
                ts_quote(&op.name),
                ts_quote(&method_name(op))
            ),
        );
        line(w, "    },");
    }
    line(w, "  }");
    line(w, "}");
    line(w, "");
    line(w, "module.exports = { operationMethods }");
    out
}

// ---- operations.d.ts -------------------------------------------------------------------

fn ts_quote(text: &str) -> String {
    format!("'{}'", text.replace('\\', "\\\\").replace('\'', "\\'"))
}

/// A property name: as it is when JS takes it bare, else quoted.
fn ts_property(name: &str) -> String {
    if is_identifier(name) {
        name.to_owned()
    } else {
        ts_quote(name)
    }
}

fn ts_param_type(p: &Param) -> String {
    if !p.choices.is_empty() {
        return p
            .choices
            .iter()
            .map(|c| ts_quote(c))
            .collect::<Vec<_>>()
            .join(" | ");
    }
    match p.kind.as_str() {
        "integer" => "number",
        "boolean" => "boolean",
        "json" => "unknown",
        _ => "string",
    }
    .to_owned()
}

fn ts_field_type(field: &Field) -> String {
    if let Some(record) = field.record() {
        return if field.is_list() {
            format!("{record}[]")
        } else {
            record.to_owned()
        };
    }
    match field.kind.as_str() {
        "integer" | "number" => "number",
        "boolean" => "boolean",
        "json" => "unknown",
        _ => "string",
    }
    .to_owned()
}

/// A param's doc: its limits and documented default, if any.
fn param_doc(p: &Param) -> Option<String> {
    let mut notes = p.bounds();
    if let Some(default) = p.default_text() {
        notes.push(format!("the service's default: {default}"));
    }
    if notes.is_empty() {
        return None;
    }
    let mut doc = notes.join("; ");
    doc[..1].make_ascii_uppercase();
    doc.push('.');
    Some(doc)
}

fn dts(d: &Declarations) -> String {
    let mut out = String::new();
    let w = &mut out;
    line(w, &format!("// {GENERATED}"));
    line(w, "//");
    line(
        w,
        "// Types of the operations whose surfaces are generated (operations.js): their",
    );
    line(
        w,
        "// parameters, the records they answer with, and their `Client` methods, which",
    );
    line(w, "// index.d.ts merges into `Client`.");
    line(w, "");
    line(
        w,
        "import type { CallOptions, WithResponse, WithResponseOptions } from './index.js'",
    );
    line(w, "");
    let names: Vec<String> = generated(d).map(|op| ts_quote(&op.name)).collect();
    line(
        w,
        "/** The stable names of the operations whose surfaces are generated (as `wire` takes them). */",
    );
    if names.is_empty() {
        line(w, "export type GeneratedOperationName = never");
    } else {
        line(w, "export type GeneratedOperationName =");
        for name in &names {
            line(w, &format!("  | {name}"));
        }
    }

    for record in reachable_records(d) {
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

    for op in generated(d).filter(|op| takes_params(op)) {
        line(w, "");
        jsdoc(
            w,
            "",
            &format!(
                "The parameters of `{}`, named as on the wire: {} sent only when given.",
                method_name(op),
                if op.named_params().iter().any(|p| p.required) {
                    "the optional ones are"
                } else {
                    "each is"
                }
            ),
        );
        line(w, &format!("export interface {} {{", params_type(op)));
        for p in op.named_params() {
            if let Some(doc) = param_doc(p) {
                jsdoc(w, "  ", &doc);
            }
            let optional = if p.required { "" } else { "?" };
            line(
                w,
                &format!("  {}{optional}: {}", ts_property(&p.name), ts_param_type(p)),
            );
        }
        if op.extra {
            line(w, "  /** Other fields, sent as they are. */");
            line(w, "  [field: string]: unknown");
        }
        line(w, "}");
    }

    line(w, "");
    line(
        w,
        "/** The `Client` methods of the generated operations (index.d.ts merges them into `Client`). */",
    );
    line(w, "export interface OperationMethods {");
    for op in generated(d) {
        jsdoc(w, "  ", &method_doc(op));
        let mut args: Vec<String> = op
            .positional_params()
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
        let params_required = op.named_params().iter().any(|p| p.required);
        let mut with_response = args.clone();
        if takes_params(op) {
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
        line(
            w,
            &format!(
                "  {name}({}): Promise<WithResponse<{}>>",
                with_response.join(", "),
                op.result
            ),
        );
        line(
            w,
            &format!("  {name}({}): Promise<{}>", args.join(", "), op.result),
        );
    }
    line(w, "}");
    out
}

// ---- src/records.rs --------------------------------------------------------------------

fn static_name(record: &str) -> String {
    snake(record).to_ascii_uppercase()
}

fn records_rs(d: &Declarations) -> String {
    let mut out = String::new();
    let w = &mut out;
    line(w, &format!("// {GENERATED}"));
    line(w, "");
    line(
        w,
        "//! The records of the generated operations' answers, as the JS layer returns",
    );
    line(
        w,
        "//! them: each field's wire name and JS name (a leading `_` dropped), and the",
    );
    line(
        w,
        "//! record it holds. `shape::record` writes an answer by them, unknown fields",
    );
    line(w, "//! under `extra`.");
    line(w, "");
    line(w, "use roomchat::wire::Operation;");
    line(w, "");
    line(w, "use crate::shape::{FieldShape, RecordShape};");
    line(w, "");
    line(
        w,
        "/// The record of `operation`'s answer, for the operations whose surfaces are generated.",
    );
    line(
        w,
        "pub fn result_of(operation: Operation) -> Option<&'static RecordShape> {",
    );
    let ops: Vec<&Operation> = generated(d).collect();
    if ops.is_empty() {
        line(w, "let _ = operation;");
        line(w, "None");
    } else {
        line(w, "match operation {");
        for op in ops {
            line(
                w,
                &format!(
                    "Operation::{} => Some(&{}),",
                    op.type_name(),
                    static_name(&op.result)
                ),
            );
        }
        line(w, "_ => None,");
        line(w, "}");
    }
    line(w, "}");
    for record in reachable_records(d) {
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
