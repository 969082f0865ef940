//! The JVM package's generated sources (bindings/jvm): a method per operation
//! in `RoomchatOperations` (blocking) and `RoomchatAsync` (futures), with its
//! `...WithResponse` twin (the record beside the answer's meta), an
//! immutable params class with a builder per operation, and an immutable
//! record per answer record (`[[record]]` and `[[model]]`) that keeps the
//! fields it does not name in `extra()`. Every call goes through the C ABI's
//! calls by an operation's name (`roomchat_client_call_operation`), so the
//! params are a JSON object by the wire names and the answer the record's JSON.

use std::collections::BTreeSet;

use crate::declaration::{
    camel, pascal, Declarations, Field, Location, Operation, Pages, Param, ParamKind,
};
use crate::text::line;
use crate::GENERATED;

/// Where the generated Java sources go.
pub const DIR: &str = "bindings/jvm/src/main/java/dev/roomchat";

const RESERVED: &[&str] = &[
    "abstract",
    "assert",
    "boolean",
    "break",
    "byte",
    "case",
    "catch",
    "char",
    "class",
    "const",
    "continue",
    "default",
    "do",
    "double",
    "else",
    "enum",
    "extends",
    "final",
    "finally",
    "float",
    "for",
    "goto",
    "if",
    "implements",
    "import",
    "instanceof",
    "int",
    "interface",
    "long",
    "native",
    "new",
    "package",
    "private",
    "protected",
    "public",
    "return",
    "short",
    "static",
    "strictfp",
    "super",
    "switch",
    "synchronized",
    "this",
    "throw",
    "throws",
    "transient",
    "try",
    "void",
    "volatile",
    "while",
    "true",
    "false",
    "null",
    "record",
    "var",
    "yield",
    "extra",
    "toString",
    "hashCode",
    "equals",
    "getClass",
    "builder",
    "build",
    "put",
    "toWire",
    "toBuilder",
    "fromJson",
    "wait",
    "notify",
    "notifyAll",
    "clone",
    "finalize",
];

/// Every generated file: (path, contents).
pub fn files(d: &Declarations) -> Result<Vec<(&'static str, String)>, String> {
    let mut files = Vec::new();
    let path =
        |name: &str| -> &'static str { Box::leak(format!("{DIR}/{name}.java").into_boxed_str()) };
    files.push((path("RoomchatOperations"), operations(d, false)?));
    files.push((path("RoomchatAsync"), operations(d, true)?));
    for op in &d.operations {
        files.push((path(&params_class(op)), params(op)?));
    }
    for r in &d.records {
        files.push((path(&r.name), record(&r.name, &r.doc, &r.fields)));
    }
    for m in &d.models {
        files.push((path(&m.name), record(&m.name, &m.doc, &m.fields)));
    }
    Ok(files)
}

fn header(w: &mut String) {
    line(w, &format!("// {GENERATED}"));
    line(w, "package dev.roomchat;");
    line(w, "");
}

/// A Java identifier for a wire name or a snake_case name.
fn ident(name: &str) -> String {
    let base = if name.contains('_') || name.chars().all(|c| !c.is_ascii_uppercase()) {
        camel(name.trim_start_matches('_'))
    } else {
        let mut c = name.chars();
        c.next()
            .map(|f| f.to_ascii_lowercase().to_string() + c.as_str())
            .unwrap_or_default()
    };
    if RESERVED.contains(&base.as_str()) {
        format!("{base}Value")
    } else {
        base
    }
}

/// A field's name in Java: its snake_case name (`_id` is `id`) made camelCase.
fn field_ident(f: &Field) -> String {
    let name = camel(&f.snake());
    if RESERVED.contains(&name.as_str()) {
        format!("{name}Value")
    } else {
        name
    }
}

/// Javadoc text: HTML escaped, `code` as `<code>`.
fn jdoc(text: &str) -> String {
    let escaped = text
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace("*/", "*&#47;")
        .replace('@', "&#64;");
    let mut out = String::new();
    let mut open = false;
    for c in escaped.chars() {
        if c == '`' {
            out.push_str(if open { "</code>" } else { "<code>" });
            open = !open;
        } else {
            out.push(c);
        }
    }
    if open {
        out.push_str("</code>");
    }
    out
}

fn doc(w: &mut String, indent: &str, paragraphs: &[String]) {
    line(w, &format!("{indent}/**"));
    let mut first = true;
    for p in paragraphs.iter().filter(|p| !p.trim().is_empty()) {
        if !first {
            line(w, &format!("{indent} *"));
            line(w, &format!("{indent} * <p>"));
        }
        first = false;
        for l in crate::text::wrap(&jdoc(p), 90) {
            line(w, format!("{indent} * {l}").trim_end());
        }
    }
    line(w, &format!("{indent} */"));
}

fn params_class(op: &Operation) -> String {
    format!("{}Params", op.type_name())
}

fn method(op: &Operation) -> String {
    camel(&op.name)
}

/// The Java type a record's field holds.
fn field_type(f: &Field) -> String {
    if let Some(record) = f.record() {
        return if f.is_list() {
            format!("java.util.List<{record}>")
        } else {
            record.to_string()
        };
    }
    match f.kind.as_str() {
        "string" | "id" => "String".into(),
        "boolean" => "Boolean".into(),
        "integer" | "unsigned" | "u32" | "epoch_seconds" => "Long".into(),
        "number" => "Double".into(),
        _ => "Object".into(),
    }
}

/// How `fromJson` reads a field from the map `m`.
fn field_read(f: &Field) -> String {
    let name = &f.name;
    if let Some(record) = f.record() {
        return if f.is_list() {
            format!("Records.list(m, \"{name}\", {record}::fromJson)")
        } else {
            format!("Records.record(m, \"{name}\", {record}::fromJson)")
        };
    }
    match f.kind.as_str() {
        "string" | "id" => format!("Records.string(m, \"{name}\")"),
        "boolean" => format!("Records.bool(m, \"{name}\")"),
        "integer" | "unsigned" | "u32" | "epoch_seconds" => {
            format!("Records.integer(m, \"{name}\")")
        }
        "number" => format!("Records.number(m, \"{name}\")"),
        _ => format!("Records.any(m, \"{name}\")"),
    }
}

fn record(name: &str, record_doc: &str, fields: &[Field]) -> String {
    let mut w = String::new();
    header(&mut w);
    let mut paragraphs = vec![record_doc.to_string()];
    paragraphs.push(
        "Immutable; a field the answer did not carry is null. The fields it does not name are in `extra()`."
            .into(),
    );
    line(&mut w, "/**");
    for (i, p) in paragraphs.iter().enumerate() {
        if i > 0 {
            line(&mut w, " *");
            line(&mut w, " * <p>");
        }
        for l in crate::text::wrap(&jdoc(p), 90) {
            line(&mut w, format!(" * {l}").trim_end());
        }
    }
    line(&mut w, " *");
    for f in fields {
        let text = jdoc(&f.doc.replace('\n', " "));
        line(&mut w, &format!(" * @param {} {}", field_ident(f), text));
    }
    line(
        &mut w,
        " * @param extra every other field the service sent, by its wire name",
    );
    line(&mut w, " */");
    let mut components: Vec<String> = fields
        .iter()
        .map(|f| format!("{} {}", field_type(f), field_ident(f)))
        .collect();
    components.push("java.util.Map<String, Object> extra".into());
    line(&mut w, &format!("public record {name}("));
    for (i, c) in components.iter().enumerate() {
        let comma = if i + 1 < components.len() { "," } else { ") {" };
        line(&mut w, &format!("    {c}{comma}"));
    }
    let known: Vec<String> = fields.iter().map(|f| format!("\"{}\"", f.name)).collect();
    line(
        &mut w,
        &format!(
            "  private static final java.util.Set<String> KNOWN = java.util.Set.of({});",
            known.join(", ")
        ),
    );
    line(&mut w, "");
    line(
        &mut w,
        "  /** The record of a decoded JSON object (the service's field names). */",
    );
    line(&mut w, &format!("  static {name} fromJson(Object json) {{"));
    line(
        &mut w,
        &format!("    java.util.Map<String, Object> m = Records.object(json, \"{name}\");"),
    );
    line(&mut w, &format!("    return new {name}("));
    for f in fields {
        line(&mut w, &format!("        {},", field_read(f)));
    }
    line(&mut w, "        Records.extra(m, KNOWN));");
    line(&mut w, "  }");
    if fields.iter().any(|f| f.secret) {
        line(&mut w, "");
        line(
            &mut w,
            "  /** Its fields, with the secret ones (tokens, webhook URLs) shown as REDACTED. */",
        );
        line(&mut w, "  @Override");
        line(&mut w, "  public String toString() {");
        let mut parts = Vec::new();
        for f in fields {
            let id = field_ident(f);
            if f.secret {
                parts.push(format!(
                    "\"{id}=\" + ({id} == null ? \"null\" : \"REDACTED\")"
                ));
            } else {
                parts.push(format!("\"{id}=\" + {id}"));
            }
        }
        parts.push("\"extra=\" + extra.keySet()".into());
        line(
            &mut w,
            &format!(
                "    return \"{name}[\" + {} + \"]\";",
                parts.join(" + \", \" + ")
            ),
        );
        line(&mut w, "  }");
    }
    line(&mut w, "}");
    w
}

/// The params a params class takes, and how each is set.
struct Setter {
    java: String,
    wire: String,
    ty: &'static str,
    doc: String,
    /// Put inside the `extra` object (a hand-written builder's field).
    in_extra: bool,
}

fn param_type(kind: ParamKind) -> &'static str {
    match kind {
        ParamKind::String | ParamKind::Id => "String",
        ParamKind::Integer => "long",
        ParamKind::Boolean | ParamKind::Switch => "boolean",
        ParamKind::Json => "Object",
    }
}

fn param_doc(p: &Param) -> String {
    let mut words = vec![format!("`{}`", p.name)];
    words.push(format!("({}", p.location.as_str()));
    let mut notes = Vec::new();
    if p.required {
        notes.push("required".to_string());
    }
    if p.kind == ParamKind::Switch {
        notes.push("sent as \"on\"/\"off\"".into());
    }
    if p.kind == ParamKind::Json {
        notes.push("any JSON value: a Map, List, String, Number, Boolean or null".into());
    }
    notes.extend(p.bounds());
    if !p.choices.is_empty() {
        let choices: Vec<String> = p.choices.iter().map(|c| format!("\"{c}\"")).collect();
        notes.push(format!("one of {}", choices.join(", ")));
    }
    if let Some(default) = p.default_text() {
        notes.push(format!("the service's default: {default}"));
    }
    let mut text = words.join(" ");
    for n in notes {
        text.push_str(", ");
        text.push_str(&n);
    }
    text.push_str(").");
    text
}

fn setters(op: &Operation) -> Vec<Setter> {
    let mut out = Vec::new();
    let hand = op.is_hand_written();
    let json_params = op.json_params.clone().unwrap_or_default();
    for p in &op.params {
        if hand && !json_params.contains(&format!("`{}`", p.name)) {
            continue;
        }
        out.push(Setter {
            java: ident(&p.name),
            wire: p.name.clone(),
            ty: param_type(p.kind),
            doc: param_doc(p),
            in_extra: false,
        });
    }
    if hand {
        for choice in op.enums.values() {
            if let Some(param) = &choice.param {
                let values: Vec<String> = choice
                    .variants
                    .iter()
                    .filter_map(|v| v.value.as_ref().map(|x| format!("\"{x}\" ({})", v.doc)))
                    .collect();
                out.push(Setter {
                    java: ident(param),
                    wire: param.clone(),
                    ty: "String",
                    doc: format!("`{param}`: {}", values.join("; ")),
                    in_extra: false,
                });
            }
        }
        for f in &op.extra_fields {
            out.push(Setter {
                java: ident(&f.name),
                wire: f.name.clone(),
                ty: if f.kind.param_kind() == ParamKind::Json {
                    "Object"
                } else {
                    "String"
                },
                doc: format!("`{}`, sent in `extra` as given.", f.name),
                in_extra: true,
            });
        }
    }
    out
}

fn params(op: &Operation) -> Result<String, String> {
    let class = params_class(op);
    let mut w = String::new();
    header(&mut w);
    doc(
        &mut w,
        "",
        &[
            format!("The params of `{}`: {}", method(op), op.summary),
            "Immutable; made with `builder()`. Core checks them (required, bounds, choices) before anything is sent: a refused one is a `ValidationException`."
                .into(),
        ],
    );
    line(&mut w, &format!("public final class {class} {{"));
    line(
        &mut w,
        "  private final java.util.Map<String, Object> wire;",
    );
    line(&mut w, "");
    line(
        &mut w,
        &format!("  private {class}(java.util.Map<String, Object> wire) {{"),
    );
    line(
        &mut w,
        "    this.wire = java.util.Collections.unmodifiableMap(wire);",
    );
    line(&mut w, "  }");
    line(&mut w, "");
    line(&mut w, "  /** A builder with nothing set. */");
    line(&mut w, "  public static Builder builder() {");
    line(
        &mut w,
        "    return new Builder(new java.util.LinkedHashMap<>());",
    );
    line(&mut w, "  }");
    line(&mut w, "");
    line(&mut w, "  /** A builder starting from these params. */");
    line(&mut w, "  public Builder toBuilder() {");
    line(
        &mut w,
        "    java.util.LinkedHashMap<String, Object> copy = new java.util.LinkedHashMap<>(wire);",
    );
    line(
        &mut w,
        "    if (copy.get(\"extra\") instanceof java.util.Map) {",
    );
    line(&mut w, "      copy.put(\"extra\", new java.util.LinkedHashMap<>((java.util.Map<?, ?>) copy.get(\"extra\")));");
    line(&mut w, "    }");
    line(&mut w, "    return new Builder(copy);");
    line(&mut w, "  }");
    line(&mut w, "");
    line(
        &mut w,
        "  /** The params as JSON by their wire names (the conformance vectors' form). */",
    );
    line(&mut w, "  public java.util.Map<String, Object> toWire() {");
    line(&mut w, "    return wire;");
    line(&mut w, "  }");
    line(&mut w, "");
    line(
        &mut w,
        "  /** The names of the params set; never their values (a token may be one). */",
    );
    line(&mut w, "  @Override");
    line(&mut w, "  public String toString() {");
    line(&mut w, &format!("    return \"{class}\" + wire.keySet();"));
    line(&mut w, "  }");
    line(&mut w, "");
    line(&mut w, &format!("  /** Builds {{@link {class}}}. */"));
    line(&mut w, "  public static final class Builder {");
    line(
        &mut w,
        "    private final java.util.LinkedHashMap<String, Object> wire;",
    );
    line(&mut w, "");
    line(
        &mut w,
        "    private Builder(java.util.LinkedHashMap<String, Object> wire) {",
    );
    line(&mut w, "      this.wire = wire;");
    line(&mut w, "    }");
    let mut seen = BTreeSet::new();
    for s in setters(op) {
        if !seen.insert(s.java.clone()) {
            return Err(format!("{}: two params are `{}` in Java", op.name, s.java));
        }
        line(&mut w, "");
        doc(&mut w, "    ", std::slice::from_ref(&s.doc));
        line(
            &mut w,
            &format!("    public Builder {}({} value) {{", s.java, s.ty),
        );
        if s.in_extra {
            line(&mut w, &format!("      return put(\"{}\", value);", s.wire));
        } else {
            line(&mut w, &format!("      wire.put(\"{}\", value);", s.wire));
            line(&mut w, "      return this;");
        }
        line(&mut w, "    }");
    }
    let hand = op.is_hand_written();
    if op.extra {
        line(&mut w, "");
        let (what, body) = if hand {
            (
                "A field the declaration does not type, sent unchanged inside `extra`.",
                "      @SuppressWarnings(\"unchecked\")\n      java.util.Map<String, Object> extra = (java.util.Map<String, Object>) wire.computeIfAbsent(\"extra\", k -> new java.util.LinkedHashMap<String, Object>());\n      extra.put(name, value);\n      return this;",
            )
        } else {
            (
                "A body field the declaration does not type, sent unchanged.",
                "      wire.put(name, value);\n      return this;",
            )
        };
        doc(&mut w, "    ", &[what.into()]);
        line(
            &mut w,
            "    public Builder put(String name, Object value) {",
        );
        line(&mut w, body);
        line(&mut w, "    }");
    }
    line(&mut w, "");
    line(&mut w, "    /** The params. */");
    line(&mut w, &format!("    public {class} build() {{"));
    line(
        &mut w,
        &format!("      return new {class}(new java.util.LinkedHashMap<>(wire));"),
    );
    line(&mut w, "    }");
    line(&mut w, "  }");
    line(&mut w, "}");
    Ok(w)
}

/// The Java type of an operation's answer and the decoder of its JSON.
fn result(op: &Operation) -> (String, String) {
    let record = op.result_record();
    let record = record
        .strip_prefix("Vec<")
        .and_then(|r| r.strip_suffix('>'))
        .unwrap_or(record);
    let list = op.result_is_list() || op.result.starts_with("Vec<");
    if list {
        (
            format!("java.util.List<{record}>"),
            format!("json -> Records.list(json, {record}::fromJson)"),
        )
    } else {
        (record.to_string(), format!("{record}::fromJson"))
    }
}

/// A listing's item record and the page's field holding them.
fn paging<'a>(op: &Operation, d: &'a Declarations) -> Result<Option<(String, &'a Field)>, String> {
    if op.pages == Pages::None {
        return Ok(None);
    }
    let page = op.result_record();
    let fields = d
        .records
        .iter()
        .find(|r| r.name == page)
        .map(|r| &r.fields)
        .or_else(|| d.models.iter().find(|m| m.name == page).map(|m| &m.fields))
        .ok_or_else(|| format!("{}: no record {page}", op.name))?;
    let list = fields
        .iter()
        .find(|f| f.is_list() && f.record().is_some())
        .ok_or_else(|| format!("{}: its page {page} has no list of records", op.name))?;
    Ok(Some((list.record().unwrap_or_default().to_string(), list)))
}

fn argument_params(op: &Operation) -> Vec<&Param> {
    // The required params one by one, only when the params class sets each
    // of them as declared (a hand-written builder's differ).
    if op.is_hand_written() {
        return Vec::new();
    }
    op.argument_params()
}

fn operations(d: &Declarations, async_: bool) -> Result<String, String> {
    let mut w = String::new();
    header(&mut w);
    let class = if async_ {
        "RoomchatAsync"
    } else {
        "RoomchatOperations"
    };
    if async_ {
        doc(
            &mut w,
            "",
            &[
                "The operations of a `RoomchatClient` as `CompletableFuture`s (`client.async()`). A future completes on one of the client's call threads; `cancel(true)` cancels its call through the C cancel token (a create or a post on the wire may still have happened: nothing is sent again). The future fails with the `RoomchatException` a blocking call throws."
                    .into(),
            ],
        );
        line(&mut w, &format!("public final class {class} {{"));
        line(&mut w, "  private final RoomchatClient client;");
        line(&mut w, "");
        line(&mut w, &format!("  {class}(RoomchatClient client) {{"));
        line(&mut w, "    this.client = client;");
        line(&mut w, "  }");
    } else {
        doc(
            &mut w,
            "",
            &["Every operation of the service, one method each (`RoomchatClient` is the one implementation). A method blocks until the answer, or throws a `RoomchatException` of its kind.".into()],
        );
        line(&mut w, &format!("public abstract class {class} {{"));
        line(&mut w, &format!("  {class}() {{}}"));
        line(&mut w, "");
        line(&mut w, "  abstract <T> T invoke(String operation, java.util.Map<String, Object> params, CallOptions options, java.util.function.Function<Object, T> decode);");
        line(&mut w, "");
        line(&mut w, "  abstract <T> WithResponse<T> invokeWithResponse(String operation, java.util.Map<String, Object> params, CallOptions options, java.util.function.Function<Object, T> decode);");
        line(&mut w, "");
        line(&mut w, "  abstract <P, T> Listing<T> listing(String operation, java.util.Map<String, Object> params, CallOptions options, java.util.function.Function<Object, P> decodePage, java.util.function.Function<P, java.util.List<T>> items);");
    }
    for op in &d.operations {
        let (ty, decode) = result(op);
        let ret = if async_ {
            format!("java.util.concurrent.CompletableFuture<{ty}>")
        } else {
            ty.clone()
        };
        let name = method(op);
        let params = params_class(op);
        let mut paragraphs = vec![op.summary.clone()];
        paragraphs.push(format!(
            "`{} {}` ({}).",
            op.method,
            op.path,
            op.retry.as_str()
        ));
        for e in &op.errors {
            paragraphs.push(format!("Throws the `{}` kind when {}.", e.kind, e.when));
        }
        let invoke = if async_ {
            format!(
                "client.invokeAsync(\"{}\", params.toWire(), options, {decode})",
                op.name
            )
        } else {
            format!(
                "invoke(\"{}\", params.toWire(), options, {decode})",
                op.name
            )
        };
        // (params, options)
        line(&mut w, "");
        doc(&mut w, "  ", &paragraphs);
        line(
            &mut w,
            &format!("  public {ret} {name}({params} params, CallOptions options) {{"),
        );
        line(&mut w, &format!("    return {invoke};"));
        line(&mut w, "  }");
        // (params)
        line(&mut w, "");
        line(
            &mut w,
            &format!(
                "  /** {{@link #{name}({params}, CallOptions)}} with the client's settings. */"
            ),
        );
        line(
            &mut w,
            &format!("  public {ret} {name}({params} params) {{"),
        );
        line(&mut w, &format!("    return {name}(params, null);"));
        line(&mut w, "  }");
        // The twin that also gives the answer's meta (Go's `...WithResponse`).
        let with_ret = if async_ {
            format!("java.util.concurrent.CompletableFuture<WithResponse<{ty}>>")
        } else {
            format!("WithResponse<{ty}>")
        };
        let invoke_with = if async_ {
            format!(
                "client.invokeWithResponseAsync(\"{}\", params.toWire(), options, {decode})",
                op.name
            )
        } else {
            format!(
                "invokeWithResponse(\"{}\", params.toWire(), options, {decode})",
                op.name
            )
        };
        line(&mut w, "");
        line(
            &mut w,
            &format!("  /** {{@link #{name}({params}, CallOptions)}} that also gives the answer's status, headers, attempts, request id and JSON body ({{@link WithResponse}}). */"),
        );
        line(
            &mut w,
            &format!(
                "  public {with_ret} {name}WithResponse({params} params, CallOptions options) {{"
            ),
        );
        line(&mut w, &format!("    return {invoke_with};"));
        line(&mut w, "  }");
        line(&mut w, "");
        line(
            &mut w,
            &format!("  /** {{@link #{name}WithResponse({params}, CallOptions)}} with the client's settings. */"),
        );
        line(
            &mut w,
            &format!("  public {with_ret} {name}WithResponse({params} params) {{"),
        );
        line(
            &mut w,
            &format!("    return {name}WithResponse(params, null);"),
        );
        line(&mut w, "  }");
        // The required params one by one.
        let args = argument_params(op);
        let no_required = !op.params.iter().any(|p| p.required)
            && op.exactly_one.is_empty()
            && !op.is_hand_written();
        if no_required {
            line(&mut w, "");
            line(
                &mut w,
                &format!("  /** {{@link #{name}({params}, CallOptions)}} with no params. */"),
            );
            line(&mut w, &format!("  public {ret} {name}() {{"));
            line(
                &mut w,
                &format!("    return {name}({params}.builder().build(), null);"),
            );
            line(&mut w, "  }");
        } else if !args.is_empty()
            && args
                .iter()
                .all(|p| p.location == Location::Path || p.required)
        {
            let sig: Vec<String> = args
                .iter()
                .map(|p| format!("{} {}", param_type(p.kind), ident(&p.name)))
                .collect();
            let sets: String = args
                .iter()
                .map(|p| format!(".{}({})", ident(&p.name), ident(&p.name)))
                .collect();
            line(&mut w, "");
            line(&mut w, &format!("  /** {{@link #{name}({params}, CallOptions)}} with its required params only. */"));
            line(
                &mut w,
                &format!("  public {ret} {name}({}) {{", sig.join(", ")),
            );
            line(
                &mut w,
                &format!("    return {name}({params}.builder(){sets}.build(), null);"),
            );
            line(&mut w, "  }");
        }
        // A listing's items.
        if let Some((item, _)) = paging(op, d)? {
            if async_ {
                continue;
            }
            let list = paging(op, d)?
                .map(|(_, f)| field_ident(f))
                .unwrap_or_default();
            let page = op.result_record();
            line(&mut w, "");
            doc(
                &mut w,
                "  ",
                &[
                    format!("Every record of `{}`, lazily, a page at a time (`limit` is the page size, `skip` where to start).", op.name),
                    "The iteration never ends early without throwing: a page that fails throws its `RoomchatException`, and asking again fetches that page again.".into(),
                ],
            );
            line(
                &mut w,
                &format!(
                    "  public Listing<{item}> iter{}({params} params, CallOptions options) {{",
                    pascal(&op.name)
                ),
            );
            line(&mut w, &format!("    return listing(\"{}\", params.toWire(), options, {page}::fromJson, {page}::{list});", op.name));
            line(&mut w, "  }");
            line(&mut w, "");
            line(
                &mut w,
                &format!(
                    "  /** {{@link #iter{}({params}, CallOptions)}} with the client's settings. */",
                    pascal(&op.name)
                ),
            );
            line(
                &mut w,
                &format!(
                    "  public Listing<{item}> iter{}({params} params) {{",
                    pascal(&op.name)
                ),
            );
            line(
                &mut w,
                &format!("    return iter{}(params, null);", pascal(&op.name)),
            );
            line(&mut w, "  }");
        }
    }
    line(&mut w, "}");
    Ok(w)
}
