//! How the generated methods (`operations.rs`, made from `api/operations.toml`) run
//! their operations: written once, for every operation.
//!
//! A method gathers its arguments into [`Params`] (the wire names, path params
//! included; a wrong Python type is a `TypeError`), then runs the operation through
//! core's `Client::call_declared`, which checks the declared limits (a
//! `ValidationError`, nothing sent) and sends it through the one send path, by
//! `Client::finish`: the GIL released, or queued on `AsyncClient`'s dispatcher with
//! its cancel token, or with the response kept for `with_raw_response`. The answer
//! becomes its Python object on the thread that holds the GIL: a declared record,
//! `roomchat._records.<Record>`, or one of core's models in its generated class
//! (`src/models_declared.rs`, through [`IntoPython`]).

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyList, PyModule};
use roomchat::wire::{Decoded, Operation};
use serde_json::{Map, Value};

use crate::client::Client;
use crate::convert::{flag, from_json, text, to_json, whole};
use crate::errors::{to_py, validation, wrong_type};
use crate::models::IntoPython;

/// An operation's JSON params, by wire name. An optional argument left out or given
/// as `None` (pyo3 passes both as `None`) is not sent; a required one given as `None`
/// is a `TypeError`, as any other wrong type.
pub(crate) struct Params {
    fields: Map<String, Value>,
    /// Body fields the declaration does not type (`extra=` and the keywords sent
    /// inside it): the JSON param `extra`, an object, for a hand-written builder
    /// that takes them so; otherwise params of their own.
    extra: Map<String, Value>,
    nested: bool,
}

impl Params {
    pub(crate) fn new() -> Params {
        Params {
            fields: Map::new(),
            extra: Map::new(),
            nested: false,
        }
    }

    /// The params of a hand-written builder that takes the untyped fields as the object `extra`.
    pub(crate) fn with_extra_object() -> Params {
        Params {
            nested: true,
            ..Params::new()
        }
    }

    fn put(&mut self, wire: &str, value: Value) {
        self.fields.insert(wire.to_owned(), value);
    }

    /// Whether `wire` is given.
    pub(crate) fn has(&self, wire: &str) -> bool {
        self.fields.contains_key(wire)
    }

    /// `wire` = `value`, a param Python does not take (set from the keywords given).
    pub(crate) fn set(&mut self, wire: &str, value: impl Into<Value>) {
        self.put(wire, value.into());
    }

    /// A `str` argument (`python` is its name in messages).
    pub(crate) fn text(
        &mut self,
        wire: &str,
        python: &str,
        value: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        if let Some(v) = value {
            self.put(wire, Value::String(text(python, v)?));
        }
        Ok(())
    }

    /// An `int` argument; its declared range is core's to check.
    pub(crate) fn integer(
        &mut self,
        wire: &str,
        python: &str,
        value: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        if let Some(v) = value {
            let n = whole(python, v, i128::MIN, i128::MAX)?;
            // Any JSON integer: core checks it against the declared range.
            let number = match (i64::try_from(n), u64::try_from(n)) {
                (Ok(n), _) => Value::from(n),
                (_, Ok(n)) => Value::from(n),
                _ => return Err(validation(v.py(), format!("{python} is out of range: {n}"))),
            };
            self.put(wire, number);
        }
        Ok(())
    }

    /// A `bool` argument.
    pub(crate) fn flag(
        &mut self,
        wire: &str,
        python: &str,
        value: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        if let Some(v) = value {
            self.put(wire, Value::Bool(flag(python, v)?));
        }
        Ok(())
    }

    /// Any JSON-able argument.
    pub(crate) fn json(
        &mut self,
        wire: &str,
        python: &str,
        value: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        if let Some(v) = value {
            self.put(wire, to_json(python, v)?);
        }
        Ok(())
    }

    /// A `bool` keyword that only picks another param's value (`False` when not given).
    pub(crate) fn given_flag(python: &str, value: Option<&Bound<'_, PyAny>>) -> PyResult<bool> {
        match value {
            Some(v) => flag(python, v),
            None => Ok(false),
        }
    }

    /// The `extra` dict: body fields sent as they are (after the declared params).
    pub(crate) fn extra(&mut self, python: &str, value: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let Some(v) = value else {
            return Ok(());
        };
        if !v.is_instance_of::<PyDict>() {
            return Err(wrong_type(python, "a dict", v));
        }
        let Value::Object(fields) = to_json(python, v)? else {
            return Err(wrong_type(python, "a dict", v));
        };
        if !self.nested {
            if let Some(name) = fields.keys().find(|name| self.fields.contains_key(*name)) {
                return Err(validation(
                    v.py(),
                    format!("{name} is given twice: as a keyword and in {python}"),
                ));
            }
        }
        self.extra = fields;
        Ok(())
    }

    /// A typed keyword sent among the `extra` fields; also in `extra=` is a `ValidationError`.
    fn put_extra(
        &mut self,
        py: Python<'_>,
        wire: &str,
        python: &str,
        value: Value,
    ) -> PyResult<()> {
        if self.extra.contains_key(wire) {
            return Err(validation(
                py,
                format!("{wire} is given twice: as {python}= and in extra"),
            ));
        }
        self.extra.insert(wire.to_owned(), value);
        Ok(())
    }

    /// A `str` keyword sent among the `extra` fields.
    pub(crate) fn extra_text(
        &mut self,
        wire: &str,
        python: &str,
        value: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        match value {
            Some(v) => self.put_extra(v.py(), wire, python, Value::String(text(python, v)?)),
            None => Ok(()),
        }
    }

    /// A JSON-able keyword sent among the `extra` fields.
    pub(crate) fn extra_json(
        &mut self,
        wire: &str,
        python: &str,
        value: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        match value {
            Some(v) => self.put_extra(v.py(), wire, python, to_json(python, v)?),
            None => Ok(()),
        }
    }

    /// The JSON params core's builder takes.
    fn into_json(mut self) -> Value {
        if self.nested {
            if !self.extra.is_empty() {
                let extra = Value::Object(std::mem::take(&mut self.extra));
                self.fields.insert("extra".to_owned(), extra);
            }
        } else {
            // The generic builder takes them as params of their own (none is a
            // declared param given too: `extra` refused that).
            self.fields.append(&mut self.extra);
        }
        Value::Object(self.fields)
    }
}

/// How a call's result becomes a Python object.
pub(crate) type Wrap<T> = fn(Python<'_>, T) -> PyResult<Py<PyAny>>;

impl Client {
    /// Runs `operation` with `params` (see the module docs); `wrap` makes its answer,
    /// core's `T`, a Python object.
    pub(crate) fn call_declared<T: Decoded + Send + 'static>(
        &self,
        py: Python<'_>,
        submit: Option<&Bound<'_, PyAny>>,
        operation: Operation,
        params: Params,
        wrap: Wrap<T>,
    ) -> PyResult<Py<PyAny>> {
        let params = params.into_json();
        self.finish(
            py,
            submit,
            move |c| c.call_declared::<T>(operation, &params),
            wrap,
        )
    }

    /// [`Client::call_declared`] of an operation whose answer is one of core's models.
    pub(crate) fn call_model<T: IntoPython>(
        &self,
        py: Python<'_>,
        submit: Option<&Bound<'_, PyAny>>,
        operation: Operation,
        params: Params,
    ) -> PyResult<Py<PyAny>> {
        self.call_declared(py, submit, operation, params, T::wrap)
    }

    /// Runs `operation` with `params`; its answer becomes a `roomchat._records.<record>`.
    pub(crate) fn call_record(
        &self,
        py: Python<'_>,
        submit: Option<&Bound<'_, PyAny>>,
        operation: Operation,
        params: Params,
        record: &'static str,
    ) -> PyResult<Py<PyAny>> {
        let params = params.into_json();
        self.finish(
            py,
            submit,
            move |c| {
                c.call_operation(operation, &params)
                    .map(|answer| (answer, record))
            },
            wrap_record,
        )
    }
}

impl Client {
    /// Runs `operation` with `params`; its answer, a JSON array, becomes a list of
    /// `roomchat._records.<record>`.
    pub(crate) fn call_records(
        &self,
        py: Python<'_>,
        submit: Option<&Bound<'_, PyAny>>,
        operation: Operation,
        params: Params,
        record: &'static str,
    ) -> PyResult<Py<PyAny>> {
        let params = params.into_json();
        self.finish(
            py,
            submit,
            move |c| {
                c.call_operation(operation, &params)
                    .map(|answer| (answer, record))
            },
            wrap_records,
        )
    }
}

/// The answer, a JSON array of records, as a list of its record class.
fn wrap_records(py: Python<'_>, (answer, record): (Value, &'static str)) -> PyResult<Py<PyAny>> {
    let Value::Array(items) = answer else {
        return Err(to_py(
            py,
            &roomchat::Error::new(
                roomchat::ErrorKind::Decode,
                "the answer is not a JSON array",
            ),
        ));
    };
    let list = PyList::empty(py);
    for item in items {
        list.append(wrap_record(py, (item, record))?)?;
    }
    Ok(list.into_any().unbind())
}

/// `roomchat._records`, imported on the first call of an operation with a declared record.
static RECORDS: PyOnceLock<Py<PyModule>> = PyOnceLock::new();

/// The answer (JSON with the service's field names, as core decoded it) as its record.
pub(crate) fn wrap_record(
    py: Python<'_>,
    (answer, record): (Value, &'static str),
) -> PyResult<Py<PyAny>> {
    let records =
        RECORDS.get_or_try_init(py, || py.import("roomchat._records").map(Bound::unbind))?;
    let class = records.bind(py).getattr(record)?;
    let wire = from_json(py, &answer)?;
    Ok(class
        .call_method1(pyo3::intern!(py, "_from_wire"), (wire,))?
        .unbind())
}
