//! Arguments in (with `TypeError` for a wrong type and `ValidationError` for a bad
//! value, never a panic), JSON both ways.

use std::time::Duration;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::{Map, Number, Value};

use crate::errors::{configuration, validation, wrong_type};

/// A `str` argument as UTF-8 (a lone surrogate is a `ValidationError`).
pub(crate) fn text(name: &str, value: &Bound<'_, PyAny>) -> PyResult<String> {
    let s = value
        .cast::<PyString>()
        .map_err(|_| wrong_type(name, "a str", value))?;
    s.to_cow().map(|c| c.into_owned()).map_err(|_| {
        validation(
            value.py(),
            format!("{name} is not valid text: it holds a lone surrogate, which has no UTF-8 form"),
        )
    })
}

/// An optional `str` argument (`None` stays `None`).
pub(crate) fn opt_text(name: &str, value: Option<&Bound<'_, PyAny>>) -> PyResult<Option<String>> {
    match value {
        None => Ok(None),
        Some(v) if v.is_none() => Ok(None),
        Some(v) => text(name, v).map(Some),
    }
}

/// An `int` argument (not a `bool`) within `min..=max`.
pub(crate) fn whole(name: &str, value: &Bound<'_, PyAny>, min: i128, max: i128) -> PyResult<i128> {
    if value.is_instance_of::<PyBool>() || !value.is_instance_of::<PyInt>() {
        return Err(wrong_type(name, "an int", value));
    }
    let n: i128 = value.extract().map_err(|_| {
        validation(
            value.py(),
            format!("{name} is out of range ({min} to {max})"),
        )
    })?;
    if n < min || n > max {
        return Err(validation(
            value.py(),
            format!("{name} must be between {min} and {max}, not {n}"),
        ));
    }
    Ok(n)
}

/// A `bool` argument.
pub(crate) fn flag(name: &str, value: &Bound<'_, PyAny>) -> PyResult<bool> {
    value
        .cast::<PyBool>()
        .map(|b| b.is_true())
        .map_err(|_| wrong_type(name, "a bool", value))
}

/// Seconds as an `int` or `float` (finite, not negative, at most core's
/// [`roomchat::MAX_DURATION`], the limit core's builders hold every duration to): a
/// setting, so a bad value is a `ConfigurationError` naming the argument.
pub(crate) fn seconds(name: &str, value: &Bound<'_, PyAny>) -> PyResult<Duration> {
    if value.is_instance_of::<PyBool>()
        || !(value.is_instance_of::<PyInt>() || value.is_instance_of::<PyFloat>())
    {
        return Err(wrong_type(
            name,
            "a number of seconds (int or float)",
            value,
        ));
    }
    // An int too large for a float is out of range either way.
    let secs: f64 = value.extract().unwrap_or(f64::INFINITY);
    if secs.is_nan() || secs < 0.0 {
        return Err(configuration(
            value.py(),
            format!("{name} must be a finite number of seconds, not negative (got {secs})"),
        ));
    }
    let max = roomchat::MAX_DURATION;
    match Duration::try_from_secs_f64(secs) {
        Ok(duration) if duration <= max => Ok(duration),
        _ => Err(configuration(
            value.py(),
            format!("{name} must be at most {} s (got {secs} s)", max.as_secs()),
        )),
    }
}

/// How deep a JSON argument may nest (a self-referencing list would otherwise recurse forever).
const MAX_DEPTH: usize = 128;

/// A JSON-able Python value (`dict` with `str` keys, `list`/`tuple`, `str`, `int`,
/// `float`, `bool`, `None`) as JSON.
pub(crate) fn to_json(name: &str, value: &Bound<'_, PyAny>) -> PyResult<Value> {
    to_json_at(name, value, 0)
}

fn to_json_at(name: &str, value: &Bound<'_, PyAny>, depth: usize) -> PyResult<Value> {
    let py = value.py();
    if depth > MAX_DEPTH {
        return Err(validation(
            py,
            format!("{name} nests deeper than {MAX_DEPTH} levels (or refers to itself)"),
        ));
    }
    if value.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(b) = value.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if value.is_instance_of::<PyInt>() {
        if let Ok(n) = value.extract::<i64>() {
            return Ok(Value::Number(n.into()));
        }
        if let Ok(n) = value.extract::<u64>() {
            return Ok(Value::Number(n.into()));
        }
        return Err(validation(
            py,
            format!("{name} holds an integer too large for JSON numbers (64 bits)"),
        ));
    }
    if value.is_instance_of::<PyFloat>() {
        let f: f64 = value.extract()?;
        return Number::from_f64(f).map(Value::Number).ok_or_else(|| {
            validation(py, format!("{name} holds {f}, which JSON cannot represent"))
        });
    }
    if value.is_instance_of::<PyString>() {
        return text(name, value).map(Value::String);
    }
    if let Ok(dict) = value.cast::<PyDict>() {
        let mut map = Map::new();
        for (k, v) in dict.iter() {
            if !k.is_instance_of::<PyString>() {
                return Err(PyTypeError::new_err(format!(
                    "{name} has a key that is not a str: JSON object keys are text"
                )));
            }
            let key = text(name, &k)?;
            map.insert(key, to_json_at(name, &v, depth + 1)?);
        }
        return Ok(Value::Object(map));
    }
    if value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>() {
        let mut items = Vec::new();
        for item in value.try_iter()? {
            items.push(to_json_at(name, &item?, depth + 1)?);
        }
        return Ok(Value::Array(items));
    }
    Err(wrong_type(
        name,
        "JSON-compatible (dict, list, tuple, str, int, float, bool or None)",
        value,
    ))
}

/// JSON as Python: objects become `dict`, arrays `list`.
pub(crate) fn from_json<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.into_pyobject(py)?.into_any()
            } else if let Some(u) = n.as_u64() {
                u.into_pyobject(py)?.into_any()
            } else {
                n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any()
            }
        }
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(from_json(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(map) => map_to_dict(py, map)?.into_any(),
    })
}

/// A JSON object as a `dict`.
pub(crate) fn map_to_dict<'py>(
    py: Python<'py>,
    map: &Map<String, Value>,
) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    for (k, v) in map {
        dict.set_item(k, from_json(py, v)?)?;
    }
    Ok(dict)
}
