//! The C and C++ surface of the generated operations (see CONTRIBUTING.md),
//! made from the declarations:
//!
//! - `ffi/src/generated.rs`: the C ABI, as Rust `extern "C"` functions that
//!   cbindgen turns into `include/roomchat.h`: per operation
//!   `roomchat_client_<name>` and `_with_response`, a params handle
//!   (`roomchat_<name>_params_new/_free/_set_<param>`) when it has named
//!   params; per record an opaque handle with `_free`, an accessor per field and
//!   `_extra_json`. They call core's typed methods and reuse the hand-written
//!   helpers of `ffi/src/glue.rs` and of the older functions (the panic
//!   boundary `guard`, `respond`, `write_meta`, …).
//! - `include/roomchat_operations.hpp`: the C++ records, the params structs and
//!   the methods `roomchat::Client` inherits (roomchat.hpp includes it).

use std::fmt::Write;

use crate::declaration::{snake, Declarations, Field, Operation, Param, Record};
use crate::text::wrap;
use crate::GENERATED;

pub const RUST_PATH: &str = "ffi/src/generated.rs";
pub const HPP_PATH: &str = "include/roomchat_operations.hpp";

/// Every file this generator writes: (path from the repository's root, contents).
pub fn files(d: &Declarations) -> Result<Vec<(&'static str, String)>, String> {
    check(d)?;
    Ok(vec![
        (RUST_PATH, crate::rustfmt(&rust(d))?),
        (HPP_PATH, hpp(d)),
    ])
}

fn generated_ops(d: &Declarations) -> impl Iterator<Item = &Operation> {
    d.operations.iter().filter(|op| op.is_generated())
}

fn has_params(op: &Operation) -> bool {
    !op.named_params().is_empty() || op.extra
}

/// What this generator cannot express yet, refused rather than written wrong.
fn check(d: &Declarations) -> Result<(), String> {
    for op in generated_ops(d) {
        let at = |what: &str| format!("the C generator, operation {:?}: {what}", op.name);
        if op.extra {
            return Err(at("extra = true has no C form yet"));
        }
        if op.named_params().iter().any(|p| p.required) {
            return Err(at("a required named param has no C form yet"));
        }
    }
    for record in &d.records {
        for field in &record.fields {
            let at = format!(
                "the C generator, record {:?}, field {:?}",
                record.name, field.name
            );
            if field.is_list() {
                return Err(format!("{at}: lists of records have no C form yet"));
            }
            if matches!(field.snake().as_str(), "free" | "extra_json") {
                return Err(format!("{at}: its C accessor would be taken"));
            }
        }
    }
    Ok(())
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

/// `BotAnswer` → `bot_answer`: the record's C name after `roomchat_`.
fn c_record(name: &str) -> String {
    snake(name)
}

fn doc(w: &mut String, indent: &str, marker: &str, text: &str) {
    for line in wrap(text, 96 - indent.len()) {
        let _ = writeln!(w, "{indent}{marker} {line}");
    }
}

fn retry_text(op: &Operation, never: &str) -> String {
    match op.retry.as_str() {
        "repeatable" => {
            "Repeatable: sent again after a 5xx, a timeout or a lost answer, as a GET is.".into()
        }
        _ => format!(
            "Never sent again after a 5xx, a timeout or a lost answer (a repeat could do it twice) unless {never}."
        ),
    }
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

fn rust(d: &Declarations) -> String {
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
    let mut core_types: Vec<String> = d.records.iter().map(|r| r.name.clone()).collect();
    core_types.extend(
        generated_ops(d)
            .filter(|op| has_params(op))
            .map(|op| op.type_name()),
    );
    core_types.sort();
    let any_json_param = generated_ops(d)
        .flat_map(|op| op.named_params())
        .any(|p| p.kind == "json");
    let any_params = generated_ops(d).any(has_params);
    let kinds: Vec<&str> = d
        .records
        .iter()
        .flat_map(|r| r.fields.iter())
        .map(|f| {
            if f.record().is_some() {
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
    ] {
        if kinds.contains(&kind) && !glue.contains(&helper) {
            glue.push(helper);
        }
    }
    if any_params {
        glue.extend(["new_params", "params_arg", "set_param", "Params"]);
        if generated_ops(d)
            .flat_map(|op| op.named_params())
            .any(|p| matches!(p.kind.as_str(), "string" | "id"))
        {
            glue.push("text_value");
        }
        if any_json_param {
            glue.push("json_value");
        }
    }
    glue.sort_unstable();
    let _ = writeln!(w, "use std::ffi::{{c_char, CString}};");
    let _ = writeln!(w, "use std::ptr;");
    w.push('\n');
    let _ = writeln!(w, "use roomchat::{{{}}};", core_types.join(", "));
    w.push('\n');
    let _ = writeln!(
        w,
        "use crate::client::{{borrow_arg, free_box, out_arg, roomchat_client, text_arg, write_out}};"
    );
    let _ = writeln!(
        w,
        "use crate::error::{{guard, roomchat_error, roomchat_result}};"
    );
    let _ = writeln!(w, "use crate::glue::{{{}}};", glue.join(", "));
    let _ = writeln!(
        w,
        "use crate::view::{{respond, roomchat_response_meta, write_meta}};"
    );
    for record in records_in_order(d) {
        rust_record(w, record);
    }
    for op in generated_ops(d) {
        if has_params(op) {
            rust_params(w, op);
        }
        rust_operation(w, op);
    }
    out
}

/// The Rust type a record's handle keeps a field in.
fn kept_type(field: &Field) -> String {
    match (field.record(), field.kind.as_str()) {
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
    let _ = writeln!(w, "impl From<{}> for {ty} {{", record.name);
    let _ = writeln!(w, "    fn from(record: {}) -> Self {{", record.name);
    let _ = writeln!(w, "        {ty} {{");
    for field in &record.fields {
        let name = field.snake();
        let value = match (field.record(), field.kind.as_str()) {
            (Some(inner), _) => format!(
                "record.{name}.map(|inner| Box::new(roomchat_{}::from(inner)))",
                c_record(inner)
            ),
            (None, "string") => format!("text(record.{name})"),
            (None, "json") => format!("json_text(record.{name})"),
            _ => format!("record.{name}"),
        };
        let _ = writeln!(w, "            {name}: {value},");
    }
    let _ = writeln!(w, "            extra_json: extra_json(&record.extra),");
    let _ = writeln!(w, "        }}");
    let _ = writeln!(w, "    }}");
    let _ = writeln!(w, "}}");

    for field in &record.fields {
        let name = field.snake();
        let wire = format!("`{}`: {}", field.name, field.doc);
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
    for p in op.named_params() {
        let name = snake(&p.name);
        let (c_type, takes, value) = match p.kind.as_str() {
            "integer" => ("u64", "", "|| Ok(value)".to_owned()),
            "boolean" => ("bool", "", "|| Ok(value)".to_owned()),
            "json" => (
                "*const c_char",
                ": JSON text, NUL-terminated UTF-8, copied",
                format!("|| json_value(value, {name:?})"),
            ),
            _ => (
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
        let _ = writeln!(
            w,
            "    set_param(params, |h| &mut h.params, {name:?}, {value}, |p, v| p.{name} = Some(v))"
        );
        let _ = writeln!(w, "}}");
    }
}

fn rust_operation(w: &mut String, op: &Operation) {
    let call = format!("roomchat_client_{}", op.name);
    let record = c_record(&op.result);
    let out = format!("{record}_out");
    let positional: Vec<String> = op
        .positional_params()
        .iter()
        .map(|p| snake(&p.name))
        .collect();
    let params_ty = format!("roomchat_{}_params", op.name);
    let mut args = vec!["client: *const roomchat_client".to_owned()];
    args.extend(positional.iter().map(|p| format!("{p}: *const c_char")));
    if has_params(op) {
        args.push(format!("params: *const {params_ty}"));
    }
    args.push(format!("{out}: *mut *mut roomchat_{record}"));
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
    for p in &positional {
        text.push_str(&format!(
            " `{p}` (NUL-terminated UTF-8) is the path's `{{{}}}`.",
            op.positional_params()
                .iter()
                .find(|d| snake(&d.name) == *p)
                .map_or("", |d| d.name.as_str())
        ));
    }
    if has_params(op) {
        text.push_str(
            " `params` (NULL: none set) stays the caller's and may be freed right after the call; \
             a value outside its declared limits gives `ROOMCHAT_RESULT_VALIDATION` and nothing \
             is sent.",
        );
    }
    text.push_str(&format!(
        " On success writes the answer to `*{out}` (owned by the caller: free with \
         `roomchat_{record}_free`); on failure writes nothing there, and the details to \
         `*err_out` when it is not NULL (free with `roomchat_error_free`)."
    ));
    w.push('\n');
    doc(w, "", "///", &text);
    let _ = writeln!(w, "#[no_mangle]");
    if args.len() + 2 > 7 {
        let _ = writeln!(w, "#[allow(clippy::too_many_arguments)]");
    }
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
    if args.len() + 2 > 7 {
        let _ = writeln!(w, "#[allow(clippy::too_many_arguments)]");
    }
    let _ = writeln!(
        w,
        "pub extern \"C\" fn {call}_with_response({}, meta_out: *mut *mut roomchat_response_meta, err_out: *mut *mut roomchat_error) -> roomchat_result {{",
        args.join(", ")
    );
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
    let _ = writeln!(
        w,
        "        write_out({out}, roomchat_{record}::from(answer));"
    );
    let _ = writeln!(w, "        write_meta(meta_out, meta);");
    let _ = writeln!(w, "        Ok(())");
    let _ = writeln!(w, "    }})");
    let _ = writeln!(w, "}}");
}

// ---- include/roomchat_operations.hpp ----------------------------------------------------

fn hpp(d: &Declarations) -> String {
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
    for record in records_in_order(d) {
        hpp_record(w, record);
    }
    for op in generated_ops(d).filter(|op| has_params(op)) {
        hpp_params(w, op);
    }
    w.push_str(
        "\nnamespace detail {\n\n\
         // The methods of the generated operations, which Client (roomchat.hpp) inherits.\n\
         template <typename Derived>\n\
         class Operations {\n\
         \x20public:\n",
    );
    let mut first = true;
    for op in generated_ops(d) {
        if !first {
            w.push('\n');
        }
        first = false;
        hpp_method(w, op);
    }
    w.push_str(
        "\n protected:\n\
         \x20 Operations() noexcept = default;\n\
         \n\
         \x20private:\n\
         \x20 roomchat_client *client() const noexcept { return static_cast<const Derived *>(this)->get(); }\n",
    );
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
        let accessor = format!("roomchat_{c}_{}(raw)", field.snake());
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
        let absent = if field.record().is_some() || field.kind != "integer" {
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
        let _ = writeln!(
            w,
            "  const {} &{}() const noexcept {{ return {}_; }}",
            cpp_field(field, "").0,
            field.snake(),
            field.snake()
        );
    }
    w.push('\n');
    let _ = writeln!(
        w,
        "  // The fields the service sent that this record does not name, as a JSON object's text (\"{{}}\" when none)."
    );
    let _ = writeln!(
        w,
        "  const std::string &extra_json() const noexcept {{ return extra_json_; }}"
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
    match p.kind.as_str() {
        "integer" => "std::optional<std::uint64_t>",
        "boolean" => "std::optional<bool>",
        _ => "std::optional<std::string>",
    }
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
    for p in op.named_params() {
        let json = if p.kind == "json" { ", JSON text" } else { "" };
        doc(w, "  ", "//", &format!("`{}`{}{json}.", p.name, limits(p)));
        let _ = writeln!(w, "  {} {};", cpp_param_type(p), snake(&p.name));
    }
    let _ = writeln!(w, "}};");
}

/// The C++ method's parameters (declaration) and the names passed on.
fn cpp_args(op: &Operation, defaults: bool) -> (Vec<String>, Vec<String>) {
    let mut decl = Vec::new();
    let mut names = Vec::new();
    for p in op.positional_params() {
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

fn hpp_method(w: &mut String, op: &Operation) {
    let result = &op.result;
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

fn hpp_send(w: &mut String, op: &Operation) {
    let result = &op.result;
    let record = c_record(result);
    let (decl, _) = cpp_args(op, false);
    let mut params = vec!["roomchat_response_meta **meta".to_owned()];
    params.extend(decl);
    let _ = writeln!(
        w,
        "  {result} send_{}({}) const {{",
        op.name,
        params.join(", ")
    );
    let mut c_args = vec!["client()".to_owned()];
    for p in op.positional_params() {
        let name = snake(&p.name);
        let _ = writeln!(w, "    detail::CString {name}_c({name}, {name:?});");
        c_args.push(format!("{name}_c.get()"));
    }
    if has_params(op) {
        let ty = format!("roomchat_{}_params", op.name);
        let _ = writeln!(w, "    {ty} *raw_params = nullptr;");
        let _ = writeln!(w, "    detail::check({ty}_new(&raw_params));");
        let _ = writeln!(
            w,
            "    detail::OwnedBy<{ty}, {ty}_free> owned_params(raw_params);"
        );
        for p in op.named_params() {
            let name = snake(&p.name);
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
    let _ = writeln!(w, "    roomchat_{record} *raw = nullptr;");
    c_args.push("&raw".into());
    c_args.push("meta".into());
    c_args.push("e".into());
    let _ = writeln!(w, "    detail::check_call([&](roomchat_error **e) {{");
    let _ = writeln!(
        w,
        "      return roomchat_client_{}_with_response({});",
        op.name,
        c_args.join(", ")
    );
    let _ = writeln!(w, "    }});");
    let _ = writeln!(
        w,
        "    detail::OwnedBy<roomchat_{record}, roomchat_{record}_free> owned(raw);"
    );
    let _ = writeln!(w, "    return {result}(raw);");
    let _ = writeln!(w, "  }}");
}
