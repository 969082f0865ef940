//! The Rust struct of an answer, as core's generators write it: a newer
//! operation's record (`core_rs.rs`), an older one's model and its borrowed
//! view (`core_models.rs`): its docs, derives, serde attributes, `extra`, and
//! the `Debug` written by hand when a field is secret.

use crate::declaration::Field;
use crate::text::{line, wrap};

/// A field of the struct.
pub struct Member {
    pub doc: String,
    /// The `#[serde(…)]` attribute's items (none: no attribute).
    pub serde: Vec<String>,
    pub name: String,
    pub ty: String,
    /// A secret's value as `Debug` shows it (an expression), or `None`: shown.
    pub hidden: Option<String>,
}

impl Member {
    /// A field's member of type `ty`: its name in code, renamed from its wire
    /// name where they differ; its doc the field's; shown by `Debug`.
    pub fn of(field: &Field, ty: String) -> Member {
        let name = field.snake();
        let mut serde = Vec::new();
        if name != field.name {
            serde.push(format!("rename = {:?}", field.name));
        }
        Member {
            doc: field.doc.clone(),
            serde,
            name,
            ty,
            hidden: None,
        }
    }
}

pub struct Struct<'a> {
    pub name: &'a str,
    pub doc: &'a str,
    /// The derives besides `Debug` (derived unless a field is secret).
    pub derives: &'a str,
    pub non_exhaustive: bool,
    pub members: Vec<Member>,
    pub extra_doc: &'a str,
    /// The type of `extra`: `None`, a JSON map flattened into the struct by
    /// serde; a view's raw fields (`RawFields<'a>`, its serde written by hand).
    pub extra_ty: Option<&'a str>,
    /// A comment in the hand-written `Debug`.
    pub debug_note: Option<&'a str>,
}

pub fn emit(w: &mut String, s: &Struct<'_>) {
    for text in wrap(s.doc, 92) {
        line(w, &format!("/// {text}"));
    }
    let secret = s.members.iter().any(|m| m.hidden.is_some());
    // `Debug` by hand when a field is secret: its value hidden.
    let debug = if secret { "" } else { "Debug, " };
    line(w, &format!("#[derive({debug}{})]", s.derives));
    if s.non_exhaustive {
        line(w, "#[non_exhaustive]");
    }
    line(w, &format!("pub struct {} {{", s.name));
    for member in &s.members {
        for text in wrap(&member.doc, 88) {
            line(w, &format!("    /// {text}"));
        }
        if !member.serde.is_empty() {
            line(w, &format!("    #[serde({})]", member.serde.join(", ")));
        }
        line(w, &format!("    pub {}: {},", member.name, member.ty));
    }
    for text in wrap(s.extra_doc, 88) {
        line(w, &format!("    /// {text}"));
    }
    match s.extra_ty {
        None => {
            line(w, "    #[serde(flatten)]");
            line(w, "    pub extra: Map<String, Value>,");
        }
        Some(ty) => line(w, &format!("    pub extra: {ty},")),
    }
    line(w, "}");
    if !secret {
        return;
    }
    line(w, "");
    line(w, &format!("impl std::fmt::Debug for {} {{", s.name));
    if let Some(note) = s.debug_note {
        line(w, &format!("    // {note}"));
    }
    line(
        w,
        "    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {",
    );
    line(w, &format!("        f.debug_struct({:?})", s.name));
    for member in &s.members {
        let name = &member.name;
        let shown = member
            .hidden
            .clone()
            .unwrap_or_else(|| format!("&self.{name}"));
        line(w, &format!("            .field({name:?}, {shown})"));
    }
    line(w, "            .field(\"extra\", &self.extra)");
    line(w, "            .finish()");
    line(w, "    }");
    line(w, "}");
}
