//! The C and C++ surface of the generated operations (see CONTRIBUTING.md),
//! made from the declarations:
//!
//! - `ffi/src/generated.rs`: the C ABI, as Rust `extern "C"` functions that
//!   cbindgen turns into `include/roomchat.h`: per operation
//!   `roomchat_client_<name>` and `_with_response`, a params handle
//!   (`roomchat_<name>_params_new/_free/_set_<param>`) when it has named
//!   params; per record an opaque handle with `_free`, an accessor per field and
//!   `_extra_json`. They call core's typed methods and reuse the hand-written
//!   helpers of `ffi/src/glue.rs` and of the older functions (the argument
//!   and ownership helpers of `boundary.rs`, the panic boundary `guard`,
//!   `respond` and `write_meta` of `answer.rs`, …).
//! - `include/roomchat_operations.hpp`: the C++ records, the params structs and
//!   the methods `roomchat::Client` inherits (roomchat.hpp includes it).
//!
//! The operations that predate the declarations keep their published C shapes,
//! which their `[operation.c]` tables give (`Shape`): scalar arguments instead
//! of a params handle, C enums for a choice or an exactly_one group, the
//! hand-written C records of models.rs (C++: `detail::to_<record>` in
//! roomchat.hpp), an answer dropped or given as JSON text. Their functions go
//! through core's `Client::call_declared` with the JSON params by wire name.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Mutex;

use serde::Deserialize;

use crate::declaration::{
    pascal, read_table, snake, Declarations, Field, Location, Operation, Pages, Param, ParamKind,
    Record, Retry, RetryWords,
};
use crate::text::wrap;
use crate::GENERATED;

pub const RUST_PATH: &str = "ffi/src/generated.rs";
pub const HPP_PATH: &str = "include/roomchat_operations.hpp";

/// Every file this generator writes: (path from the repository's root, contents).
pub fn files(d: &Declarations) -> Result<Vec<(&'static str, String)>, String> {
    suffix_colliding_records(d);
    check(d)?;
    let shaped = shaped_ops(d)?;
    let enums = defined_enums(d)?;
    Ok(vec![
        (RUST_PATH, crate::rustfmt(&rust(d, &shaped, &enums))?),
        (HPP_PATH, hpp(d, &shaped, &enums)),
    ])
}

/// The operations generated in the generic shape: declared after the older
/// ones, with a params handle for their named params and a generated record.
fn generated_ops(d: &Declarations) -> impl Iterator<Item = &Operation> {
    d.operations
        .iter()
        .filter(|op| op.c.is_none() || typed_name(op).is_some())
}

/// `[operation.c] typed`: the name under which an older operation whose
/// published C function keeps its shape (`list_chat_rooms`: JSON text, as in
/// 0.1.0) also has the generated, typed one (`list_chat_rooms_typed`).
fn typed_name(op: &Operation) -> Option<String> {
    shape_of(op).ok().flatten().and_then(|s| s.typed)
}

/// The C function of a generated operation, `roomchat_client_<name>` (the
/// typed name where the published one keeps an older shape).
fn c_call(op: &Operation) -> String {
    format!("roomchat_client_{}", c_name(op))
}

/// The `<name>` of the C function that gives an operation's typed answer (the
/// guides' tables name it).
pub fn c_name(op: &Operation) -> String {
    typed_name(op).unwrap_or_else(|| op.name.clone())
}

/// Whether the operation's C++ method is the generated one (also for an
/// operation that keeps an older C shape beside it: C++ is compiled from its
/// header, so its methods follow the typed function).
fn cpp_generated(s: &Shaped) -> bool {
    typed_name(s.op).is_none()
}

/// Whether the call takes a params handle: for its optional named params, or
/// the fields the declaration does not type (core's parameters type holds the
/// same ones; the required params are arguments of their own).
fn has_params(op: &Operation) -> bool {
    optional_params(op).next().is_some() || op.extra
}

/// The named params a params handle sets (the required ones are arguments).
fn optional_params(op: &Operation) -> impl Iterator<Item = &Param> {
    op.named_params().into_iter().filter(|p| !p.required)
}

/// The params the C function takes as arguments after the client, in order
/// (`Operation::argument_params`): the path's, then the other required ones.
fn argument_params(op: &Operation) -> Vec<&Param> {
    op.argument_params()
}

/// `ROOMCHAT_RESULT_NOT_FOUND` for core's `not_found`.
fn result_constant(kind: &str) -> String {
    format!("ROOMCHAT_RESULT_{}", kind.to_ascii_uppercase())
}

/// The declared errors as the docs' sentences: "`ROOMCHAT_RESULT_NOT_FOUND` when …."
fn errors_text(op: &Operation) -> String {
    op.errors
        .iter()
        .map(|e| {
            format!(
                " `{}` when {}.",
                result_constant(&e.kind),
                e.when.trim_end_matches('.')
            )
        })
        .collect()
}

/// What this generator cannot express yet, refused rather than written wrong.
fn check(d: &Declarations) -> Result<(), String> {
    shaped_ops(d)?;
    for op in paged_ops(d) {
        page_item(d, op)?;
        if !has_params(op) {
            return Err(format!(
                "the C generator, operation {:?}: a paged operation takes limit and skip",
                op.name
            ));
        }
    }
    for op in generated_ops(d) {
        let at = |what: &str| format!("the C generator, operation {:?}: {what}", op.name);
        if typed_name(op).is_some()
            && (has_params(op) || op.pages != Pages::None || !op.params.is_empty())
        {
            return Err(at(
                "`typed` (a typed function beside the published one) takes no params yet",
            ));
        }
        if let Some(p) = argument_params(op).iter().find(|p| !p.kind.is_text()) {
            return Err(at(&format!(
                "the required param {:?} is a {}: only strings are C arguments yet",
                p.name,
                p.kind.as_str()
            )));
        }
        if op
            .positional_params()
            .iter()
            .any(|p| !p.required && p.default.is_none())
        {
            return Err(at("an optional path param needs a default"));
        }
        if op.extra
            && op
                .named_params()
                .iter()
                .any(|p| snake(&p.name) == "extra_json")
        {
            return Err(at("its setter set_extra_json would be taken"));
        }
    }
    let names: Vec<String> = d.records.iter().map(|r| c_record(&r.name)).collect();
    for op in generated_ops(d).filter(|op| op.result_is_list()) {
        let list = list_type(op.result_record());
        if names.iter().any(|n| format!("roomchat_{n}") == list) {
            return Err(format!(
                "the C generator, operation {:?}: its list handle {list} is a record's name",
                op.name
            ));
        }
    }
    for record in &d.records {
        let accessors: Vec<String> = record
            .fields
            .iter()
            .flat_map(|f| {
                if f.is_list() {
                    vec![format!("{}_len", f.snake()), format!("{}_get", f.snake())]
                } else {
                    vec![f.snake()]
                }
            })
            .collect();
        for field in &record.fields {
            let at = format!(
                "the C generator, record {:?}, field {:?}",
                record.name, field.name
            );
            if field.is_list() && field.record().is_none() {
                return Err(format!("{at}: only lists of records have a C form"));
            }
            let taken = ["free", "extra_json"].contains(&field.snake().as_str())
                || accessors.iter().filter(|a| **a == field.snake()).count() > 1;
            if taken {
                return Err(format!("{at}: its C accessor would be taken"));
            }
        }
    }
    Ok(())
}

/// The generated operations that page: each gets an item iterator.
fn paged_ops(d: &Declarations) -> impl Iterator<Item = &Operation> {
    generated_ops(d).filter(|op| op.pages != Pages::None)
}

/// The record a paged operation's pages list (the page record's list field).
fn page_item<'a>(d: &'a Declarations, op: &Operation) -> Result<&'a str, String> {
    d.records
        .iter()
        .find(|r| r.name == op.result_record())
        .and_then(|r| r.fields.iter().find(|f| f.is_list()))
        .and_then(Field::record)
        .ok_or_else(|| {
            format!(
                "the C generator, operation {:?}: a paged answer needs a list of records",
                op.name
            )
        })
}

/// `roomchat_room_list`: the owned list handle of a `[Record]` answer.
fn list_type(record: &str) -> String {
    format!("roomchat_{}_list", c_record(record))
}

/// The records, each after the records it holds (C++ needs them defined first).
fn records_in_order(d: &Declarations) -> Vec<&Record> {
    let mut ordered: Vec<&Record> = Vec::new();
    fn visit<'a>(d: &'a Declarations, record: &'a Record, ordered: &mut Vec<&'a Record>) {
        if ordered.iter().any(|r| r.name == record.name) {
            return;
        }
        for inner in record.fields.iter().filter_map(Field::record) {
            if let Some(held) = d.records.iter().find(|r| r.name == inner) {
                if held.name != record.name {
                    visit(d, held, ordered);
                }
            }
        }
        ordered.push(record);
    }
    for record in &d.records {
        visit(d, record, &mut ordered);
    }
    ordered
}

/// The records whose plain C name would be another record's accessor (the
/// `RoomName` record's `roomchat_room_name` is the `Room` record's `name`
/// accessor): C has one namespace for both, so these take a `_record` suffix.
static SUFFIXED: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Finds the records `c_record` suffixes (once, before anything is written).
fn suffix_colliding_records(d: &Declarations) {
    let accessors: Vec<String> = d
        .records
        .iter()
        .flat_map(|r| {
            r.fields
                .iter()
                .map(move |f| format!("{}_{}", snake(&r.name), f.snake()))
        })
        .collect();
    let colliding = d
        .records
        .iter()
        .map(|r| snake(&r.name))
        .filter(|name| accessors.contains(name))
        .collect();
    *SUFFIXED.lock().unwrap_or_else(|e| e.into_inner()) = colliding;
}

/// `BotAnswer` → `bot_answer`: the record's C name after `roomchat_`
/// (`room_name_record` for `RoomName`: see `SUFFIXED`).
fn c_record(name: &str) -> String {
    let plain = snake(name);
    if SUFFIXED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .contains(&plain)
    {
        format!("{plain}_record")
    } else {
        plain
    }
}

fn doc(w: &mut String, indent: &str, marker: &str, text: &str) {
    for line in wrap(text, 96 - indent.len()) {
        let _ = writeln!(w, "{indent}{marker} {line}");
    }
}

/// The retry sentence of C's and C++'s docs; `allows`: what allows a repeat.
fn retry_text(op: &Operation, allows: &str) -> String {
    op.retry.sentence(RetryWords {
        label: true,
        never: "Never",
        timeout: true,
        unless: &format!(" {} unless {allows}", Retry::REASON),
    })
}

/// A named param's limits, as its docs state them.
fn limits(p: &Param) -> String {
    let mut notes = p.bounds();
    if !p.choices.is_empty() {
        let choices: Vec<String> = p.choices.iter().map(|c| format!("`{c}`")).collect();
        notes.push(choices.join(" or "));
    }
    if notes.is_empty() {
        String::new()
    } else {
        format!(" ({})", notes.join("; "))
    }
}

// ---- ffi/src/generated.rs ---------------------------------------------------------------

fn rust(d: &Declarations, shaped: &[Shaped], enums: &[CEnum]) -> String {
    let mut out = String::new();
    let w = &mut out;
    let _ = writeln!(w, "// {GENERATED}");
    w.push('\n');
    w.push_str(
        "//! The C functions of the operations whose surfaces are generated, their params\n\
         //! handles and their records' handles: made from `api/operations.toml`. They follow\n\
         //! the conventions of the hand-written ones (see lib.rs) through the same helpers\n\
         //! (`glue.rs`, `guard`, `respond`, `write_meta`).\n\n",
    );
    let mut core_types: Vec<String> = Vec::new();
    core_types.extend(
        generated_ops(d)
            .filter(|op| has_params(op))
            .map(|op| op.type_name()),
    );
    for op in paged_ops(d) {
        core_types.push(op.result_record().to_owned());
    }
    if paged_ops(d).next().is_some() {
        core_types.push("PageItems".into());
    }
    core_types.sort();
    core_types.dedup();
    let any_json_param = generated_ops(d)
        .flat_map(optional_params)
        .any(|p| p.kind == ParamKind::Json);
    let any_params = generated_ops(d).any(has_params);
    let kinds: Vec<&str> = d
        .records
        .iter()
        .flat_map(|r| r.fields.iter())
        .map(|f| {
            if f.is_list() {
                "list"
            } else if f.record().is_some() {
                "record"
            } else {
                f.kind.as_str()
            }
        })
        .collect();
    let mut glue = vec!["extra_json", "read"];
    for (kind, helper) in [
        ("string", "text"),
        ("string", "text_ptr"),
        ("json", "json_text"),
        ("json", "text_ptr"),
        ("boolean", "flag"),
        ("integer", "integer"),
        ("number", "number"),
        ("record", "nested"),
        ("list", "list_len"),
        ("list", "list_get"),
    ] {
        if kinds.contains(&kind) && !glue.contains(&helper) {
            glue.push(helper);
        }
    }
    if d.records.iter().flat_map(|r| &r.fields).any(is_identifier) {
        glue.push("id_text");
    }
    if any_params {
        glue.extend(["new_params", "params_arg", "set_param", "Params"]);
        if generated_ops(d)
            .flat_map(optional_params)
            .any(|p| p.kind.is_text())
        {
            glue.push("text_value");
        }
        if any_json_param {
            glue.push("json_value");
        }
        if generated_ops(d).any(|op| op.extra) {
            glue.push("json_object_value");
        }
    }
    let any_arg = |f: fn(&ArgKind) -> bool| shaped.iter().flat_map(|s| &s.args).any(|a| f(&a.kind));
    // The argument and ownership helpers (ffi/src/boundary.rs).
    let mut boundary_uses = vec!["borrow_arg", "free_box", "out_arg", "text_arg", "write_out"];
    if any_arg(|k| matches!(k, ArgKind::Text { required: false })) {
        boundary_uses.push("opt_text_arg");
    }
    if shaped.iter().any(|s| s.answer == Answer::Json) {
        boundary_uses.push("write_string");
    }
    boundary_uses.sort_unstable();
    let mut error_uses = vec!["guard", "roomchat_error", "roomchat_result"];
    if !enums.is_empty() {
        error_uses.extend(["enum_arg", "enum_from_u32"]);
    }
    error_uses.sort_unstable();
    if shaped
        .iter()
        .any(|s| !s.positional.is_empty() || !s.args.is_empty())
    {
        glue.push("json_params");
    }
    if any_arg(|k| matches!(k, ArgKind::Extra)) {
        glue.push("json_object_arg");
    }
    if shaped
        .iter()
        .any(|s| s.args.iter().any(|a| s.needed_by(&a.name).is_some()))
    {
        glue.push("needed");
    }
    if paged_ops(d).next().is_some() {
        glue.push("next_item");
    }
    glue.sort_unstable();
    let mut models: Vec<String> = shaped
        .iter()
        .filter_map(|s| match &s.answer {
            Answer::Record(record) => Some(format!("roomchat_{record}")),
            _ => None,
        })
        .collect();
    models.sort();
    models.dedup();
    for s in shaped.iter().filter(|s| s.answer != Answer::Json) {
        let inner =
            s.op.result
                .strip_prefix("Vec<")
                .map_or(s.op.result.as_str(), |r| r.trim_end_matches('>'));
        if !inner.contains("::") && !core_types.iter().any(|t| t == inner) {
            core_types.push(inner.to_owned());
        }
    }
    core_types.sort();
    let _ = writeln!(w, "use std::ffi::{{c_char, CString}};");
    let _ = writeln!(w, "use std::ptr;");
    w.push('\n');
    if !shaped.is_empty() {
        let _ = writeln!(w, "use roomchat::wire::Operation;");
    }
    let _ = writeln!(w, "use roomchat::{{{}}};", core_types.join(", "));
    if !shaped.is_empty() {
        let _ = writeln!(w, "use serde_json::Value;");
    }
    w.push('\n');
    let _ = writeln!(
        w,
        "use crate::answer::{{respond, roomchat_response_meta, write_meta}};"
    );
    let _ = writeln!(w, "use crate::boundary::{{{}}};", boundary_uses.join(", "));
    let _ = writeln!(w, "use crate::client::roomchat_client;");
    let _ = writeln!(w, "use crate::error::{{{}}};", error_uses.join(", "));
    let _ = writeln!(w, "use crate::glue::{{{}}};", glue.join(", "));
    if !models.is_empty() {
        let _ = writeln!(w, "use crate::models::{{{}}};", models.join(", "));
    }
    for e in enums {
        rust_enum(w, e);
    }
    for s in shaped {
        rust_shaped(w, s);
    }
    for record in records_in_order(d) {
        rust_record(w, record);
    }
    let mut lists: Vec<&str> = generated_ops(d)
        .filter(|op| op.result_is_list())
        .map(Operation::result_record)
        .collect();
    lists.sort_unstable();
    lists.dedup();
    for record in lists {
        rust_list(w, record);
    }
    for op in generated_ops(d) {
        if has_params(op) {
            rust_params(w, op);
        }
        rust_operation(w, op);
        if op.pages != Pages::None {
            rust_iter(w, op, page_item(d, op).expect("checked"));
        }
    }
    out
}

/// A paged operation's item iterator: `roomchat_client_iter_<name>` and the
/// `roomchat_<name>_iter` handle's `_next`, `_next_skip` and `_free`, over
/// core's `Client::iter_<name>` (the paging rules are core's, written once).
fn rust_iter(w: &mut String, op: &Operation, item: &str) {
    let ty = format!("roomchat_{}_iter", op.name);
    let start = format!("roomchat_client_iter_{}", op.name);
    let params_ty = format!("roomchat_{}_params", op.name);
    let item_ty = format!("roomchat_{}", c_record(item));
    let out = format!("{}_out", c_record(item));
    let positional: Vec<String> = argument_params(op).iter().map(|p| snake(&p.name)).collect();
    w.push('\n');
    doc(
        w,
        "",
        "///",
        &format!(
            "A lazy iteration over every `{item_ty}` of `roomchat_client_{}`, a page at a time: \
             made by `{start}`, stepped by `{ty}_next`, freed with `{ty}_free`. It keeps its own \
             reference to the client and holds one page at most, whatever the listing's length. \
             Use it from one thread at a time.",
            op.name
        ),
    );
    let _ = writeln!(w, "#[allow(non_camel_case_types)]");
    let _ = writeln!(w, "pub struct {ty} {{");
    let _ = writeln!(w, "    items: PageItems<{}>,", op.result_record());
    let _ = writeln!(w, "}}");

    let mut args = vec!["client: *const roomchat_client".to_owned()];
    args.extend(positional.iter().map(|p| format!("{p}: *const c_char")));
    args.push(format!("params: *const {params_ty}"));
    args.push(format!("iter_out: *mut *mut {ty}"));
    args.push("err_out: *mut *mut roomchat_error".into());
    w.push('\n');
    let mut text = format!(
        "Starts a lazy iteration over every record of `roomchat_client_{}` ({} `{}`), from the \
         first page: nothing is sent until `{ty}_next`.",
        op.name, op.method, op.path
    );
    for p in &positional {
        text.push_str(&format!(" `{p}` (NUL-terminated UTF-8) as for the call."));
    }
    text.push_str(&format!(
        " `params` (NULL: none set; it stays the caller's): `limit` is the page size (default \
         200), `skip` where to start (default 0; to resume an iteration that stopped, its \
         `{ty}_next_skip`), the others as for the call. Writes the iterator to `*iter_out` \
         (free with `{ty}_free`)."
    ));
    doc(w, "", "///", &text);
    let _ = writeln!(w, "#[no_mangle]");
    let _ = writeln!(
        w,
        "pub extern \"C\" fn {start}({}) -> roomchat_result {{",
        args.join(", ")
    );
    let _ = writeln!(w, "    guard(err_out, || {{");
    let _ = writeln!(w, "        out_arg(iter_out, \"iter_out\")?;");
    let _ = writeln!(w, "        let client = borrow_arg(client, \"client\")?;");
    for p in &positional {
        let _ = writeln!(w, "        let {p} = text_arg({p}, {p:?})?;");
    }
    let _ = writeln!(
        w,
        "        let params = params_arg(params, |h: &{params_ty}| &h.params)?;"
    );
    let mut core_args = positional.clone();
    core_args.push("&params".into());
    let _ = writeln!(
        w,
        "        write_out(iter_out, {ty} {{ items: client.client.iter_{}({}) }});",
        op.name,
        core_args.join(", ")
    );
    let _ = writeln!(w, "        Ok(())");
    let _ = writeln!(w, "    }})");
    let _ = writeln!(w, "}}");

    w.push('\n');
    doc(
        w,
        "",
        "///",
        &format!(
            "The next record, fetching the next page when the last one is used up. On \
             `ROOMCHAT_RESULT_OK` writes it to `*{out}` (owned by the caller: free with \
             `{item_ty}_free`). Returns `ROOMCHAT_RESULT_ITERATION_DONE` at the end: after an \
             empty page, or a page that reaches the listing's total. An error (a timeout, a 5xx, \
             `ROOMCHAT_RESULT_NOT_FOUND` for a room deleted meanwhile) is returned as it is, \
             details in `*err_out` when it is not NULL, and never ends the iteration: the next \
             call fetches the same page again (bound your own retries: a revoked key fails every \
             time). A page size outside the declared limits is `ROOMCHAT_RESULT_VALIDATION` once, \
             then the end."
        ),
    );
    let _ = writeln!(w, "#[no_mangle]");
    let _ = writeln!(
        w,
        "pub extern \"C\" fn {ty}_next(iter: *mut {ty}, {out}: *mut *mut {item_ty}, err_out: *mut *mut roomchat_error) -> roomchat_result {{"
    );
    let _ = writeln!(
        w,
        "    next_item(iter, {out}, {out:?}, err_out, |i: &mut {ty}| i.items.next().map(|item| item.map(|record| {item_ty}_from!(record))))"
    );
    let _ = writeln!(w, "}}");

    w.push('\n');
    doc(
        w,
        "",
        "///",
        &format!(
            "Where the iteration stands: the `skip` of the record `{ty}_next` gives next. Passed \
             as `skip` to `{start}`, it goes on where this iterator left off. 0 for NULL."
        ),
    );
    let _ = writeln!(w, "#[no_mangle]");
    let _ = writeln!(
        w,
        "pub extern \"C\" fn {ty}_next_skip(iter: *const {ty}) -> u64 {{"
    );
    let _ = writeln!(w, "    read(iter, 0, |i| i.items.next_skip())");
    let _ = writeln!(w, "}}");

    w.push('\n');
    doc(
        w,
        "",
        "///",
        &format!(
            "Frees an iterator (the records it gave stay the caller's). `{ty}_free(NULL)` does \
             nothing. When it held the last hold of a log callback (or observer), its destroy \
             notifier runs now, on this thread."
        ),
    );
    let _ = writeln!(w, "#[no_mangle]");
    let _ = writeln!(w, "pub extern \"C\" fn {ty}_free(iter: *mut {ty}) {{");
    let _ = writeln!(w, "    free_box(iter)");
    let _ = writeln!(w, "}}");
}

/// The owned list handle of a `[Record]` answer.
fn rust_list(w: &mut String, record: &str) {
    let ty = list_type(record);
    let item = format!("roomchat_{}", c_record(record));
    w.push('\n');
    doc(
        w,
        "",
        "///",
        &format!(
            "A list of `{item}` records, in the service's order: read it with `{ty}_len` and \
             `{ty}_get`; owned by the caller of the call that returned it, freed with `{ty}_free`."
        ),
    );
    let _ = writeln!(w, "#[allow(non_camel_case_types)]");
    let _ = writeln!(w, "pub struct {ty} {{");
    let _ = writeln!(w, "    items: Vec<{item}>,");
    let _ = writeln!(w, "}}");
    w.push('\n');
    let _ = writeln!(w, "macro_rules! {ty}_from {{");
    let _ = writeln!(
        w,
        "    ($records:expr) => {{ {ty} {{ items: $records.into_iter().map(|record| {item}_from!(record)).collect() }} }};"
    );
    let _ = writeln!(w, "}}");
    w.push('\n');
    doc(
        w,
        "",
        "///",
        "How many records the list holds (0 for NULL).",
    );
    let _ = writeln!(w, "#[no_mangle]");
    let _ = writeln!(
        w,
        "pub extern \"C\" fn {ty}_len(list: *const {ty}) -> usize {{"
    );
    let _ = writeln!(w, "    read(list, 0, |l| l.items.len())");
    let _ = writeln!(w, "}}");
    w.push('\n');
    doc(
        w,
        "",
        "///",
        "The `index`th record, borrowed from `list` (valid until it is freed; never free it), \
         or NULL when out of range (or `list` is NULL).",
    );
    let _ = writeln!(w, "#[no_mangle]");
    let _ = writeln!(
        w,
        "pub extern \"C\" fn {ty}_get(list: *const {ty}, index: usize) -> *const {item} {{"
    );
    let _ = writeln!(
        w,
        "    read(list, ptr::null(), |l| l.items.get(index).map_or(ptr::null(), |r| r as *const {item}))"
    );
    let _ = writeln!(w, "}}");
    w.push('\n');
    doc(
        w,
        "",
        "///",
        &format!("Frees a list and every record borrowed from it. `{ty}_free(NULL)` does nothing."),
    );
    let _ = writeln!(w, "#[no_mangle]");
    let _ = writeln!(w, "pub extern \"C\" fn {ty}_free(list: *mut {ty}) {{");
    let _ = writeln!(w, "    free_box(list)");
    let _ = writeln!(w, "}}");
}

/// The Rust type a record's handle keeps a field in.
/// Whether a `json` field is an identifier the customer chose (a string or a
/// number: `uniqueUserIdentifier`, `externalUserId`): C gives it as text, so
/// `strcmp(id, "host-42")` compares it, not as JSON text with its quotes.
fn is_identifier(field: &Field) -> bool {
    field.kind == "json" && (field.name.ends_with("Identifier") || field.name.ends_with("Id"))
}

fn kept_type(field: &Field) -> String {
    match (field.record(), field.kind.as_str()) {
        (Some(inner), _) if field.is_list() => format!("Option<Vec<roomchat_{}>>", c_record(inner)),
        (Some(inner), _) => format!("Option<Box<roomchat_{}>>", c_record(inner)),
        (None, "boolean") => "Option<bool>".into(),
        (None, "integer") => "Option<i64>".into(),
        (None, "number") => "Option<f64>".into(),
        _ => "Option<CString>".into(),
    }
}

fn rust_record(w: &mut String, record: &Record) {
    let c = c_record(&record.name);
    let ty = format!("roomchat_{c}");
    w.push('\n');
    doc(w, "", "///", &record.doc);
    doc(
        w,
        "",
        "///",
        &format!(
            "An opaque record: read it with the `{ty}_*` accessors. Owned when a call returned it \
             (free with `{ty}_free`); borrowed when another record's accessor returned it (valid \
             until that record is freed; never freed on its own)."
        ),
    );
    let _ = writeln!(w, "#[allow(non_camel_case_types)]");
    let _ = writeln!(w, "pub struct {ty} {{");
    for field in &record.fields {
        let _ = writeln!(w, "    {}: {},", field.snake(), kept_type(field));
    }
    let _ = writeln!(w, "    extra_json: CString,");
    let _ = writeln!(w, "}}");
    w.push('\n');
    // A macro rather than `From`: it needs no name of core's record (one may
    // be shadowed at core's root by an older model of the same name, as
    // `MessageAuthor` is); the type comes from core's method it is given.
    let _ = writeln!(
        w,
        "/// The `{ty}` of core's `{}` record (its type inferred where it is used).",
        record.name
    );
    let _ = writeln!(w, "macro_rules! {ty}_from {{");
    let _ = writeln!(w, "    ($record:expr) => {{{{");
    let _ = writeln!(w, "        let record = $record;");
    let _ = writeln!(w, "        {ty} {{");
    for field in &record.fields {
        let name = field.snake();
        let value = match (field.record(), field.kind.as_str()) {
            (Some(inner), _) if field.is_list() => format!(
                "record.{name}.map(|items| items.into_iter().map(|inner| roomchat_{}_from!(inner)).collect())",
                c_record(inner)
            ),
            (Some(inner), _) => format!(
                "record.{name}.map(|inner| Box::new(roomchat_{}_from!(inner)))",
                c_record(inner)
            ),
            (None, "string") => format!("text(record.{name})"),
            (None, "json") if is_identifier(field) => format!("id_text(record.{name})"),
            (None, "json") => format!("json_text(record.{name})"),
            _ => format!("record.{name}"),
        };
        let _ = writeln!(w, "            {name}: {value},");
    }
    let _ = writeln!(w, "            extra_json: extra_json(&record.extra),");
    let _ = writeln!(w, "        }}");
    let _ = writeln!(w, "    }}}};");
    let _ = writeln!(w, "}}");

    for field in &record.fields {
        let name = field.snake();
        let wire = format!("`{}`: {}", field.name, field.doc);
        if let (Some(inner), true) = (field.record(), field.is_list()) {
            let item = format!("roomchat_{}", c_record(inner));
            w.push('\n');
            doc(
                w,
                "",
                "///",
                &format!(
                    "{wire} How many records it holds: read each with `{ty}_{name}_get`. 0 when \
                     the service left it out (or `{c}` is NULL)."
                ),
            );
            let _ = writeln!(w, "#[no_mangle]");
            let _ = writeln!(
                w,
                "pub extern \"C\" fn {ty}_{name}_len({c}: *const {ty}) -> usize {{"
            );
            let _ = writeln!(w, "    read({c}, 0, |r| list_len(&r.{name}))");
            let _ = writeln!(w, "}}");
            w.push('\n');
            doc(
                w,
                "",
                "///",
                &format!(
                    "The `index`th record of `{}`, borrowed from `{c}` (valid until it is freed; \
                     never free it), or NULL when out of range (or `{c}` is NULL).",
                    field.name
                ),
            );
            let _ = writeln!(w, "#[no_mangle]");
            let _ = writeln!(
                w,
                "pub extern \"C\" fn {ty}_{name}_get({c}: *const {ty}, index: usize) -> *const {item} {{"
            );
            let _ = writeln!(
                w,
                "    read({c}, ptr::null(), |r| list_get(&r.{name}, index))"
            );
            let _ = writeln!(w, "}}");
            continue;
        }
        let (ret, absent, body, note) = match (field.record(), field.kind.as_str()) {
            (Some(inner), _) => (
                format!("*const roomchat_{}", c_record(inner)),
                "ptr::null()",
                format!("nested(&r.{name})"),
                format!(
                    "Borrowed from `{c}`: valid until it is freed; never free it. NULL when the \
                     service left it out (or `{c}` is NULL)."
                ),
            ),
            (None, "boolean") => (
                "i32".into(),
                "-1",
                format!("flag(r.{name})"),
                format!(
                    "1 for true, 0 for false, -1 when the service left it out (or `{c}` is NULL)."
                ),
            ),
            (None, "integer") => (
                "i64".into(),
                "-1",
                format!("integer(r.{name})"),
                format!(
                    "-1 when the service left it out or sent a negative number (or `{c}` is NULL)."
                ),
            ),
            (None, "number") => (
                "f64".into(),
                "f64::NAN",
                format!("number(r.{name})"),
                format!("NaN when the service left it out (or `{c}` is NULL)."),
            ),
            (None, "json") if is_identifier(field) => (
                "*const c_char".into(),
                "ptr::null()",
                format!("text_ptr(&r.{name})"),
                format!(
                    "As text: a string as it is (no JSON quotes), a number as its digits; \
                     borrowed from `{c}` (valid until it is freed), or NULL when the service left \
                     it out or sent null (or `{c}` is NULL)."
                ),
            ),
            (None, "json") => (
                "*const c_char".into(),
                "ptr::null()",
                format!("text_ptr(&r.{name})"),
                format!(
                    "JSON text, borrowed from `{c}` (valid until it is freed), or NULL when the \
                     service left it out (or `{c}` is NULL)."
                ),
            ),
            _ => (
                "*const c_char".into(),
                "ptr::null()",
                format!("text_ptr(&r.{name})"),
                format!(
                    "Borrowed from `{c}` (valid until it is freed), or NULL when the service left \
                     it out (or `{c}` is NULL)."
                ),
            ),
        };
        w.push('\n');
        doc(w, "", "///", &format!("{wire} {note}"));
        let _ = writeln!(w, "#[no_mangle]");
        let _ = writeln!(
            w,
            "pub extern \"C\" fn {ty}_{name}({c}: *const {ty}) -> {ret} {{"
        );
        let _ = writeln!(w, "    read({c}, {absent}, |r| {body})");
        let _ = writeln!(w, "}}");
    }
    w.push('\n');
    doc(
        w,
        "",
        "///",
        &format!(
            "The fields the service sent that the record does not name, as the text of a JSON \
             object (`{{}}` when none), borrowed from `{c}` (valid until it is freed); NULL when \
             `{c}` is NULL."
        ),
    );
    let _ = writeln!(w, "#[no_mangle]");
    let _ = writeln!(
        w,
        "pub extern \"C\" fn {ty}_extra_json({c}: *const {ty}) -> *const c_char {{"
    );
    let _ = writeln!(w, "    read({c}, ptr::null(), |r| r.extra_json.as_ptr())");
    let _ = writeln!(w, "}}");
    w.push('\n');
    doc(
        w,
        "",
        "///",
        &format!(
            "Frees a `{ty}` a call returned, and every record borrowed from it. \
             `{ty}_free(NULL)` does nothing. Never call it on a borrowed record."
        ),
    );
    let _ = writeln!(w, "#[no_mangle]");
    let _ = writeln!(w, "pub extern \"C\" fn {ty}_free({c}: *mut {ty}) {{");
    let _ = writeln!(w, "    free_box({c})");
    let _ = writeln!(w, "}}");
}

fn rust_params(w: &mut String, op: &Operation) {
    let ty = format!("roomchat_{}_params", op.name);
    let core = op.type_name();
    let call = format!("roomchat_client_{}", op.name);
    w.push('\n');
    doc(
        w,
        "",
        "///",
        &format!(
            "The parameters of `{call}`: each is sent only when set. Made by `{ty}_new`, freed \
             with `{ty}_free`; the call only reads it, so it may be freed (or reused) right after. \
             A setter given an invalid argument (NULL, not UTF-8) returns \
             `ROOMCHAT_RESULT_INVALID_ARGUMENT` and records it: the call then fails with it and \
             sends nothing, unless a later valid call of the same setter replaces it. Values \
             outside the declared limits are refused by the call (`ROOMCHAT_RESULT_VALIDATION`, \
             nothing sent). Not thread-safe: set it on one thread."
        ),
    );
    let _ = writeln!(w, "#[allow(non_camel_case_types)]");
    let _ = writeln!(w, "pub struct {ty} {{");
    let _ = writeln!(w, "    params: Params<{core}>,");
    let _ = writeln!(w, "}}");
    w.push('\n');
    doc(
        w,
        "",
        "///",
        &format!(
            "Starts the parameters of `{call}` with none set. Writes them to `*params_out` \
             (owned by the caller: free with `{ty}_free`)."
        ),
    );
    let _ = writeln!(w, "#[no_mangle]");
    let _ = writeln!(
        w,
        "pub extern \"C\" fn {ty}_new(params_out: *mut *mut {ty}) -> roomchat_result {{"
    );
    let _ = writeln!(
        w,
        "    new_params(params_out, || {ty} {{ params: Params::default() }})"
    );
    let _ = writeln!(w, "}}");
    w.push('\n');
    doc(
        w,
        "",
        "///",
        &format!("Frees the parameters. `{ty}_free(NULL)` does nothing."),
    );
    let _ = writeln!(w, "#[no_mangle]");
    let _ = writeln!(w, "pub extern \"C\" fn {ty}_free(params: *mut {ty}) {{");
    let _ = writeln!(w, "    free_box(params)");
    let _ = writeln!(w, "}}");
    for p in optional_params(op) {
        let name = snake(&p.name);
        // An integer whose least value is above 0 (a listing's `limit`): 0 is "not set",
        // as for the arguments of the C functions (`roomchat_client_list_users`'s limit 0,
        // `roomchat_client_users_iter`'s page size 0): one rule for every listing in C,
        // where an integer cannot be left out.
        let zero_unsets = p.kind == ParamKind::Integer && p.min.is_some_and(|min| min > 0);
        let zero_note = if zero_unsets {
            match p.default_text() {
                Some(default) => format!(
                    "; 0: not set, the service's default {default} (an iterator's page size 200)"
                ),
                None => "; 0: not set".to_owned(),
            }
        } else {
            String::new()
        };
        let (c_type, takes, value) = match p.kind {
            ParamKind::Integer => ("u64", zero_note.as_str(), "|| Ok(value)".to_owned()),
            ParamKind::Boolean => ("bool", "", "|| Ok(value)".to_owned()),
            ParamKind::Switch => (
                "bool",
                " (sent as `\"on\"` for true, `\"off\"` for false)",
                "|| Ok(value)".to_owned(),
            ),
            ParamKind::Json => (
                "*const c_char",
                ": JSON text (any JSON value, sent as given), NUL-terminated UTF-8, copied; text \
                 that is not JSON is `ROOMCHAT_RESULT_INVALID_ARGUMENT`",
                format!("|| json_value(value, {name:?})"),
            ),
            ParamKind::String | ParamKind::Id => (
                "*const c_char",
                ": NUL-terminated UTF-8, copied",
                format!("|| text_value(value, {name:?})"),
            ),
        };
        w.push('\n');
        doc(
            w,
            "",
            "///",
            &format!(
                "Sets `{}`{}{takes}. A later call replaces the value.",
                p.name,
                limits(p)
            ),
        );
        let _ = writeln!(w, "#[no_mangle]");
        let _ = writeln!(
            w,
            "pub extern \"C\" fn {ty}_set_{name}(params: *mut {ty}, value: {c_type}) -> roomchat_result {{"
        );
        let store = if zero_unsets {
            format!("p.{name} = (v != 0).then_some(v)")
        } else {
            format!("p.{name} = Some(v)")
        };
        let _ = writeln!(
            w,
            "    set_param(params, |h| &mut h.params, {name:?}, {value}, |p, v| {store})"
        );
        let _ = writeln!(w, "}}");
    }
    if op.extra {
        w.push('\n');
        doc(
            w,
            "",
            "///",
            "Sets the body fields the declaration does not type: the text of a JSON object \
             (NUL-terminated UTF-8, copied), each field sent as given, e.g. \
             `{\"mainColor\": \"#336699\", \"enableLikeMessage\": \"on\"}`. A typed param set by its \
             own setter wins over a field of the same name. A later call replaces the fields; \
             text that is not a JSON object is `ROOMCHAT_RESULT_INVALID_ARGUMENT`.",
        );
        let _ = writeln!(w, "#[no_mangle]");
        let _ = writeln!(
            w,
            "pub extern \"C\" fn {ty}_set_extra_json(params: *mut {ty}, fields: *const c_char) -> roomchat_result {{"
        );
        let _ = writeln!(
            w,
            "    set_param(params, |h| &mut h.params, \"extra_json\", || json_object_value(fields, \"extra_json\"), |p, v| p.extra = v)"
        );
        let _ = writeln!(w, "}}");
    }
}

/// What every operation's pair of C functions shares: the plain function (its
/// doc `text`; it forwards to `_with_response` without `meta_out`), then the doc
/// and signature of `_with_response`, up to its body.
fn entry_points(w: &mut String, call: &str, text: &str, args: &[String], names: &[String]) {
    // clippy's too_many_arguments: more than 7, `err_out` (and `meta_out`) included.
    let too_many = |count: usize| {
        if count > 7 {
            "#[allow(clippy::too_many_arguments)]\n"
        } else {
            ""
        }
    };
    w.push('\n');
    doc(w, "", "///", text);
    let _ = writeln!(w, "#[no_mangle]");
    w.push_str(too_many(args.len() + 1));
    let _ = writeln!(
        w,
        "pub extern \"C\" fn {call}({}, err_out: *mut *mut roomchat_error) -> roomchat_result {{",
        args.join(", ")
    );
    let _ = writeln!(
        w,
        "    {call}_with_response({}, ptr::null_mut(), err_out)",
        names.join(", ")
    );
    let _ = writeln!(w, "}}");

    w.push('\n');
    doc(
        w,
        "",
        "///",
        &format!(
            "`{call}`, and, when `meta_out` is not NULL, the answer's status, headers and \
             attempts written to `*meta_out` on success (free with `roomchat_response_meta_free`)."
        ),
    );
    let _ = writeln!(w, "#[no_mangle]");
    w.push_str(too_many(args.len() + 2));
    let _ = writeln!(
        w,
        "pub extern \"C\" fn {call}_with_response({}, meta_out: *mut *mut roomchat_response_meta, err_out: *mut *mut roomchat_error) -> roomchat_result {{",
        args.join(", ")
    );
}

fn rust_operation(w: &mut String, op: &Operation) {
    let call = c_call(op);
    let record = c_record(op.result_record());
    let (out, out_ty, free) = if op.result_is_list() {
        let list = list_type(op.result_record());
        (
            format!("{record}_list_out"),
            list.clone(),
            format!("{list}_free"),
        )
    } else {
        (
            format!("{record}_out"),
            format!("roomchat_{record}"),
            format!("roomchat_{record}_free"),
        )
    };
    let arguments = argument_params(op);
    let positional: Vec<String> = arguments.iter().map(|p| snake(&p.name)).collect();
    let params_ty = format!("roomchat_{}_params", op.name);
    let mut args = vec!["client: *const roomchat_client".to_owned()];
    args.extend(positional.iter().map(|p| format!("{p}: *const c_char")));
    if has_params(op) {
        args.push(format!("params: *const {params_ty}"));
    }
    args.push(format!("{out}: *mut *mut {out_ty}"));
    let mut names = vec!["client".to_owned()];
    names.extend(positional.iter().cloned());
    if has_params(op) {
        names.push("params".into());
    }
    names.push(out.clone());

    let mut text = format!(
        "{} `{}`: {} {}",
        op.method,
        op.path,
        op.summary,
        retry_text(op, "`roomchat_client_options_set_retries` allows it")
    );
    for p in &arguments {
        if p.location == Location::Path {
            text.push_str(&format!(
                " `{}` (NUL-terminated UTF-8) is the path's `{{{}}}`.",
                snake(&p.name),
                p.name
            ));
        } else {
            text.push_str(&format!(
                " `{}` (NUL-terminated UTF-8) is `{}`{}.",
                snake(&p.name),
                p.name,
                limits(p)
            ));
        }
    }
    if let Some(fixed) = op.positional_params().iter().find(|p| !p.required) {
        text.push_str(&format!(
            " The path's `{{{}}}` is `{}`.",
            fixed.name,
            fixed.default_text().unwrap_or_default()
        ));
    }
    if has_params(op) {
        text.push_str(
            " `params` (NULL: none set) stays the caller's and may be freed right after the call; \
             a value outside its declared limits gives `ROOMCHAT_RESULT_VALIDATION` and nothing \
             is sent.",
        );
    }
    let what = if op.result_is_list() {
        "the list"
    } else {
        "the answer"
    };
    text.push_str(&format!(
        " On success writes {what} to `*{out}` (owned by the caller: free with `{free}`); on \
         failure writes nothing there, and the details to `*err_out` when it is not NULL (free \
         with `roomchat_error_free`).{}",
        errors_text(op)
    ));
    if typed_name(op).is_some() {
        text.push_str(&format!(
            " `roomchat_client_{}` gives the same answer as JSON text (its published form).",
            op.name
        ));
    }
    entry_points(w, &call, &text, &args, &names);
    let _ = writeln!(w, "    guard(err_out, || {{");
    let _ = writeln!(w, "        out_arg({out}, {out:?})?;");
    let _ = writeln!(w, "        let client = borrow_arg(client, \"client\")?;");
    for p in &positional {
        let _ = writeln!(w, "        let {p} = text_arg({p}, {p:?})?;");
    }
    let mut core_args: Vec<String> = positional.clone();
    if has_params(op) {
        let _ = writeln!(
            w,
            "        let params = params_arg(params, |h: &{params_ty}| &h.params)?;"
        );
        core_args.push("&params".into());
    }
    let _ = writeln!(
        w,
        "        let (answer, meta) = respond(&client.client, meta_out, |c| c.{}({}))?;",
        op.name,
        core_args.join(", ")
    );
    let _ = writeln!(w, "        write_out({out}, {out_ty}_from!(answer));");
    let _ = writeln!(w, "        write_meta(meta_out, meta);");
    let _ = writeln!(w, "        Ok(())");
    let _ = writeln!(w, "    }})");
    let _ = writeln!(w, "}}");
}

// ---- include/roomchat_operations.hpp ----------------------------------------------------

fn hpp(d: &Declarations, shaped: &[Shaped], enums: &[CEnum]) -> String {
    let mut out = String::new();
    let w = &mut out;
    let _ = writeln!(w, "// {GENERATED}");
    w.push_str(
        "//\n\
         // roomchat_operations.hpp: the C++ surface of the operations whose surfaces are\n\
         // generated: their records, their parameters, and the methods roomchat::Client\n\
         // inherits. Include roomchat.hpp: it includes this file where it belongs (after\n\
         // its helpers, before Client). Conventions: roomchat.hpp's.\n\
         #ifndef ROOMCHAT_HPP\n\
         #include \"roomchat.hpp\"\n\
         #elif !defined(ROOMCHAT_OPERATIONS_HPP)\n\
         #define ROOMCHAT_OPERATIONS_HPP\n\
         \n\
         namespace roomchat {\n",
    );
    for e in enums {
        hpp_enum(w, e);
    }
    for record in records_in_order(d) {
        hpp_record(w, record);
    }
    for op in generated_ops(d).filter(|op| has_params(op)) {
        hpp_params(w, op);
    }
    for op in paged_ops(d) {
        hpp_items(w, op, page_item(d, op).expect("checked"));
    }
    w.push_str(
        "\nnamespace detail {\n\n\
         // The methods of the generated operations, which Client (roomchat.hpp) inherits.\n\
         template <typename Derived>\n\
         class Operations {\n\
         \x20public:\n",
    );
    let mut first = true;
    for s in shaped.iter().filter(|s| cpp_generated(s)) {
        if !first {
            w.push('\n');
        }
        first = false;
        hpp_shaped_method(w, s);
    }
    for op in generated_ops(d) {
        if !first {
            w.push('\n');
        }
        first = false;
        hpp_method(w, op);
        if op.pages != Pages::None {
            w.push('\n');
            hpp_iter_method(w, op);
        }
    }
    w.push_str(
        "\n protected:\n\
         \x20 Operations() noexcept = default;\n\
         \n\
         \x20private:\n\
         \x20 roomchat_client *client() const noexcept { return static_cast<const Derived *>(this)->get(); }\n",
    );
    for s in shaped.iter().filter(|s| cpp_generated(s)) {
        w.push('\n');
        hpp_shaped_send(w, s);
    }
    for op in generated_ops(d) {
        w.push('\n');
        hpp_send(w, op);
    }
    w.push_str(
        "};\n\n}  // namespace detail\n\n}  // namespace roomchat\n\n#endif  // ROOMCHAT_OPERATIONS_HPP\n",
    );
    out
}

/// The C++ type of a record's field, and how it is read from the C accessor's result.
fn cpp_field(field: &Field, accessor: &str) -> (String, String) {
    match (field.record(), field.kind.as_str()) {
        (Some(inner), _) if field.is_list() => (
            format!("std::vector<{inner}>"),
            format!("detail::record_list<{inner}>({accessor})"),
        ),
        (Some(inner), _) => (
            format!("std::optional<{inner}>"),
            format!("detail::optional_record<{inner}>({accessor})"),
        ),
        (None, "boolean") => (
            "std::optional<bool>".into(),
            format!("detail::optional_bool({accessor})"),
        ),
        (None, "integer") => (
            "std::optional<std::int64_t>".into(),
            format!("detail::optional_integer({accessor})"),
        ),
        (None, "number") => (
            "std::optional<double>".into(),
            format!("detail::optional_number({accessor})"),
        ),
        _ => (
            "std::optional<std::string>".into(),
            format!("detail::optional_string({accessor})"),
        ),
    }
}

fn hpp_record(w: &mut String, record: &Record) {
    let c = c_record(&record.name);
    let name = &record.name;
    w.push('\n');
    doc(w, "", "//", &format!("{} (roomchat_{c})", record.doc));
    let _ = writeln!(w, "class {name} {{");
    let _ = writeln!(w, " public:");
    let _ = writeln!(w, "  {name}() = default;");
    let _ = writeln!(
        w,
        "  // Reads a C record, which stays the caller's (borrowed for the call)."
    );
    let _ = writeln!(w, "  explicit {name}(const roomchat_{c} *raw)");
    let mut inits = Vec::new();
    for field in &record.fields {
        let accessor = if field.is_list() {
            format!(
                "raw, roomchat_{c}_{name}_len, roomchat_{c}_{name}_get",
                name = field.snake()
            )
        } else {
            format!("roomchat_{c}_{}(raw)", field.snake())
        };
        inits.push(format!(
            "{}_({})",
            field.snake(),
            cpp_field(field, &accessor).1
        ));
    }
    inits.push(format!(
        "extra_json_(detail::string_or_empty(roomchat_{c}_extra_json(raw)))"
    ));
    let _ = writeln!(w, "      : {} {{}}", inits.join(",\n        "));
    for field in &record.fields {
        w.push('\n');
        let absent = if field.is_list() {
            " (empty when the service left it out)".to_owned()
        } else if field.record().is_some() || field.kind != "integer" {
            " (std::nullopt when the service left it out)".to_owned()
        } else {
            " (std::nullopt when the service left it out or sent a negative number)".to_owned()
        };
        doc(
            w,
            "  ",
            "//",
            &format!("`{}`: {}{absent}", field.name, field.doc),
        );
        // On an lvalue a reference; on a temporary (`client.list_bots().bots()`) the value,
        // moved out, so that a range-for over it or a reference bound to it does not dangle.
        let _ = writeln!(
            w,
            "  const {ty} &{name}() const & noexcept {{ return {name}_; }}\n  {ty} {name}() && noexcept {{ return std::move({name}_); }}",
            ty = cpp_field(field, "").0,
            name = field.snake(),
        );
    }
    w.push('\n');
    let _ = writeln!(
        w,
        "  // The fields the service sent that this record does not name, as a JSON object's text (\"{{}}\" when none)."
    );
    let _ = writeln!(
        w,
        "  const std::string &extra_json() const & noexcept {{ return extra_json_; }}\n  std::string extra_json() && noexcept {{ return std::move(extra_json_); }}"
    );
    w.push('\n');
    let _ = writeln!(w, " private:");
    for field in &record.fields {
        let _ = writeln!(w, "  {} {}_;", cpp_field(field, "").0, field.snake());
    }
    let _ = writeln!(w, "  std::string extra_json_;");
    let _ = writeln!(w, "}};");
}

fn cpp_param_type(p: &Param) -> &'static str {
    match p.kind {
        ParamKind::Integer => "std::optional<std::uint64_t>",
        ParamKind::Boolean | ParamKind::Switch => "std::optional<bool>",
        ParamKind::String | ParamKind::Id | ParamKind::Json => "std::optional<std::string>",
    }
}

/// An integer param whose least value is above 0 (a listing's `limit`): its C setter reads 0
/// as "not set", so the C++ wrapper refuses a set 0 itself (`detail::check_minimum`).
fn zero_refused(p: &Param) -> bool {
    p.kind == ParamKind::Integer && p.min.is_some_and(|min| min > 0)
}

fn hpp_params(w: &mut String, op: &Operation) {
    w.push('\n');
    doc(
        w,
        "",
        "//",
        &format!(
            "The parameters of Client::{}: each is sent only when set (roomchat_{}_params).",
            op.name, op.name
        ),
    );
    let _ = writeln!(w, "struct {} {{", op.type_name());
    for p in optional_params(op) {
        let kind = match p.kind {
            ParamKind::Json => ", JSON text (any JSON value, sent as given)",
            ParamKind::Switch => ", sent as \"on\" or \"off\"",
            ParamKind::String | ParamKind::Id | ParamKind::Integer | ParamKind::Boolean => "",
        };
        let mut text = format!("`{}`{}{kind}.", p.name, limits(p));
        if zero_refused(p) {
            // Unlike C's setter, where 0 is "not set" for such a param, a set 0 is a value.
            let default = p
                .default_text()
                .map(|d| format!(" {d}"))
                .unwrap_or_default();
            let page = if op.pages != Pages::None {
                ", an iterator's page size 200"
            } else {
                ""
            };
            text.push_str(&format!(
                " Unset, it is not sent (the service's default{default}{page}); set to 0, the call \
                 throws ROOMCHAT_RESULT_VALIDATION and sends nothing."
            ));
        }
        doc(w, "  ", "//", &text);
        let _ = writeln!(w, "  {} {};", cpp_param_type(p), snake(&p.name));
    }
    if op.extra {
        doc(
            w,
            "  ",
            "//",
            "Body fields the declaration does not type: a JSON object's text, each field sent as given.",
        );
        let _ = writeln!(w, "  std::optional<std::string> extra_json;");
    }
    let _ = writeln!(w, "}};");
}

/// The C++ method's parameters (declaration) and the names passed on.
fn cpp_args(op: &Operation, defaults: bool) -> (Vec<String>, Vec<String>) {
    let mut decl = Vec::new();
    let mut names = Vec::new();
    for p in argument_params(op) {
        decl.push(format!("std::string_view {}", snake(&p.name)));
        names.push(snake(&p.name));
    }
    if has_params(op) {
        let default = if defaults { " = {}" } else { "" };
        decl.push(format!("const {} &params{default}", op.type_name()));
        names.push("params".into());
    }
    (decl, names)
}

/// The C++ type of a generated operation's answer.
fn cpp_result(op: &Operation) -> String {
    if op.result_is_list() {
        format!("std::vector<{}>", op.result_record())
    } else {
        op.result.clone()
    }
}

fn hpp_method(w: &mut String, op: &Operation) {
    let result = cpp_result(op);
    let (decl, names) = cpp_args(op, true);
    let mut text = format!(
        "{} {}: {} {}",
        op.method,
        op.path,
        op.summary,
        retry_text(op, "ClientOptions::retries allows it")
    );
    if has_params(op) {
        text.push_str(
            " A value outside its declared limits throws ROOMCHAT_RESULT_VALIDATION and nothing is sent.",
        );
    }
    for e in &op.errors {
        text.push_str(&format!(
            " Throws {} when {}.",
            result_constant(&e.kind),
            e.when.trim_end_matches('.')
        ));
    }
    doc(w, "  ", "//", &text);
    let _ = writeln!(
        w,
        "  {result} {}({}) const {{\n    return send_{}({});\n  }}",
        op.name,
        decl.join(", "),
        op.name,
        std::iter::once("nullptr".to_owned())
            .chain(names.iter().cloned())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let _ = writeln!(
        w,
        "  WithResponse<{result}> {}_with_response({}) const {{",
        op.name,
        decl.join(", ")
    );
    let _ = writeln!(
        w,
        "    return detail::with_response([&](roomchat_response_meta **meta) {{ return send_{}({}); }});",
        op.name,
        std::iter::once("meta".to_owned())
            .chain(names.iter().cloned())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let _ = writeln!(w, "  }}");
}

/// Writes the C arguments' preparation of a generated method (strings, the
/// params handle) and gives the C call's arguments up to the params.
fn hpp_c_args(w: &mut String, op: &Operation) -> Vec<String> {
    let mut c_args = vec!["client()".to_owned()];
    for p in argument_params(op) {
        let name = snake(&p.name);
        let _ = writeln!(w, "    detail::CString {name}_c({name}, {name:?});");
        c_args.push(format!("{name}_c.get()"));
    }
    if has_params(op) {
        // A set integer below its least value: C reads 0 as "not set" there, so the wrapper
        // refuses it itself, before anything is sent (roomchat.hpp's detail::check_minimum).
        for p in optional_params(op).filter(|p| zero_refused(p)) {
            let min = p.min.unwrap_or_default();
            let max = p.max.map_or_else(
                || "std::numeric_limits<std::uint64_t>::max()".to_owned(),
                |max| format!("{max}u"),
            );
            let _ = writeln!(
                w,
                "{}",
                cpp_wrapped(
                    "    ",
                    "detail::check_minimum",
                    &[
                        format!("params.{}", snake(&p.name)),
                        format!("{min}u"),
                        max,
                        format!("{:?}", op.name),
                        format!("{:?}", p.name),
                    ],
                    ";"
                )
            );
        }
        let ty = format!("roomchat_{}_params", op.name);
        let _ = writeln!(w, "    {ty} *raw_params = nullptr;");
        let _ = writeln!(w, "    detail::check({ty}_new(&raw_params));");
        let _ = writeln!(
            w,
            "    detail::OwnedBy<{ty}, {ty}_free> owned_params(raw_params);"
        );
        let mut setters: Vec<String> = optional_params(op).map(|p| snake(&p.name)).collect();
        if op.extra {
            setters.push("extra_json".into());
        }
        for name in setters {
            let call = format!(
                "    detail::set_param(raw_params, {ty}_set_{name}, params.{name}, {name:?});"
            );
            if call.len() <= 120 {
                let _ = writeln!(w, "{call}");
            } else {
                let _ = writeln!(w, "    detail::set_param(raw_params, {ty}_set_{name},");
                let _ = writeln!(w, "                      params.{name}, {name:?});");
            }
        }
        c_args.push("raw_params".into());
    }
    c_args
}

/// `RoomMessagesItems`: the C++ range of a paged operation's records.
fn items_type(op: &Operation) -> String {
    format!("{}Items", op.type_name())
}

fn hpp_items(w: &mut String, op: &Operation, item: &str) {
    let iter = format!("roomchat_{}_iter", op.name);
    w.push('\n');
    doc(
        w,
        "",
        "//",
        &format!(
            "Every {item} of Client::{}, lazily, a page at a time (Client::iter_{}): see Items.",
            op.name, op.name
        ),
    );
    let _ = writeln!(
        w,
        "using {} = Items<{item}, {iter}, roomchat_{}, {iter}_next, {iter}_next_skip, {iter}_free,",
        items_type(op),
        c_record(item)
    );
    let _ = writeln!(w, "                  roomchat_{}_free>;", c_record(item));
}

fn hpp_iter_method(w: &mut String, op: &Operation) {
    let (decl, _) = cpp_args(op, true);
    doc(
        w,
        "  ",
        "//",
        &format!(
            "Every record of {}, lazily, a page at a time: params.limit is the page size (default \
             200), params.skip where to start (Items::next_skip of a stopped iteration resumes \
             it). Nothing is sent before the first record is asked for.",
            op.name
        ),
    );
    let _ = writeln!(
        w,
        "{}",
        cpp_wrapped(
            "  ",
            &format!("{} iter_{}", items_type(op), op.name),
            &decl,
            " const {"
        )
    );
    let mut c_args = hpp_c_args(w, op);
    let iter = format!("roomchat_{}_iter", op.name);
    let _ = writeln!(w, "    {iter} *raw = nullptr;");
    c_args.push("&raw".into());
    c_args.push("e".into());
    let _ = writeln!(w, "    detail::check_call([&](roomchat_error **e) {{");
    let _ = writeln!(
        w,
        "{}",
        cpp_wrapped(
            "      ",
            &format!("return roomchat_client_iter_{}", op.name),
            &c_args,
            ";"
        )
    );
    let _ = writeln!(w, "    }});");
    let _ = writeln!(w, "    return {}(raw);", items_type(op));
    let _ = writeln!(w, "  }}");
}

fn hpp_send(w: &mut String, op: &Operation) {
    let result = cpp_result(op);
    let record = c_record(op.result_record());
    let (decl, _) = cpp_args(op, false);
    let mut params = vec!["roomchat_response_meta **meta".to_owned()];
    params.extend(decl);
    let _ = writeln!(
        w,
        "  {result} send_{}({}) const {{",
        op.name,
        params.join(", ")
    );
    let mut c_args = hpp_c_args(w, op);
    let raw_ty = if op.result_is_list() {
        list_type(op.result_record())
    } else {
        format!("roomchat_{record}")
    };
    let _ = writeln!(w, "    {raw_ty} *raw = nullptr;");
    c_args.push("&raw".into());
    c_args.push("meta".into());
    c_args.push("e".into());
    let _ = writeln!(w, "    detail::check_call([&](roomchat_error **e) {{");
    let _ = writeln!(
        w,
        "{}",
        cpp_wrapped(
            "      ",
            &format!("return {}_with_response", c_call(op)),
            &c_args,
            ";"
        )
    );
    let _ = writeln!(w, "    }});");
    let _ = writeln!(
        w,
        "    detail::OwnedBy<{raw_ty}, {raw_ty}_free> owned(raw);"
    );
    if op.result_is_list() {
        let _ = writeln!(
            w,
            "    return detail::record_list<{}>(raw, {raw_ty}_len, {raw_ty}_get);",
            op.result_record()
        );
    } else {
        let _ = writeln!(w, "    return {result}(raw);");
    }
    let _ = writeln!(w, "  }}");
}

// ---- the published shapes of the operations that predate the declarations -------------

/// `[operation.c]` of api/operations.toml: what the C function of an operation
/// that predates the declarations keeps and its declaration cannot say (the
/// keys are documented in the file's header, "Published shapes, C").
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Shape {
    arguments: Option<Vec<String>>,
    result: Option<String>,
    out: Option<String>,
    note: Option<String>,
    /// The name of the generated, typed function beside the published one.
    typed: Option<String>,
    /// C's text of the operation's enums (`[operation.enums.<argument>]`).
    #[serde(default)]
    enums: BTreeMap<String, CEnumText>,
}

/// `[operation.c.enums.<argument>]`: what C says of one of the operation's
/// enums (`[operation.enums.<argument>]`, language-neutral) in its own words.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct CEnumText {
    /// The C argument holding the value of the param an enum without `param` picks.
    picks: Option<String>,
    /// The C enum's doc (default: the declaration's).
    doc: Option<String>,
    /// A variant's doc, by its name (default: the declaration's).
    #[serde(default)]
    docs: BTreeMap<String, String>,
    /// The message when the argument a variant carries is missing, by its name.
    #[serde(default)]
    missing: BTreeMap<String, String>,
}

/// A `uint32_t` argument of a C enum: the declaration's enum, in C's words.
#[derive(Debug, Clone)]
struct EnumShape {
    name: String,
    param: Option<String>,
    picks: Option<String>,
    doc: Option<String>,
    variants: Vec<Variant>,
}

#[derive(Debug, Clone)]
struct Variant {
    name: String,
    doc: String,
    value: Option<String>,
    needs: Option<String>,
    /// The message when the argument the variant `needs` is missing.
    missing: Option<String>,
}

/// A C enum as the header and roomchat_operations.hpp define it.
#[derive(Debug, Clone)]
struct CEnum {
    /// `roomchat_user_identifier`.
    c: String,
    /// `UserIdentifier`.
    cpp: String,
    doc: String,
    variants: Vec<Variant>,
}

impl CEnum {
    /// `ROOMCHAT_ROLE_MODERATOR_OF_ROOM`: the constant cbindgen names a variant.
    fn constant(&self, variant: &str) -> String {
        format!("{}_{}", self.c, snake(variant)).to_ascii_uppercase()
    }
}

/// How a C argument becomes a JSON param (or a check).
#[derive(Debug)]
enum ArgKind {
    /// A string (`*const c_char`): required, or NULL for not sent.
    Text { required: bool },
    /// An integer: `u64` when the declared maximum does not fit `u32`; 0 is
    /// "not sent" when the declared minimum is above it.
    Integer { wide: bool, zero_absent: bool },
    /// A `uint32_t` of `enumeration`, giving `param` the variants' values, or
    /// choosing which of the exactly_one `group` the argument `picks` sets.
    Enum {
        enumeration: CEnum,
        values: Vec<String>,
        picks: Option<String>,
        default: Option<String>,
    },
    /// The string the enum `by` picks the param of.
    Picked { by: String },
    /// `extra_json`: a JSON object's text, or NULL.
    Extra,
}

#[derive(Debug)]
struct Arg<'a> {
    /// The C name (snake_case).
    name: String,
    /// The JSON param it sets (empty for a picked value: the enum names it).
    wire: String,
    param: Option<&'a Param>,
    kind: ArgKind,
}

/// What the call gives back.
#[derive(Debug, PartialEq)]
enum Answer {
    /// Nothing: the answer is dropped.
    Dropped,
    /// Its JSON text, through `char **`.
    Json,
    /// A hand-written C record (`roomchat_<name>`).
    Record(String),
}

/// An operation in its published C shape.
#[derive(Debug)]
struct Shaped<'a> {
    op: &'a Operation,
    /// The path's params given as strings, in path order.
    positional: Vec<&'a Param>,
    args: Vec<Arg<'a>>,
    answer: Answer,
    out: String,
    note: Option<String>,
}

impl Shaped<'_> {
    fn call(&self) -> String {
        format!("roomchat_client_{}", self.op.name)
    }

    /// The core type the answer is decoded into: `Vec<Message>`, `UserPage`.
    fn core_result(&self) -> &str {
        if self.answer == Answer::Json {
            // The text of any JSON answer, whatever the typed form decodes.
            "Value"
        } else {
            &self.op.result
        }
    }

    /// The C++ type of the answer.
    fn cpp_result(&self) -> String {
        match &self.answer {
            Answer::Dropped => "void".into(),
            Answer::Json => "std::string".into(),
            Answer::Record(_) => match self.op.result.strip_prefix("Vec<") {
                Some(inner) => format!("std::vector<{}>", inner.trim_end_matches('>')),
                None => self.op.result.clone(),
            },
        }
    }

    /// The variants that need `arg`, as `(enum argument, enum, variants)`.
    fn needed_by(&self, arg: &str) -> Option<(&str, &CEnum, Vec<&Variant>)> {
        self.args.iter().find_map(|a| match &a.kind {
            ArgKind::Enum { enumeration, .. } => {
                let needing: Vec<&Variant> = enumeration
                    .variants
                    .iter()
                    .filter(|v| v.needs.as_deref().map(snake_or_extra) == Some(arg.to_owned()))
                    .collect();
                (!needing.is_empty()).then_some((a.name.as_str(), enumeration, needing))
            }
            _ => None,
        })
    }
}

/// A wire name as its C argument's name (`extra` is `extra_json`).
fn snake_or_extra(wire: &str) -> String {
    if wire == "extra" {
        "extra_json".into()
    } else {
        snake(wire)
    }
}

fn shape_of(op: &Operation) -> Result<Option<Shape>, String> {
    read_table(op.c.as_ref(), &op.table_at("c"))
}

/// An operation's enums as C gives them: the declaration's
/// (`[operation.enums]`) with C's text (`[operation.c.enums]`). The variants
/// are those of the operation that defines the enum (none: another's).
fn enum_shapes(
    op: &Operation,
    shape: &Shape,
    d: &Declarations,
) -> Result<BTreeMap<String, EnumShape>, String> {
    let at = |what: String| format!("the C generator, operation {:?}: {what}", op.name);
    if let Some(key) = shape.enums.keys().find(|k| !op.enums.contains_key(*k)) {
        return Err(at(format!(
            "[operation.c.enums.{key}] is no [operation.enums.{key}]"
        )));
    }
    let mut shapes = BTreeMap::new();
    for (key, choice) in &op.enums {
        let text = shape.enums.get(key).cloned().unwrap_or_default();
        let param = op.choice(key, d).and_then(|c| c.param.clone());
        let variants: Vec<Variant> = choice
            .variants
            .iter()
            .map(|v| Variant {
                name: v.name.clone(),
                doc: text.docs.get(&v.name).unwrap_or(&v.doc).clone(),
                value: v.value.clone(),
                // A picked param is the `picks` argument's; a value's is an argument of its own.
                needs: v.carries.clone().filter(|_| param.is_some()),
                missing: text.missing.get(&v.name).cloned(),
            })
            .collect();
        if let Some(n) = text
            .docs
            .keys()
            .chain(text.missing.keys())
            .find(|n| !choice.variants.iter().any(|v| &v.name == *n))
        {
            return Err(at(format!("[operation.c.enums.{key}]: no variant {n}")));
        }
        shapes.insert(
            key.clone(),
            EnumShape {
                name: choice.name.clone(),
                param,
                picks: text.picks,
                doc: (!variants.is_empty())
                    .then(|| text.doc.or_else(|| choice.doc.clone()))
                    .flatten(),
                variants,
            },
        );
    }
    Ok(shapes)
}

/// The enums the shapes define (`doc` and `variants` given), by C name.
fn defined_enums(d: &Declarations) -> Result<Vec<CEnum>, String> {
    let mut defined: Vec<CEnum> = Vec::new();
    for op in &d.operations {
        let Some(shape) = shape_of(op)? else { continue };
        for e in enum_shapes(op, &shape, d)?.values() {
            let c = format!("roomchat_{}", e.name);
            match (&e.doc, e.variants.is_empty()) {
                (Some(doc), false) => {
                    if defined.iter().any(|d| d.c == c) {
                        return Err(format!("the C generator: enum {c} is defined twice"));
                    }
                    defined.push(CEnum {
                        c,
                        cpp: pascal(&e.name),
                        doc: doc.clone(),
                        variants: e.variants.clone(),
                    });
                }
                (None, true) => {}
                _ => {
                    return Err(format!(
                        "the C generator, operation {:?}: enum {c} needs both doc and variants (or neither)",
                        op.name
                    ))
                }
            }
        }
    }
    Ok(defined)
}

/// Every operation with an `[operation.c]` table, in its published shape.
fn shaped_ops<'a>(d: &'a Declarations) -> Result<Vec<Shaped<'a>>, String> {
    let enums = defined_enums(d)?;
    let mut shaped = Vec::new();
    for op in &d.operations {
        let Some(shape) = shape_of(op)? else { continue };
        let enum_shapes = enum_shapes(op, &shape, d)?;
        let at = |what: String| format!("the C generator, operation {:?}: {what}", op.name);
        let arguments = shape.arguments.clone().unwrap_or_else(|| {
            op.named_params()
                .iter()
                .filter(|p| p.required)
                .map(|p| p.name.clone())
                .collect()
        });
        let set_by_enum: Vec<&str> = enum_shapes
            .values()
            .filter_map(|e| e.param.as_deref())
            .collect();
        let positional: Vec<&Param> = op
            .positional_params()
            .into_iter()
            .filter(|p| !set_by_enum.contains(&p.name.as_str()))
            .collect();
        if let Some(p) = positional.iter().find(|p| !p.required) {
            return Err(at(format!(
                "path param {:?} has no default in C: give it an enum",
                p.name
            )));
        }
        let mut args = Vec::new();
        for name in &arguments {
            let param = op.params.iter().find(|p| &p.name == name);
            let arg = if let Some(e) = enum_shapes.get(name) {
                let enumeration = enums
                    .iter()
                    .find(|d| d.c == format!("roomchat_{}", e.name))
                    .cloned()
                    .ok_or_else(|| at(format!("enum roomchat_{} is defined nowhere", e.name)))?;
                let (wire, values, default) = match (&e.param, &e.picks) {
                    (Some(wire), None) => {
                        let declared = op.params.iter().find(|p| &p.name == wire);
                        let values: Vec<String> = enumeration
                            .variants
                            .iter()
                            .enumerate()
                            .map(|(i, v)| {
                                v.value
                                    .clone()
                                    .or_else(|| declared.and_then(|p| p.choices.get(i).cloned()))
                                    .ok_or_else(|| at(format!("variant {} has no value", v.name)))
                            })
                            .collect::<Result<_, _>>()?;
                        if declared.is_some_and(|p| {
                            !p.choices.is_empty() && p.choices.len() != values.len()
                        }) {
                            return Err(at(format!(
                                "enum {name}: one variant per choice of {wire}"
                            )));
                        }
                        let required = declared.is_some_and(|p| p.required && p.default.is_none());
                        let default = if required {
                            None
                        } else {
                            let declared_default = declared.and_then(Param::default_text);
                            let i = declared_default
                                .and_then(|d| values.iter().position(|v| *v == d))
                                .unwrap_or(0);
                            Some(enumeration.variants[i].name.clone())
                        };
                        (wire.clone(), values, default)
                    }
                    (None, Some(_)) => {
                        let group = op
                            .exactly_one
                            .first()
                            .filter(|_| op.exactly_one.len() == 1)
                            .ok_or_else(|| {
                                at(format!(
                                    "enum {name} picks, but there is not one exactly_one group"
                                ))
                            })?;
                        if group.len() != enumeration.variants.len() {
                            return Err(at(format!(
                                "enum {name}: one variant per param of the exactly_one group"
                            )));
                        }
                        (String::new(), group.clone(), None)
                    }
                    _ => return Err(at(format!("enum {name}: give param or picks"))),
                };
                Arg {
                    name: snake(name),
                    wire,
                    param: None,
                    kind: ArgKind::Enum {
                        enumeration,
                        values,
                        picks: e.picks.clone(),
                        default,
                    },
                }
            } else if let Some((by, _)) = enum_shapes
                .iter()
                .find(|(_, e)| e.picks.as_deref() == Some(name))
            {
                let group = op.exactly_one.first().cloned().unwrap_or_default();
                if group
                    .iter()
                    .filter_map(|g| op.params.iter().find(|p| &p.name == g))
                    .any(|p| !p.kind.is_text())
                {
                    return Err(at(format!("{name}: only strings may be picked")));
                }
                Arg {
                    name: snake(name),
                    wire: String::new(),
                    param: None,
                    kind: ArgKind::Picked { by: snake(by) },
                }
            } else if name == "extra" {
                if !op.extra {
                    return Err(at("extra is an argument only with extra = true".into()));
                }
                Arg {
                    name: "extra_json".into(),
                    wire: name.clone(),
                    param: None,
                    kind: ArgKind::Extra,
                }
            } else if let Some(p) = param {
                let kind = match p.kind {
                    ParamKind::String | ParamKind::Id => ArgKind::Text {
                        required: p.required,
                    },
                    ParamKind::Integer => ArgKind::Integer {
                        wide: p.max.is_none_or(|max| max > u64::from(u32::MAX)),
                        zero_absent: p.min.is_some_and(|min| min > 0),
                    },
                    other @ (ParamKind::Boolean | ParamKind::Switch | ParamKind::Json) => {
                        return Err(at(format!(
                            "{name}: a {} argument has no C form yet",
                            other.as_str()
                        )))
                    }
                };
                Arg {
                    name: snake(name),
                    wire: name.clone(),
                    param: Some(p),
                    kind,
                }
            } else {
                return Err(at(format!(
                    "argument {name:?} is no param, enum, picked value or extra"
                )));
            };
            args.push(arg);
        }
        for arg in &args {
            let ArgKind::Enum { enumeration, .. } = &arg.kind else {
                continue;
            };
            for v in &enumeration.variants {
                let needs = v.needs.as_deref().map(snake_or_extra);
                let optional = args.iter().any(|a| {
                    Some(&a.name) == needs.as_ref()
                        && matches!(a.kind, ArgKind::Text { required: false } | ArgKind::Extra)
                });
                if needs.is_some() && !optional || v.missing.is_some() && needs.is_none() {
                    return Err(at(format!(
                        "variant {}: `needs` names an optional string argument (and `missing` goes with it)",
                        v.name
                    )));
                }
            }
        }
        for p in op
            .params
            .iter()
            .filter(|p| p.location != Location::Path && p.required)
        {
            if !arguments.contains(&p.name) {
                return Err(at(format!(
                    "the required param {:?} is no C argument",
                    p.name
                )));
            }
        }
        let answer = match shape.result.as_deref() {
            Some("none") => Answer::Dropped,
            Some("json") => Answer::Json,
            Some(record) => Answer::Record(record.to_owned()),
            None => Answer::Record(c_record(&op.result)),
        };
        let out = shape.out.clone().unwrap_or_else(|| match &answer {
            Answer::Json => "json".into(),
            Answer::Record(record) => record.clone(),
            Answer::Dropped => String::new(),
        });
        shaped.push(Shaped {
            op,
            positional,
            args,
            answer,
            out,
            note: shape.note.clone(),
        });
    }
    Ok(shaped)
}

/// The C type of an argument.
fn c_type(arg: &Arg) -> &'static str {
    match arg.kind {
        ArgKind::Integer { wide: true, .. } => "u64",
        ArgKind::Integer { wide: false, .. } | ArgKind::Enum { .. } => "u32",
        _ => "*const c_char",
    }
}

/// What a shaped function's doc says, after the method and path; `c`: for the
/// C header (else for C++, whose argument types say part of it).
fn shaped_text(s: &Shaped, c: bool) -> String {
    let op = s.op;
    let mut text = op.summary.clone();
    let key = if c {
        op.auth.sentence(
            "**public** key",
            " (`roomchat_client_options_set_public_key`; without it \
             `ROOMCHAT_RESULT_CONFIGURATION` and nothing is sent)",
        )
    } else {
        op.auth.sentence(
            "public key",
            " (ClientOptions::public_key; without it ROOMCHAT_RESULT_CONFIGURATION, nothing sent)",
        )
    };
    if let Some(key) = key {
        text.push(' ');
        text.push_str(&key);
    }
    text.push(' ');
    text.push_str(&retry_text(
        op,
        if c {
            "`roomchat_client_options_set_retries` allows it"
        } else {
            "ClientOptions::retries allows it"
        },
    ));
    let quote = |name: &str| {
        if c {
            format!("`{name}`")
        } else {
            name.to_owned()
        }
    };
    if c {
        for p in &s.positional {
            text.push_str(&format!(
                " `{}` (NUL-terminated UTF-8) is the path's `{{{}}}`.",
                snake(&p.name),
                p.name
            ));
        }
    }
    let mut limited = false;
    for arg in &s.args {
        let name = quote(&arg.name);
        match &arg.kind {
            ArgKind::Text { required } => {
                let needed = s.needed_by(&arg.name);
                let is = if arg.wire == arg.name {
                    String::new()
                } else {
                    format!(" is `{}`", arg.wire)
                };
                if c {
                    text.push_str(&format!(" {name} (NUL-terminated UTF-8"));
                    if !required && needed.is_none() {
                        text.push_str(", or NULL: not sent");
                    }
                    text.push_str(&format!("){is}"));
                } else if !required {
                    text.push_str(&format!(" {name} (std::nullopt: not sent){is}"));
                } else {
                    continue;
                }
                if let Some((_, enumeration, variants)) = needed {
                    let constants: Vec<String> = variants
                        .iter()
                        .map(|v| {
                            if c {
                                format!("`{}`", enumeration.constant(&v.name))
                            } else {
                                format!("{}::{}", enumeration.cpp, v.name)
                            }
                        })
                        .collect();
                    text.push_str(&format!(
                        ": required with {} and {} otherwise (else `ROOMCHAT_RESULT_INVALID_ARGUMENT`, nothing sent)",
                        constants.join(" or "),
                        if c { "NULL" } else { "std::nullopt" }
                    ));
                }
                if let Some(p) = arg.param {
                    if !p.bounds().is_empty() {
                        limited = true;
                        text.push_str(&format!(" ({})", p.bounds().join("; ")));
                    }
                }
                text.push('.');
            }
            ArgKind::Integer { zero_absent, .. } => {
                let p = arg.param.expect("an integer argument is a declared param");
                limited |= !p.bounds().is_empty();
                text.push_str(&format!(" {name}"));
                if arg.wire != arg.name {
                    text.push_str(&format!(" is `{}`", arg.wire));
                }
                let mut notes = p.bounds();
                if *zero_absent {
                    notes.insert(
                        0,
                        match p.default_text() {
                            Some(default) => {
                                format!("0: not sent, the service's default {default}")
                            }
                            None => "0: not sent".into(),
                        },
                    );
                }
                if !notes.is_empty() {
                    text.push_str(&format!(" ({})", notes.join("; ")));
                }
                text.push('.');
            }
            ArgKind::Enum {
                enumeration,
                picks,
                values,
                ..
            } => {
                let group: Vec<String> = values.iter().map(|v| format!("`{v}`")).collect();
                let of = match picks {
                    Some(picked) => format!(
                        ": which of {} {} is",
                        group.join(", "),
                        quote(&snake(picked))
                    ),
                    None if arg.wire == arg.name => String::new(),
                    None => format!(" (`{}`)", arg.wire),
                };
                if c {
                    text.push_str(&format!(
                        " {name} is a `{}` value{of}; another number gives \
                         `ROOMCHAT_RESULT_INVALID_ARGUMENT` and nothing is sent.",
                        enumeration.c
                    ));
                } else if picks.is_some() {
                    text.push_str(&format!(" {name}{of}."));
                }
            }
            ArgKind::Picked { .. } => {
                if c {
                    text.push_str(&format!(" {name} is NUL-terminated UTF-8."));
                }
            }
            ArgKind::Extra => text.push_str(&format!(
                " {name} ({}) is a JSON object of further fields, sent unchanged, e.g. \
                 `{{\"uniqueUserIdentifier\": \"crm-1\"}}`; another JSON value gives \
                 `ROOMCHAT_RESULT_INVALID_ARGUMENT` and nothing is sent.",
                if c {
                    "NULL: none"
                } else {
                    "std::nullopt: none"
                }
            )),
        }
    }
    if limited {
        text.push_str(" A value outside its declared limits gives `ROOMCHAT_RESULT_VALIDATION` and nothing is sent.");
    }
    match &s.note {
        Some(note) => {
            text.push(' ');
            text.push_str(note);
        }
        // The published note says the errors where there is one.
        None => text.push_str(&errors_text(op)),
    }
    if c {
        let out = format!("{}_out", s.out);
        match &s.answer {
            Answer::Record(record) => text.push_str(&format!(
                " On success writes the answer to `*{out}` (owned by the caller: free with \
                 `roomchat_{record}_free`); on failure writes nothing there,"
            )),
            Answer::Json => {
                if let Some(typed) = typed_name(s.op) {
                    text.push_str(&format!(
                        " The same answer as typed records: `roomchat_client_{typed}`."
                    ));
                }
                text.push_str(&format!(
                    " On success writes the answer's JSON text to `*{out}` (owned by the caller: \
                     free with `roomchat_string_free`); on failure writes nothing there,"
                ))
            }
            Answer::Dropped => text.push_str(" On failure writes"),
        }
        text.push_str(
            " the details to `*err_out` when it is not NULL (free with `roomchat_error_free`).",
        );
    }
    text
}

fn rust_enum(w: &mut String, e: &CEnum) {
    w.push('\n');
    doc(w, "", "///", &e.doc);
    let _ = writeln!(w, "#[allow(non_camel_case_types)]");
    let _ = writeln!(w, "#[repr(u32)]");
    let _ = writeln!(w, "#[derive(Debug, Clone, Copy, PartialEq, Eq)]");
    let _ = writeln!(w, "pub enum {} {{", e.c);
    for (i, v) in e.variants.iter().enumerate() {
        doc(w, "    ", "///", &v.doc);
        let _ = writeln!(w, "    {} = {i},", v.name);
    }
    let _ = writeln!(w, "}}");
    let names: Vec<&str> = e.variants.iter().map(|v| v.name.as_str()).collect();
    let _ = writeln!(w, "enum_from_u32!({} {{ {} }});", e.c, names.join(", "));
}

fn rust_shaped(w: &mut String, s: &Shaped) {
    let op = s.op;
    let call = s.call();
    let mut args = vec!["client: *const roomchat_client".to_owned()];
    let mut names = vec!["client".to_owned()];
    for p in &s.positional {
        args.push(format!("{}: *const c_char", snake(&p.name)));
        names.push(snake(&p.name));
    }
    for arg in &s.args {
        args.push(format!("{}: {}", arg.name, c_type(arg)));
        names.push(arg.name.clone());
    }
    let out = format!("{}_out", s.out);
    match &s.answer {
        Answer::Record(record) => args.push(format!("{out}: *mut *mut roomchat_{record}")),
        Answer::Json => args.push(format!("{out}: *mut *mut c_char")),
        Answer::Dropped => {}
    }
    if s.answer != Answer::Dropped {
        names.push(out.clone());
    }
    let text = format!("{} `{}`: {}", op.method, op.path, shaped_text(s, true));
    entry_points(w, &call, &text, &args, &names);
    let _ = writeln!(w, "    guard(err_out, || {{");
    if s.answer != Answer::Dropped {
        let _ = writeln!(w, "        out_arg({out}, {out:?})?;");
    }
    let _ = writeln!(w, "        let client = borrow_arg(client, \"client\")?;");
    let mut fields: Vec<String> = Vec::new();
    for p in &s.positional {
        let name = snake(&p.name);
        let _ = writeln!(w, "        let {name} = text_arg({name}, {name:?})?;");
        fields.push(format!("({:?}, Some({name}.into()))", p.name));
    }
    let (mut read, mut emitted) = (Vec::new(), Vec::new());
    for arg in &s.args {
        let name = arg.name.as_str();
        match &arg.kind {
            ArgKind::Text { required: true } | ArgKind::Picked { .. } => {
                let _ = writeln!(w, "        let {name} = text_arg({name}, {name:?})?;");
            }
            ArgKind::Text { required: false } => {
                let _ = writeln!(w, "        let {name} = opt_text_arg({name}, {name:?})?;");
            }
            ArgKind::Enum { enumeration, .. } => {
                let _ = writeln!(
                    w,
                    "        let {name} = enum_arg({name}, {name:?}, {:?}, {}::from_u32)?;",
                    enumeration.c, enumeration.c
                );
            }
            ArgKind::Extra => {
                let _ = writeln!(
                    w,
                    "        let {name} = json_object_arg({name}, {name:?})?;"
                );
            }
            ArgKind::Integer { .. } => {}
        }
        read.push(name);
        rust_needed(w, s, &read, &mut emitted);
    }
    for arg in &s.args {
        let name = &arg.name;
        let value = match &arg.kind {
            ArgKind::Text { required: true } => format!("Some({name}.into())"),
            ArgKind::Text { required: false } => format!("{name}.map(Value::from)"),
            ArgKind::Integer {
                zero_absent: true, ..
            } => format!("({name} > 0).then(|| {name}.into())"),
            ArgKind::Integer {
                zero_absent: false, ..
            } => format!("Some({name}.into())"),
            ArgKind::Extra => name.clone(),
            ArgKind::Picked { by } => {
                fields.push(format!("({by}, Some({name}.into()))"));
                continue;
            }
            ArgKind::Enum {
                enumeration,
                values,
                picks,
                ..
            } => {
                let arms: Vec<String> = enumeration
                    .variants
                    .iter()
                    .zip(values)
                    .map(|(v, value)| format!("{}::{} => {value:?},", enumeration.c, v.name))
                    .collect();
                let _ = writeln!(
                    w,
                    "        let {name} = match {name} {{ {} }};",
                    arms.join(" ")
                );
                if picks.is_some() {
                    continue;
                }
                format!("Some({name}.into())")
            }
        };
        fields.push(format!("({:?}, {value})", arg.wire));
    }
    let params = if fields.is_empty() {
        "Value::Null".to_owned()
    } else {
        let _ = writeln!(
            w,
            "        let params = json_params([{}]);",
            fields.join(", ")
        );
        "params".to_owned()
    };
    let result = s.core_result();
    let answer = if s.answer == Answer::Dropped {
        "_"
    } else {
        "answer"
    };
    let _ = writeln!(
        w,
        "        let ({answer}, meta) = respond(&client.client, meta_out, |c| {{ c.call_declared::<{result}>(Operation::{}, &{params}) }})?;",
        op.type_name()
    );
    match &s.answer {
        Answer::Record(record) => {
            let _ = writeln!(
                w,
                "        write_out({out}, roomchat_{record}::from(answer));"
            );
        }
        Answer::Json => {
            let _ = writeln!(w, "        write_string({out}, answer.to_string());");
        }
        Answer::Dropped => {}
    }
    let _ = writeln!(w, "        write_meta(meta_out, meta);");
    let _ = writeln!(w, "        Ok(())");
    let _ = writeln!(w, "    }})");
    let _ = writeln!(w, "}}");
}

/// The check of an argument that some values of an enum argument need, once
/// both are read (`read`: the arguments read so far).
fn rust_needed(w: &mut String, s: &Shaped, read: &[&str], emitted: &mut Vec<String>) {
    for arg in s.args.iter().filter(|a| read.contains(&a.name.as_str())) {
        let Some((by, enumeration, variants)) = s.needed_by(&arg.name) else {
            continue;
        };
        if !read.contains(&by) || emitted.contains(&arg.name) {
            continue;
        }
        emitted.push(arg.name.clone());
        let pattern: Vec<String> = variants
            .iter()
            .map(|v| format!("{}::{}", enumeration.c, v.name))
            .collect();
        let constants: Vec<String> = variants
            .iter()
            .map(|v| enumeration.constant(&v.name))
            .collect();
        let constants = constants.join(" or ");
        let missing = variants
            .iter()
            .find_map(|v| v.missing.clone())
            .unwrap_or_else(|| format!("{} is required with {constants}", arg.name));
        let _ = writeln!(
            w,
            "        needed(&{}, matches!({by}, {}), {missing:?}, {:?})?;",
            arg.name,
            pattern.join(" | "),
            format!("{} is only for {constants}", arg.name),
        );
    }
}

/// `head(args)tail` as C++ lines of at most 120 characters: the arguments
/// wrapped under the first one when the whole does not fit on one line.
fn cpp_wrapped(indent: &str, head: &str, args: &[String], tail: &str) -> String {
    let one = format!("{indent}{head}({}){tail}", args.join(", "));
    if one.len() <= 120 {
        return one;
    }
    let open = format!("{indent}{head}(");
    let pad = " ".repeat(open.len());
    let mut lines = vec![open];
    for (i, arg) in args.iter().enumerate() {
        let piece = if i + 1 == args.len() {
            format!("{arg}){tail}")
        } else {
            format!("{arg},")
        };
        let last = lines.last_mut().expect("one line at least");
        if last.ends_with('(') || last.len() + 1 + piece.len() <= 120 {
            if !last.ends_with('(') {
                last.push(' ');
            }
            last.push_str(&piece);
        } else {
            lines.push(format!("{pad}{piece}"));
        }
    }
    lines.join("\n")
}

fn hpp_enum(w: &mut String, e: &CEnum) {
    w.push('\n');
    doc(
        w,
        "",
        "//",
        &format!("{} ({}).", e.doc.trim_end_matches('.'), e.c),
    );
    let _ = writeln!(w, "enum class {} : std::uint32_t {{", e.cpp);
    for v in &e.variants {
        doc(w, "  ", "//", &v.doc);
        let _ = writeln!(w, "  {} = {},", v.name, e.constant(&v.name));
    }
    let _ = writeln!(w, "}};");
}

/// A shaped method's C++ parameters (with their defaults where every later
/// one has one) and the names passed on.
fn cpp_shaped_args(s: &Shaped, defaults: bool) -> (Vec<String>, Vec<String>) {
    let mut decl = Vec::new();
    let mut names = Vec::new();
    for p in &s.positional {
        decl.push((format!("std::string_view {}", snake(&p.name)), None));
        names.push(snake(&p.name));
    }
    for arg in &s.args {
        let (ty, default) = match &arg.kind {
            ArgKind::Text { required: true } | ArgKind::Picked { .. } => {
                ("std::string_view".to_owned(), None)
            }
            ArgKind::Text { required: false } | ArgKind::Extra => (
                "std::optional<std::string_view>".to_owned(),
                Some("std::nullopt".to_owned()),
            ),
            ArgKind::Integer { wide, .. } => (
                if *wide {
                    "std::uint64_t"
                } else {
                    "std::uint32_t"
                }
                .to_owned(),
                Some("0".to_owned()),
            ),
            ArgKind::Enum {
                enumeration,
                default,
                ..
            } => (
                enumeration.cpp.clone(),
                default
                    .as_ref()
                    .map(|d| format!("{}::{d}", enumeration.cpp)),
            ),
        };
        decl.push((format!("{ty} {}", arg.name), default));
        names.push(arg.name.clone());
    }
    let mut trailing = true;
    let mut out: Vec<String> = Vec::new();
    for (param, default) in decl.into_iter().rev() {
        match default {
            Some(default) if trailing && defaults => out.push(format!("{param} = {default}")),
            _ => {
                trailing &= false;
                out.push(param);
            }
        }
    }
    out.reverse();
    (out, names)
}

fn hpp_shaped_method(w: &mut String, s: &Shaped) {
    let op = s.op;
    let result = s.cpp_result();
    let (decl, names) = cpp_shaped_args(s, true);
    doc(
        w,
        "  ",
        "//",
        &format!("{} {}: {}", op.method, op.path, shaped_text(s, false)),
    );
    let pass = |meta: &str| {
        std::iter::once(meta.to_owned())
            .chain(names.iter().cloned())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let ret = if s.answer == Answer::Dropped {
        ""
    } else {
        "return "
    };
    let _ = writeln!(
        w,
        "{}\n    {ret}send_{}({});\n  }}",
        cpp_wrapped("  ", &format!("{result} {}", op.name), &decl, " const {"),
        op.name,
        pass("nullptr")
    );
    let _ = writeln!(
        w,
        "{}",
        cpp_wrapped(
            "  ",
            &format!("WithResponse<{result}> {}_with_response", op.name),
            &decl,
            " const {"
        )
    );
    let call = format!(
        "    return detail::with_response([&](roomchat_response_meta **meta) {{ {ret}send_{}({}); }});",
        op.name,
        pass("meta")
    );
    if call.len() <= 120 {
        let _ = writeln!(w, "{call}");
    } else {
        let _ = writeln!(
            w,
            "    return detail::with_response([&](roomchat_response_meta **meta) {{"
        );
        let _ = writeln!(w, "      {ret}send_{}({});", op.name, pass("meta"));
        let _ = writeln!(w, "    }});");
    }
    let _ = writeln!(w, "  }}");
}

fn hpp_shaped_send(w: &mut String, s: &Shaped) {
    let op = s.op;
    let result = s.cpp_result();
    let (decl, _) = cpp_shaped_args(s, false);
    let mut params = vec!["roomchat_response_meta **meta".to_owned()];
    params.extend(decl);
    let _ = writeln!(
        w,
        "{}",
        cpp_wrapped(
            "  ",
            &format!("{result} send_{}", op.name),
            &params,
            " const {"
        )
    );
    let mut c_args = vec!["client()".to_owned()];
    for p in &s.positional {
        let name = snake(&p.name);
        let _ = writeln!(w, "    detail::CString {name}_c({name}, {name:?});");
        c_args.push(format!("{name}_c.get()"));
    }
    for arg in &s.args {
        let name = &arg.name;
        match &arg.kind {
            ArgKind::Text { required: true } | ArgKind::Picked { .. } => {
                let _ = writeln!(w, "    detail::CString {name}_c({name}, {name:?});");
                c_args.push(format!("{name}_c.get()"));
            }
            ArgKind::Text { required: false } | ArgKind::Extra => {
                let _ = writeln!(w, "    detail::OptionalCString {name}_c({name}, {name:?});");
                c_args.push(format!("{name}_c.get()"));
            }
            ArgKind::Integer { .. } => c_args.push(name.clone()),
            ArgKind::Enum { .. } => c_args.push(format!("static_cast<std::uint32_t>({name})")),
        }
    }
    match &s.answer {
        Answer::Record(record) => {
            let _ = writeln!(w, "    roomchat_{record} *raw = nullptr;");
            c_args.push("&raw".into());
        }
        Answer::Json => {
            let _ = writeln!(w, "    char *raw = nullptr;");
            c_args.push("&raw".into());
        }
        Answer::Dropped => {}
    }
    c_args.push("meta".into());
    c_args.push("e".into());
    let _ = writeln!(w, "    detail::check_call([&](roomchat_error **e) {{");
    let _ = writeln!(
        w,
        "{}",
        cpp_wrapped(
            "      ",
            &format!("return roomchat_client_{}_with_response", op.name),
            &c_args,
            ";"
        )
    );
    let _ = writeln!(w, "    }});");
    match &s.answer {
        Answer::Record(record) => {
            let _ = writeln!(
                w,
                "    detail::OwnedBy<roomchat_{record}, roomchat_{record}_free> owned(raw);"
            );
            let _ = writeln!(w, "    return detail::to_{record}(raw);");
        }
        Answer::Json => {
            let _ = writeln!(w, "    return detail::take_string(raw);");
        }
        Answer::Dropped => {}
    }
    let _ = writeln!(w, "  }}");
}

#[cfg(test)]
mod tests {
    use super::*;

    /// C's enums are the declaration's (`[operation.enums]`): its variants,
    /// values and what a value carries, in C's words where `[operation.c.enums]`
    /// gives them; C's table adds to an enum of the declaration, never one of
    /// its own, nor a variant the declaration does not have.
    #[test]
    fn c_enums_are_the_declarations_in_cs_words() {
        let text = include_str!("../../api/operations.toml");
        let d = crate::declaration::load(text).unwrap();
        let op = |name: &str| d.operations.iter().find(|op| op.name == name).unwrap();
        let shapes = |name: &str| enum_shapes(op(name), &shape_of(op(name)).unwrap().unwrap(), &d);
        let role = &shapes("create_user").unwrap()["role"];
        let declared = &op("create_user").enums["role"];
        assert_eq!(role.param.as_deref(), Some("role"));
        let of = |v: &Variant| (v.name.clone(), v.value.clone(), v.needs.clone());
        assert_eq!(
            role.variants.iter().map(of).collect::<Vec<_>>(),
            declared
                .variants
                .iter()
                .map(|v| (v.name.clone(), v.value.clone(), v.carries.clone()))
                .collect::<Vec<_>>()
        );
        assert_eq!(role.variants[0].doc, "A regular user.");
        // An enum named only: no variants here (it is defined once), the definition's param.
        let by = &shapes("reactivate_user").unwrap()["by"];
        assert!(by.variants.is_empty() && by.param.is_none() && by.picks.as_deref() == Some("id"));
        // A picked param is the `picks` argument's, not one a variant needs.
        let by = &shapes("deactivate_user").unwrap()["by"];
        assert!(by.variants.iter().all(|v| v.needs.is_none()));

        let with_c = |c_table: &str| {
            let changed = text.replace(
                "[operation.c.enums.form]\n",
                &format!("[operation.c.enums.form]\n{c_table}\n"),
            );
            let d = crate::declaration::load(&changed).unwrap();
            shaped_ops(&d).map(|_| ()).err().unwrap_or_default()
        };
        assert!(
            with_c("missing = { Chatroom = \"no such variant\" }")
                .contains("[operation.c.enums.form]: no variant Chatroom"),
            "{}",
            with_c("missing = { Chatroom = \"no such variant\" }")
        );
        let own = text.replace(
            "[operation.c.enums.form]\n",
            "[operation.c.enums.shape]\ndoc = \"C's own.\"\n\n[operation.c.enums.form]\n",
        );
        let d = crate::declaration::load(&own).unwrap();
        let refused = shaped_ops(&d).map(|_| ()).err().unwrap_or_default();
        assert!(
            refused.contains("[operation.c.enums.shape] is no [operation.enums.shape]"),
            "{refused}"
        );
    }
}
