//! OpenTelemetry (issue 45): core's instrumentation hooks handed to the pure-Python
//! layer `roomchat._telemetry`, which makes the spans and metrics with core's timings
//! and returns the trace-context headers of each attempt.
//!
//! A client made while `opentelemetry-api` is importable gets a [`PyInstrumentation`]
//! (unless `opentelemetry=False`). Where each call is made, on the caller's thread
//! with the GIL held, [`Captured::now`] asks `_telemetry.capture()` for the
//! OpenTelemetry context the call belongs to (contextvars: the calling thread's, an
//! `AsyncClient` task's, the context of an iterator's `next()`), or None when nothing
//! would be recorded or sent (no SDK, nothing to propagate): then the call is not
//! observed and no hook takes the GIL. [`Captured::run`] puts that context where the
//! call runs (the same thread, or an `AsyncClient` worker) for core's `start_call`.
//!
//! Core calls the hooks on the thread that runs the call, with no client lock held
//! and never while a request is on the wire: each takes the GIL for the Python
//! hook only (an `AsyncClient` worker too, for those calls that are observed).

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock, Weak};
use std::time::{SystemTime, UNIX_EPOCH};

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyList, PyTuple};
use roomchat::instrument::{
    AttemptEnd, AttemptStart, CallEnd, CallEvent, CallEventKind, CallInfo, CallObserver,
    Instrumentation, RequestHeaders,
};

use crate::errors::configuration;

/// Whether a client with telemetry was made: until then no call asks Python anything.
static ACTIVE: AtomicBool = AtomicBool::new(false);
/// `roomchat._telemetry.capture`.
static CAPTURE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

thread_local! {
    /// The context of the calls running on this thread now (see [`Captured::run`]).
    static CONTEXT: RefCell<Option<Py<PyAny>>> = const { RefCell::new(None) };
}

/// What `Client(...)` takes about OpenTelemetry.
pub(crate) struct Options<'a, 'py> {
    pub enabled: Option<&'a Bound<'py, PyAny>>,
    pub tracer_provider: Option<&'a Bound<'py, PyAny>>,
    pub meter_provider: Option<&'a Bound<'py, PyAny>>,
}

fn given<'a, 'py>(value: Option<&'a Bound<'py, PyAny>>) -> Option<&'a Bound<'py, PyAny>> {
    value.filter(|v| !v.is_none())
}

impl Options<'_, '_> {
    /// The instrumentation of a client made with these options (None: OpenTelemetry is
    /// not installed, or turned off), and its Python side (for [`watch`]).
    pub(crate) fn instrumentation(
        &self,
        py: Python<'_>,
    ) -> PyResult<Option<(Arc<PyInstrumentation>, Py<PyAny>)>> {
        let enabled = match given(self.enabled) {
            Some(v) => crate::convert::flag("opentelemetry", v)?,
            None => true,
        };
        let tracer_provider = given(self.tracer_provider);
        let meter_provider = given(self.meter_provider);
        if !enabled {
            if tracer_provider.is_some() || meter_provider.is_some() {
                return Err(configuration(
                    py,
                    "opentelemetry is False: give no tracer_provider or meter_provider",
                ));
            }
            return Ok(None);
        }
        let module = py.import("roomchat._telemetry")?;
        let telemetry = module.call_method1(
            pyo3::intern!(py, "client_telemetry"),
            (tracer_provider, meter_provider),
        )?;
        if telemetry.is_none() {
            return Ok(None);
        }
        CAPTURE.get_or_try_init(py, || {
            module
                .getattr(pyo3::intern!(py, "capture"))
                .map(Bound::unbind)
        })?;
        ACTIVE.store(true, Ordering::Release);
        let telemetry = telemetry.unbind();
        Ok(Some((
            Arc::new(PyInstrumentation {
                telemetry: telemetry.clone_ref(py),
            }),
            telemetry,
        )))
    }
}

/// Reports the budget of `client` (while it lives and is open) in the gauge
/// `roomchat.rate_limit.remaining`, through its telemetry's Python side.
pub(crate) fn watch(
    py: Python<'_>,
    telemetry: &Py<PyAny>,
    client: &Arc<RwLock<Option<roomchat::Client>>>,
    base_url: &str,
) -> PyResult<()> {
    let probe = Py::new(
        py,
        BudgetProbe {
            client: Arc::downgrade(client),
        },
    )?;
    telemetry.call_method1(py, pyo3::intern!(py, "watch"), (probe, base_url))?;
    Ok(())
}

/// What the budget gauge reads a client's remaining slots through, without keeping it.
#[pyclass(frozen, module = "roomchat._native")]
pub struct BudgetProbe {
    client: Weak<RwLock<Option<roomchat::Client>>>,
}

#[pymethods]
impl BudgetProbe {
    /// The budget's free slots now; None once the client is closed or gone.
    fn remaining(&self, py: Python<'_>) -> Option<u32> {
        let client = self
            .client
            .upgrade()?
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()?;
        // Without the GIL: a shared budget asks Redis.
        Some(crate::exiting::detach(py, move || {
            client.rate_limit_state().remaining
        }))
    }
}

/// The OpenTelemetry context of a call being made (None: the call is not observed).
pub(crate) struct Captured(Option<Py<PyAny>>);

impl Captured {
    /// The context a call made now on this thread belongs to (with the GIL held). A
    /// failure of the telemetry is reported, never the call's: the call goes unobserved.
    pub(crate) fn now(py: Python<'_>) -> Captured {
        if !ACTIVE.load(Ordering::Acquire) {
            return Captured(None);
        }
        let Some(capture) = CAPTURE.get(py) else {
            return Captured(None);
        };
        match capture.call0(py) {
            Ok(context) => Captured((!context.is_none(py)).then_some(context)),
            Err(e) => {
                report(py, e);
                Captured(None)
            }
        }
    }

    /// Runs `f` (a core call, on this thread or a worker, without the GIL) with the
    /// context set for core's `start_call` hooks of the calls `f` makes.
    pub(crate) fn run<R>(self, f: impl FnOnce() -> R) -> R {
        if self.0.is_none() {
            return f();
        }
        /// Puts the outer context back, even when `f` panics.
        struct Restore(Option<Py<PyAny>>);
        impl Drop for Restore {
            fn drop(&mut self) {
                let outer = self.0.take();
                // The captured context leaves with the scope (a deferred decref
                // without the GIL, which pyo3 does when next taken).
                drop(CONTEXT.with(|c| c.replace(outer)));
            }
        }
        let _restore = Restore(CONTEXT.with(|c| c.replace(self.0)));
        f()
    }
}

/// A client's instrumentation: its telemetry's Python side (`_telemetry.ClientTelemetry`).
pub(crate) struct PyInstrumentation {
    telemetry: Py<PyAny>,
}

/// Nanoseconds since the epoch, as OpenTelemetry's Python API takes a time.
fn nanos(at: SystemTime) -> u64 {
    at.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

impl Instrumentation for PyInstrumentation {
    fn start_call(&self, call: &CallInfo<'_>) -> Option<Box<dyn CallObserver>> {
        // Not observed (no context captured where it was made): no GIL taken.
        if CONTEXT.with(|c| c.borrow().is_none()) {
            return None;
        }
        crate::exiting::attach(|py| {
            let parent = CONTEXT.with(|c| c.borrow().as_ref().map(|p| p.clone_ref(py)))?;
            let info = (
                call.operation,
                call.call_span_name(),
                call.attempt_span_name(),
                call.request_method(),
                call.server_address,
                call.server_port,
                call.url_full(),
                call.url_template,
                call.protocol_version,
                nanos(call.started_at),
            );
            let observer =
                self.telemetry
                    .call_method1(py, pyo3::intern!(py, "start_call"), (parent, info));
            match observer {
                Ok(observer) if !observer.is_none(py) => {
                    Some(Box::new(PyCall::new(observer)) as Box<dyn CallObserver>)
                }
                Ok(_) => None,
                Err(e) => {
                    report(py, e);
                    None
                }
            }
        })
        .flatten()
    }
}

/// A failure of the telemetry (never the call's): reported as Python reports an
/// exception it cannot raise (`sys.unraisablehook`), and the call goes on.
fn report(py: Python<'_>, error: PyErr) {
    error.write_unraisable(py, None);
}

/// The events of a hook as `_telemetry` takes them: `(name, at_ns, attributes)`,
/// the attributes as core's feature `opentelemetry` names them.
fn events<'py>(py: Python<'py>, events: &[CallEvent]) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for event in events {
        let attributes = PyDict::new(py);
        attributes.set_item("roomchat.attempt", event.attempt)?;
        match event.kind {
            CallEventKind::RateLimitWait => {
                attributes.set_item("roomchat.wait.duration", event.wait.as_secs_f64())?;
            }
            CallEventKind::Retry => {
                let reason = event.retry_reason.map_or("other", |r| r.as_str());
                attributes.set_item("roomchat.retry.reason", reason)?;
                attributes.set_item("roomchat.wait.duration", event.wait.as_secs_f64())?;
                if let Some(status) = event.status {
                    attributes.set_item("http.response.status_code", status)?;
                }
            }
            CallEventKind::BudgetDegraded => {
                if let Some(error) = &event.error {
                    attributes.set_item("error.type", error.kind().name())?;
                    attributes.set_item("error.message", error.message())?;
                }
            }
            // A kind core adds later: its name and the attempt.
            _ => {}
        }
        list.append(PyTuple::new(
            py,
            [
                event.kind.event_name().into_pyobject(py)?.into_any(),
                nanos(event.at).into_pyobject(py)?.into_any(),
                attributes.into_any(),
            ],
        )?)?;
    }
    Ok(list)
}

/// One observed call: its `_telemetry._Call` (taken at the call's end), and the end
/// of its last attempt, handed over with the next hook (the next attempt's start or
/// the call's end): one GIL take fewer per attempt, the span ended with core's time
/// all the same.
struct PyCall {
    observer: Option<Py<PyAny>>,
    ended: Option<Ended>,
}

impl PyCall {
    fn new(observer: Py<PyAny>) -> PyCall {
        PyCall {
            observer: Some(observer),
            ended: None,
        }
    }
}

/// What `_Call.attempt_end` is given.
struct Ended {
    at: u64,
    duration: f64,
    status: Option<u16>,
    error_type: Option<&'static str>,
    events: Vec<CallEvent>,
}

/// Hands `ended` (an attempt's end core reported earlier) to `observer`.
fn attempt_end(py: Python<'_>, observer: &Py<PyAny>, ended: Option<Ended>) -> PyResult<()> {
    let Some(ended) = ended else { return Ok(()) };
    observer.call_method1(
        py,
        pyo3::intern!(py, "attempt_end"),
        (
            ended.at,
            ended.duration,
            ended.status,
            ended.error_type,
            events(py, &ended.events)?,
        ),
    )?;
    Ok(())
}

impl CallObserver for PyCall {
    fn attempt_start(
        &mut self,
        _call: &CallInfo<'_>,
        attempt: &AttemptStart<'_>,
        headers: &mut RequestHeaders,
    ) {
        let Some(observer) = &self.observer else {
            return;
        };
        let ended = self.ended.take();
        crate::exiting::attach(|py| {
            // Each part on its own: one that fails (an application's span processor
            // that raises) costs only itself, never this attempt's span or headers.
            if let Err(e) = attempt_end(py, observer, ended) {
                report(py, e);
            }
            let answer = events(py, attempt.events).and_then(|events| {
                observer.call_method1(
                    py,
                    pyo3::intern!(py, "attempt_start"),
                    (
                        attempt.attempt,
                        attempt.resend_count,
                        nanos(attempt.started_at),
                        events,
                        attempt.propagate_trace_context,
                    ),
                )
            });
            let inserted = answer.and_then(|answer| {
                let answer = answer.bind(py);
                if answer.is_none() {
                    return Ok(());
                }
                for (name, value) in answer.cast::<PyDict>()?.iter() {
                    // A propagator's header the client refuses (not text, a reserved
                    // name, a bad value) is left out rather than failing the call, as
                    // core's own OpenTelemetry layer does; the others still go.
                    if let (Ok(name), Ok(value)) =
                        (name.extract::<String>(), value.extract::<String>())
                    {
                        let _ = headers.insert(&name, &value);
                    }
                }
                Ok(())
            });
            if let Err(e) = inserted {
                report(py, e);
            }
        });
    }

    fn attempt_end(&mut self, _call: &CallInfo<'_>, attempt: &AttemptEnd<'_>) {
        self.ended = Some(Ended {
            at: nanos(attempt.ended_at),
            duration: attempt.duration.as_secs_f64(),
            status: attempt.status,
            error_type: attempt.error_type(),
            events: attempt.events.to_vec(),
        });
    }

    fn call_end(&mut self, _call: &CallInfo<'_>, end: &CallEnd<'_>) {
        let Some(observer) = self.observer.take() else {
            return;
        };
        let ended = self.ended.take();
        let description = end.status_description();
        crate::exiting::attach(|py| {
            if let Err(e) = attempt_end(py, &observer, ended) {
                report(py, e);
            }
            let done = events(py, end.events).and_then(|events| {
                observer.call_method1(
                    py,
                    pyo3::intern!(py, "call_end"),
                    (
                        nanos(end.ended_at),
                        end.duration.as_secs_f64(),
                        end.attempts,
                        end.error_type(),
                        description,
                        end.rate_limit_wait.as_secs_f64(),
                        end.retry_wait.as_secs_f64(),
                        events,
                    ),
                )
            });
            if let Err(e) = done {
                report(py, e);
            }
            // Let go of the call's Python side with the GIL held.
            drop(observer);
        });
    }
}
