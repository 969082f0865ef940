//! What every result class shares, and the classes no declaration describes.
//!
//! The classes of core's models (`User`, `UserPage`, `Message`, …) are generated
//! from `api/operations.toml` in `models_declared.rs`: frozen classes that wrap
//! core's values and make Python objects only for the attributes that are read (a
//! page of 50 users is 50 small wrappers around shared Rust values, and a
//! `username` becomes a `str` when read). They use the helpers here: how a field
//! shows in `repr` and hashes, the wire form (`to_dict`, `from_dict`, pickles),
//! and [`IntoPython`], how a call's answer becomes its class. `RawResponse` and
//! `RateLimitState` are written here: no declaration describes them.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::time::{SystemTime, UNIX_EPOCH};

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple, PyType};
use roomchat::wire::Decoded;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use crate::convert::{from_json, to_json};
use crate::errors::validation;

/// One of core's models as its Python class (`models_declared.rs`; `Value` as
/// its Python form): how a call's answer becomes a Python object.
pub(crate) trait IntoPython: Decoded + Send + 'static {
    fn wrap(py: Python<'_>, value: Self) -> PyResult<Py<PyAny>>;
}

impl IntoPython for Value {
    fn wrap(py: Python<'_>, value: Self) -> PyResult<Py<PyAny>> {
        Ok(from_json(py, &value)?.unbind())
    }
}

/// A model's `hash`: of its parts (a list of optional strings, or a tuple).
pub(crate) fn hash_of<T: Hash>(parts: T) -> u64 {
    let mut hasher = DefaultHasher::new();
    parts.hash(&mut hasher);
    hasher.finish()
}

/// A string field as Python shows it (single quotes), shortened.
pub(crate) fn show(value: Option<&str>) -> String {
    let Some(s) = value else {
        return "None".to_owned();
    };
    let long = s.chars().count() > 40;
    let mut out = String::from("'");
    for c in s.chars().take(if long { 37 } else { 40 }) {
        match c {
            '\'' => out.push_str("\\'"),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.extend(c.escape_default()),
            c => out.push(c),
        }
    }
    out.push('\'');
    if long {
        out.push_str("...");
    }
    out
}

/// A model's wire form (`to_dict`): the service's field names.
pub(crate) fn wire_dict<'py, T: Serialize>(
    py: Python<'py>,
    value: &T,
) -> PyResult<Bound<'py, PyAny>> {
    // Serializing core's models cannot fail: they are maps, strings and numbers.
    let json = serde_json::to_value(value).unwrap_or(Value::Null);
    from_json(py, &json)
}

/// A model from its wire form (`from_dict`); `what` names it in the error.
pub(crate) fn parse<T: DeserializeOwned>(
    py: Python<'_>,
    what: &str,
    data: &Bound<'_, PyAny>,
) -> PyResult<T> {
    let json = to_json("data", data)?;
    serde_json::from_value(json)
        .map_err(|e| validation(py, format!("not the wire form of {what}: {e}")))
}

/// `(cls.from_dict, (self.to_dict(),))`: models pickle as their wire form.
pub(crate) fn reduce<'py>(slf: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyTuple>> {
    let py = slf.py();
    let from_dict = slf.get_type().getattr(pyo3::intern!(py, "from_dict"))?;
    let data = slf.call_method0(pyo3::intern!(py, "to_dict"))?;
    PyTuple::new(py, [from_dict, PyTuple::new(py, [data])?.into_any()])
}

/// A time as Python's aware `datetime` in UTC.
pub(crate) fn utc_datetime(py: Python<'_>, at: SystemTime) -> PyResult<Bound<'_, PyAny>> {
    let seconds = at
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs_f64();
    let datetime = py.import("datetime")?;
    let utc = datetime.getattr("timezone")?.getattr("utc")?;
    datetime
        .getattr("datetime")?
        .call_method1("fromtimestamp", (seconds, utc))
}

// ---- RawResponse, RateLimitState -----------------------------------------------------

/// The answer to `Client.raw_request` (any 2xx).
#[pyclass(frozen, module = "roomchat")]
pub struct RawResponse {
    pub(crate) inner: roomchat::RawResponse,
}

impl RawResponse {
    /// The headers by lower-case name, repeated ones joined with ", " (in order).
    fn joined_headers(&self) -> Vec<(String, String)> {
        let mut joined: Vec<(String, String)> = Vec::new();
        for (name, value) in &self.inner.headers {
            let name = name.to_ascii_lowercase();
            match joined.iter_mut().find(|(n, _)| *n == name) {
                Some((_, previous)) => {
                    previous.push_str(", ");
                    previous.push_str(value);
                }
                None => joined.push((name, value.clone())),
            }
        }
        joined
    }
}

#[pymethods]
impl RawResponse {
    /// The HTTP status.
    #[getter]
    fn status(&self) -> u16 {
        self.inner.status
    }
    /// The headers, names in lower case; a repeated header's values joined with ", ".
    #[getter]
    fn headers<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        for (name, value) in self.joined_headers() {
            dict.set_item(name, value)?;
        }
        Ok(dict)
    }
    /// The body as JSON (`None` when empty).
    #[getter]
    fn body<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        from_json(py, &self.inner.body)
    }
    /// `{"status", "headers", "body"}`.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        dict.set_item("status", self.inner.status)?;
        dict.set_item("headers", self.headers(py)?)?;
        dict.set_item("body", self.body(py)?)?;
        Ok(dict)
    }
    /// A response from `{"status", "headers", "body"}`.
    #[classmethod]
    fn from_dict(cls: &Bound<'_, PyType>, data: &Bound<'_, PyAny>) -> PyResult<RawResponse> {
        let py = cls.py();
        let json = to_json("data", data)?;
        let bad = || {
            validation(
                py,
                "not the form of a raw response: {status, headers, body}",
            )
        };
        let status = json
            .get("status")
            .and_then(Value::as_u64)
            .and_then(|s| u16::try_from(s).ok())
            .ok_or_else(bad)?;
        let mut headers = Vec::new();
        if let Some(given) = data.get_item("headers").ok().filter(|h| !h.is_none()) {
            let given = given.cast_into::<PyDict>().map_err(|_| bad())?;
            for (name, value) in given.iter() {
                let name = crate::convert::text("header name", &name)?;
                let value = crate::convert::text("header value", &value)?;
                headers.push((name.to_ascii_lowercase(), value));
            }
        }
        let body = json.get("body").cloned().unwrap_or(Value::Null);
        Ok(RawResponse {
            inner: roomchat::RawResponse {
                status,
                headers,
                body,
            },
        })
    }
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        reduce(slf.as_any())
    }
    fn __eq__(&self, other: &Self) -> bool {
        let sorted = |r: &Self| {
            let mut h = r.joined_headers();
            h.sort();
            h
        };
        self.inner.status == other.inner.status
            && self.inner.body == other.inner.body
            && sorted(self) == sorted(other)
    }
    fn __hash__(&self) -> u64 {
        hash_of((self.inner.status, self.joined_headers().len()))
    }
    fn __repr__(&self) -> String {
        format!("RawResponse(status={})", self.inner.status)
    }
}

/// Where a key's shared rate-limit budget stands (times in seconds).
#[pyclass(frozen, eq, hash, module = "roomchat")]
#[derive(PartialEq, Eq, Hash)]
pub struct RateLimitState {
    /// Requests the client allows itself per window.
    #[pyo3(get)]
    limit: u32,
    /// Requests started within the current window.
    #[pyo3(get)]
    used: u32,
    /// Requests that may start now.
    #[pyo3(get)]
    remaining: u32,
    window: std::time::Duration,
    next_free_in: std::time::Duration,
    blocked_for: Option<std::time::Duration>,
    /// Where the budget is kept: `"local"` (this process) or `"redis"` (shared).
    #[pyo3(get)]
    backend: &'static str,
    /// Redis is the backend but cannot be reached: the figures are the fallback's.
    #[pyo3(get)]
    degraded: bool,
}

impl From<roomchat::RateLimitState> for RateLimitState {
    fn from(s: roomchat::RateLimitState) -> RateLimitState {
        RateLimitState {
            limit: s.limit,
            used: s.used,
            remaining: s.remaining,
            window: s.window,
            next_free_in: s.next_free_in,
            blocked_for: s.blocked_for,
            backend: s.backend.name(),
            degraded: s.degraded,
        }
    }
}

#[pymethods]
impl RateLimitState {
    /// The window the client counts in, in seconds.
    #[getter]
    fn window(&self) -> f64 {
        self.window.as_secs_f64()
    }
    /// Seconds until the next request may start (0.0 when one may start now).
    #[getter]
    fn next_free_in(&self) -> f64 {
        self.next_free_in.as_secs_f64()
    }
    /// Seconds every caller is still held off after a 429, or `None`.
    #[getter]
    fn blocked_for(&self) -> Option<f64> {
        self.blocked_for.map(|d| d.as_secs_f64())
    }
    /// The state as a dict (seconds as floats).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        dict.set_item("limit", self.limit)?;
        dict.set_item("window", self.window())?;
        dict.set_item("used", self.used)?;
        dict.set_item("remaining", self.remaining)?;
        dict.set_item("next_free_in", self.next_free_in())?;
        dict.set_item("blocked_for", self.blocked_for())?;
        dict.set_item("backend", self.backend)?;
        dict.set_item("degraded", self.degraded)?;
        Ok(dict)
    }
    fn __repr__(&self) -> String {
        format!(
            "RateLimitState(limit={}, window={:.3}, used={}, remaining={}, next_free_in={:.3}, blocked_for={}, backend='{}', degraded={})",
            self.limit,
            self.window(),
            self.used,
            self.remaining,
            self.next_free_in(),
            match self.blocked_for() {
                Some(b) => format!("{b:.3}"),
                None => "None".to_owned(),
            },
            self.backend,
            if self.degraded { "True" } else { "False" }
        )
    }
}
