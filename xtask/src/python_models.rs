//! Python's classes of core's models (`bindings/python/src/models_declared.rs`):
//! `roomchat.User`, … — the records of the operations older than the
//! declarations — from `[[model]]` and its `[model.python]`, the class as
//! Python published it (module `roomchat`, for pickles; its docs; what `repr`
//! and `hash` use).
//!
//! Each class wraps core's value (`Arc<roomchat::X>`) and makes a Python
//! object only for the attribute read; a page (a model with a list of models)
//! keeps its items shared (`Arc`) and makes their tuple once, on first access.
//! What every class shares is written once, by hand, in `src/models.rs`
//! (`show`, `hash_of`, `wire_dict`, `parse`, `reduce`, `IntoPython`).

use std::collections::BTreeMap;
use std::fmt::Write;

use serde::Deserialize;

use crate::declaration::{read_table, snake, Answered, Declarations, Field, Model};
use crate::text::{doc_lines, line};
use crate::GENERATED;

pub const PATH: &str = "bindings/python/src/models_declared.rs";

/// `[model.python]`: see api/operations.toml.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Shape {
    doc: String,
    #[serde(default)]
    docs: BTreeMap<String, String>,
    what: Option<String>,
    to_dict: Option<String>,
    from_dict: Option<String>,
    extra: Option<String>,
    repr: Vec<String>,
    #[serde(default)]
    repr_if_set: Vec<String>,
    hash: Vec<String>,
}

/// A model and its Python shape, checked.
struct Class<'a> {
    model: &'a Model,
    shape: Shape,
    /// The page's list of models, if it is a page.
    list: Option<&'a Field>,
}

pub fn generate(d: &Declarations) -> Result<String, String> {
    let classes = d
        .models
        .iter()
        .map(|model| class_of(d, model))
        .collect::<Result<Vec<_>, _>>()?;
    let fields = || d.models.iter().flat_map(|m| &m.fields);
    let once_lock = if fields().any(Field::is_list) {
        "use pyo3::sync::PyOnceLock;\n"
    } else {
        ""
    };
    let list = if d.models.iter().any(|m| m.answered(d).listed) {
        "PyList, "
    } else {
        ""
    };
    let datetime = if fields().any(|f| f.kind == "epoch_seconds") {
        "utc_datetime, "
    } else {
        ""
    };
    let mut out = format!(
        "// {GENERATED}

//! The classes of core's models (`roomchat::User`, …: the records of the operations
//! older than the declarations), made from `api/operations.toml` (`[[model]]` and its
//! `[model.python]`). Each wraps core's value and makes a Python object only for the
//! attribute read; a page shares its items' values with their classes. What they
//! share is in `crate::models`.

use std::sync::Arc;

use pyo3::prelude::*;
{once_lock}use pyo3::types::{{PyDict, {list}PyTuple, PyType}};

use crate::convert::map_to_dict;
use crate::models::{{hash_of, parse, reduce, show, {datetime}wire_dict, IntoPython}};
"
    );
    for class in &classes {
        out.push('\n');
        emit_class(&mut out, class);
        emit_into_python(&mut out, class.model, class.model.answered(d));
    }
    Ok(out)
}

fn class_of<'a>(d: &Declarations, model: &'a Model) -> Result<Class<'a>, String> {
    let at = model.table_at("python");
    let shape: Shape =
        read_table(model.python.as_ref(), &at)?.ok_or_else(|| format!("{at}: missing"))?;
    let field = |name: &str| model.fields.iter().find(|f| f.snake() == name);
    for name in shape.docs.keys() {
        field(name).ok_or_else(|| format!("{at}: docs: no field {name:?}"))?;
    }
    let shown = shape.repr.iter().chain(&shape.repr_if_set);
    for name in shown.chain(&shape.hash) {
        let bare = name.strip_suffix("()").unwrap_or(name);
        let found = field(bare).ok_or_else(|| format!("{at}: no field {bare:?}"))?;
        if found.secret {
            return Err(format!(
                "{at}: {bare:?} is a secret: repr and hash never use it"
            ));
        }
    }
    for name in &shape.repr_if_set {
        if field(name).is_some_and(|f| !f.is_optional() || f.kind != "string") {
            return Err(format!("{at}: repr_if_set: {name:?} is no optional string"));
        }
    }
    let lists: Vec<&Field> = model.fields.iter().filter(|f| f.is_list()).collect();
    if lists.len() > 1 || lists.iter().any(|f| f.is_optional()) {
        return Err(format!("{at}: a page has one list of models, always there"));
    }
    for f in &model.fields {
        if let Some(item) = f.record() {
            if !d.models.iter().any(|m| m.name == item) {
                return Err(format!("{at}: {:?} is no model", f.name));
            }
        } else if !matches!(
            f.kind.as_str(),
            "string"
                | "text_or_number"
                | "boolean"
                | "unsigned"
                | "integer"
                | "number"
                | "epoch_seconds"
        ) {
            return Err(format!(
                "{at}: a {:?} field has no Python form here",
                f.kind
            ));
        }
    }
    Ok(Class {
        model,
        shape,
        list: lists.first().copied(),
    })
}

fn emit_class(w: &mut String, class: &Class<'_>) {
    let model = class.model;
    let name = &model.name;
    let shape = &class.shape;
    doc_lines(w, "", &shape.doc);
    line(w, "#[pyclass(frozen, module = \"roomchat\")]");
    match class
        .list
        .map(|list| (list.snake(), list.record().unwrap_or_default()))
    {
        None => write!(
            w,
            "pub struct {name} {{
    pub(crate) inner: Arc<roomchat::{name}>,
}}

impl From<roomchat::{name}> for {name} {{
    fn from(inner: roomchat::{name}) -> {name} {{
        {name} {{ inner: Arc::new(inner) }}
    }}
}}
"
        ),
        Some((list, item)) => write!(
            w,
            "pub struct {name} {{
    /// Core's page without its `{list}`, which is `{list}_items`.
    inner: Arc<roomchat::{name}>,
    {list}_items: Vec<Arc<roomchat::{item}>>,
    /// `{list}`, made on first access.
    {list}_tuple: PyOnceLock<Py<PyTuple>>,
}}

impl From<roomchat::{name}> for {name} {{
    fn from(mut inner: roomchat::{name}) -> {name} {{
        let {list}_items = std::mem::take(&mut inner.{list}).into_iter().map(Arc::new).collect();
        {name} {{ inner: Arc::new(inner), {list}_items, {list}_tuple: PyOnceLock::new() }}
    }}
}}

impl {name} {{
    /// Core's page, its `{list}` cloned back in.
    fn to_core(&self) -> roomchat::{name} {{
        let mut page = (*self.inner).clone();
        page.{list} = self.{list}_items.iter().map(|item| (**item).clone()).collect();
        page
    }}
}}
"
        ),
    }
    .unwrap();
    line(w, "");
    line(w, "#[pymethods]");
    line(w, &format!("impl {name} {{"));
    for field in &model.fields {
        doc_lines(
            w,
            "    ",
            shape.docs.get(&field.snake()).unwrap_or(&field.doc),
        );
        line(w, "    #[getter]");
        emit_getter(w, field);
    }
    let extra = shape.extra.as_deref();
    doc_lines(
        w,
        "    ",
        extra.unwrap_or("Every other field the service sent."),
    );
    line(w, "    #[getter]");
    line(
        w,
        "    fn extra<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {",
    );
    line(w, "        map_to_dict(py, &self.inner.extra)");
    line(w, "    }");
    let (core, equal) = match class.list.map(Field::snake) {
        None => ("&*self.inner".to_owned(), String::new()),
        Some(list) => (
            "&self.to_core()".to_owned(),
            format!(" && self.{list}_items == other.{list}_items"),
        ),
    };
    if let Some(list) = class.list.map(Field::snake) {
        write!(
            w,
            "    fn __len__(&self) -> usize {{
        self.{list}_items.len()
    }}
    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {{
        self.{list}(py)?.as_any().try_iter().map(Bound::into_any)
    }}
"
        )
        .unwrap();
    }
    let to_dict = shape.to_dict.as_deref();
    doc_lines(
        w,
        "    ",
        to_dict.unwrap_or("The answer with the service's field names."),
    );
    line(
        w,
        "    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {",
    );
    line(w, &format!("        wire_dict(py, {core})"));
    line(w, "    }");
    let from_dict = shape.from_dict.as_deref();
    doc_lines(
        w,
        "    ",
        from_dict.unwrap_or("An answer from its wire form."),
    );
    let what = shape.what.as_deref().unwrap_or(&model.what);
    write!(
        w,
        "    #[classmethod]
    fn from_dict(cls: &Bound<'_, PyType>, data: &Bound<'_, PyAny>) -> PyResult<{name}> {{
        parse::<roomchat::{name}>(cls.py(), {what:?}, data).map({name}::from)
    }}
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {{
        reduce(slf.as_any())
    }}
    fn __eq__(&self, other: &Self) -> bool {{
        self.inner == other.inner{equal}
    }}
"
    )
    .unwrap();
    emit_hash(w, class);
    emit_repr(w, class);
    line(w, "}");
}

fn emit_getter(w: &mut String, field: &Field) {
    let name = field.snake();
    let at = format!("self.inner.{name}");
    // Those made with the interpreter: (their type, the body).
    let made = match field.kind.as_str() {
        _ if field.is_list() => {
            let item = field.record().unwrap_or_default();
            Some((
                "Bound<'py, PyTuple>".to_owned(),
                format!(
                    "let {name} = self.{name}_tuple.get_or_try_init(py, || {{
            let items = self.{name}_items.iter().map(|item| Py::new(py, {item} {{ inner: item.clone() }})).collect::<PyResult<Vec<_>>>()?;
            PyTuple::new(py, items).map(Bound::unbind)
        }})?;
        Ok({name}.bind(py).clone())"
                ),
            ))
        }
        "epoch_seconds" if field.is_optional() => Some((
            "Option<Bound<'py, PyAny>>".to_owned(),
            format!("{at}.map(|at| utc_datetime(py, at)).transpose()"),
        )),
        "epoch_seconds" => Some((
            "Bound<'py, PyAny>".to_owned(),
            format!("utc_datetime(py, {at})"),
        )),
        _ => None,
    };
    if let Some((ty, body)) = made {
        writeln!(
            w,
            "    fn {name}<'py>(&self, py: Python<'py>) -> PyResult<{ty}> {{\n        {body}\n    }}"
        )
        .unwrap();
        return;
    }
    let (ty, value) = match field.kind.as_str() {
        "string" | "text_or_number" if field.is_optional() => {
            ("Option<&str>".to_owned(), format!("{at}.as_deref()"))
        }
        "string" | "text_or_number" => ("&str".to_owned(), format!("&{at}")),
        kind => {
            let ty = match kind {
                "boolean" => "bool".to_owned(),
                "unsigned" => "u64".to_owned(),
                "integer" => "i64".to_owned(),
                "number" => "f64".to_owned(),
                model => model.to_owned(),
            };
            match (field.record(), field.is_optional()) {
                (Some(_), true) => (
                    format!("Option<{ty}>"),
                    format!("{at}.as_ref().map(|value| {ty}::from(value.clone()))"),
                ),
                (Some(_), false) => (ty.clone(), format!("{ty}::from({at}.clone())")),
                (None, true) => (format!("Option<{ty}>"), at),
                (None, false) => (ty, at),
            }
        }
    };
    writeln!(
        w,
        "    fn {name}(&self) -> {ty} {{\n        {value}\n    }}"
    )
    .unwrap();
}

/// A field as `repr` and `hash` read it: (its field, the expression).
fn part<'a>(class: &'a Class<'_>, name: &str) -> (&'a Field, String) {
    let bare = name.strip_suffix("()").unwrap_or(name);
    let field = class
        .model
        .fields
        .iter()
        .find(|f| f.snake() == bare)
        .expect("checked by class_of");
    let value = if name.ends_with("()") {
        // Core's method of that name, an `Option<&str>` (User's `id()`).
        format!("self.inner.{name}")
    } else if field.is_list() {
        format!("self.{bare}_items.len()")
    } else if field.kind == "string" || field.kind == "text_or_number" {
        if field.is_optional() {
            format!("self.inner.{bare}.as_deref()")
        } else {
            format!("Some(self.inner.{bare}.as_str())")
        }
    } else {
        format!("self.inner.{bare}")
    };
    (field, value)
}

fn is_text(field: &Field) -> bool {
    field.kind == "string" || field.kind == "text_or_number"
}

fn emit_hash(w: &mut String, class: &Class<'_>) {
    let parts: Vec<(&Field, String)> = class.shape.hash.iter().map(|n| part(class, n)).collect();
    let values: Vec<&str> = parts.iter().map(|(_, v)| v.as_str()).collect();
    line(w, "    fn __hash__(&self) -> u64 {");
    if parts.iter().all(|(f, _)| is_text(f)) {
        line(w, &format!("        hash_of([{}])", values.join(", ")));
    } else {
        line(w, &format!("        hash_of(({},))", values.join(", ")));
    }
    line(w, "    }");
}

fn emit_repr(w: &mut String, class: &Class<'_>) {
    let mut format = format!("{}(", class.model.name);
    let mut args = Vec::new();
    for (i, name) in class.shape.repr.iter().enumerate() {
        let (field, value) = part(class, name);
        let bare = name.strip_suffix("()").unwrap_or(name);
        if i > 0 {
            format.push_str(", ");
        }
        if field.is_list() {
            // A list by its length: `data=<3 users>`.
            let item = snake(field.record().unwrap_or_default());
            format.push_str(&format!("{bare}=<{{}} {item}s>"));
        } else {
            format.push_str(&format!("{bare}={{}}"));
        }
        args.push(if field.is_list() {
            value
        } else if is_text(field) || name.ends_with("()") {
            format!("show({value})")
        } else if field.kind == "boolean" && !field.is_optional() {
            format!("if {value} {{ \"True\" }} else {{ \"False\" }}")
        } else {
            value
        });
    }
    line(w, "    fn __repr__(&self) -> String {");
    for name in &class.shape.repr_if_set {
        line(
            w,
            &format!("        let {name} = match self.inner.{name}.as_deref() {{"),
        );
        line(
            w,
            &format!("            Some(value) => format!(\", {name}={{}}\", show(Some(value))),"),
        );
        line(w, "            None => String::new(),");
        line(w, "        };");
        format.push_str("{}");
        args.push(name.clone());
    }
    format.push(')');
    line(
        w,
        &format!("        format!({format:?}, {})", args.join(", ")),
    );
    line(w, "    }");
}

/// How an operation's answer becomes the class: `IntoPython` (`crate::models`).
fn emit_into_python(w: &mut String, model: &Model, answered: Answered) {
    let name = &model.name;
    if answered.alone {
        write!(
            w,
            "
impl IntoPython for roomchat::{name} {{
    fn wrap(py: Python<'_>, value: Self) -> PyResult<Py<PyAny>> {{
        Ok(Py::new(py, {name}::from(value))?.into_any())
    }}
}}
"
        )
        .unwrap();
    }
    if answered.listed {
        write!(
            w,
            "
impl IntoPython for Vec<roomchat::{name}> {{
    fn wrap(py: Python<'_>, values: Self) -> PyResult<Py<PyAny>> {{
        let list = PyList::empty(py);
        for value in values {{
            list.append(Py::new(py, {name}::from(value))?)?;
        }}
        Ok(list.into_any().unbind())
    }}
}}
"
        )
        .unwrap();
    }
}

#[cfg(test)]
mod tests {
    use crate::declaration::load;

    /// The repository's declarations with `from` replaced by `to`, generated.
    fn generated(from: &str, to: &str) -> Result<String, String> {
        let declarations = include_str!("../../api/operations.toml");
        assert!(declarations.contains(from), "{from}");
        super::generate(&load(&declarations.replacen(from, to, 1))?)
    }

    /// `repr` and `hash` never use a secret (`CreatedUser.access_token`), nor a
    /// field the model does not have: codegen fails naming it.
    #[test]
    fn repr_and_hash_never_use_a_secret() {
        let published = "repr = [\"user_id\", \"username\", \"is_moderator\"]";
        let made = generated(published, published).unwrap();
        assert!(
            made.contains("\"CreatedUser(user_id={}, username={}, is_moderator={}{})\""),
            "{made}"
        );
        let hash = "hash = [\"user_id\", \"username\"]";
        let repr_if_set = "repr_if_set = [\"chat_room\"]";
        for (from, to, why) in [
            (
                published,
                "repr = [\"access_token\"]",
                "\"access_token\" is a secret",
            ),
            (published, "repr = [\"name\"]", "no field \"name\""),
            (
                hash,
                "hash = [\"access_token\"]",
                "\"access_token\" is a secret",
            ),
            (
                repr_if_set,
                "repr_if_set = [\"access_token\"]",
                "\"access_token\" is a secret",
            ),
        ] {
            let refused = generated(from, to).err().unwrap_or_default();
            assert!(refused.contains(why), "{to}: {refused}");
        }
    }
}
