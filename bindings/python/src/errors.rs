//! Core errors as the exception classes of `roomchat._errors` (defined in Python, so
//! that they pickle and subclass the builtins they stand for).

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};
use roomchat::{Error, ErrorKind, Remedy};

/// `roomchat._errors`, imported once.
static ERRORS: PyOnceLock<Py<PyModule>> = PyOnceLock::new();

fn errors_module(py: Python<'_>) -> PyResult<&Bound<'_, PyModule>> {
    ERRORS
        .get_or_try_init(py, || py.import("roomchat._errors").map(Bound::unbind))
        .map(|m| m.bind(py))
}

/// The exception class of a kind (by its stable code), or the base class for a kind
/// this build does not know.
fn class_for(py: Python<'_>, kind: ErrorKind) -> PyResult<Bound<'_, PyType>> {
    let module = errors_module(py)?;
    let by_code = module.getattr(pyo3::intern!(py, "_BY_CODE"))?;
    match by_code.get_item(kind.code()) {
        Ok(class) => Ok(class.cast_into::<PyType>()?),
        Err(_) => Ok(module
            .getattr(pyo3::intern!(py, "RoomchatError"))?
            .cast_into::<PyType>()?),
    }
}

/// The Python exception for a core error: the kind's class, with `status`, `method`,
/// `path`, `event_id`, `retry_after`, the plain `message` and the service's own texts
/// (`service_message`, `service_error`, `service_error_message`) as attributes, and the
/// core's one-line text (less its `kind: ` prefix) as `str(exc)`.
pub(crate) fn to_py(py: Python<'_>, error: &Error) -> PyErr {
    match build(py, error) {
        Ok(exc) => PyErr::from_value(exc),
        Err(e) => e,
    }
}

/// How a Python program spells a setting an error names as the way past a refusal.
fn remedy_name(remedy: Remedy) -> &'static str {
    match remedy {
        Remedy::AllowInsecureHttp => "allow_insecure_http=True",
        _ => remedy.rust_name(),
    }
}

fn build<'py>(py: Python<'py>, error: &Error) -> PyResult<Bound<'py, PyAny>> {
    // A setting the message names is named as Python spells it.
    let named;
    let error = match error.remedy() {
        Some(remedy) => {
            named = error.clone().name_remedy(remedy_name(remedy));
            &named
        }
        None => error,
    };
    let kind = error.kind();
    let class = class_for(py, kind)?;
    let shown = error.to_string();
    let prefix = format!("{}: ", kind.name());
    let text = shown.strip_prefix(&prefix).unwrap_or(&shown);
    let kwargs = PyDict::new(py);
    kwargs.set_item("message", error.message())?;
    kwargs.set_item("kind", kind.name())?;
    kwargs.set_item("code", kind.code())?;
    kwargs.set_item("status", error.status())?;
    kwargs.set_item("method", error.method())?;
    kwargs.set_item("path", error.path())?;
    kwargs.set_item("event_id", error.event_id())?;
    kwargs.set_item("retry_after", error.retry_after().map(|d| d.as_secs_f64()))?;
    kwargs.set_item("service_message", error.service_message())?;
    kwargs.set_item("service_error", error.service_error())?;
    kwargs.set_item("service_error_message", error.service_error_message())?;
    class.call(PyTuple::new(py, [text])?, Some(&kwargs))
}

/// A `roomchat.ValidationError` raised by the binding itself (nothing was sent).
pub(crate) fn validation(py: Python<'_>, message: impl Into<String>) -> PyErr {
    to_py(py, &Error::new(ErrorKind::Validation, message.into()))
}

/// A `roomchat.ConfigurationError` raised by the binding itself.
pub(crate) fn configuration(py: Python<'_>, message: impl Into<String>) -> PyErr {
    to_py(py, &Error::new(ErrorKind::Configuration, message.into()))
}

/// A `TypeError` naming the argument and what it should be.
pub(crate) fn wrong_type(name: &str, expected: &str, got: &Bound<'_, PyAny>) -> PyErr {
    let got = got
        .get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".to_owned());
    PyTypeError::new_err(format!("{name} must be {expected}, not {got}"))
}

/// Core results into Python results.
pub(crate) trait IntoPyResult<T> {
    fn or_raise(self, py: Python<'_>) -> PyResult<T>;
}

impl<T> IntoPyResult<T> for roomchat::Result<T> {
    fn or_raise(self, py: Python<'_>) -> PyResult<T> {
        self.map_err(|e| to_py(py, &e))
    }
}
