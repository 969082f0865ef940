//! C's handles of core's models (`ffi/src/models/<model>.rs`): `roomchat_user`,
//! … — the records of the operations older than the declarations — from
//! `[[model]]` and its `[model.c]`, the handle as C published it (its docs,
//! which accessors, in the header's order).
//!
//! Each handle holds core's value and makes a field's C string on first access
//! (most callers read few fields); a page holds its items as their handles, so
//! that `_get` lends one. cbindgen writes the header from these files: a
//! module's functions come after its parent's and before the next module's, so
//! `ffi/src/models.rs` declares one module per file in the header's order (the
//! test below fails when it does not declare one), and the docs given here are
//! the header's, line breaks kept. What the handles share, and what follows no
//! declaration (the users iterator, the message list and its field enum), is
//! written by hand in `ffi/src/models.rs`.

use std::fmt::Write;

use serde::Deserialize;

use crate::declaration::{read_table, snake, Declarations, Field, Model};
use crate::text::{doc_lines, line};
use crate::GENERATED;

/// The hand-written parent of the generated modules.
pub const PARENT: &str = "ffi/src/models.rs";

/// `[model.c]`: see api/operations.toml.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Shape {
    doc: String,
    arg: String,
    functions: Vec<Function>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Function {
    #[serde(rename = "fn")]
    name: String,
    doc: String,
}

/// What one accessor reads, checked against the model.
enum Read<'a> {
    /// A string field (or core's method of that name, `id()`).
    Text {
        field: &'a Field,
        method: bool,
    },
    Flag(&'a Field),
    Bool(&'a Field),
    Unsigned(&'a Field),
    EpochSeconds(&'a Field),
    Len,
    /// The page's `index`th item, borrowed: its handle's name.
    Get(String),
    Json,
    Free,
}

/// A model with its C shape, checked.
struct Handle<'a> {
    model: &'a Model,
    name: String,
    shape: Shape,
    reads: Vec<Read<'a>>,
    /// The page's list field and its items' handle.
    list: Option<(&'a Field, String)>,
}

/// The handle of a model: `roomchat_<model>`.
fn handle_name(model: &Model) -> String {
    format!("roomchat_{}", snake(&model.name))
}

/// The generated file of each model with a `[model.c]`: (path, Rust before rustfmt).
pub fn generate(d: &Declarations) -> Result<Vec<(String, String)>, String> {
    let mut files = Vec::new();
    for model in d.models.iter().filter(|m| m.c.is_some()) {
        let handle = handle_of(d, model)?;
        let module = snake(&model.name);
        files.push((format!("ffi/src/models/{module}.rs"), emit(&handle)));
    }
    Ok(files)
}

/// The generated files, formatted, and a check that the hand-written parent
/// declares each of their modules (a file it does not declare is not built).
pub fn files(d: &Declarations, parent: &str) -> Result<Vec<(&'static str, String)>, String> {
    let mut out = Vec::new();
    for (path, source) in generate(d)? {
        let module = path
            .rsplit('/')
            .next()
            .and_then(|f| f.strip_suffix(".rs"))
            .unwrap_or_default();
        if !parent.lines().any(|l| l.trim() == format!("mod {module};")) {
            return Err(format!("{PARENT}: no `mod {module};` for {path}"));
        }
        // codegen's list of files names each for the whole run.
        out.push((&*path.leak(), crate::rustfmt(&source)?));
    }
    Ok(out)
}

fn handle_of<'a>(d: &'a Declarations, model: &'a Model) -> Result<Handle<'a>, String> {
    let at = model.table_at("c");
    // Only a model with a [model.c] has a handle (`generate`'s filter).
    let shape: Shape =
        read_table(model.c.as_ref(), &at)?.ok_or_else(|| format!("{at}: missing"))?;
    let lists: Vec<&Field> = model.fields.iter().filter(|f| f.is_list()).collect();
    if lists.len() > 1 || lists.iter().any(|f| f.is_optional()) {
        return Err(format!("{at}: a page has one list of models, always there"));
    }
    let list = match lists.first() {
        None => None,
        Some(field) => {
            let item = field.record().unwrap_or_default();
            let item = d
                .models
                .iter()
                .find(|m| m.name == item && m.c.is_some())
                .ok_or_else(|| {
                    format!(
                        "{at}: {:?} holds {item}, which has no [model.c]",
                        field.name
                    )
                })?;
            Some((*field, handle_name(item)))
        }
    };
    let mut reads = Vec::new();
    let mut seen = Vec::new();
    for function in &shape.functions {
        let name = function.name.as_str();
        if seen.contains(&name) {
            return Err(format!("{at}: {name:?} twice"));
        }
        seen.push(name);
        reads.push(read_of(model, &list, name).map_err(|e| format!("{at}: {name:?}: {e}"))?);
    }
    if !seen.contains(&"free") {
        return Err(format!("{at}: no \"free\": C could not free the handle"));
    }
    Ok(Handle {
        model,
        name: handle_name(model),
        shape,
        reads,
        list,
    })
}

fn read_of<'a>(
    model: &'a Model,
    list: &Option<(&'a Field, String)>,
    name: &str,
) -> Result<Read<'a>, String> {
    let bare = name.strip_suffix("()");
    let field = model
        .fields
        .iter()
        .find(|f| f.snake() == bare.unwrap_or(name));
    match (name, field, list) {
        ("json", None, None) => Ok(Read::Json),
        ("json", None, Some(_)) => Err("a page's JSON would lack its list".into()),
        ("free", None, _) => Ok(Read::Free),
        ("len", None, Some(_)) => Ok(Read::Len),
        ("get", None, Some((_, item))) => Ok(Read::Get(item.clone())),
        (_, None, _) => Err("no such field".into()),
        (_, Some(field), _) if bare.is_some() => match field.kind.as_str() {
            "string" => Ok(Read::Text {
                field,
                method: true,
            }),
            _ => Err("core's method of a field is read only for a string".into()),
        },
        (_, Some(field), _) => match (field.kind.as_str(), field.is_optional()) {
            ("string" | "text_or_number", _) => Ok(Read::Text {
                field,
                method: false,
            }),
            ("boolean", true) => Ok(Read::Flag(field)),
            ("boolean", false) => Ok(Read::Bool(field)),
            ("unsigned", false) => Ok(Read::Unsigned(field)),
            ("epoch_seconds", true) => Ok(Read::EpochSeconds(field)),
            _ if field.is_list() => Err("a page's list is read with \"len\" and \"get\"".into()),
            (kind, _) => Err(format!(
                "a {} {kind:?} field has no C accessor here",
                field.presence.as_str()
            )),
        },
    }
}

fn emit(handle: &Handle<'_>) -> String {
    let model = &handle.model.name;
    let name = &handle.name;
    let texts: Vec<&str> = handle
        .shape
        .functions
        .iter()
        .zip(&handle.reads)
        .filter(|(_, read)| matches!(read, Read::Text { .. }))
        .map(|(f, _)| f.name.trim_end_matches("()"))
        .collect();
    let has = |wanted: fn(&Read<'_>) -> bool| handle.reads.iter().any(wanted);
    let mut helpers = vec![];
    if !texts.is_empty() {
        helpers.push("lazy_text");
    }
    if has(|r| matches!(r, Read::Json)) {
        helpers.push("lazy_json");
    }
    if has(|r| matches!(r, Read::EpochSeconds(_))) {
        helpers.push("epoch_seconds");
    }
    let mut glue = vec![];
    if has(|r| matches!(r, Read::Flag(_))) {
        glue.push("flag");
    }
    glue.push("read");
    let mut out = format!(
        "// {GENERATED}

//! C's handle of core's `{model}` (`[[model]]` and its `[model.c]`): `{name}`
//! and its accessors. What the handles share is in `crate::models`.

"
    );
    let mut std = vec![];
    if !texts.is_empty() || has(|r| matches!(r, Read::Json)) {
        std.push("use std::ffi::{c_char, CString};");
        std.push("use std::sync::OnceLock;");
    }
    if has(|r| matches!(r, Read::Text { .. } | Read::Json | Read::Get(_))) {
        std.push("use std::ptr;");
    }
    for u in &std {
        line(&mut out, u);
    }
    if !std.is_empty() {
        out.push('\n');
    }
    line(&mut out, &format!("use roomchat::{model};"));
    out.push('\n');
    if let Some((_, item)) = &handle.list {
        let module = item.trim_start_matches("roomchat_");
        line(&mut out, &format!("use super::{module}::{item};"));
    }
    if !helpers.is_empty() {
        line(&mut out, &format!("use super::{{{}}};", helpers.join(", ")));
    }
    line(&mut out, "use crate::boundary::free_box;");
    line(
        &mut out,
        &format!("use crate::glue::{{{}}};", glue.join(", ")),
    );
    out.push('\n');

    // The handle.
    doc_lines(&mut out, "", &handle.shape.doc);
    line(&mut out, "#[allow(non_camel_case_types)]");
    line(&mut out, &format!("pub struct {name} {{"));
    if let Some((list, _)) = &handle.list {
        let list = list.snake();
        let _ = writeln!(
            out,
            "    /// Core's value, without its `{list}` (here as handles)."
        );
    }
    let _ = writeln!(out, "    record: {model},");
    if let Some((list, item)) = &handle.list {
        let _ = writeln!(out, "    {}: Vec<{item}>,", list.snake());
    }
    for (i, text) in texts.iter().enumerate() {
        if i == 0 {
            line(
                &mut out,
                "    // C strings of the text fields, made on first access.",
            );
        }
        line(&mut out, &format!("    {text}: OnceLock<Option<CString>>,"));
    }
    if has(|r| matches!(r, Read::Json)) {
        line(&mut out, "    json: OnceLock<CString>,");
    }
    line(&mut out, "}\n");

    // From core's value.
    let mut made = vec!["record".to_owned()];
    let record = match &handle.list {
        None => "record",
        Some(_) => "mut record",
    };
    let _ = writeln!(out, "impl From<{model}> for {name} {{");
    let _ = writeln!(out, "    fn from({record}: {model}) -> Self {{");
    if let Some((list, item)) = &handle.list {
        let list = list.snake();
        let _ = writeln!(
            out,
            "        let {list} = std::mem::take(&mut record.{list}).into_iter().map({item}::from).collect();"
        );
        made.push(list);
    }
    made.extend(texts.iter().map(|t| format!("{t}: OnceLock::new()")));
    if has(|r| matches!(r, Read::Json)) {
        made.push("json: OnceLock::new()".into());
    }
    let _ = writeln!(out, "        {name} {{ {} }}", made.join(", "));
    line(&mut out, "    }\n}");

    // The accessors.
    let arg = &handle.shape.arg;
    for (function, read) in handle.shape.functions.iter().zip(&handle.reads) {
        let suffix = function.name.trim_end_matches("()");
        out.push('\n');
        doc_lines(&mut out, "", &function.doc);
        line(&mut out, "#[no_mangle]");
        let head = format!("pub extern \"C\" fn {name}_{suffix}");
        let list = list_name(handle);
        // (the parameters after the handle's, the return type, what NULL gives, the read of `r`)
        let (params, returns, absent, body) = match read {
            Read::Text { field, method } => {
                let value = match (method, field.is_optional()) {
                    (true, _) => format!("r.record.{suffix}().map(str::to_owned)"),
                    (false, true) => format!("r.record.{}.clone()", field.snake()),
                    (false, false) => format!("Some(r.record.{}.clone())", field.snake()),
                };
                let body = format!("lazy_text(&r.{suffix}, || {value})");
                ("", "*const c_char".into(), "ptr::null()", body)
            }
            Read::Flag(f) => (
                "",
                "i32".into(),
                "-1",
                format!("flag(r.record.{})", f.snake()),
            ),
            Read::Bool(f) => (
                "",
                "bool".into(),
                "false",
                format!("r.record.{}", f.snake()),
            ),
            Read::Unsigned(f) => ("", "u64".into(), "0", format!("r.record.{}", f.snake())),
            Read::EpochSeconds(f) => {
                let body = format!("epoch_seconds(r.record.{})", f.snake());
                ("", "i64".into(), "-1", body)
            }
            Read::Len => ("", "usize".into(), "0", format!("r.{list}.len()")),
            Read::Get(item) => {
                let body = format!(
                    "r.{list}.get(index).map_or(ptr::null(), |item| item as *const {item})"
                );
                (
                    ", index: usize",
                    format!("*const {item}"),
                    "ptr::null()",
                    body,
                )
            }
            Read::Json => {
                let body = "lazy_json(&r.json, || serde_json::to_string(&r.record))".into();
                ("", "*const c_char".into(), "ptr::null()", body)
            }
            Read::Free => {
                let _ = writeln!(
                    out,
                    "{head}({arg}: *mut {name}) {{\n    free_box({arg})\n}}"
                );
                continue;
            }
        };
        let _ = writeln!(
            out,
            "{head}({arg}: *const {name}{params}) -> {returns} {{\n    read({arg}, {absent}, |r| {body})\n}}"
        );
    }
    out
}

fn list_name(handle: &Handle<'_>) -> String {
    handle
        .list
        .as_ref()
        .map(|(field, _)| field.snake())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use crate::declaration::load;

    const PARENT: &str = include_str!("../../ffi/src/models.rs");

    /// The repository's declarations with `from` replaced by `to`, generated.
    fn generated(from: &str, to: &str) -> Result<Vec<(String, String)>, String> {
        let declarations = include_str!("../../api/operations.toml");
        assert!(declarations.contains(from), "{from}");
        super::generate(&load(&declarations.replacen(from, to, 1))?)
    }

    /// The repository's: one file per model with a `[model.c]`, each declared
    /// by the hand-written parent (cbindgen and the compiler read only those).
    #[test]
    fn each_handle_has_a_module_the_parent_declares() {
        let files = generated("", "").unwrap();
        let paths: Vec<&str> = files.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(
            paths,
            [
                "ffi/src/models/user.rs",
                "ffi/src/models/user_page.rs",
                "ffi/src/models/created_user.rs",
                "ffi/src/models/token_user.rs"
            ]
        );
        let declarations = load(include_str!("../../api/operations.toml")).unwrap();
        let without = PARENT.replace("mod token_user;", "");
        let err = super::files(&declarations, &without).unwrap_err();
        assert!(err.contains("no `mod token_user;`"), "{err}");
    }

    /// What the fields cannot give fails codegen, naming the model and the function.
    #[test]
    fn an_accessor_the_model_cannot_give_fails() {
        let token = "{ fn = \"iat\",";
        let page = "{ fn = \"len\",";
        let free = "  { fn = \"free\", doc = \"Frees a created user. NULL does nothing.\" },\n";
        for (from, to, why) in [
            (token, "{ fn = \"issued\",", "\"issued\": no such field"),
            (token, "{ fn = \"iat()\",", "\"iat()\": core's method"),
            (
                page,
                "{ fn = \"json\",",
                "\"json\": a page's JSON would lack its list",
            ),
            (page, "{ fn = \"data\",", "read with \"len\" and \"get\""),
            (free, "", "no \"free\""),
            (token, "{ fn = \"username\",", "\"username\" twice"),
        ] {
            let err = generated(from, to).map(|_| ()).unwrap_err();
            assert!(err.contains(why), "{from} -> {to}: {err}");
            assert!(err.contains("[model.c]"), "{err}");
        }
    }

    /// An optional boolean reads as 1/0/-1, one that is always there as a
    /// `bool`: the field's presence picks the C type, as 0.1.0 published them.
    #[test]
    fn a_field_presence_picks_its_c_type() {
        let files = generated("", "").unwrap();
        let file = |name: &str| &files.iter().find(|(p, _)| p.ends_with(name)).unwrap().1;
        assert!(file("/user.rs")
            .contains("roomchat_user_is_moderator(user: *const roomchat_user) -> i32"));
        assert!(file("/created_user.rs").contains(
            "roomchat_created_user_is_moderator(user: *const roomchat_created_user) -> bool"
        ));
        assert!(file("/created_user.rs").contains("Some(r.record.access_token.clone())"));
        assert!(file("/user.rs").contains("r.record.id().map(str::to_owned)"));
    }
}
