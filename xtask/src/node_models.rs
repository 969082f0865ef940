//! Node's forms of core's models (`User`, …: the records of the operations
//! older than the declarations), from `[[model]]` and its `[model.node]`, what
//! the fields cannot say (JS names where they are not the wire name less a
//! leading `_`, the docs Node published):
//!
//! - their TypeScript interfaces, which `node.rs` writes into operations.d.ts
//!   (index.d.ts re-exports them, under the names 0.1.0 published);
//! - `bindings/node/src/models.rs`: how the addon writes each as the JSON text
//!   of its JS object (`shape::JsText`), on the pool thread: straight-line code
//!   per field, no serde (the users listing's fast path, see shape.rs), a model
//!   with a borrowed view (`UserView`) written by the same code for both.
//!
//! A JS object has the declared fields in declared order, those core holds as
//! an `Option` left out when absent (a `nullable` one too: Node never wrote
//! null), then `extra`. An `epoch_seconds` field is written as milliseconds
//! since the epoch, a `Date` in the types (index.js makes it one).

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::declaration::{read_table, snake, Declarations, Field, Model};
use crate::text::{line, wrap};
use crate::typescript::{is_identifier, jsdoc, ts_field_type, ts_property};
use crate::GENERATED;

pub const PATH: &str = "bindings/node/src/models.rs";

/// `[model.node]`: see api/operations.toml.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Shape {
    /// The interface's doc.
    doc: String,
    /// A field's doc, by its JS name, where it is not the declaration's.
    #[serde(default)]
    docs: BTreeMap<String, String>,
    /// The doc of `extra` (default: the model's `extra_doc`).
    extra: Option<String>,
    /// A field's JS name, by its wire name, where it is not the wire name less a leading `_`.
    #[serde(default)]
    names: BTreeMap<String, String>,
}

/// A model and its Node shape, checked.
pub struct NodeModel<'a> {
    model: &'a Model,
    shape: Shape,
}

impl NodeModel<'_> {
    /// A field's name in JS.
    fn js_name<'f>(&'f self, field: &'f Field) -> &'f str {
        match self.shape.names.get(&field.name) {
            Some(name) => name,
            None => field.name.strip_prefix('_').unwrap_or(&field.name),
        }
    }

    /// A field's doc in the types.
    fn doc<'f>(&'f self, field: &'f Field) -> &'f str {
        self.shape
            .docs
            .get(self.js_name(field))
            .unwrap_or(&field.doc)
    }
}

/// Every model with its `[model.node]` read and checked.
pub fn read(d: &Declarations) -> Result<Vec<NodeModel<'_>>, String> {
    d.models
        .iter()
        .map(|model| {
            let at = model.table_at("node");
            let shape: Shape =
                read_table(model.node.as_ref(), &at)?.ok_or_else(|| format!("{at}: missing"))?;
            for wire in shape.names.keys() {
                if !model.fields.iter().any(|f| &f.name == wire) {
                    return Err(format!("{at}: names: no field {wire:?}"));
                }
            }
            let node = NodeModel { model, shape };
            let mut names = Vec::new();
            for field in &model.fields {
                let name = node.js_name(field);
                if !is_identifier(name) || name == "extra" || names.contains(&name) {
                    return Err(format!(
                        "{at}: field {:?}: its JS name {name:?} is no name of its own",
                        field.name
                    ));
                }
                names.push(name);
                if field.record().is_none()
                    && !matches!(
                        field.kind.as_str(),
                        "string" | "text_or_number" | "boolean" | "unsigned" | "epoch_seconds"
                    )
                {
                    return Err(format!(
                        "{at}: field {:?}: a {:?} field has no Node form here",
                        field.name, field.kind
                    ));
                }
            }
            for name in node.shape.docs.keys() {
                if !names.contains(&name.as_str()) {
                    return Err(format!("{at}: docs: no field named {name:?} in JS"));
                }
            }
            Ok(node)
        })
        .collect()
}

/// The models' interfaces, as Node published them.
pub fn dts(w: &mut String, models: &[NodeModel<'_>]) {
    for node in models {
        line(w, "");
        jsdoc(w, "", &node.shape.doc);
        line(w, &format!("export interface {} {{", node.model.name));
        for field in &node.model.fields {
            jsdoc(w, "  ", node.doc(field));
            let optional = if field.is_optional() { "?" } else { "" };
            line(
                w,
                &format!(
                    "  {}{optional}: {}",
                    ts_property(node.js_name(field)),
                    ts_field_type(field)
                ),
            );
        }
        let extra = node
            .shape
            .extra
            .as_deref()
            .unwrap_or(node.model.extra_doc());
        jsdoc(w, "  ", extra);
        line(w, "  extra: Record<string, unknown>");
        line(w, "}");
    }
}

/// `bindings/node/src/models.rs`.
pub fn rust(models: &[NodeModel<'_>]) -> String {
    let mut out = String::new();
    let w = &mut out;
    line(w, &format!("// {GENERATED}"));
    line(w, "");
    for text in [
        "//! Core's models (`roomchat::User`, …: the records of the operations older than the",
        "//! declarations) as the JSON text of the JS objects the package returns, made from",
        "//! `api/operations.toml` (`[[model]]` and its `[model.node]`): the declared fields by",
        "//! their JS names in declared order, those absent left out, then `extra`. Written",
        "//! field by field rather than through serde: see `shape::JsText`.",
    ] {
        line(w, text);
    }
    line(w, "");
    let views: Vec<&str> = models
        .iter()
        .filter_map(|node| node.model.view.as_deref())
        .collect();
    if !views.is_empty() {
        line(w, &format!("use roomchat::view::{{{}}};", views.join(", ")));
        line(w, "");
    }
    let fields = || models.iter().flat_map(|node| &node.model.fields);
    let mut writers = vec!["extra_and_end"];
    if fields().any(|f| !f.is_optional()) {
        writers.push("field");
    }
    if fields().any(Field::is_optional) {
        writers.push("optional_field");
    }
    line(
        w,
        &format!("use crate::shape::{{{}, JsText}};", writers.join(", ")),
    );
    for node in models {
        let model = node.model;
        let name = &model.name;
        let shape = js_shape(node);
        line(w, "");
        let sized = model.fields.iter().find(|f| f.is_list());
        match &model.view {
            None => {
                doc(w, &format!("`{name}` as `{shape}`."));
                line(w, &format!("impl JsText for roomchat::{name} {{"));
                emit_size(w, sized, "self");
                line(w, "fn write_js(&self, out: &mut Vec<u8>) {");
                emit_fields(w, node, "self", "out");
                line(w, "}");
                line(w, "}");
            }
            Some(view) => {
                let writer = format!("write_{}", snake(name));
                doc(
                    w,
                    &format!("`{name}` or its view `{view}` (the same fields) as `{shape}`."),
                );
                line(w, &format!("macro_rules! {writer} {{"));
                line(w, "($m:expr, $out:expr) => {{");
                emit_fields(w, node, "$m", "$out");
                line(w, "}};");
                line(w, "}");
                for ty in [format!("roomchat::{name}"), format!("{view}<'_>")] {
                    line(w, "");
                    line(w, &format!("impl JsText for {ty} {{"));
                    emit_size(w, sized, "self");
                    line(w, "fn write_js(&self, out: &mut Vec<u8>) {");
                    line(w, &format!("{writer}!(self, out)"));
                    line(w, "}");
                    line(w, "}");
                }
            }
        }
    }
    out
}

/// `/// text` lines, wrapped.
fn doc(w: &mut String, text: &str) {
    for part in wrap(text, 88) {
        line(w, &format!("/// {part}"));
    }
}

/// `{id?, userId?, …, extra}`: the JS object's shape, for a doc.
fn js_shape(node: &NodeModel<'_>) -> String {
    let mut fields: Vec<String> = node
        .model
        .fields
        .iter()
        .map(|f| {
            let optional = if f.is_optional() { "?" } else { "" };
            format!("{}{optional}", node.js_name(f))
        })
        .collect();
    fields.push("extra".into());
    format!("{{{}}}", fields.join(", "))
}

/// A page's size: its list's, sized once instead of grown by doubling.
fn emit_size(w: &mut String, list: Option<&Field>, m: &str) {
    if let Some(list) = list {
        line(w, "fn text_size(&self) -> usize {");
        line(w, &format!("64 + {m}.{}.text_size()", list.snake()));
        line(w, "}");
    }
}

/// The statements that write `m`'s fields to `out` as its JS object.
fn emit_fields(w: &mut String, node: &NodeModel<'_>, m: &str, out: &str) {
    line(w, &format!("{out}.push(b'{{');"));
    for field in &node.model.fields {
        let key = format!("br#\"\"{}\":\"#", node.js_name(field));
        let member = field.snake();
        if field.is_optional() {
            line(
                w,
                &format!("optional_field({out}, {key}, {m}.{member}.as_ref());"),
            );
        } else {
            line(w, &format!("field({out}, {key}, &{m}.{member});"));
        }
    }
    line(w, &format!("extra_and_end({out}, &{m}.extra);"));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The repository's declarations: every model has a `[model.node]`, and a
    /// table that names no field, or a JS name that is not one, fails.
    #[test]
    fn tables_are_checked() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../api/operations.toml");
        let text = std::fs::read_to_string(root).expect("api/operations.toml");
        let d = crate::declaration::load(&text).expect("the declarations load");
        assert_eq!(read(&d).expect("the tables read").len(), d.models.len());
        for (table, refused) in [
            ("names = { nothing = \"x\" }", "names: no field \"nothing\""),
            ("names = { username = \"extra\" }", "is no name of its own"),
            (
                "names = { username = \"user-name\" }",
                "is no name of its own",
            ),
            (
                "docs = { nothing = \"x\" }",
                "docs: no field named \"nothing\"",
            ),
            ("colour = \"red\"", "unknown field"),
        ] {
            let edited = text.replacen(
                "[model.node]\ndoc = \"A user as listed.",
                &format!("[model.node]\n{table}\ndoc = \"A user as listed."),
                1,
            );
            assert_ne!(
                edited, text,
                "the User model's [model.node] is where the test looks"
            );
            let d = crate::declaration::load(&edited).expect("the declarations load");
            let error = read(&d).err().unwrap_or_default();
            assert!(error.contains(refused), "{table}: {error}");
        }
    }
}
