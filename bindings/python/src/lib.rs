//! `roomchat._native`: the extension module of the Python package `roomchat`.
//!
//! It translates and never re-implements: arguments are converted (a wrong type is a
//! `TypeError`, a bad value core's `ValidationError`), core is called with the GIL
//! released, results are wrapped in frozen classes that convert fields on access, and
//! core's errors become the exception classes of `roomchat._errors`. Core's observer
//! events go to the `roomchat` logger. The pure-Python part (`python/roomchat/`) adds
//! the exceptions, `AsyncClient` and `roomchat.wire`.
//!
//! Built by maturin (`bindings/python/pyproject.toml`); tested by the pytest suite
//! against the installed wheel (`bindings/python/run-tests.sh`).

use pyo3::prelude::*;

mod cli;
mod client;
mod convert;
mod declared;
mod dispatch;
mod errors;
mod exiting;
mod logging;
mod models;
mod models_declared;
mod operations;
mod pages;
mod response;
mod telemetry;
mod wire;

#[pymodule]
mod _native {
    #[pymodule_export]
    use super::cli::cli_main;
    #[pymodule_export]
    use super::client::{CancelToken, Client, RateLimit, UserIterator, UserPageIterator};
    #[pymodule_export]
    use super::dispatch::Dispatcher;
    #[pymodule_export]
    use super::models::{RateLimitState, RawResponse};
    #[pymodule_export]
    use super::models_declared::{
        CreatedUser, Deactivated, Invalidated, Message, MessageAuthor, Reactivated, TokenUser,
        User, UserPage,
    };
    #[pymodule_export]
    use super::pages::{RecordIterator, RecordPageIterator};
    #[pymodule_export]
    use super::response::APIResponse;
    #[pymodule_export]
    use super::telemetry::_report_unraisable;
    #[pymodule_export]
    use super::wire::{build_request, decode_response};

    use super::*;

    #[pymodule_init]
    fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
        crate::exiting::register(m.py(), m)?;
        m.add("__version__", env!("CARGO_PKG_VERSION"))?;
        m.add("CORE_VERSION", roomchat::VERSION)?;
        m.add("OPERATIONS", wire::operation_names())?;
        m.add(
            "ERROR_KINDS",
            roomchat::ErrorKind::ALL
                .iter()
                .map(|k| (k.code(), k.name()))
                .collect::<Vec<_>>(),
        )?;
        Ok(())
    }
}
