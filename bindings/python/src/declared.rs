//! How the generated methods (`operations.rs`, made from `api/operations.toml`) run
//! their operations: written once, for every operation with a generated surface.
//!
//! A method gathers its arguments into [`Params`] (the wire names, path params
//! included; a wrong Python type is a `TypeError`, as for the hand-written methods),
//! then [`Client::call_declared`] runs the operation through core's
//! `call_operation`, which checks the declared limits (a `ValidationError`, nothing
//! sent) and sends it through the one send path, by the same `finish` as the
//! hand-written methods: the GIL released, or queued on `AsyncClient`'s dispatcher
//! with its cancel token, or with the response kept for `with_raw_response`. The
//! answer becomes its typed record, `roomchat._records.<Record>`, on the thread that
//! holds the GIL.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyModule;
use roomchat::wire::Operation;
use serde_json::{Map, Value};

use crate::client::Client;
use crate::convert::{flag, from_json, text, to_json, whole};

/// An operation's JSON params, by wire name; an argument that is `None` is not sent.
pub(crate) struct Params(Map<String, Value>);

impl Params {
    pub(crate) fn new() -> Params {
        Params(Map::new())
    }

    fn put(&mut self, wire: &str, value: Value) {
        self.0.insert(wire.to_owned(), value);
    }

    /// A `str` argument (`python` is its name in messages).
    pub(crate) fn text(
        &mut self,
        wire: &str,
        python: &str,
        value: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        if let Some(v) = value.filter(|v| !v.is_none()) {
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
        if let Some(v) = value.filter(|v| !v.is_none()) {
            let n = whole(python, v, i64::MIN.into(), i64::MAX.into())?;
            // Within i64 by the check above.
            self.put(wire, Value::from(n as i64));
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
        if let Some(v) = value.filter(|v| !v.is_none()) {
            self.put(wire, Value::Bool(flag(python, v)?));
        }
        Ok(())
    }

    /// Any JSON-able argument.
    #[allow(dead_code)] // for a declared `json` param; none is declared today
    pub(crate) fn json(
        &mut self,
        wire: &str,
        python: &str,
        value: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        if let Some(v) = value.filter(|v| !v.is_none()) {
            self.put(wire, to_json(python, v)?);
        }
        Ok(())
    }
}

impl Client {
    /// Runs `operation` with `params` (see the module docs); its answer becomes a
    /// `roomchat._records.<record>`.
    pub(crate) fn call_declared(
        &self,
        py: Python<'_>,
        submit: Option<&Bound<'_, PyAny>>,
        operation: Operation,
        params: Params,
        record: &'static str,
    ) -> PyResult<Py<PyAny>> {
        let params = Value::Object(params.0);
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

/// `roomchat._records`, imported on the first generated call.
static RECORDS: PyOnceLock<Py<PyModule>> = PyOnceLock::new();

/// The answer (JSON with the service's field names, as core decoded it) as its record.
fn wrap_record(py: Python<'_>, (answer, record): (Value, &'static str)) -> PyResult<Py<PyAny>> {
    let records =
        RECORDS.get_or_try_init(py, || py.import("roomchat._records").map(Bound::unbind))?;
    let class = records.bind(py).getattr(record)?;
    let wire = from_json(py, &answer)?;
    Ok(class
        .call_method1(pyo3::intern!(py, "_from_wire"), (wire,))?
        .unbind())
}
