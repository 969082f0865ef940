//! Core's models (`core/src/wire/models/records.rs`): the records of the
//! operations older than the declarations (`[[model]]`), under the names,
//! fields and shapes they were published with (`roomchat::User`, …).
//!
//! Unlike a newer record's, a model's fields may be required or defaulted
//! (not an `Option`), it is not `#[non_exhaustive]` (0.1.0's users build
//! them), and its `Deserialize` is core's one-pass reader
//! (`crate::wire::decode::decode_model!`), which its borrowed view, if it has
//! one, shares.

use std::collections::BTreeSet;

use crate::declaration::{Answered, Declarations, Field, Model, Presence};
use crate::rust_struct::{self, Member, Struct};
use crate::text::line;
use crate::GENERATED;

pub const PATH: &str = "core/src/wire/models/records.rs";
/// The models' borrowed views (`roomchat::view::UserPageView`, …).
pub const VIEWS_PATH: &str = "core/src/wire/view/models.rs";

/// The borrowed views of the models that have one (`view`): the model's
/// fields, text as `Cow<'a, str>` borrowed from the body, a model held as its
/// view, `extra` as raw JSON text (`RawFields`). Their `Deserialize` and
/// `Serialize` are written with the models' (`decode_model!`, `view_serialize!`).
pub fn generate_views(d: &Declarations) -> Result<String, String> {
    let mut out = String::new();
    let w = &mut out;
    line(w, &format!("// {GENERATED}"));
    line(w, "");
    line(
        w,
        "//! The models' borrowed views (`view` of a `[[model]]` in `api/operations.toml`):",
    );
    line(
        w,
        "//! each model's fields, borrowed from the response body (see the module's doc).",
    );
    line(w, "");
    line(w, "use std::borrow::Cow;");
    line(w, "");
    line(w, "use crate::wire::view::RawFields;");
    for model in &d.models {
        let Some(view) = &model.view else { continue };
        let at = |what: String| {
            format!(
                "api/operations.toml, model {:?}, its view {view:?}: {what}",
                model.name
            )
        };
        let mut members = Vec::new();
        for field in &model.fields {
            let ty = match (field.kind.as_str(), field.record()) {
                ("string", _) => "Cow<'a, str>".to_owned(),
                ("boolean", _) => "bool".to_owned(),
                ("unsigned", _) => "u64".to_owned(),
                (_, Some(inner)) => {
                    let inner_view = d
                        .models
                        .iter()
                        .find(|m| m.name == inner)
                        .and_then(|m| m.view.as_deref())
                        .ok_or_else(|| at(format!("model {inner:?} has no view")))?;
                    if field.is_list() {
                        format!("Vec<{inner_view}<'a>>")
                    } else {
                        format!("{inner_view}<'a>")
                    }
                }
                (kind, None) => return Err(at(format!("a {kind} field has no view form"))),
            };
            let ty = match field.presence {
                Presence::Optional => format!("Option<{ty}>"),
                Presence::Required => ty,
                other @ (Presence::Defaulted | Presence::Nullable) => {
                    return Err(at(format!("a {} field has no view form", other.as_str())))
                }
            };
            if field.secret {
                return Err(at("a secret field has no view form".into()));
            }
            let mut member = Member::of(field, ty);
            member.serde.clear();
            members.push(member);
        }
        let doc = format!(
            "{} Fields as in [`crate::{}`].",
            model
                .view_doc
                .as_deref()
                .ok_or_else(|| at("view_doc is missing".into()))?,
            model.name
        );
        line(w, "");
        rust_struct::emit(
            w,
            &Struct {
                name: &format!("{view}<'a>"),
                doc: &doc,
                derives: "Clone, Default",
                non_exhaustive: false,
                members,
                extra_doc: "Every other field the service sent, as raw JSON.",
                debug_note: None,
                extra_ty: Some("RawFields<'a>"),
            },
        );
    }
    Ok(out)
}

pub fn generate(d: &Declarations) -> String {
    let mut out = String::new();
    let w = &mut out;
    line(w, &format!("// {GENERATED}"));
    line(w, "");
    line(
        w,
        "//! The records of the operations older than the declarations, under the names,",
    );
    line(
        w,
        "//! fields and shapes they were published with: made from `api/operations.toml`",
    );
    line(
        w,
        "//! (`[[model]]`). Wire names are exactly the service's (`_id`, `userId`, …); a field",
    );
    line(
        w,
        "//! the service may leave out is an `Option`, and the fields a model does not name",
    );
    line(
        w,
        "//! are kept in `extra`, never dropped. Each is read in one pass",
    );
    line(
        w,
        "//! (`crate::wire::decode::decode_model!`), as its borrowed view is.",
    );
    line(w, "");
    if uses(d, "epoch_seconds") {
        line(w, "use std::time::SystemTime;");
        line(w, "");
    }
    line(w, "use serde::Serialize;");
    line(w, "use serde_json::{Map, Value};");
    line(w, "");
    line(
        w,
        "use crate::wire::decode::{decode_model, owned_slots, view_serialize};",
    );
    let views: Vec<&str> = d.models.iter().filter_map(|m| m.view.as_deref()).collect();
    if !views.is_empty() {
        line(
            w,
            &format!("use crate::wire::view::{{{}}};", views.join(", ")),
        );
    }
    line(w, "use crate::wire::Decoded;");
    for model in &d.models {
        line(w, "");
        emit_struct(w, model);
    }
    line(w, "");
    line(
        w,
        "// Each model's `Deserialize` (and its view's, from the same fields): one pass over",
    );
    line(
        w,
        "// the object, known fields straight into their slots, the others into `extra`.",
    );
    for model in &d.models {
        line(w, "");
        emit_decode(w, "decode_model", &model.name, model);
        if let Some(view) = &model.view {
            emit_decode(w, "decode_model", &format!("{view}<'de>"), model);
            emit_decode(w, "view_serialize", &format!("{view}<'de>"), model);
        }
    }
    line(w, "");
    line(w, "// The types the models' fields are read as.");
    let slots: BTreeSet<String> = d
        .models
        .iter()
        .flat_map(|m| &m.fields)
        .filter(|f| via(f).is_none())
        .map(field_type)
        .collect();
    let slots: Vec<String> = slots.into_iter().collect();
    line(w, &format!("owned_slots!({});", slots.join(", ")));
    for model in &d.models {
        emit_decoded(w, model, d);
    }
    out
}

/// Whether a model's field has type `kind`.
fn uses(d: &Declarations, kind: &str) -> bool {
    d.models
        .iter()
        .flat_map(|m| &m.fields)
        .any(|f| f.kind == kind)
}

/// The Rust type of a field's value.
fn value_type(field: &Field) -> String {
    let scalar = |kind: &str| -> String {
        match kind {
            "string" | "text_or_number" => "String".into(),
            "boolean" => "bool".into(),
            "integer" => "i64".into(),
            "unsigned" => "u64".into(),
            "number" => "f64".into(),
            "json" => "Value".into(),
            "epoch_seconds" => "SystemTime".into(),
            model => model.into(),
        }
    };
    match field.record() {
        Some(inner) if field.is_list() => format!("Vec<{inner}>"),
        _ => scalar(&field.kind),
    }
}

/// The field's type: an `Option` unless it is required or defaulted.
fn field_type(field: &Field) -> String {
    if field.is_optional() {
        format!("Option<{}>", value_type(field))
    } else {
        value_type(field)
    }
}

/// The reader of a field whose wire form is not its type's own.
fn via(field: &Field) -> Option<&'static str> {
    match field.kind.as_str() {
        "text_or_number" => Some("crate::wire::decode::TextOrNumber"),
        "epoch_seconds" => Some("crate::wire::decode::EpochSeconds"),
        _ => None,
    }
}

fn emit_struct(w: &mut String, model: &Model) {
    let members = model
        .fields
        .iter()
        .map(|field| {
            let mut member = Member::of(field, field_type(field));
            if field.presence == Presence::Optional {
                member
                    .serde
                    .push("skip_serializing_if = \"Option::is_none\"".to_owned());
            }
            if field.kind == "epoch_seconds" {
                member.serde.push(
                    "serialize_with = \"crate::wire::decode::write_epoch_seconds\"".to_owned(),
                );
            }
            if field.secret {
                member.hidden = Some(format!(
                    "&format_args!(\"<{{}} bytes>\", self.{}.len())",
                    member.name
                ));
            }
            member
        })
        .collect();
    rust_struct::emit(
        w,
        &Struct {
            name: &model.name,
            doc: &model.doc,
            derives: "Clone, PartialEq, Serialize, Default",
            non_exhaustive: false,
            members,
            extra_doc: model.extra_doc(),
            debug_note: Some("A secret signs someone in: shown only by its length."),
            extra_ty: None,
        },
    );
}

/// `decode_model!(Type, "what", { "wire" => field: presence, … });` (or
/// `view_serialize!`): a model's, or its view's, fields for core's macros.
fn emit_decode(w: &mut String, mac: &str, ty: &str, model: &Model) {
    line(w, &format!("{mac}!({ty}, {:?}, {{", model.what));
    for field in &model.fields {
        let how = match field.presence {
            Presence::Required => "required",
            Presence::Optional | Presence::Defaulted | Presence::Nullable => "optional",
        };
        let via = via(field).map_or(String::new(), |v| format!(" via {v}"));
        line(
            w,
            &format!("    {:?} => {}: {how}{via},", field.name, field.snake()),
        );
    }
    line(w, "});");
}

/// `Decoded` for a model an operation answers: whether the answer may say it
/// failed (`"success": false`).
fn emit_decoded(w: &mut String, model: &Model, d: &Declarations) {
    let Answered { alone, listed } = model.answered(d);
    if !alone && !listed {
        return;
    }
    line(w, "");
    line(w, &format!("impl Decoded for {} {{", model.name));
    line(w, "    fn may_report_failure(&self) -> bool {");
    if !alone {
        line(
            w,
            "        // Only ever an item of a JSON array, which cannot say it failed.",
        );
        line(w, "        false");
    } else if let Some(success) = model.fields.iter().find(|f| f.name == "success") {
        line(
            w,
            match success.presence {
                Presence::Optional | Presence::Nullable => "        self.success != Some(true)",
                Presence::Required | Presence::Defaulted => "        !self.success",
            },
        );
    } else {
        line(
            w,
            "        self.extra.get(\"success\") == Some(&Value::Bool(false))",
        );
    }
    line(w, "    }");
    line(w, "}");
}
