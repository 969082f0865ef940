//! `roomchat.wire`: core's pure request builders and response decoders by operation
//! name, for users who bring their own HTTP stack (and for the conformance vectors).

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};
use roomchat::wire::{Operation, WireResponse};

use crate::convert::{from_json, opt_text, text, to_json, whole};
use crate::errors::{wrong_type, IntoPyResult};

fn operation(py: Python<'_>, name: &Bound<'_, PyAny>) -> PyResult<Operation> {
    Operation::parse(&text("operation", name)?).or_raise(py)
}

/// The wire request of `operation` with `params` (wire names, as in the conformance
/// vectors): `{"method", "path", "query": [[name, value]…], "body", "auth"}`, and `"url"`
/// when `base_url` is given (with `key` as the key's parameter, when given).
#[pyfunction]
#[pyo3(signature = (operation, params=None, *, base_url=None, key=None))]
pub(crate) fn build_request<'py>(
    py: Python<'py>,
    operation: &Bound<'py, PyAny>,
    params: Option<&Bound<'py, PyAny>>,
    base_url: Option<&Bound<'py, PyAny>>,
    key: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let op = self::operation(py, operation)?;
    let params = match params {
        Some(p) => to_json("params", p)?,
        None => serde_json::Value::Null,
    };
    let request = op.build(&params).or_raise(py)?;
    let mut json = request.to_json();
    if let Some(base) = opt_text("base_url", base_url)? {
        let key = opt_text("key", key)?;
        json["url"] = serde_json::Value::String(request.url(&base, key.as_deref()));
    }
    from_json(py, &json)
}

/// The result of a wire response to `operation` as JSON with the service's field
/// names, or the exception it stands for. `headers`: a mapping or (name, value) pairs;
/// `body`: bytes or str.
#[pyfunction]
pub(crate) fn decode_response<'py>(
    py: Python<'py>,
    operation: &Bound<'py, PyAny>,
    status: &Bound<'py, PyAny>,
    headers: &Bound<'py, PyAny>,
    body: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let op = self::operation(py, operation)?;
    let status = whole("status", status, 100, 599)? as u16;
    let mut pairs = Vec::new();
    if !headers.is_none() {
        let items: Vec<Bound<'_, PyAny>> = if let Ok(dict) = headers.cast::<PyDict>() {
            dict.items().iter().collect()
        } else if headers.is_instance_of::<PyList>() || headers.is_instance_of::<PyTuple>() {
            headers.try_iter()?.collect::<PyResult<_>>()?
        } else {
            return Err(wrong_type(
                "headers",
                "a dict or a list of (name, value) pairs",
                headers,
            ));
        };
        for item in items {
            let pair: Vec<Bound<'_, PyAny>> = item
                .try_iter()
                .and_then(|i| i.collect::<PyResult<_>>())
                .map_err(|_| wrong_type("headers", "(name, value) pairs", &item))?;
            let [name, value] = pair.as_slice() else {
                return Err(wrong_type("headers", "(name, value) pairs", &item));
            };
            pairs.push((text("header name", name)?, text("header value", value)?));
        }
    }
    let body = if let Ok(bytes) = body.cast::<PyBytes>() {
        bytes.as_bytes().to_vec()
    } else if body.is_instance_of::<PyString>() {
        text("body", body)?.into_bytes()
    } else {
        return Err(wrong_type("body", "bytes or str", body));
    };
    let response = WireResponse::new(status, pairs, body);
    let value = crate::exiting::detach(py, || op.decode(&response)).or_raise(py)?;
    from_json(py, &value)
}

/// The operation names `build_request` and `decode_response` take.
pub(crate) fn operation_names() -> Vec<&'static str> {
    Operation::ALL.iter().map(|op| op.name()).collect()
}
