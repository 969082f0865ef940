//! `docs/openapi.yaml`: the OpenAPI description of the service, made of the
//! hand-written `docs/openapi/base.yaml` and the declarations.
//!
//! What an operation's declaration says is written from it: the method and
//! path, `operationId` (the stable name), the summary, the parameters (where
//! each goes, its type, whether it is required, its limits), the request body's
//! schema (a switch param is the `"on"`/`"off"` enum), the key that
//! authenticates it, the retry class (`x-retry`), the success answer's schema
//! (an array for `[Record]`), the 401/413/429/500 every call may meet, and each
//! declared error's `when` in the response whose `x-error-kinds` names its kind
//! (see `document_errors`); and each `[[record]]`'s component schema. The base
//! holds the rest: info, servers, tags, the hand-written models' schemas, the
//! error answers, and under `x-operations` (keyed by the stable name) each
//! operation's prose, examples, links and error responses, merged in.
//!
//! A hand-written note may add to what the declaration makes but not contradict
//! it: a value that differs from the generated one fails the generation, unless
//! it is a `description` (prose, the note's wins) or the operation lists where
//! it differs in `x-differs-from-declaration` (the service as the emulator
//! answers it is wider than what clients send: `limit=0`, say).

use serde_yaml::{Mapping, Value};

use crate::declaration::{Auth, Declarations, Location, Operation, Param, ParamKind, Record};

pub const PATH: &str = "docs/openapi.yaml";
pub const BASE: &str = "docs/openapi/base.yaml";

/// The order an operation's keys are written in, whoever wrote them.
const OPERATION_KEYS: &[&str] = &[
    "operationId",
    "tags",
    "summary",
    "description",
    "x-retry",
    "x-emulator-choices",
    "x-emulator-defined",
    "security",
    "parameters",
    "requestBody",
    "responses",
];

/// The order a parameter's keys are written in.
const PARAMETER_KEYS: &[&str] = &["name", "in", "required", "description", "schema", "example"];

pub fn files(d: &Declarations, base: &str) -> Result<Vec<(&'static str, String)>, String> {
    Ok(vec![(PATH, document(d, base)?)])
}

fn document(d: &Declarations, base: &str) -> Result<String, String> {
    let at = |e: String| format!("{BASE}: {e}");
    let mut doc: Mapping = serde_yaml::from_str(base).map_err(|e| at(e.to_string()))?;
    let mut notes = match doc.remove("x-operations") {
        Some(Value::Mapping(notes)) => notes,
        None => Mapping::new(),
        Some(_) => return Err(at("x-operations must map operation names to notes".into())),
    };
    for name in notes.keys() {
        let name = name.as_str().unwrap_or_default();
        if !d.operations.iter().any(|op| op.name == name) {
            return Err(at(format!(
                "x-operations: {name:?} is no declared operation"
            )));
        }
    }

    // The records' schemas, the base's notes on them merged in.
    let schemas = doc
        .entry("components".into())
        .or_insert_with(|| Value::Mapping(Mapping::new()))
        .as_mapping_mut()
        .and_then(|c| {
            c.entry("schemas".into())
                .or_insert_with(|| Value::Mapping(Mapping::new()))
                .as_mapping_mut()
        })
        .ok_or_else(|| at("components.schemas must be a mapping".into()))?;
    for record in &d.records {
        let mut schema = record_schema(record);
        if let Some(mut note) = schemas.remove(record.name.as_str()) {
            let mut differs = differs_listed(&mut note);
            merge(&mut schema, note, &record.name, &mut differs).map_err(at)?;
            if let Some(unused) = differs.first() {
                return Err(at(format!(
                    "components/schemas/{}: x-differs-from-declaration lists {unused:?}, where the note does not differ",
                    record.name
                )));
            }
        }
        schemas.insert(record.name.clone().into(), schema);
    }
    let schema_names: Vec<String> = schemas
        .keys()
        .filter_map(|k| k.as_str().map(str::to_owned))
        .collect();

    let shared_responses = doc
        .get("components")
        .and_then(|c| c.get("responses"))
        .and_then(Value::as_mapping)
        .cloned()
        .unwrap_or_default();

    // The declared operations first, in the declarations' order; then the
    // base's own paths (what no declaration describes).
    let own_paths = match doc.remove("paths") {
        Some(Value::Mapping(paths)) => paths,
        None => Mapping::new(),
        Some(_) => return Err(at("paths must be a mapping".into())),
    };
    let mut paths = Mapping::new();
    for op in &d.operations {
        let mut operation = operation(d, op, &schema_names)?;
        if let Some(mut note) = notes.remove(op.name.as_str()) {
            // An error status the note gives is the note's whole (the success
            // answer's notes are merged like the rest).
            if let (Some(Value::Mapping(generated)), Some(Value::Mapping(given))) =
                (operation.get_mut("responses"), note.get("responses"))
            {
                for status in given.keys().filter(|s| s.as_str() != Some("200")) {
                    generated.remove(status);
                }
            }
            let mut differs = differs_listed(&mut note);
            merge(&mut operation, note, &op.name, &mut differs).map_err(at)?;
            if let Some(unused) = differs.first() {
                return Err(at(format!(
                    "x-operations: {}: x-differs-from-declaration lists {unused:?}, where the note does not differ",
                    op.name
                )));
            }
        }
        document_errors(op, &mut operation, &shared_responses).map_err(at)?;
        let mut operation = ordered(operation, OPERATION_KEYS);
        if let Some(Value::Sequence(params)) = operation.get_mut("parameters") {
            for param in params.iter_mut() {
                *param = ordered(std::mem::take(param), PARAMETER_KEYS);
            }
        }
        let item = paths
            .entry(op.path.clone().into())
            .or_insert_with(|| Value::Mapping(Mapping::new()));
        item.as_mapping_mut()
            .expect("a path item is a mapping")
            .insert(op.method.to_lowercase().into(), operation);
    }
    for (path, item) in own_paths {
        if paths.contains_key(&path) {
            return Err(at(format!(
                "paths: {path:?} is a declared operation's path; describe it under x-operations"
            )));
        }
        paths.insert(path, item);
    }

    // `paths` before `components`, or last.
    let mut out = Mapping::new();
    let mut paths = Some(Value::Mapping(paths));
    for (key, value) in doc {
        if key.as_str() == Some("components") {
            if let Some(paths) = paths.take() {
                out.insert("paths".into(), paths);
            }
        }
        out.insert(key, value);
    }
    if let Some(paths) = paths {
        out.insert("paths".into(), paths);
    }
    let yaml = quote_yaml11_booleans(&serde_yaml::to_string(&out).map_err(|e| e.to_string())?);
    Ok(format!(
        "# {}\n# The hand-written part is {BASE}: the document's framing, the older\n# models' schemas, and each operation's notes (x-operations).\n{yaml}",
        crate::GENERATED
    ))
}

/// serde_yaml writes YAML 1.2, where `on`, `off`, `yes` and `no` are strings;
/// YAML 1.1 loaders (PyYAML, so schemathesis and the vector check) read them
/// as booleans. A plain scalar value that is one of them is written quoted.
fn quote_yaml11_booleans(yaml: &str) -> String {
    const YAML11_BOOLEANS: [&str; 8] = ["on", "off", "yes", "no", "On", "Off", "Yes", "No"];
    let mut out = String::with_capacity(yaml.len() + 64);
    let mut block_indent: Option<usize> = None;
    for line in yaml.lines() {
        let indent = line.len() - line.trim_start().len();
        // Inside a block scalar (`|`, `>`): text, left as it is.
        if let Some(block) = block_indent {
            if line.trim().is_empty() || indent > block {
                out.push_str(line);
                out.push('\n');
                continue;
            }
            block_indent = None;
        }
        let (head, value) = match line.rsplit_once(": ") {
            Some((head, value)) if !head.trim_start().starts_with('#') => {
                (format!("{head}: "), value)
            }
            _ => match line.trim_start().strip_prefix("- ") {
                Some(value) => (format!("{}- ", &line[..indent]), value),
                None => (String::new(), line),
            },
        };
        if !head.is_empty() && YAML11_BOOLEANS.contains(&value) {
            out.push_str(&format!("{head}'{value}'"));
        } else {
            out.push_str(line);
        }
        out.push('\n');
        if line.ends_with('|')
            || line.ends_with('>')
            || line.ends_with("|-")
            || line.ends_with(">-")
        {
            block_indent = Some(indent);
        }
    }
    out
}

/// The key by which a response names the declared error kinds it carries.
const ERROR_KINDS: &str = "x-error-kinds";

/// Each error the declaration names (`errors`) documented by the responses
/// that carry it: a response lists the kinds in `x-error-kinds` (its status
/// and shapes are the service's, written in the note), and the generator adds
/// to its description what the declaration says of each. A declared kind no
/// response carries, or a listed kind the declaration does not name, fails.
fn document_errors(
    op: &Operation,
    operation: &mut Value,
    shared_responses: &Mapping,
) -> Result<(), String> {
    let at = |what: String| format!("x-operations: {}: {what}", op.name);
    let Some(Value::Mapping(responses)) = operation.get_mut("responses") else {
        return Err(at("no responses".into()));
    };
    let mut carried = Vec::new();
    for (status, response) in responses.iter_mut() {
        let status = status.as_str().unwrap_or_default().to_owned();
        let Some(Value::Sequence(kinds)) = response.get(ERROR_KINDS).cloned() else {
            continue;
        };
        // A shared response (`$ref`) that carries kinds is written out here:
        // a reference takes no other keys.
        if let Some(target) = response.get("$ref").and_then(Value::as_str) {
            let name = target
                .strip_prefix("#/components/responses/")
                .ok_or_else(|| at(format!("response {status}: $ref {target:?}")))?;
            let mut shared = shared_responses
                .get(name)
                .cloned()
                .ok_or_else(|| at(format!("response {status}: no components.responses.{name}")))?;
            let shared_map = shared.as_mapping_mut().expect("a response is a mapping");
            shared_map.insert(ERROR_KINDS.into(), Value::Sequence(kinds.clone()));
            *response = shared;
        }
        let mut lines = Vec::new();
        for kind in &kinds {
            let kind = kind.as_str().unwrap_or_default();
            let declared: Vec<_> = op.errors.iter().filter(|e| e.kind == kind).collect();
            if declared.is_empty() {
                return Err(at(format!(
                    "response {status} lists {kind:?} in {ERROR_KINDS}, an error the declaration does not name"
                )));
            }
            for error in declared {
                lines.push(format!("`{kind}`: {}.", error.when));
            }
            carried.push(kind.to_owned());
        }
        let response = response
            .as_mapping_mut()
            .ok_or_else(|| at(format!("response {status} is not a mapping")))?;
        let prose = response
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .trim_end()
            .to_owned();
        let joined = lines.join("\n- ");
        response.insert(
            "description".into(),
            format!("{prose}\n\nroomchat reports it as the error kind\n- {joined}\n").into(),
        );
    }
    if let Some(missing) = op.errors.iter().find(|e| !carried.contains(&e.kind)) {
        return Err(at(format!(
            "the declared error {:?} is in no response's {ERROR_KINDS} (write the response the service gives for it)",
            missing.kind
        )));
    }
    Ok(())
}

fn map(entries: Vec<(&str, Value)>) -> Value {
    Value::Mapping(
        entries
            .into_iter()
            .map(|(k, v)| (Value::from(k), v))
            .collect(),
    )
}

fn schema_ref(name: &str) -> Value {
    map(vec![(
        "$ref",
        format!("#/components/schemas/{name}").into(),
    )])
}

fn operation(d: &Declarations, op: &Operation, schema_names: &[String]) -> Result<Value, String> {
    let scheme = match op.auth {
        Auth::PrivateKey => "auth",
        Auth::PublicKey => "publicKey",
    };
    let mut entries = vec![
        ("operationId", op.name.as_str().into()),
        ("summary", op.summary.as_str().into()),
        ("x-retry", op.retry.as_str().into()),
        (
            "security",
            Value::Sequence(vec![map(vec![(scheme, Value::Sequence(vec![]))])]),
        ),
    ];
    // Path parameters in the path's order, then the query's as declared.
    let mut parameters: Vec<Value> = op
        .positional_params()
        .into_iter()
        .map(|p| parameter(p, true))
        .collect();
    parameters.extend(
        op.params
            .iter()
            .filter(|p| p.location == Location::Query)
            .map(|p| parameter(p, p.required)),
    );
    if !parameters.is_empty() {
        entries.push(("parameters", Value::Sequence(parameters)));
    }
    let body: Vec<&Param> = op
        .params
        .iter()
        .filter(|p| p.location == Location::Body)
        .collect();
    if !body.is_empty() {
        // A body of optional fields only may be left out (clients send `{}`).
        let required = body.iter().any(|p| p.required) || !op.exactly_one.is_empty();
        entries.push((
            "requestBody",
            map(vec![
                ("required", required.into()),
                (
                    "content",
                    map(vec![(
                        "application/json",
                        map(vec![("schema", body_schema(op, &body))]),
                    )]),
                ),
            ]),
        ));
    }
    let rate_limit_header = |name: &str| {
        (
            name.to_owned(),
            map(vec![(
                "$ref",
                format!("#/components/headers/{name}").into(),
            )]),
        )
    };
    let headers: Mapping = [
        "X-RateLimit-Limit",
        "X-RateLimit-Remaining",
        "X-RateLimit-Reset",
    ]
    .into_iter()
    .map(rate_limit_header)
    .map(|(k, v)| (Value::from(k), v))
    .collect();
    let success = map(vec![
        ("description", success_description(d, op).into()),
        ("headers", Value::Mapping(headers)),
        (
            "content",
            map(vec![(
                "application/json",
                map(vec![("schema", result_schema(op, schema_names)?)]),
            )]),
        ),
    ]);
    // What every operation may meet, whatever it is: a note that gives one of
    // these statuses replaces it (an operation whose 401 is also a not-found).
    let reference = |name: &str| {
        map(vec![(
            "$ref",
            format!("#/components/responses/{name}").into(),
        )])
    };
    let mut responses = vec![("200", success)];
    responses.push(("401", reference("Unauthorized")));
    if !body.is_empty() {
        responses.push(("413", reference("PayloadTooLarge")));
    }
    responses.push(("429", reference("TooManyRequests")));
    responses.push(("500", reference("InternalError")));
    entries.push(("responses", map(responses)));
    Ok(map(entries))
}

fn success_description(d: &Declarations, op: &Operation) -> String {
    let doc = d
        .records
        .iter()
        .find(|r| r.name == op.result_record())
        .map_or_else(|| format!("The answer ({}).", op.result), |r| r.doc.clone());
    if op.result_is_list() {
        format!("A JSON array (empty when there is none), each item: {doc}")
    } else {
        doc
    }
}

/// The schema of the answer: a model's (hand-written in the base, or a
/// record's), a list of them, or any JSON.
fn result_schema(op: &Operation, schema_names: &[String]) -> Result<Value, String> {
    let known = |name: &str| {
        if schema_names.iter().any(|n| n == name) {
            Ok(schema_ref(name))
        } else {
            Err(format!(
                "{BASE}: operation {:?} answers {name}, which has no schema under components.schemas",
                op.name
            ))
        }
    };
    if op.result == "serde_json::Value" {
        return Ok(Value::Mapping(Mapping::new()));
    }
    // `[Room]` (a declared list of records) or `Vec<Message>` (an older model's).
    let list = if op.result_is_list() {
        Some(op.result_record())
    } else {
        op.result
            .strip_prefix("Vec<")
            .and_then(|r| r.strip_suffix('>'))
    };
    if let Some(inner) = list {
        return Ok(map(vec![
            ("type", "array".into()),
            ("items", known(inner)?),
        ]));
    }
    known(&op.result)
}

fn parameter(p: &Param, required: bool) -> Value {
    map(vec![
        ("name", p.name.as_str().into()),
        ("in", p.location.as_str().into()),
        ("required", required.into()),
        ("schema", param_schema(p)),
    ])
}

/// A parameter's schema: its type, its limits, its default.
fn param_schema(p: &Param) -> Value {
    let mut entries: Vec<(&str, Value)> = Vec::new();
    match p.kind {
        ParamKind::Integer => entries.push(("type", "integer".into())),
        ParamKind::Boolean => entries.push(("type", "boolean".into())),
        // A boolean for the caller, `"on"`/`"off"` on the wire.
        ParamKind::Switch => {
            entries.push(("type", "string".into()));
            entries.push(("enum", Value::Sequence(vec!["on".into(), "off".into()])));
        }
        ParamKind::Json => {}
        // `id` is an identifier: never empty.
        ParamKind::Id => {
            entries.push(("type", "string".into()));
            entries.push(("minLength", 1.into()));
        }
        ParamKind::String => entries.push(("type", "string".into())),
    }
    if let Some(min) = p.min {
        entries.push(("minimum", min.into()));
    }
    if let Some(max) = p.max {
        entries.push(("maximum", max.into()));
    }
    if let Some(max) = p.max_len {
        entries.push(("maxLength", max.into()));
    }
    if !p.choices.is_empty() {
        entries.push((
            "enum",
            Value::Sequence(p.choices.iter().map(|c| c.as_str().into()).collect()),
        ));
    }
    if let Some(default) = &p.default {
        let default = match default {
            toml::Value::String(s) => s.as_str().into(),
            toml::Value::Integer(n) => (*n).into(),
            toml::Value::Boolean(b) => (*b).into(),
            toml::Value::Float(f) => (*f).into(),
            other => format!("{other:?}").into(),
        };
        entries.push(("default", default));
    }
    map(entries)
}

/// The JSON object of the body parameters: the required ones, each group of
/// which exactly one is given, and whether other fields may come along.
fn body_schema(op: &Operation, body: &[&Param]) -> Value {
    let mut entries = vec![("type", Value::from("object"))];
    let required: Vec<Value> = body
        .iter()
        .filter(|p| p.required)
        .map(|p| p.name.as_str().into())
        .collect();
    if !required.is_empty() {
        entries.push(("required", Value::Sequence(required)));
    }
    entries.push((
        "properties",
        Value::Mapping(
            body.iter()
                .map(|p| (p.name.as_str().into(), param_schema(p)))
                .collect(),
        ),
    ));
    let exactly_one = |group: &Vec<String>| {
        Value::Sequence(
            group
                .iter()
                .map(|name| {
                    let mut branch =
                        vec![("required", Value::Sequence(vec![name.as_str().into()]))];
                    // A flag is given only when true (`systemMessage: false` is no author).
                    if body
                        .iter()
                        .any(|p| p.name == *name && p.kind == ParamKind::Boolean)
                    {
                        branch.push((
                            "properties",
                            map(vec![(name.as_str(), map(vec![("const", true.into())]))]),
                        ));
                    }
                    map(branch)
                })
                .collect(),
        )
    };
    match op.exactly_one.as_slice() {
        [] => {}
        [group] => entries.push(("oneOf", exactly_one(group))),
        groups => entries.push((
            "allOf",
            Value::Sequence(
                groups
                    .iter()
                    .map(|g| map(vec![("oneOf", exactly_one(g))]))
                    .collect(),
            ),
        )),
    }
    if op.extra {
        entries.push(("additionalProperties", true.into()));
    }
    map(entries)
}

/// A record's schema. Every field may be absent or `null` (every client reads
/// either as "no value"): the service's answers carry `null`s (`file`,
/// `roomPassword`, `lastSeen`) where its pages show values.
fn record_schema(record: &Record) -> Value {
    let null = || map(vec![("type", "null".into())]);
    let properties = record
        .fields
        .iter()
        .map(|f| {
            let mut schema = match (f.record(), f.is_list()) {
                (Some(inner), true) => map(vec![
                    ("type", Value::Sequence(vec!["array".into(), "null".into()])),
                    ("items", schema_ref(inner)),
                ]),
                (Some(inner), false) => map(vec![(
                    "anyOf",
                    Value::Sequence(vec![schema_ref(inner), null()]),
                )]),
                (None, _) if f.kind == "json" => Value::Mapping(Mapping::new()),
                (None, _) => map(vec![(
                    "type",
                    Value::Sequence(vec![f.kind.as_str().into(), "null".into()]),
                )]),
            };
            schema
                .as_mapping_mut()
                .expect("a schema is a mapping")
                .insert("description".into(), f.doc.as_str().into());
            (Value::from(f.name.as_str()), schema)
        })
        .collect();
    map(vec![
        ("description", record.doc.as_str().into()),
        ("type", "object".into()),
        ("properties", Value::Mapping(properties)),
    ])
}

/// Merges a hand-written `note` into what the declaration made. `at` names the
/// place, for errors and for `differs` (places where the note may say otherwise,
/// relative to the operation: `parameters/limit/schema/minimum`; each one used
/// is taken off the list).
fn merge(
    generated: &mut Value,
    note: Value,
    at: &str,
    differs: &mut Vec<String>,
) -> Result<(), String> {
    let relative = |at: &str| at.split_once('/').map_or("", |(_, rest)| rest).to_owned();
    match (generated, note) {
        (Value::Mapping(generated), Value::Mapping(note)) => {
            for (key, value) in note {
                let name = key.as_str().unwrap_or_default().to_owned();
                let here = format!("{at}/{name}");
                match generated.get_mut(&key) {
                    // Notes on parameters are keyed by the parameter's name.
                    Some(Value::Sequence(params)) if name == "parameters" => {
                        let Value::Mapping(value) = value else {
                            return Err(format!("{here}: notes on parameters map names to notes"));
                        };
                        for (param, note) in value {
                            let param_name = param.as_str().unwrap_or_default();
                            let target = params
                                .iter_mut()
                                .find(|p| p.get("name").and_then(Value::as_str) == Some(param_name))
                                .ok_or_else(|| {
                                    format!("{here}: {param_name:?} is no declared parameter")
                                })?;
                            merge(target, note, &format!("{here}/{param_name}"), differs)?;
                        }
                    }
                    Some(existing) => merge(existing, value, &here, differs)?,
                    None => {
                        generated.insert(key, value);
                    }
                }
            }
            Ok(())
        }
        (generated, note) if *generated == note => Ok(()),
        (generated, note) => {
            if at.ends_with("/description") && generated.is_string() && note.is_string() {
                *generated = note;
                return Ok(());
            }
            if let Some(listed) = differs.iter().position(|d| *d == relative(at)) {
                differs.remove(listed);
                *generated = note;
                return Ok(());
            }
            Err(format!(
                "{at}: the note says {} where the declaration makes {} (list it in x-differs-from-declaration if the service does differ)",
                serde_yaml::to_string(&note).unwrap_or_default().trim(),
                serde_yaml::to_string(generated).unwrap_or_default().trim(),
            ))
        }
    }
}

/// The places a note lists in `x-differs-from-declaration`, taken out of it.
fn differs_listed(note: &mut Value) -> Vec<String> {
    match note
        .as_mapping_mut()
        .and_then(|n| n.remove("x-differs-from-declaration"))
    {
        Some(Value::Sequence(list)) => list
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    }
}

/// `value`'s keys in `order` first, the others after as they were.
fn ordered(value: Value, order: &[&str]) -> Value {
    let Value::Mapping(mut mapping) = value else {
        return value;
    };
    let mut out = Mapping::new();
    for key in order {
        if let Some(v) = mapping.remove(*key) {
            out.insert((*key).into(), v);
        }
    }
    out.extend(mapping);
    Value::Mapping(out)
}
