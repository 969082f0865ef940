//! `roomchat.APIResponse`: a call's result beside the HTTP answer it came from
//! (`client.with_raw_response.<method>(...)`).

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyType};
use roomchat::ResponseMeta;

/// The answer to a call made through `client.with_raw_response`: the HTTP
/// `status`, the `headers` (names in lower case, a repeated header's values
/// joined with ", "), the `request_id` the service gave it (`X-Request-Id`,
/// `None` when absent), the `attempts` the call made, and `parse()`: what the
/// call returns without `with_raw_response`.
#[pyclass(frozen, module = "roomchat")]
pub struct APIResponse {
    meta: ResponseMeta,
    value: Py<PyAny>,
}

impl APIResponse {
    pub(crate) fn new(meta: ResponseMeta, value: Py<PyAny>) -> APIResponse {
        APIResponse { meta, value }
    }
}

#[pymethods]
impl APIResponse {
    /// The HTTP status.
    #[getter]
    fn status(&self) -> u16 {
        self.meta.status
    }

    /// The headers, names in lower case; a repeated header's values joined with ", ".
    #[getter]
    fn headers<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        for (name, value) in &self.meta.headers {
            let name = name.to_ascii_lowercase();
            let joined = match dict.get_item(&name)? {
                Some(previous) => format!("{}, {value}", previous.extract::<String>()?),
                None => value.clone(),
            };
            dict.set_item(name, joined)?;
        }
        Ok(dict)
    }

    /// The id the service gave the request (`X-Request-Id`), or `None`.
    #[getter]
    fn request_id(&self) -> Option<&str> {
        self.meta.request_id()
    }

    /// The attempts the call made: 1 when the first was answered, more after retries.
    #[getter]
    fn attempts(&self) -> u32 {
        self.meta.attempts
    }

    /// The call's result, as the method returns it without `with_raw_response`.
    fn parse(&self, py: Python<'_>) -> Py<PyAny> {
        self.value.clone_ref(py)
    }

    /// `APIResponse[UserPage]` and the like, for annotations.
    #[classmethod]
    fn __class_getitem__(cls: &Bound<'_, PyType>, _item: &Bound<'_, PyAny>) -> Py<PyType> {
        cls.clone().unbind()
    }

    fn __repr__(&self) -> String {
        match self.meta.request_id() {
            Some(id) => format!(
                "<APIResponse [{}] request_id={:?} attempts={}>",
                self.meta.status, id, self.meta.attempts
            )
            .replace('"', "'"),
            None => format!(
                "<APIResponse [{}] attempts={}>",
                self.meta.status, self.meta.attempts
            ),
        }
    }
}
