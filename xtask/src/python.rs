//! The Python surface of every operation (see CONTRIBUTING.md):
//!
//! - `bindings/python/src/operations.rs`: `Client`'s methods (pyo3, a second
//!   `#[pymethods]` block: the crate enables `multiple-pymethods`). Each converts
//!   its arguments (a wrong type is a `TypeError`) into the operation's JSON
//!   params and runs it through core's `Client::call_declared` (glue written once,
//!   in `src/declared.rs`) with the GIL released, or on the `AsyncClient`
//!   dispatcher, or through `with_response`.
//! - `bindings/python/python/roomchat/_records.py`: the typed records, pure Python
//!   over the hand-written base `roomchat._record.Record` (the eight older
//!   operations answer core's models, wrapped in the classes of
//!   `src/models_declared.rs`, which `python_models.rs` writes).
//! - `bindings/python/python/roomchat/_operations.py`: the same methods for
//!   `AsyncClient` and the two `with_raw_response` views (mixins), and for type
//!   checkers the native `Client`'s (a protocol the stub of `Client` extends).
//! - `bindings/python/python/roomchat/wire.py`: `roomchat.wire`, whose docs list
//!   every operation's JSON params (core's builders and decoders are native).
//!
//! The parameters' Python shapes follow from the declaration: a required
//! parameter is positional, the others keyword-only (but the older `list_users`'s
//! `limit` and `skip`, positional as `list_users(50, 0)`), a declared default is
//! documented and sent only when given (as in every language: it is the service's); `[operation.python]` gives what an older operation
//! published that cannot follow from it ([`Shape`]). Nothing per operation is
//! written by hand: a new operation is its declaration.

use std::collections::BTreeMap;
use std::fmt::Write;

use serde::Deserialize;

use crate::declaration::{
    snake, Auth, Declarations, ExtraKind, Field, Location, Operation, Pages, Param, ParamKind,
    Record, Retry, RetryWords,
};
use crate::text::wrap;
use crate::GENERATED;

pub const METHODS_PATH: &str = "bindings/python/src/operations.rs";
pub const RECORDS_PATH: &str = "bindings/python/python/roomchat/_records.py";
pub const OPERATIONS_PATH: &str = "bindings/python/python/roomchat/_operations.py";
pub const WIRE_PATH: &str = "bindings/python/python/roomchat/wire.py";

/// Every file this generator writes: (path from the repository's root, contents).
pub fn files(d: &Declarations) -> Result<Vec<(&'static str, String)>, String> {
    let methods = methods_of(d)?;
    check_names(d, &methods)?;
    let pagings = pagings(d)?;
    Ok(vec![
        (
            METHODS_PATH,
            crate::rustfmt(&native(d, &methods, &pagings))?,
        ),
        (
            crate::python_models::PATH,
            crate::rustfmt(&crate::python_models::generate(d)?)?,
        ),
        (RECORDS_PATH, records(d)),
        (OPERATIONS_PATH, operations(d, &methods, &pagings)),
        (WIRE_PATH, wire(d)),
    ])
}

// ---- the published shapes ------------------------------------------------------------------

/// `[operation.python]`: what an operation's Python surface published before the
/// declarations existed and cannot follow from them.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Shape {
    /// The Python type of an answer core gives as any JSON (`serde_json::Value`);
    /// a `List[...]` is checked to be a JSON array.
    result: Option<String>,
    /// A param's Python type (by wire name) where the derived one is not the
    /// published one (a `str` where the choices would make a `Literal`).
    #[serde(default)]
    types: BTreeMap<String, String>,
    /// Params Python does not take, set from the keywords given.
    #[serde(default)]
    picks: Vec<Pick>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Pick {
    /// The JSON param it sets.
    param: String,
    /// Its value.
    value: String,
    /// The params (wire names) that must be given; a boolean must be true.
    when: Vec<String>,
}

/// Where an argument goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sink {
    /// The JSON param of its wire name.
    Param,
    /// Read by the picks only (a boolean, `False` by default).
    Flag,
    /// A field of the `extra` object.
    ExtraField,
    /// The `extra` dict itself: its fields sent as they are.
    Extra,
}

/// One argument of a method, as every output shows it.
#[derive(Debug)]
struct Arg<'a> {
    /// The Python name.
    python: String,
    /// The wire name (`extra` for the dict of extra fields).
    wire: String,
    /// The declared type; `None` for the extra dict (an object).
    kind: Option<ParamKind>,
    /// The Python type, without `Optional`.
    ty: String,
    required: bool,
    /// The default as Python writes it (`None` when there is none to show).
    default: Option<String>,
    positional: bool,
    sink: Sink,
    /// Its declaration, when it is a declared param.
    param: Option<&'a Param>,
}

impl Arg<'_> {
    /// `name: type`, `name: type = default` or `name: Optional[type] = None`.
    fn annotated(&self) -> String {
        match (&self.default, self.required) {
            (_, true) => format!("{}: {}", self.python, self.ty),
            (Some(default), false) => format!("{}: {} = {default}", self.python, self.ty),
            (None, false) if self.ty == "Any" => format!("{}: Any = None", self.python),
            (None, false) => format!("{}: Optional[{}] = None", self.python, self.ty),
        }
    }

    /// `name` or `name=default`, as `inspect.signature` shows it.
    fn shown(&self) -> String {
        match (&self.default, self.required) {
            (_, true) => self.python.clone(),
            (Some(default), false) => format!("{}={}", self.python, default.replace('"', "'")),
            (None, false) => format!("{}=None", self.python),
        }
    }
}

/// An operation's Python method.
struct Method<'a> {
    op: &'a Operation,
    shape: Shape,
    args: Vec<Arg<'a>>,
}

impl Method<'_> {
    fn positional(&self) -> impl Iterator<Item = &Arg<'_>> {
        self.args.iter().filter(|a| a.positional)
    }

    fn keywords(&self) -> impl Iterator<Item = &Arg<'_>> {
        self.args.iter().filter(|a| !a.positional)
    }

    /// The answer's Python type.
    fn result(&self, d: &Declarations) -> String {
        if let Some(result) = &self.shape.result {
            return result.clone();
        }
        let op = &self.op.result;
        if is_record(d, self.op.result_record()) {
            let record = self.op.result_record();
            return if self.op.result_is_list() {
                format!("List[{record}]")
            } else {
                record.to_owned()
            };
        }
        match op.strip_prefix("Vec<").and_then(|r| r.strip_suffix('>')) {
            Some(inner) => format!("List[{inner}]"),
            None if op == "serde_json::Value" => "Any".into(),
            None => op.clone(),
        }
    }
}

fn is_record(d: &Declarations, name: &str) -> bool {
    d.records.iter().any(|r| r.name == name)
}

/// A Python literal of a declared default.
fn py_literal(value: &toml::Value) -> String {
    match value {
        toml::Value::String(s) => py_str(s),
        toml::Value::Integer(n) => n.to_string(),
        toml::Value::Boolean(true) => "True".into(),
        toml::Value::Boolean(false) => "False".into(),
        other => format!("{other:?}"),
    }
}

/// The declared param's Python type, before `[operation.python]`'s `types`.
fn param_type(p: &Param) -> String {
    if !p.choices.is_empty() {
        let choices: Vec<String> = p.choices.iter().map(|c| py_str(c)).collect();
        return format!("Literal[{}]", choices.join(", "));
    }
    match p.kind {
        ParamKind::String | ParamKind::Id => "str".into(),
        ParamKind::Integer => "int".into(),
        ParamKind::Boolean | ParamKind::Switch => "bool".into(),
        ParamKind::Json => "Any".into(),
    }
}

/// Every operation's method, its arguments in the order Python takes them.
fn methods_of(d: &Declarations) -> Result<Vec<Method<'_>>, String> {
    d.operations.iter().map(method_of).collect()
}

fn method_of(op: &Operation) -> Result<Method<'_>, String> {
    let at = |what: String| format!("{}: {what}", op.table_at("python"));
    let shape: Shape = match &op.python {
        Some(table) => table
            .clone()
            .try_into()
            .map_err(|e: toml::de::Error| at(e.message().to_owned()))?,
        None => Shape::default(),
    };
    let declared = |name: &str| op.params.iter().find(|p| p.name == name);
    for name in shape.types.keys() {
        if declared(name).is_none() {
            return Err(at(format!("types names {name:?}, not a param")));
        }
    }
    if let Some(result) = &shape.result {
        if op.result != "serde_json::Value" {
            return Err(at(format!(
                "result {result:?} is for an answer of any JSON, not {:?}",
                op.result
            )));
        }
    }
    let has_extra_object = op.extra && op.is_hand_written();
    if !op.extra_fields.is_empty() && !has_extra_object {
        return Err(at(
            "extra_fields need `extra = true` and a hand-written builder (its `extra` object)"
                .into(),
        ));
    }
    let flags: Vec<&str> = shape
        .picks
        .iter()
        .flat_map(|p| &p.when)
        .map(String::as_str)
        .filter(|name| declared(name).is_some_and(|p| p.kind == ParamKind::Boolean))
        .collect();
    for pick in &shape.picks {
        if declared(&pick.param).is_some() {
            return Err(at(format!("picks set {:?}, a declared param", pick.param)));
        }
        if let Some(unknown) = pick.when.iter().find(|n| declared(n).is_none()) {
            return Err(at(format!("picks name {unknown:?}, not a param")));
        }
    }

    // Python's order: the required params (the path's first, in its order) and a
    // listing's `limit`/`skip` are positional; the rest are keyword-only, as declared.
    // (`list_users(50, 0)` as published; a newer listing's are keywords, as everywhere.)
    let paging = |p: &Param| {
        op.pages != Pages::None && op.is_older() && matches!(p.name.as_str(), "limit" | "skip")
    };
    let mut order: Vec<&Param> = op.argument_params();
    order.extend(op.params.iter().filter(|p| !p.required && paging(p)));
    let positional = order.len();
    let rest: Vec<&Param> = op
        .params
        .iter()
        .filter(|p| !order.iter().any(|o| o.name == p.name))
        .collect();
    order.extend(rest);

    let mut args = Vec::new();
    for (i, p) in order.into_iter().enumerate() {
        let flag = flags.contains(&p.name.as_str());
        args.push(Arg {
            python: snake(&p.name),
            wire: p.name.clone(),
            kind: Some(p.kind),
            ty: shape
                .types
                .get(&p.name)
                .cloned()
                .unwrap_or_else(|| param_type(p)),
            required: p.required,
            // A declared default is the service's (or, for a path's form, core's):
            // documented, sent only when given, as in every language.
            default: flag.then(|| "False".into()),
            positional: i < positional,
            sink: if flag { Sink::Flag } else { Sink::Param },
            param: Some(p),
        });
    }
    for f in &op.extra_fields {
        let ty = match f.kind {
            ExtraKind::String => "str",
            ExtraKind::Json => "Any",
        };
        args.push(Arg {
            python: snake(&f.name),
            wire: f.name.clone(),
            kind: Some(f.kind.param_kind()),
            ty: ty.into(),
            required: false,
            default: None,
            positional: false,
            sink: Sink::ExtraField,
            param: None,
        });
    }
    if op.extra {
        args.push(Arg {
            python: "extra".into(),
            wire: "extra".into(),
            kind: None,
            ty: "Mapping[str, Any]".into(),
            required: false,
            default: None,
            positional: false,
            sink: Sink::Extra,
            param: None,
        });
    }
    Ok(Method { op, shape, args })
}

const PYTHON_KEYWORDS: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield",
];

/// Names the generated Python would not compile with, or that would shadow the
/// methods' own (`self`, `_submit`, `params`) or the records' (`extra`, `to_dict`, ...).
fn check_names(d: &Declarations, methods: &[Method<'_>]) -> Result<(), String> {
    for m in methods {
        let mut seen = Vec::new();
        for a in &m.args {
            let name = a.python.as_str();
            if PYTHON_KEYWORDS.contains(&name)
                || ["self", "py", "params"].contains(&name)
                || name.starts_with('_')
                || seen.contains(&name)
            {
                return Err(format!(
                    "api/operations.toml, operation {:?}: param {:?} is `{name}` in Python, which cannot be a parameter's name (or is taken)",
                    m.op.name, a.wire
                ));
            }
            seen.push(name);
        }
    }
    for record in &d.records {
        for f in &record.fields {
            let name = f.snake();
            if PYTHON_KEYWORDS.contains(&name.as_str())
                || ["to_dict", "from_dict"].contains(&name.as_str())
                || name.starts_with('_')
            {
                return Err(format!(
                    "api/operations.toml, record {:?}: field {:?} is `{name}` in Python, which a record cannot have",
                    record.name, f.name
                ));
            }
        }
    }
    Ok(())
}

// ---- docs ---------------------------------------------------------------------------------

/// What a parameter may be, in words (`at most 100 characters`), if anything is declared.
fn limits(a: &Arg<'_>) -> Option<String> {
    let mut parts = Vec::new();
    if let Some(p) = a.param {
        parts = p.bounds();
        if !p.choices.is_empty() {
            let choices: Vec<String> = p.choices.iter().map(|c| format!("`{c:?}`")).collect();
            parts.push(choices.join(" or "));
        }
    }
    match a.sink {
        Sink::Flag => {}
        _ if a.required => {}
        _ => {
            if let Some(default) = a.param.and_then(|p| p.default.as_ref()) {
                parts.push(format!("default {}", py_literal(default)));
            }
        }
    }
    if a.kind == Some(ParamKind::Json) {
        parts.push("any JSON".into());
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// `user_id`, `unique_user_identifier`: the Python names of wire names.
fn python_names(names: &[String]) -> String {
    let names: Vec<String> = names.iter().map(|n| format!("`{}`", snake(n))).collect();
    names.join(", ")
}

/// The paragraphs of a method's doc (the same text in Rust, where pyo3 makes it
/// the method's `__doc__`, and in Python).
fn method_doc(d: &Declarations, m: &Method<'_>, raw: bool) -> Vec<String> {
    let op = m.op;
    let result = m.result(d);
    let mut paragraphs = vec![op.summary.clone()];
    let returns = if raw {
        format!(
            "an `APIResponse` whose `parse()` is {} `{result}` (the status, headers and request id beside it)",
            article(&result),
        )
    } else {
        format!("{} `{result}`", article(&result))
    };
    paragraphs.push(format!("`{} {}`: returns {returns}.", op.method, op.path));
    let optional: Vec<&Arg<'_>> = m
        .args
        .iter()
        .filter(|a| !a.required && matches!(a.sink, Sink::Param | Sink::ExtraField))
        .collect();
    if !optional.is_empty() {
        let each: Vec<String> = optional
            .iter()
            .map(|a| {
                let mut text = format!("`{}`", a.python);
                let mut notes = Vec::new();
                if a.python != a.wire && a.sink != Sink::Flag {
                    notes.push(format!("`{}`", a.wire));
                }
                notes.extend(limits(a));
                if !notes.is_empty() {
                    write!(text, " ({})", notes.join("; ")).unwrap();
                }
                text
            })
            .collect();
        let sent = "each sent only when given";
        let what = if optional.iter().any(|a| a.positional) {
            "Parameters"
        } else {
            "Keywords"
        };
        paragraphs.push(format!(
            "{what}, {sent} (the wire name in parentheses where it differs): {}.",
            each.join(", ")
        ));
    }
    for pick in &m.shape.picks {
        let when: Vec<String> = pick
            .when
            .iter()
            .map(|name| match m.args.iter().find(|a| &a.wire == name) {
                Some(a) if a.sink == Sink::Flag => format!("`{}=True`", a.python),
                _ => format!("`{}`", snake(name)),
            })
            .collect();
        paragraphs.push(format!(
            "With {}, `{}` is sent as `{:?}`.",
            when.join(" and "),
            pick.param,
            pick.value
        ));
    }
    if op.extra {
        paragraphs.push(
            "`extra`: other body fields, sent as they are (a field given both there and as a \
             keyword raises `ValidationError`)."
                .into(),
        );
    }
    for group in &op.exactly_one {
        paragraphs.push(format!(
            "Give exactly one of {} (both or neither: `ValidationError`, nothing sent).",
            python_names(group)
        ));
    }
    paragraphs.extend(op.auth.sentence(
        "public key",
        " (the client's `public_key=`; without it `ConfigurationError`, nothing sent)",
    ));
    if m.args.iter().any(|a| {
        limits(a).is_some_and(|l| !l.starts_with("default"))
            || a.required && a.param.is_some_and(|p| p.location != Location::Path)
    }) || !op.exactly_one.is_empty()
    {
        paragraphs.push(
            "A value outside the declared limits raises `ValidationError` and nothing is sent."
                .into(),
        );
    }
    paragraphs.push(op.retry.sentence(RetryWords {
        label: false,
        never: "Never",
        timeout: false,
        unless: &format!(" unless `retry_non_idempotent=True` {}", Retry::REASON),
    }));
    if !op.errors.is_empty() {
        // Google style, as Sphinx's napoleon and IDEs read it: one line per error,
        // kept apart by `doc_lines` (a paragraph's `\n`).
        let mut raises = "Raises:".to_owned();
        for error in &op.errors {
            write!(
                raises,
                "\n    {}: when {}.",
                error_class(&error.kind),
                error.when
            )
            .unwrap();
        }
        paragraphs.push(raises);
    }
    paragraphs
}

/// The exception class of a declared error kind (`roomchat._errors`).
fn error_class(kind: &str) -> String {
    let mut class = crate::declaration::pascal(kind);
    class.push_str("Error");
    class
}

/// `a` or `an`, before `word`.
fn article(word: &str) -> &'static str {
    // `a UserPage`, `an Unknown`, `an Acknowledged`.
    if word.starts_with(['A', 'E', 'I', 'O', 'a', 'e', 'i', 'o']) || word.starts_with("Un") {
        "an"
    } else {
        "a"
    }
}

/// `paragraphs` as doc lines of at most `width` characters, a blank line between them.
fn doc_lines(paragraphs: &[String], width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    for (i, paragraph) in paragraphs.iter().enumerate() {
        if i > 0 {
            lines.push(String::new());
        }
        if !paragraph.contains('\n') {
            lines.extend(wrap(paragraph, width));
            continue;
        }
        // A `\n` keeps a line of its own, its indent kept and its continuation
        // indented four more (a `Raises:` section).
        for line in paragraph.split('\n') {
            let body = line.trim_start();
            let indent = &line[..line.len() - body.len()];
            for (j, part) in wrap(body, width - indent.len() - 4).into_iter().enumerate() {
                let extra = if j == 0 { "" } else { "    " };
                lines.push(format!("{indent}{extra}{part}"));
            }
        }
    }
    lines
}

/// A Python docstring at `indent`.
fn docstring(out: &mut String, indent: &str, paragraphs: &[String]) {
    // The declarations' and the Rust docs' `literal` is ``literal`` in reST.
    let paragraphs: Vec<String> = paragraphs
        .iter()
        .map(|p| p.replace("``", "`").replace('`', "``"))
        .collect();
    let lines = doc_lines(&paragraphs, 96 - indent.len());
    if lines.len() == 1 {
        writeln!(out, "{indent}\"\"\"{}\"\"\"", lines[0]).unwrap();
        return;
    }
    writeln!(out, "{indent}\"\"\"{}", lines[0]).unwrap();
    for line in &lines[1..] {
        if line.is_empty() {
            writeln!(out).unwrap();
        } else {
            writeln!(out, "{indent}{line}").unwrap();
        }
    }
    writeln!(out, "{indent}\"\"\"").unwrap();
}

fn py_str(text: &str) -> String {
    format!("{text:?}")
}

// ---- Rust: Client's methods ----------------------------------------------------------------

/// Core's type of a hand-written model (`Vec<Message>` → `Vec<roomchat::Message>`).
fn core_type(result: &str) -> String {
    if let Some(inner) = result
        .strip_prefix("Vec<")
        .and_then(|r| r.strip_suffix('>'))
    {
        return format!("Vec<{}>", core_type(inner));
    }
    if result.contains("::") {
        result.to_owned()
    } else {
        format!("roomchat::{result}")
    }
}

fn native(d: &Declarations, methods: &[Method<'_>], pagings: &[Paging<'_>]) -> String {
    let mut out = String::new();
    let w = &mut out;
    writeln!(w, "// {GENERATED}").unwrap();
    writeln!(w).unwrap();
    writeln!(
        w,
        "//! `roomchat.Client`'s method of every operation: each converts its arguments into\n\
         //! the operation's JSON params (a wrong type is a `TypeError`; the declared limits\n\
         //! are core's to check) and runs it through core's `Client::call_declared`\n\
         //! ([`crate::declared`]): the GIL released, or on `AsyncClient`'s dispatcher, or\n\
         //! with the response kept for `with_raw_response`. Their types: `ClientOperations`\n\
         //! in `roomchat/_operations.py`."
    )
    .unwrap();
    writeln!(w).unwrap();
    writeln!(w, "use pyo3::prelude::*;").unwrap();
    writeln!(w, "use roomchat::wire::Operation;").unwrap();
    writeln!(w).unwrap();
    writeln!(w, "use crate::client::Client;").unwrap();
    writeln!(w, "use crate::declared::Params;").unwrap();
    writeln!(w).unwrap();
    writeln!(w, "#[pymethods]").unwrap();
    writeln!(w, "impl Client {{").unwrap();
    for m in methods {
        native_method(w, d, m);
    }
    for paging in pagings {
        native_paging(w, paging);
    }
    writeln!(w, "}}").unwrap();
    out
}

fn native_method(w: &mut String, d: &Declarations, m: &Method<'_>) {
    let op = m.op;
    for line in doc_lines(&method_doc(d, m, false), 92) {
        if line.is_empty() {
            writeln!(w, "    ///").unwrap();
        } else {
            writeln!(w, "    /// {line}").unwrap();
        }
    }
    // The signature pyo3 parses, and the one Python shows (without `_submit`).
    let mut signature: Vec<String> = Vec::new();
    let mut shown: Vec<String> = vec!["self".into()];
    for a in m.positional() {
        signature.push(if a.required {
            a.python.clone()
        } else {
            format!("{}=None", a.python)
        });
        shown.push(a.shown());
    }
    signature.push("*".into());
    if m.keywords().next().is_some() {
        shown.push("*".into());
    }
    for a in m.keywords() {
        signature.push(if a.required {
            a.python.clone()
        } else {
            format!("{}=None", a.python)
        });
        shown.push(a.shown());
    }
    signature.push("_submit=None".into());
    writeln!(w, "    #[pyo3(signature = ({}))]", signature.join(", ")).unwrap();
    writeln!(
        w,
        "    #[pyo3(text_signature = {})]",
        py_str(&format!("({})", shown.join(", ")))
    )
    .unwrap();
    if m.args.len() + 3 > 7 {
        writeln!(w, "    #[allow(clippy::too_many_arguments)]").unwrap();
    }
    writeln!(w, "    fn {}(", op.name).unwrap();
    writeln!(w, "        &self,").unwrap();
    writeln!(w, "        py: Python<'_>,").unwrap();
    for a in &m.args {
        let ty = if a.required {
            "&Bound<'_, PyAny>"
        } else {
            "Option<&Bound<'_, PyAny>>"
        };
        writeln!(w, "        {}: {ty},", a.python).unwrap();
    }
    writeln!(w, "        _submit: Option<&Bound<'_, PyAny>>,").unwrap();
    writeln!(w, "    ) -> PyResult<Py<PyAny>> {{").unwrap();
    let nested = op.extra && op.is_hand_written();
    writeln!(
        w,
        "        let {}params = {};",
        if m.args.is_empty() { "" } else { "mut " },
        if nested {
            "Params::with_extra_object()"
        } else {
            "Params::new()"
        }
    )
    .unwrap();
    let ordered = m
        .args
        .iter()
        .filter(|a| matches!(a.sink, Sink::Param | Sink::Flag))
        .chain(m.args.iter().filter(|a| a.sink == Sink::Extra))
        .chain(m.args.iter().filter(|a| a.sink == Sink::ExtraField));
    for a in ordered {
        let value = if a.required {
            format!("Some({})", a.python)
        } else {
            a.python.clone()
        };
        let setter = match a.kind {
            Some(ParamKind::String | ParamKind::Id) => "text",
            Some(ParamKind::Integer) => "integer",
            // A switch is a bool for the caller: core sends it as "on"/"off".
            Some(ParamKind::Boolean | ParamKind::Switch) => "flag",
            Some(ParamKind::Json) | None => "json",
        };
        match a.sink {
            Sink::Param => {
                writeln!(
                    w,
                    "        params.{setter}({:?}, {:?}, {value})?;",
                    a.wire, a.python
                )
                .unwrap();
            }
            Sink::Flag => writeln!(
                w,
                "        let {} = Params::given_flag({:?}, {value})?;",
                a.python, a.python
            )
            .unwrap(),
            Sink::Extra => writeln!(w, "        params.extra({:?}, {value})?;", a.python).unwrap(),
            Sink::ExtraField => writeln!(
                w,
                "        params.extra_{setter}({:?}, {:?}, {value})?;",
                a.wire, a.python
            )
            .unwrap(),
        }
    }
    // The picks: for each param they set, the first whose params are all given.
    let mut picked: Vec<&str> = Vec::new();
    for pick in &m.shape.picks {
        if !picked.contains(&pick.param.as_str()) {
            picked.push(&pick.param);
        }
    }
    for param in picked {
        let mut first = true;
        for pick in m.shape.picks.iter().filter(|p| p.param == param) {
            let conditions: Vec<String> = pick
                .when
                .iter()
                .map(|name| match m.args.iter().find(|a| &a.wire == name) {
                    Some(a) if a.sink == Sink::Flag => a.python.clone(),
                    _ => format!("params.has({name:?})"),
                })
                .collect();
            writeln!(
                w,
                "        {}if {} {{",
                if first { "" } else { "} else " },
                conditions.join(" && ")
            )
            .unwrap();
            writeln!(w, "            params.set({param:?}, {:?});", pick.value).unwrap();
            first = false;
        }
        writeln!(w, "        }}").unwrap();
    }
    let operation = format!("Operation::{}", op.type_name());
    let call = if is_record(d, op.result_record()) {
        format!(
            "self.{}(py, _submit, {operation}, params, {:?})",
            if op.result_is_list() {
                "call_records"
            } else {
                "call_record"
            },
            (op.result_record())
        )
    } else if m.result(d).starts_with("List[") && op.result == "serde_json::Value" {
        format!("self.call_declared(py, _submit, {operation}, params, crate::declared::json_list)")
    } else {
        format!(
            "self.call_model::<{}>(py, _submit, {operation}, params)",
            core_type(&op.result)
        )
    };
    writeln!(w, "        {call}").unwrap();
    writeln!(w, "    }}").unwrap();
    writeln!(w).unwrap();
}

// ---- Python: the records ---------------------------------------------------------------------

/// A field's Python type (without the `Optional`).
fn field_type(f: &Field) -> String {
    let inner = match f.record() {
        Some(record) => (record).to_owned(),
        None => match f.kind.as_str() {
            "string" => "str".into(),
            "boolean" => "bool".into(),
            "integer" => "int".into(),
            "number" => "float".into(),
            _ => "Any".into(),
        },
    };
    if f.is_list() {
        format!("List[{inner}]")
    } else {
        inner
    }
}

/// Whether `repr` shows the field: ids, names, messages, flags, numbers and the
/// records inside, never a field declared `secret`. Other text (metadata) may
/// carry a secret or be long; it is read through the attribute, never printed.
fn shown(f: &Field) -> bool {
    let name = f.name.trim_start_matches('_');
    !f.secret && matches!(f.kind.as_str(), "boolean" | "integer" | "number")
        || f.record().is_some()
        || f.kind == "string"
            && (matches!(name, "id" | "name" | "message" | "username")
                || name.ends_with("Id")
                || name.ends_with("Name"))
}

fn records(d: &Declarations) -> String {
    let mut out = String::new();
    let w = &mut out;
    writeln!(w, "# {GENERATED}").unwrap();
    writeln!(
        w,
        "\"\"\"The typed records of the answers of the generated operations (``api/operations.toml``).\n\
         \n\
         Every attribute is ``None`` where the service left the field out; the fields a record\n\
         does not name are in ``extra``. ``to_dict()`` gives the record as the service sent it,\n\
         ``from_dict()`` reads that form back; records are frozen, compare equal by content, and\n\
         pickle. Their base, :class:`roomchat._record.Record`, is written by hand.\n\
         \"\"\""
    )
    .unwrap();
    writeln!(w).unwrap();
    writeln!(w, "from __future__ import annotations").unwrap();
    writeln!(w).unwrap();
    if d.records
        .iter()
        .flat_map(|r| &r.fields)
        .any(|f| py_name(f) != f.snake())
    {
        writeln!(w, "import warnings").unwrap();
    }
    let uses_any = d
        .records
        .iter()
        .flat_map(|r| &r.fields)
        .any(|f| field_type(f).contains("Any"));
    let uses_list = d.records.iter().flat_map(|r| &r.fields).any(Field::is_list);
    let mut typing = Vec::new();
    if uses_any {
        typing.push("Any");
    }
    if uses_list {
        typing.push("List");
    }
    typing.push("Optional");
    writeln!(w, "from typing import {}", typing.join(", ")).unwrap();
    writeln!(w).unwrap();
    writeln!(w, "from ._record import Record").unwrap();
    writeln!(w).unwrap();
    let names: Vec<String> = d.records.iter().map(|r| py_str(&r.name)).collect();
    writeln!(w, "__all__ = [{}]", names.join(", ")).unwrap();
    for record in &d.records {
        record_class(w, record);
    }
    out
}

/// A field's Python attribute: the wire name where it is one plain word (`type`, `id`,
/// as the wire and Node name it) that only Rust had to rename (`rust = "button_type"`),
/// else the snake_case name every language shares.
fn py_name(f: &Field) -> String {
    let word = !f.name.is_empty() && f.name.bytes().all(|b| b.is_ascii_lowercase());
    if f.rust.is_some() && word && !PYTHON_KEYWORDS.contains(&f.name.as_str()) {
        f.name.clone()
    } else {
        f.snake()
    }
}

fn record_class(w: &mut String, record: &Record) {
    writeln!(w).unwrap();
    writeln!(w).unwrap();
    writeln!(w, "class {}(Record):", (&record.name)).unwrap();
    docstring(w, "    ", std::slice::from_ref(&record.doc));
    writeln!(w).unwrap();
    writeln!(w, "    __slots__ = ()").unwrap();
    writeln!(
        w,
        "    # (wire name, attribute, type: string, boolean, integer, number, json, a record's name)"
    )
    .unwrap();
    writeln!(w, "    _fields = (").unwrap();
    for f in &record.fields {
        let kind = match f.record() {
            Some(r) if f.is_list() => format!("[{r}]"),
            Some(r) => r.to_owned(),
            None => f.kind.clone(),
        };
        writeln!(
            w,
            "        ({}, {}, {}),",
            py_str(&f.name),
            py_str(&py_name(f)),
            py_str(&kind)
        )
        .unwrap();
    }
    writeln!(w, "    )").unwrap();
    let shown: Vec<String> = record
        .fields
        .iter()
        .filter(|f| shown(f))
        .map(|f| py_str(&py_name(f)))
        .collect();
    let trailing = if shown.len() == 1 { "," } else { "" };
    writeln!(w, "    _shown = ({}{trailing})", shown.join(", ")).unwrap();
    for f in &record.fields {
        let getter = match (f.record(), f.is_list()) {
            (Some(r), true) => format!("self._records({}, {r})", py_str(&f.name)),
            (Some(r), false) => format!("self._record({}, {r})", py_str(&f.name)),
            (None, _) => {
                let kind = match f.kind.as_str() {
                    "string" => "str",
                    "boolean" => "bool",
                    "integer" => "int",
                    "number" => "float",
                    _ => "json",
                };
                format!("self._{kind}({})", py_str(&f.name))
            }
        };
        writeln!(w).unwrap();
        writeln!(w, "    @property").unwrap();
        writeln!(
            w,
            "    def {}(self) -> Optional[{}]:",
            py_name(f),
            field_type(f)
        )
        .unwrap();
        let mut doc = f.doc.clone();
        if py_name(f) != f.name {
            doc = format!("`{}`: {doc}", f.name);
        }
        docstring(w, "        ", &[doc]);
        writeln!(w, "        return {getter}").unwrap();
    }
    // The names these attributes had before they took the wire's, kept as deprecated aliases.
    for f in record.fields.iter().filter(|f| py_name(f) != f.snake()) {
        let (old, new) = (f.snake(), py_name(f));
        writeln!(w).unwrap();
        writeln!(w, "    @property").unwrap();
        writeln!(w, "    def {old}(self) -> Optional[{}]:", field_type(f)).unwrap();
        docstring(
            w,
            "        ",
            &[format!(
                "Deprecated: ``{new}``, the wire's name (``{old}`` goes in a later minor version)."
            )],
        );
        writeln!(
            w,
            "        warnings.warn(\"{}.{old} is deprecated: use .{new}\", DeprecationWarning, stacklevel=2)",
            record.name
        )
        .unwrap();
        writeln!(w, "        return self.{new}").unwrap();
    }
}

// ---- Python: the methods of AsyncClient and the raw views, and Client's types ---------------

/// A Python parameter list (after `self`) and the arguments that pass it on.
struct Signature {
    params: Vec<String>,
    args: Vec<String>,
}

fn signature(m: &Method<'_>) -> Signature {
    let mut params = Vec::new();
    let mut args = Vec::new();
    for a in m.positional() {
        params.push(a.annotated());
        args.push(a.python.clone());
    }
    if m.keywords().next().is_some() {
        params.push("*".into());
    }
    for a in m.keywords() {
        params.push(a.annotated());
        args.push(format!("{0}={0}", a.python));
    }
    Signature { params, args }
}

/// `def name(self, ...) -> result:` at `indent`, on one line when it fits.
fn def(w: &mut String, indent: &str, head: &str, params: &[String], result: &str) {
    let one_line = format!("{indent}{head}(self{}) -> {result}:", {
        let mut s = String::new();
        for p in params {
            write!(s, ", {p}").unwrap();
        }
        s
    });
    if one_line.len() <= 100 {
        writeln!(w, "{one_line}").unwrap();
        return;
    }
    writeln!(w, "{indent}{head}(").unwrap();
    writeln!(w, "{indent}    self,").unwrap();
    for p in params {
        writeln!(w, "{indent}    {p},").unwrap();
    }
    writeln!(w, "{indent}) -> {result}:").unwrap();
}

/// `prefix(first, args...)suffix` at `indent`, on one line when it fits.
fn call(w: &mut String, indent: &str, prefix: &str, first: &str, args: &[String], suffix: &str) {
    let mut all: Vec<String> = Some(first.to_owned())
        .filter(|f| !f.is_empty())
        .into_iter()
        .collect();
    all.extend(args.iter().cloned());
    let one_line = format!("{indent}{prefix}({}){suffix}", all.join(", "));
    if one_line.len() <= 100 {
        writeln!(w, "{one_line}").unwrap();
        return;
    }
    writeln!(w, "{indent}{prefix}(").unwrap();
    for a in &all {
        writeln!(w, "{indent}    {a},").unwrap();
    }
    writeln!(w, "{indent}){suffix}").unwrap();
}

/// The names a Python type uses (`List[Dict[str, Any]]` → `List`, `Dict`, `str`,
/// `Any`), outside its string literals (`Literal["room"]`).
fn type_names(ty: &str) -> Vec<&str> {
    ty.split('"')
        .step_by(2)
        .flat_map(|part| part.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')))
        .filter(|n| !n.is_empty() && !n.starts_with(|c: char| c.is_ascii_digit()))
        .collect()
}

fn operations(d: &Declarations, methods: &[Method<'_>], pagings: &[Paging<'_>]) -> String {
    const TYPING: &[&str] = &["Any", "Dict", "List", "Literal", "Mapping", "Optional"];
    let mut texts: Vec<String> = Vec::new();
    for m in methods {
        texts.push(m.result(d));
        for paging in pagings.iter().filter(|p| p.op.name == m.op.name) {
            // The records its iterators yield, imported as the answers' are.
            texts.push(paging.page.to_owned());
            texts.push(paging.item.clone());
            for p in &paging.keywords {
                texts.push(format!("Optional[{}]", param_type(p)));
            }
        }
        for a in &m.args {
            texts.push(if a.required || a.default.is_some() || a.ty == "Any" {
                a.ty.clone()
            } else {
                format!("Optional[{}]", a.ty)
            });
        }
    }
    let mut typing = vec!["TYPE_CHECKING", "Any"];
    let mut records: Vec<&str> = Vec::new();
    let mut models: Vec<&str> = Vec::new();
    for name in texts.iter().flat_map(|t| type_names(t)) {
        if TYPING.contains(&name) {
            if !typing.contains(&name) {
                typing.push(name);
            }
        } else if d.records.iter().any(|r| r.name == name) {
            records.push(name);
        } else if name.starts_with(|c: char| c.is_ascii_uppercase()) {
            models.push(name);
        }
    }
    typing[2..].sort_unstable();
    typing.push("cast");
    records.sort_unstable();
    records.dedup();
    models.sort_unstable();
    models.dedup();

    let mut out = String::new();
    let w = &mut out;
    writeln!(w, "# {GENERATED}").unwrap();
    writeln!(
        w,
        "\"\"\"The methods of every operation (``api/operations.toml``).\n\
         \n\
         ``roomchat.Client`` has them natively (``src/operations.rs``); here are the same for\n\
         :class:`AsyncClient` and the ``with_raw_response`` views (mixed into them: each forwards\n\
         to the native method), and, for type checkers, the native ones (``ClientOperations``,\n\
         which the stub of ``Client`` extends).\n\
         \"\"\""
    )
    .unwrap();
    writeln!(w).unwrap();
    writeln!(w, "from __future__ import annotations").unwrap();
    writeln!(w).unwrap();
    writeln!(w, "from typing import {}", typing.join(", ")).unwrap();
    writeln!(w).unwrap();
    if !models.is_empty() {
        writeln!(w, "from ._native import {}", models.join(", ")).unwrap();
    }
    if !pagings.is_empty() {
        writeln!(
            w,
            "from ._paging import AsyncRecordIterator, AsyncRecordPageIterator"
        )
        .unwrap();
    }
    if !records.is_empty() {
        writeln!(w, "from ._records import {}", records.join(", ")).unwrap();
    }
    if !models.is_empty() || !records.is_empty() {
        writeln!(w).unwrap();
    }
    writeln!(w, "if TYPE_CHECKING:").unwrap();
    writeln!(
        w,
        "    from typing import Awaitable, Callable, type_check_only"
    )
    .unwrap();
    writeln!(w).unwrap();
    if pagings.is_empty() {
        writeln!(w, "    from ._native import APIResponse, Client").unwrap();
    } else {
        writeln!(
            w,
            "    from ._native import APIResponse, Client, RecordIterator, RecordPageIterator"
        )
        .unwrap();
    }
    writeln!(w).unwrap();
    writeln!(
        w,
        "    @type_check_only\n    class ClientOperations:\n        \
         \"\"\"The native ``Client``'s generated methods, for type checkers only (the stub of\n        \
         ``Client`` extends it; stubtest checks the native methods against it).\"\"\""
    )
    .unwrap();
    for m in methods {
        let sig = signature(m);
        writeln!(w).unwrap();
        def(
            w,
            "        ",
            &format!("def {}", m.op.name),
            &sig.params,
            &m.result(d),
        );
        docstring(w, "            ", std::slice::from_ref(&m.op.summary));
    }
    for paging in pagings {
        python_paging(w, paging, false, "        ");
    }
    writeln!(w).unwrap();
    writeln!(w).unwrap();
    writeln!(
        w,
        "__all__ = [\"AsyncClientOperations\", \"AsyncRawClientOperations\", \"RawClientOperations\"]"
    )
    .unwrap();

    // AsyncClient.
    writeln!(w).unwrap();
    writeln!(w).unwrap();
    writeln!(w, "class AsyncClientOperations:").unwrap();
    writeln!(
        w,
        "    \"\"\"``AsyncClient``'s generated methods: the native ones, awaited on the client's dispatcher.\"\"\""
    )
    .unwrap();
    writeln!(w).unwrap();
    writeln!(w, "    __slots__ = ()").unwrap();
    writeln!(w).unwrap();
    writeln!(w, "    if TYPE_CHECKING:").unwrap();
    writeln!(w, "        _call: Callable[..., Awaitable[Any]]").unwrap();
    if !pagings.is_empty() {
        writeln!(w, "        _client: Client").unwrap();
        writeln!(w, "        _submit: Callable[..., Awaitable[Any]]").unwrap();
    }
    for paging in pagings {
        python_paging(w, paging, true, "    ");
    }
    for m in methods {
        let sig = signature(m);
        let result = m.result(d);
        writeln!(w).unwrap();
        def(
            w,
            "    ",
            &format!("async def {}", m.op.name),
            &sig.params,
            &result,
        );
        docstring(w, "        ", &method_doc(d, m, false));
        call(
            w,
            "        ",
            &format!("result: {result} = await self._call"),
            &py_str(&m.op.name),
            &sig.args,
            "",
        );
        writeln!(w, "        return result").unwrap();
    }

    // Client.with_raw_response.
    writeln!(w).unwrap();
    writeln!(w).unwrap();
    writeln!(w, "class RawClientOperations:").unwrap();
    writeln!(
        w,
        "    \"\"\"``Client.with_raw_response``'s generated methods: each returns an ``APIResponse``.\"\"\""
    )
    .unwrap();
    writeln!(w).unwrap();
    writeln!(w, "    __slots__ = ()").unwrap();
    writeln!(w).unwrap();
    writeln!(w, "    if TYPE_CHECKING:").unwrap();
    writeln!(w, "        _client: Client").unwrap();
    for m in methods {
        let sig = signature(m);
        let result = format!("APIResponse[{}]", m.result(d));
        writeln!(w).unwrap();
        def(
            w,
            "    ",
            &format!("def {}", m.op.name),
            &sig.params,
            &result,
        );
        docstring(w, "        ", &method_doc(d, m, true));
        let mut args = sig.args.clone();
        let first = if args.is_empty() {
            String::new()
        } else {
            args.remove(0)
        };
        call(
            w,
            "        ",
            &format!("response = self._client.{}", m.op.name),
            &first,
            &args,
            "",
        );
        writeln!(w, "        return cast({}, response)", py_str(&result)).unwrap();
    }

    // AsyncClient.with_raw_response.
    writeln!(w).unwrap();
    writeln!(w).unwrap();
    writeln!(w, "class AsyncRawClientOperations:").unwrap();
    writeln!(
        w,
        "    \"\"\"``AsyncClient.with_raw_response``'s generated methods: each returns an ``APIResponse``.\"\"\""
    )
    .unwrap();
    writeln!(w).unwrap();
    writeln!(w, "    __slots__ = ()").unwrap();
    writeln!(w).unwrap();
    writeln!(w, "    if TYPE_CHECKING:").unwrap();
    writeln!(w, "        _call: Callable[..., Awaitable[Any]]").unwrap();
    for m in methods {
        let sig = signature(m);
        let result = format!("APIResponse[{}]", m.result(d));
        writeln!(w).unwrap();
        def(
            w,
            "    ",
            &format!("async def {}", m.op.name),
            &sig.params,
            &result,
        );
        docstring(w, "        ", &method_doc(d, m, true));
        call(
            w,
            "        ",
            &format!("response: {result} = await self._call"),
            &py_str(&m.op.name),
            &sig.args,
            "",
        );
        writeln!(w, "        return response").unwrap();
    }
    out
}

// ---- Python: roomchat.wire ------------------------------------------------------------------

/// An operation's JSON params in words, for `roomchat.wire`'s docs (reST).
fn wire_params(op: &Operation) -> String {
    if let Some(json_params) = &op.json_params {
        return json_params.replace("``", "`").replace('`', "``");
    }
    let grouped: Vec<&str> = op
        .exactly_one
        .iter()
        .flatten()
        .map(String::as_str)
        .collect();
    let mut parts: Vec<String> = op
        .params
        .iter()
        .filter(|p| !grouped.contains(&p.name.as_str()))
        .map(|p| {
            let mut text = format!("``{}``", p.name);
            if !p.choices.is_empty() {
                let choices: Vec<String> = p.choices.iter().map(|c| format!("``{c:?}``")).collect();
                write!(text, ": {}", choices.join("/")).unwrap();
            }
            text
        })
        .collect();
    for group in &op.exactly_one {
        let names: Vec<String> = group.iter().map(|n| format!("``{n}``")).collect();
        parts.push(format!("exactly one of {}", names.join(", ")));
    }
    if op.extra {
        parts.push("other body fields as they are".into());
    }
    if op.auth == Auth::PublicKey {
        parts.push("the request's ``auth`` is ``\"public_key\"``".into());
    }
    parts.join(", ")
}

fn wire(d: &Declarations) -> String {
    let mut each: Vec<String> = d
        .operations
        .iter()
        .map(|op| {
            let params = wire_params(op);
            if params.is_empty() {
                format!("``{}``", op.name)
            } else {
                format!("``{}`` ({params})", op.name)
            }
        })
        .collect();
    // The generic escape hatch: core's, not a declared operation.
    each.push(
        "``raw`` (``method``, ``path``, ``query`` pairs, ``body``, ``auth``: \
         ``\"private_key\"``/``\"public_key\"``/``\"none\"``)"
            .into(),
    );
    let operations = wrap(
        &format!(
            "Operations and their parameters (the service's names): {}. Results are JSON \
             with the service's field names (a validated token's ``iat`` as seconds since \
             the epoch); an error answer raises its :class:`roomchat.RoomchatError`.",
            each.join("; ")
        ),
        88,
    );
    let mut out = String::new();
    let w = &mut out;
    writeln!(w, "# {GENERATED}").unwrap();
    writeln!(
        w,
        "\"\"\"The pure layer, for users who bring their own HTTP stack: core's request builders\n\
         and response decoders by operation name, with no I/O.\n\
         \n\
         \x20   request = roomchat.wire.build_request(\"list_users\", {{\"limit\": 50}},\n\
         \x20                                         base_url=\"https://api.example.com\", key=key)\n\
         \x20   # send request[\"method\"] to request[\"url\"] (body: request[\"body\"] as JSON, if any)\n\
         \x20   result = roomchat.wire.decode_response(\"list_users\", status, headers, body)\n"
    )
    .unwrap();
    for line in operations {
        writeln!(w, "{line}").unwrap();
    }
    writeln!(
        w,
        "\"\"\"\n\
         \n\
         from typing import Tuple\n\
         \n\
         from ._native import OPERATIONS as _OPERATIONS\n\
         from ._native import build_request, decode_response\n\
         \n\
         #: Every operation name.\n\
         OPERATIONS: Tuple[str, ...] = tuple(_OPERATIONS)\n\
         \n\
         __all__ = [\"OPERATIONS\", \"build_request\", \"decode_response\"]"
    )
    .unwrap();
    out
}

// ---- the listings' iterators ------------------------------------------------------------------

/// A listing's iterators (`iter_<name>`, `<name>_pages`): a newer operation that
/// pages (the older `list_users` keeps its hand-written `users()`/`user_pages()`),
/// over core's generic `PageItems`/`Pages`.
struct Paging<'a> {
    op: &'a Operation,
    /// The page's record (`MessagePage`) and the record it lists (`ChatMessage`).
    page: &'a str,
    item: String,
    /// The path's params, positional.
    path: Vec<&'a Param>,
    /// The listing's other params but `limit`/`skip`: keyword-only.
    keywords: Vec<&'a Param>,
    /// The most `limit` may be, if declared.
    max: Option<u64>,
}

fn pagings(d: &Declarations) -> Result<Vec<Paging<'_>>, String> {
    let mut out = Vec::new();
    for op in d
        .operations
        .iter()
        .filter(|op| op.pages != Pages::None && !op.is_older())
    {
        let at = |what: &str| format!("api/operations.toml, operation {:?}: {what}", op.name);
        let page = d
            .records
            .iter()
            .find(|r| r.name == op.result_record() && !op.result_is_list())
            .ok_or_else(|| at("a listing that pages answers one page record"))?;
        let mut lists = page
            .fields
            .iter()
            .filter(|f| f.is_list() && f.record().is_some());
        let item = match (lists.next(), lists.next()) {
            (Some(f), None) => (f.record().unwrap_or_default()).to_owned(),
            _ => return Err(at("its page record needs exactly one list of records")),
        };
        let limit = op.params.iter().find(|p| p.name == "limit");
        if limit.is_none() || !op.params.iter().any(|p| p.name == "skip") {
            return Err(at("a listing that pages takes `limit` and `skip`"));
        }
        out.push(Paging {
            op,
            page: (&page.name),
            item,
            path: op.positional_params(),
            keywords: op
                .named_params()
                .into_iter()
                .filter(|p| !matches!(p.name.as_str(), "limit" | "skip"))
                .collect(),
            max: limit.and_then(|p| p.max),
        });
    }
    Ok(out)
}

impl Paging<'_> {
    /// `(room_id, *, page_size=200, skip=0, only_attachments=None)`, annotated or as
    /// `inspect.signature` shows it; and the arguments that pass it on.
    fn params(&self, annotated: bool) -> Signature {
        let mut params = Vec::new();
        let mut args = Vec::new();
        for p in &self.path {
            let name = snake(&p.name);
            params.push(if annotated {
                format!("{name}: {}", param_type(p))
            } else {
                name.clone()
            });
            args.push(name);
        }
        params.push("*".into());
        if annotated {
            params.push("page_size: int = 200".into());
            params.push("skip: int = 0".into());
        } else {
            params.push("page_size=200".into());
            params.push("skip=0".into());
        }
        args.push("page_size=page_size".into());
        args.push("skip=skip".into());
        for p in &self.keywords {
            let name = snake(&p.name);
            let ty = param_type(p);
            params.push(match (annotated, ty.as_str()) {
                (false, _) => format!("{name}=None"),
                (true, "Any") => format!("{name}: Any = None"),
                (true, _) => format!("{name}: Optional[{ty}] = None"),
            });
            args.push(format!("{name}={name}"));
        }
        Signature { params, args }
    }

    fn keywords_doc(&self) -> String {
        let mut each = vec![format!(
            "`page_size`: the records a page holds, the `limit` of each request ({}default 200)",
            match self.max {
                Some(max) => format!("1 to {max}; "),
                None => "at least 1; ".into(),
            }
        )];
        each.push(
            "`skip`: where to start (default 0): a stopped iterator's `next_skip` goes on where \
             it stopped"
                .into(),
        );
        for p in &self.keywords {
            let python = snake(&p.name);
            if python == p.name {
                each.push(format!("`{python}`"));
            } else {
                each.push(format!("`{python}` (`{}`), sent when given", p.name));
            }
        }
        format!("{}.", each.join("; "))
    }

    fn items_doc(&self, what: &str) -> Vec<String> {
        vec![
            format!(
                "Every {what} of `{}`, fetched lazily page by page.",
                self.op.name
            ),
            self.keywords_doc(),
            "An error never ends the iteration: the step raises it, and the next step fetches \
             the same page again (a loop that goes on after an error bounds its own retries). It \
             ends after an empty page or when `skip` reaches the listing's total. Memory stays \
             one page: nothing is de-duplicated. Each page is fetched with the GIL released."
                .into(),
        ]
    }

    fn item_doc(&self) -> Vec<String> {
        let mut doc = self.items_doc(&format!("`{}`", self.item));
        doc[0] = doc[0]
            .replace("Every `", "Every record (`")
            .replacen("` of", "`) of", 1);
        doc
    }

    fn page_doc(&self) -> Vec<String> {
        self.items_doc(&format!("page (`{}`)", self.page))
    }
}

/// The native `iter_<name>` and `<name>_pages` of `Client` (Rust).
fn native_paging(w: &mut String, paging: &Paging<'_>) {
    let op = paging.op;
    let shown = {
        let mut shown = vec!["self".to_owned()];
        shown.extend(paging.params(false).params);
        shown.join(", ")
    };
    let mut signature: Vec<String> = paging.path.iter().map(|p| snake(&p.name)).collect();
    signature.push("*".into());
    signature.push("page_size=None".into());
    signature.push("skip=None".into());
    signature.extend(
        paging
            .keywords
            .iter()
            .map(|p| format!("{}=None", snake(&p.name))),
    );
    let params_type = format!("roomchat::{}", op.type_name());
    let max = match paging.max {
        Some(max) => format!("Some({max})"),
        None => "None".into(),
    };
    for (name, doc, core, class, record) in [
        (
            format!("iter_{}", op.name),
            paging.item_doc(),
            format!("iter_{}", op.name),
            "RecordIterator",
            paging.item.as_str(),
        ),
        (
            format!("{}_pages", op.name),
            paging.page_doc(),
            format!("{}_pages", op.name),
            "RecordPageIterator",
            paging.page,
        ),
    ] {
        for line in doc_lines(&doc, 92) {
            if line.is_empty() {
                writeln!(w, "    ///").unwrap();
            } else {
                writeln!(w, "    /// {line}").unwrap();
            }
        }
        writeln!(w, "    #[pyo3(signature = ({}))]", signature.join(", ")).unwrap();
        writeln!(
            w,
            "    #[pyo3(text_signature = {})]",
            py_str(&format!("({shown})"))
        )
        .unwrap();
        if paging.path.len() + paging.keywords.len() + 4 > 7 {
            writeln!(w, "    #[allow(clippy::too_many_arguments)]").unwrap();
        }
        writeln!(w, "    fn {name}(").unwrap();
        writeln!(w, "        &self,").unwrap();
        writeln!(w, "        py: Python<'_>,").unwrap();
        for p in &paging.path {
            writeln!(w, "        {}: &Bound<'_, PyAny>,", snake(&p.name)).unwrap();
        }
        writeln!(w, "        page_size: Option<&Bound<'_, PyAny>>,").unwrap();
        writeln!(w, "        skip: Option<&Bound<'_, PyAny>>,").unwrap();
        for p in &paging.keywords {
            writeln!(w, "        {}: Option<&Bound<'_, PyAny>>,", snake(&p.name)).unwrap();
        }
        writeln!(w, "    ) -> PyResult<crate::pages::{class}> {{").unwrap();
        for p in &paging.path {
            let name = snake(&p.name);
            writeln!(
                w,
                "        let {name} = crate::convert::text({name:?}, {name})?;"
            )
            .unwrap();
        }
        writeln!(
            w,
            "        let {}params = {params_type}::new()",
            if paging.keywords.is_empty() {
                ""
            } else {
                "mut "
            }
        )
        .unwrap();
        writeln!(
            w,
            "            .limit(crate::pages::page_size(page_size, {max})?)"
        )
        .unwrap();
        writeln!(w, "            .skip(crate::pages::skip(skip)?);").unwrap();
        for p in &paging.keywords {
            let name = snake(&p.name);
            let value = match p.kind {
                ParamKind::String | ParamKind::Id => {
                    format!("crate::convert::text({name:?}, value)?")
                }
                ParamKind::Integer => {
                    format!("crate::convert::whole({name:?}, value, 0, u64::MAX.into())? as u64")
                }
                ParamKind::Boolean | ParamKind::Switch => {
                    format!("crate::convert::flag({name:?}, value)?")
                }
                ParamKind::Json => format!("crate::convert::to_json({name:?}, value)?"),
            };
            writeln!(w, "        if let Some(value) = {name} {{").unwrap();
            writeln!(w, "            params = params.{name}({value});").unwrap();
            writeln!(w, "        }}").unwrap();
        }
        let path: Vec<String> = paging
            .path
            .iter()
            .map(|p| format!("&{}", snake(&p.name)))
            .collect();
        writeln!(
            w,
            "        let source = self.core(py)?.{core}({}, &params);",
            path.join(", ")
        )
        .unwrap();
        writeln!(
            w,
            "        Ok(crate::pages::{class}::new(source, {record:?}))"
        )
        .unwrap();
        writeln!(w, "    }}").unwrap();
        writeln!(w).unwrap();
    }
}

/// `ClientOperations`' (types only) or `AsyncClientOperations`' iterators (Python).
fn python_paging(w: &mut String, paging: &Paging<'_>, asynchronous: bool, indent: &str) {
    let op = paging.op;
    let sig = paging.params(true);
    let (items, pages) = if asynchronous {
        (
            format!("AsyncRecordIterator[{}]", paging.item),
            format!("AsyncRecordPageIterator[{}]", paging.page),
        )
    } else {
        (
            format!("RecordIterator[{}]", paging.item),
            format!("RecordPageIterator[{}]", paging.page),
        )
    };
    for (name, doc, result) in [
        (format!("iter_{}", op.name), paging.item_doc(), items),
        (format!("{}_pages", op.name), paging.page_doc(), pages),
    ] {
        writeln!(w).unwrap();
        def(w, indent, &format!("def {name}"), &sig.params, &result);
        let body = format!("{indent}    ");
        if asynchronous {
            let mut doc = doc;
            doc.push(
                "Async: `async for`; each page is fetched on the client's threads, and a \
                 cancelled step (`asyncio.wait_for`) raises while the next fetches the same \
                 page again."
                    .into(),
            );
            docstring(w, &body, &doc);
            let class = result.split('[').next().unwrap_or_default();
            call(
                w,
                &body,
                &format!("return {class}(self, self._client.{name}"),
                "",
                &sig.args,
                ")",
            );
        } else {
            docstring(w, &body, &doc[..1]);
        }
    }
}
