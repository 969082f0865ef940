//! The Python surface of the generated operations (see CONTRIBUTING.md):
//!
//! - `bindings/python/src/operations.rs`: `Client`'s methods (pyo3, a second
//!   `#[pymethods]` block: the crate enables `multiple-pymethods`). Each converts
//!   its arguments (a wrong type is a `TypeError`) into the operation's JSON
//!   params and hands them to `Client::call_declared` (hand-written once, in
//!   `src/declared.rs`), which runs core's `call_operation` with the GIL released,
//!   or on the `AsyncClient` dispatcher, or through `with_response`.
//! - `bindings/python/python/roomchat/_records.py`: the typed records, pure Python
//!   over the hand-written base `roomchat._record.Record`.
//! - `bindings/python/python/roomchat/_operations.py`: the same methods for
//!   `AsyncClient` and the two `with_raw_response` views (mixins), and for type
//!   checkers the native `Client`'s (a protocol the stub of `Client` extends).
//!
//! Nothing per operation is written by hand: a new operation is its declaration.

use std::fmt::Write;

use crate::declaration::{snake, Declarations, Field, Operation, Param, Record};
use crate::text::wrap;
use crate::GENERATED;

pub const METHODS_PATH: &str = "bindings/python/src/operations.rs";
pub const RECORDS_PATH: &str = "bindings/python/python/roomchat/_records.py";
pub const OPERATIONS_PATH: &str = "bindings/python/python/roomchat/_operations.py";

/// Every file this generator writes: (path from the repository's root, contents).
pub fn files(d: &Declarations) -> Result<Vec<(&'static str, String)>, String> {
    check_names(d)?;
    Ok(vec![
        (METHODS_PATH, crate::rustfmt(&methods(d))?),
        (RECORDS_PATH, records(d)),
        (OPERATIONS_PATH, operations(d)),
    ])
}

fn generated(d: &Declarations) -> impl Iterator<Item = &Operation> {
    d.operations.iter().filter(|op| op.is_generated())
}

const PYTHON_KEYWORDS: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield",
];

/// Names the generated Python would not compile with, or that would shadow the
/// methods' own (`self`, `_submit`) or the records' (`extra`, `to_dict`, ...).
fn check_names(d: &Declarations) -> Result<(), String> {
    for op in generated(d) {
        for p in &op.params {
            let name = snake(&p.name);
            if PYTHON_KEYWORDS.contains(&name.as_str()) || name == "self" || name.starts_with('_') {
                return Err(format!(
                    "api/operations.toml, operation {:?}: param {:?} is `{name}` in Python, which cannot be a parameter's name",
                    op.name, p.name
                ));
            }
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
fn limits(p: &Param) -> Option<String> {
    let mut parts = p.bounds();
    if !p.choices.is_empty() {
        let choices: Vec<String> = p.choices.iter().map(|c| format!("`{c:?}`")).collect();
        parts.push(choices.join(" or "));
    }
    if let Some(default) = p.default_text() {
        parts.push(format!("the service's default: {default}"));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// The paragraphs of a method's doc (the same text in Rust, where pyo3 makes it
/// the method's `__doc__`, and in Python).
fn method_doc(op: &Operation, raw: bool) -> Vec<String> {
    let mut paragraphs = vec![op.summary.clone()];
    let returns = if raw {
        format!(
            "an `APIResponse` whose `parse()` is {} `{}` (the status, headers and request id beside it)",
            article(&op.result),
            op.result
        )
    } else {
        format!("{} `{}`", article(&op.result), op.result)
    };
    paragraphs.push(format!("`{} {}`: returns {returns}.", op.method, op.path));
    let named = op.named_params();
    if !named.is_empty() {
        let each: Vec<String> = named
            .iter()
            .map(|p| {
                let python = snake(&p.name);
                let mut text = format!("`{python}`");
                let mut notes = Vec::new();
                if python != p.name {
                    notes.push(format!("`{}`", p.name));
                }
                notes.extend(limits(p));
                if !notes.is_empty() {
                    write!(text, " ({})", notes.join("; ")).unwrap();
                }
                text
            })
            .collect();
        paragraphs.push(format!(
            "Keywords, each sent only when given (the wire name in parentheses where it differs): {}.",
            each.join(", ")
        ));
    }
    if op
        .params
        .iter()
        .any(|p| limits(p).is_some() || p.required && p.location != "path")
        || !op.exactly_one.is_empty()
    {
        paragraphs.push(
            "A value outside the declared limits raises `ValidationError` and nothing is sent."
                .into(),
        );
    }
    paragraphs.push(match op.retry.as_str() {
        "repeatable" => {
            "Sent again after a 5xx, a timeout or a lost answer, as a GET is.".to_owned()
        }
        _ => "Never sent again after a 5xx or a lost answer unless `retry_non_idempotent=True` \
              (a repeat could do it twice)."
            .to_owned(),
    });
    paragraphs
}

/// `a` or `an`, before `word`.
fn article(word: &str) -> &'static str {
    if word.starts_with(['A', 'E', 'I', 'O', 'U', 'a', 'e', 'i', 'o', 'u']) {
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
        lines.extend(wrap(paragraph, width));
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

fn methods(d: &Declarations) -> String {
    let mut out = String::new();
    let w = &mut out;
    writeln!(w, "// {GENERATED}").unwrap();
    writeln!(w).unwrap();
    writeln!(
        w,
        "//! `roomchat.Client`'s methods of the operations whose surfaces are generated: each\n\
         //! converts its arguments into the operation's JSON params (a wrong type is a\n\
         //! `TypeError`; the declared limits are core's to check) and runs it with\n\
         //! [`Client::call_declared`](crate::declared), as the hand-written methods run\n\
         //! theirs (the GIL released, `AsyncClient`'s dispatcher, `with_raw_response`).\n\
         //! Their types: `ClientOperations` in `roomchat/_operations.py`."
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
    for op in generated(d) {
        for line in doc_lines(&method_doc(op, false), 92) {
            if line.is_empty() {
                writeln!(w, "    ///").unwrap();
            } else {
                writeln!(w, "    /// {line}").unwrap();
            }
        }
        let positional = op.positional_params();
        let named = op.named_params();
        // The signature pyo3 parses, and the one Python shows (without `_submit`).
        let mut signature: Vec<String> = Vec::new();
        let mut shown: Vec<String> = vec!["self".into()];
        for p in &positional {
            let name = snake(&p.name);
            if p.required {
                signature.push(name.clone());
                shown.push(name);
            } else {
                signature.push(format!("{name}=None"));
                shown.push(format!("{name}=None"));
            }
        }
        signature.push("*".into());
        if !named.is_empty() {
            shown.push("*".into());
        }
        for p in &named {
            let name = snake(&p.name);
            if p.required {
                signature.push(name.clone());
                shown.push(name);
            } else {
                signature.push(format!("{name}=None"));
                shown.push(format!("{name}=None"));
            }
        }
        signature.push("_submit=None".into());
        writeln!(w, "    #[pyo3(signature = ({}))]", signature.join(", ")).unwrap();
        writeln!(
            w,
            "    #[pyo3(text_signature = {})]",
            py_str(&format!("({})", shown.join(", ")))
        )
        .unwrap();
        if positional.len() + named.len() + 3 > 7 {
            writeln!(w, "    #[allow(clippy::too_many_arguments)]").unwrap();
        }
        writeln!(w, "    fn {}(", op.name).unwrap();
        writeln!(w, "        &self,").unwrap();
        writeln!(w, "        py: Python<'_>,").unwrap();
        for p in positional.iter().chain(named.iter()) {
            let ty = if p.required {
                "&Bound<'_, PyAny>"
            } else {
                "Option<&Bound<'_, PyAny>>"
            };
            writeln!(w, "        {}: {ty},", snake(&p.name)).unwrap();
        }
        writeln!(w, "        _submit: Option<&Bound<'_, PyAny>>,").unwrap();
        writeln!(w, "    ) -> PyResult<Py<PyAny>> {{").unwrap();
        writeln!(w, "        let mut params = Params::new();").unwrap();
        for p in positional.iter().chain(named.iter()) {
            let setter = match p.kind.as_str() {
                "string" | "id" => "text",
                "integer" => "integer",
                "boolean" => "flag",
                _ => "json",
            };
            let python = snake(&p.name);
            let value = if p.required {
                format!("Some({python})")
            } else {
                python.clone()
            };
            writeln!(
                w,
                "        params.{setter}({:?}, {:?}, {value})?;",
                p.name, python
            )
            .unwrap();
        }
        writeln!(
            w,
            "        self.call_declared(py, _submit, Operation::{}, params, {:?})",
            op.type_name(),
            op.result
        )
        .unwrap();
        writeln!(w, "    }}").unwrap();
        writeln!(w).unwrap();
    }
    writeln!(w, "}}").unwrap();
    out
}

// ---- Python: the records ---------------------------------------------------------------------

/// A field's Python type (without the `Optional`).
fn field_type(f: &Field) -> String {
    let inner = match f.record() {
        Some(record) => record.to_owned(),
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
/// records inside. Other text (a webhook URL, metadata, a token) may carry a
/// secret or be long; it is read through the attribute, never printed.
fn shown(f: &Field) -> bool {
    let name = f.name.trim_start_matches('_');
    matches!(f.kind.as_str(), "boolean" | "integer" | "number")
        || f.record().is_some()
        || f.kind == "string" && (matches!(name, "id" | "name" | "message") || name.ends_with("Id"))
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

fn record_class(w: &mut String, record: &Record) {
    writeln!(w).unwrap();
    writeln!(w).unwrap();
    writeln!(w, "class {}(Record):", record.name).unwrap();
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
            py_str(&f.snake()),
            py_str(&kind)
        )
        .unwrap();
    }
    writeln!(w, "    )").unwrap();
    let shown: Vec<String> = record
        .fields
        .iter()
        .filter(|f| shown(f))
        .map(|f| py_str(&f.snake()))
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
            f.snake(),
            field_type(f)
        )
        .unwrap();
        let mut doc = f.doc.clone();
        if f.snake() != f.name {
            doc = format!("`{}`: {doc}", f.name);
        }
        docstring(w, "        ", &[doc]);
        writeln!(w, "        return {getter}").unwrap();
    }
}

// ---- Python: the methods of AsyncClient and the raw views, and Client's types ---------------

/// A Python parameter list (after `self`) and the arguments that pass it on.
struct Signature {
    params: Vec<String>,
    args: Vec<String>,
}

fn param_type(p: &Param) -> String {
    if !p.choices.is_empty() {
        let choices: Vec<String> = p.choices.iter().map(|c| py_str(c)).collect();
        return format!("Literal[{}]", choices.join(", "));
    }
    match p.kind.as_str() {
        "string" | "id" => "str".into(),
        "integer" => "int".into(),
        "boolean" => "bool".into(),
        _ => "Any".into(),
    }
}

fn signature(op: &Operation) -> Signature {
    let mut params = Vec::new();
    let mut args = Vec::new();
    let one = |p: &Param| {
        let name = snake(&p.name);
        if p.required {
            format!("{name}: {}", param_type(p))
        } else {
            format!("{name}: Optional[{}] = None", param_type(p))
        }
    };
    for p in op.positional_params() {
        params.push(one(p));
        args.push(snake(&p.name));
    }
    let named = op.named_params();
    if !named.is_empty() {
        params.push("*".into());
    }
    for p in named {
        params.push(one(p));
        let name = snake(&p.name);
        args.push(format!("{name}={name}"));
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

fn operations(d: &Declarations) -> String {
    let ops: Vec<&Operation> = generated(d).collect();
    let mut results: Vec<&str> = ops.iter().map(|op| op.result.as_str()).collect();
    results.sort_unstable();
    results.dedup();
    let uses = |what: &str| {
        ops.iter()
            .any(|op| signature(op).params.iter().any(|p| p.contains(what)))
    };

    let mut out = String::new();
    let w = &mut out;
    writeln!(w, "# {GENERATED}").unwrap();
    writeln!(
        w,
        "\"\"\"The methods of the operations whose surfaces are generated (``api/operations.toml``).\n\
         \n\
         ``roomchat.Client`` has them natively (``src/operations.rs``); here are the same for\n\
         :class:`AsyncClient` and the ``with_raw_response`` views (mixed into them: each forwards\n\
         to the native method, as their hand-written methods do), and, for type checkers, the\n\
         native ones (``ClientOperations``, which the stub of ``Client`` extends).\n\
         \"\"\""
    )
    .unwrap();
    writeln!(w).unwrap();
    writeln!(w, "from __future__ import annotations").unwrap();
    writeln!(w).unwrap();
    let mut typing = vec!["TYPE_CHECKING", "Any"];
    if uses("Literal[") {
        typing.push("Literal");
    }
    if uses("Optional[") {
        typing.push("Optional");
    }
    typing.push("cast");
    writeln!(w, "from typing import {}", typing.join(", ")).unwrap();
    writeln!(w).unwrap();
    if !results.is_empty() {
        writeln!(w, "from ._records import {}", results.join(", ")).unwrap();
        writeln!(w).unwrap();
    }
    writeln!(w, "if TYPE_CHECKING:").unwrap();
    writeln!(
        w,
        "    from typing import Awaitable, Callable, type_check_only"
    )
    .unwrap();
    writeln!(w).unwrap();
    writeln!(w, "    from ._native import APIResponse, Client").unwrap();
    writeln!(w).unwrap();
    writeln!(
        w,
        "    @type_check_only\n    class ClientOperations:\n        \
         \"\"\"The native ``Client``'s generated methods, for type checkers only (the stub of\n        \
         ``Client`` extends it; stubtest checks the native methods against it).\"\"\""
    )
    .unwrap();
    for op in &ops {
        let sig = signature(op);
        writeln!(w).unwrap();
        def(
            w,
            "        ",
            &format!("def {}", op.name),
            &sig.params,
            &op.result,
        );
        docstring(w, "            ", std::slice::from_ref(&op.summary));
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
    for op in &ops {
        let sig = signature(op);
        writeln!(w).unwrap();
        def(
            w,
            "    ",
            &format!("async def {}", op.name),
            &sig.params,
            &op.result,
        );
        docstring(w, "        ", &method_doc(op, false));
        call(
            w,
            "        ",
            &format!("result: {} = await self._call", op.result),
            &py_str(&op.name),
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
    for op in &ops {
        let sig = signature(op);
        let result = format!("APIResponse[{}]", op.result);
        writeln!(w).unwrap();
        def(w, "    ", &format!("def {}", op.name), &sig.params, &result);
        docstring(w, "        ", &method_doc(op, true));
        let mut args = sig.args.clone();
        let first = if args.is_empty() {
            String::new()
        } else {
            args.remove(0)
        };
        call(
            w,
            "        ",
            &format!("response = self._client.{}", op.name),
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
    for op in &ops {
        let sig = signature(op);
        let result = format!("APIResponse[{}]", op.result);
        writeln!(w).unwrap();
        def(
            w,
            "    ",
            &format!("async def {}", op.name),
            &sig.params,
            &result,
        );
        docstring(w, "        ", &method_doc(op, true));
        call(
            w,
            "        ",
            &format!("response: {result} = await self._call"),
            &py_str(&op.name),
            &sig.args,
            "",
        );
        writeln!(w, "        return response").unwrap();
    }
    out
}
