//! Core's published parameters types (`core/src/wire/models/params.rs`): what
//! the operations older than the declarations take, under the names and shapes
//! they were published with (`roomchat::ListUsers`, `CreateUser`, `Role`, …),
//! from `[operation.rust]` (the type's doc, derives and fields) and
//! `[operation.enums]` (its enums: `PathForm`, `Role`, and `DeactivateUser`,
//! the enum that picks one identifier).
//!
//! Each type's `declared_params()` (the declaration's JSON params, which the
//! typed method and the wire builder send through the catalog) is generated
//! with it, so that the fields and the params cannot drift apart. The
//! constructors (`ListUsers::page`, `CreateUser::regular`, …) are written by
//! hand beside them (`wire/models.rs`): their names and docs are the published
//! API's own, and no key of the declaration would say them more shortly.

use std::collections::BTreeSet;

use crate::core_rs::{rust_shape, RustField};
use crate::declaration::{pascal, snake, Choice, Declarations, Operation, Param, ParamKind};
use crate::text::{doc_lines, line};
use crate::GENERATED;

pub const PATH: &str = "core/src/wire/models/params.rs";

pub fn generate(d: &Declarations) -> Result<String, String> {
    let mut out = String::new();
    let w = &mut out;
    line(w, &format!("// {GENERATED}"));
    line(w, "");
    for text in [
        "//! The parameters the operations older than the declarations take, under the",
        "//! names and shapes they were published with: made from `api/operations.toml`",
        "//! (`[operation.rust]`, and `[operation.enums]` for their enums). Each one's",
        "//! `declared_params()` gives the declaration's JSON params; the constructors are",
        "//! written by hand in `wire/models.rs`.",
    ] {
        line(w, text);
    }
    line(w, "");
    line(w, "use serde_json::{Map, Value};");
    // The enums written so far: one a field of two types is written once.
    let mut enums = BTreeSet::new();
    for op in &d.operations {
        let shape = rust_shape(op)?;
        let Some(ty) = &shape.params else { continue };
        let at = |what: &str| format!("{}: {what}", op.table_at("rust"));
        let head = Head {
            ty,
            doc: shape
                .doc
                .as_deref()
                .ok_or_else(|| at("a params type needs doc"))?,
            derives: (shape.derives.as_deref()).ok_or_else(|| at("a params type needs derives"))?,
        };
        if shape.fields.is_empty() {
            emit_picking_enum(w, op, d, &head).map_err(|e| at(&e))?;
        } else {
            emit_struct(w, op, d, &head, &shape.fields, &mut enums).map_err(|e| at(&e))?;
        }
    }
    Ok(out)
}

/// A parameters type's name, doc and derives.
struct Head<'a> {
    ty: &'a str,
    doc: &'a str,
    derives: &'a str,
}

fn emit_declared_params_head(w: &mut String) {
    line(
        w,
        "    /// The declaration's JSON params (`api/operations.toml`).",
    );
    line(w, "    pub(crate) fn declared_params(&self) -> Value {");
    line(w, "        let mut params = Map::new();");
}

/// `params.insert("wire".into(), <value>.clone().into());`
fn insert(w: &mut String, indent: &str, wire: &str, value: &str) {
    line(
        w,
        &format!("{indent}params.insert({wire:?}.into(), {value}.clone().into());"),
    );
}

/// The enum of the operation that picks one param of its exactly_one group,
/// each variant carrying it: the params type itself (`DeactivateUser`).
fn emit_picking_enum(
    w: &mut String,
    op: &Operation,
    d: &Declarations,
    head: &Head,
) -> Result<(), String> {
    let Head { ty, doc, derives } = head;
    let variants = op
        .enums
        .keys()
        .filter_map(|key| op.choice(key, d))
        .find(|choice| choice.param.is_none())
        .map(|choice| &choice.variants)
        .ok_or("a params type without fields is the enum of [operation.enums] without param")?;
    line(w, "");
    doc_lines(w, "", doc);
    line(w, &format!("#[derive({derives})]"));
    line(w, &format!("pub enum {ty} {{"));
    for v in variants {
        doc_lines(w, "    ", &v.doc);
        line(w, &format!("    {}(String),", v.name));
    }
    line(w, "}");
    line(w, "");
    line(w, &format!("impl {ty} {{"));
    emit_declared_params_head(w);
    line(w, "        match self {");
    for v in variants {
        let carried = v.carries.as_deref().unwrap_or_default();
        line(w, &format!("            {ty}::{}(value) => {{", v.name));
        insert(w, "                ", carried, "value");
        line(w, "            }");
    }
    line(w, "        }");
    line(w, "        Value::Object(params)");
    line(w, "    }");
    line(w, "}");
    Ok(())
}

/// What a struct's field is.
enum Member<'a> {
    Param(&'a Param),
    Choice(&'a Choice),
    Extra,
}

fn emit_struct(
    w: &mut String,
    op: &Operation,
    d: &Declarations,
    head: &Head,
    fields: &[RustField],
    emitted: &mut BTreeSet<String>,
) -> Result<(), String> {
    let Head { ty, doc, derives } = head;
    let mut members = Vec::new();
    for field in fields {
        let choice = op
            .enums
            .keys()
            .filter_map(|key| op.choice(key, d))
            .find(|choice| choice.param.as_deref() == Some(field.name.as_str()));
        let member = if let Some(choice) = choice {
            Member::Choice(choice)
        } else if field.name == "extra" && op.extra {
            Member::Extra
        } else if let Some(p) = op.params.iter().find(|p| p.name == field.name) {
            Member::Param(p)
        } else {
            return Err(format!(
                "field {:?} is no param, enum's param nor extra",
                field.name
            ));
        };
        members.push((field, member));
    }
    // The enums a field is, each before the first struct that has it.
    for (_, member) in &members {
        if let Member::Choice(choice) = member {
            if emitted.insert(choice.name.clone()) {
                emit_enum(w, op, choice)?;
            }
        }
    }
    line(w, "");
    doc_lines(w, "", doc);
    line(w, &format!("#[derive({derives})]"));
    line(w, &format!("pub struct {ty} {{"));
    let mut consts = Vec::new();
    for (field, member) in &members {
        let name = snake(&field.name);
        let rust = match member {
            Member::Extra => "Map<String, Value>".to_owned(),
            Member::Choice(choice) => pascal(&choice.name),
            Member::Param(p) => {
                let scalar = match (p.kind, &field.ty) {
                    (ParamKind::Integer, Some(ty)) => ty.clone(),
                    (ParamKind::Integer, None) => "u64".into(),
                    (ParamKind::String | ParamKind::Id, None) if p.required => "String".into(),
                    (
                        kind @ (ParamKind::String
                        | ParamKind::Id
                        | ParamKind::Boolean
                        | ParamKind::Switch
                        | ParamKind::Json),
                        _,
                    ) => return Err(format!("field {:?}: a {} param", field.name, kind.as_str())),
                };
                if let Some(c) = &field.max {
                    let max = p.max.ok_or_else(|| {
                        format!("field {:?}: max without a declared max", field.name)
                    })?;
                    consts.push((c, scalar.clone(), max));
                }
                if p.required {
                    scalar
                } else {
                    format!("Option<{scalar}>")
                }
            }
        };
        doc_lines(w, "    ", &field.doc);
        line(w, &format!("    pub {name}: {rust},"));
    }
    line(w, "}");
    for (c, scalar, max) in consts {
        line(w, "");
        doc_lines(w, "", &c.doc);
        line(w, &format!("pub const {}: {scalar} = {max};", c.name));
    }
    line(w, "");
    line(w, &format!("impl {ty} {{"));
    emit_declared_params_head(w);
    for (field, member) in &members {
        let name = snake(&field.name);
        match member {
            Member::Param(p) if p.required => {
                insert(w, "        ", &p.name, &format!("self.{name}"));
            }
            Member::Param(p) => {
                line(w, &format!("        if let Some(value) = self.{name} {{"));
                line(
                    w,
                    &format!(
                        "            params.insert({:?}.into(), value.into());",
                        p.name
                    ),
                );
                line(w, "        }");
            }
            Member::Choice(choice) => {
                let e = pascal(&choice.name);
                line(w, &format!("        let {name} = match &self.{name} {{"));
                for v in &choice.variants {
                    let value = v.value.as_deref().unwrap_or_default();
                    match &v.carries {
                        Some(carried) => {
                            line(w, &format!("            {e}::{}(value) => {{", v.name));
                            insert(w, "                ", carried, "value");
                            line(w, &format!("                {value:?}"));
                            line(w, "            }");
                        }
                        None => line(w, &format!("            {e}::{} => {value:?},", v.name)),
                    }
                }
                line(w, "        };");
                line(
                    w,
                    &format!(
                        "        params.insert({:?}.into(), {name}.into());",
                        field.name
                    ),
                );
            }
            Member::Extra if op.is_hand_written() => {
                // A hand-written builder takes them as one object.
                line(w, "        if !self.extra.is_empty() {");
                line(
                    w,
                    "            params.insert(\"extra\".into(), Value::Object(self.extra.clone()));",
                );
                line(w, "        }");
            }
            Member::Extra => line(w, "        params.extend(self.extra.clone());"),
        }
    }
    line(w, "        Value::Object(params)");
    line(w, "    }");
    line(w, "}");
    Ok(())
}

/// An enum a params struct's field is (`PathForm`, `Role`): a variant per
/// value, one carrying a param holds it; `Copy` when none does, `Default`
/// (the declared default's variant) when its param declares one.
fn emit_enum(w: &mut String, op: &Operation, choice: &Choice) -> Result<(), String> {
    let variants = &choice.variants;
    let name = pascal(&choice.name);
    let doc = choice
        .doc
        .as_deref()
        .ok_or_else(|| format!("enum {:?} needs a doc", choice.name))?;
    let default = op
        .params
        .iter()
        .find(|p| Some(&p.name) == choice.param.as_ref())
        .and_then(Param::default_text);
    if default.is_some() && !variants.iter().any(|v| v.value == default) {
        return Err(format!(
            "enum {:?}: no variant has the default",
            choice.name
        ));
    }
    let carrying = variants.iter().any(|v| v.carries.is_some());
    let mut derives = vec!["Debug", "Clone"];
    if !carrying {
        derives.push("Copy");
    }
    derives.extend(["PartialEq", "Eq"]);
    if default.is_some() {
        derives.push("Default");
    }
    line(w, "");
    doc_lines(w, "", doc);
    line(w, &format!("#[derive({})]", derives.join(", ")));
    line(w, &format!("pub enum {name} {{"));
    for v in variants {
        doc_lines(w, "    ", &v.doc);
        if default.is_some() && v.value == default {
            line(w, "    #[default]");
        }
        match v.carries {
            Some(_) => line(w, &format!("    {}(String),", v.name)),
            None => line(w, &format!("    {},", v.name)),
        }
    }
    line(w, "}");
    Ok(())
}
