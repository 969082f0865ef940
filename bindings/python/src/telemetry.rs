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
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::{SystemTime, UNIX_EPOCH};

use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyList, PyTuple};
use roomchat::instrument::{
    AttemptEnd, AttemptStart, CallEnd, CallEvent, CallEventKind, CallInfo, CallObserver,
    Instrumentation, RequestHeaders,
};
use roomchat::CancelToken as CoreToken;

use crate::errors::configuration;

/// Whether a client with telemetry was made: until then no call asks Python anything.
static ACTIVE: AtomicBool = AtomicBool::new(false);
/// `roomchat._telemetry.capture`.
static CAPTURE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

thread_local! {
    /// The context of the calls running on this thread now, and what interrupts them
    /// (see [`Captured::run`]).
    static CONTEXT: RefCell<Option<Observed>> = const { RefCell::new(None) };
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
                shapes: Mutex::new(Vec::new()),
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
    server_address: &str,
) -> PyResult<()> {
    let probe = Py::new(
        py,
        BudgetProbe {
            client: Arc::downgrade(client),
        },
    )?;
    telemetry.call_method1(py, pyo3::intern!(py, "watch"), (probe, server_address))?;
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

/// A call's OpenTelemetry context (None: not observed, but the `roomchat` logger's
/// handlers may run Python code during it), and its [`Interrupt`].
struct Observed {
    context: Option<Py<PyAny>>,
    interrupt: Arc<Interrupt>,
}

/// What a signal's handler run in a hook, or a `BaseException` that is not an
/// `Exception` raised in one (`KeyboardInterrupt`, `SystemExit`), does to an observed
/// call: the exception is kept for the caller, raised once the call has ended, and
/// the call is cancelled through its token (when it has one of its own): not sent
/// again, its spans ended as cancelled. Without telemetry the program gets the same
/// exception when the call returns; with it, the hook's Python code is where the
/// handler runs, and the exception must not end in `sys.unraisablehook`.
pub(crate) struct Interrupt {
    /// The call's own token (None: it runs with its caller's token, which is not
    /// ours to cancel; the exception then waits for the call's end).
    token: Option<CoreToken>,
    pending: Mutex<Option<PyErr>>,
    /// Set with `pending`: read by the hooks without the lock.
    interrupted: AtomicBool,
}

impl Interrupt {
    fn new() -> Interrupt {
        Interrupt::with(Some(CoreToken::new()))
    }

    fn with(token: Option<CoreToken>) -> Interrupt {
        Interrupt {
            token,
            pending: Mutex::new(None),
            interrupted: AtomicBool::new(false),
        }
    }

    /// Keeps `error` (the first one) for the caller, and cancels the call.
    fn raise(&self, error: PyErr) {
        let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        if pending.is_none() {
            *pending = Some(error);
        }
        self.interrupted.store(true, Ordering::SeqCst);
        if let Some(token) = &self.token {
            token.cancel();
        }
    }

    fn is_raised(&self) -> bool {
        self.interrupted.load(Ordering::SeqCst)
    }

    /// Runs the handlers of the signals that arrived while the call ran without the
    /// GIL (on the main thread; elsewhere nothing): whatever they raise, an
    /// `Exception` too, is the program's and reaches the caller, as without telemetry.
    fn check_signals(&self, py: Python<'_>) {
        if let Err(error) = py.check_signals() {
            self.raise(error);
        }
    }

    /// A hook's failure: an `Exception` is the telemetry's (a span processor or
    /// instrument that raises), reported and never the call's; anything else
    /// (`KeyboardInterrupt`, `SystemExit` from a handler run inside the hook) is the
    /// program's, and interrupts the call.
    fn failed(&self, py: Python<'_>, error: PyErr) {
        if error.is_instance_of::<PyException>(py) {
            report(py, error);
        } else {
            self.raise(error);
        }
    }

    fn take(&self) -> Option<PyErr> {
        self.pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
    }
}

/// A failure of Python code run for the call running on this thread (the `roomchat`
/// logger's handlers): as a hook's (see [`Interrupt::failed`]) when the call is
/// observed, after the handlers of the signals that arrived meanwhile have run; else
/// reported.
pub(crate) fn failed_in_call(py: Python<'_>, error: Option<PyErr>) {
    let interrupt = CONTEXT.with(|c| c.borrow().as_ref().map(|o| Arc::clone(&o.interrupt)));
    match interrupt {
        Some(interrupt) => {
            interrupt.check_signals(py);
            if let Some(error) = error {
                interrupt.failed(py, error);
            }
        }
        None => {
            if let Some(error) = error {
                report(py, error);
            }
        }
    }
}

/// The OpenTelemetry context of a call being made (None: the call is not observed).
pub(crate) struct Captured(Option<Observed>);

impl Captured {
    /// The context a call made now on this thread belongs to (with the GIL held). A
    /// failure of the telemetry is reported, never the call's: the call goes unobserved.
    /// A `BaseException` that is not an `Exception` (a signal's handler that ran in
    /// `capture`) interrupts the call before it starts. `logged`: whether this
    /// thread's calls are logged (`logging::current() != 0`), given by the caller so
    /// that this module does not reach up into the logger's.
    pub(crate) fn now(py: Python<'_>, logged: bool) -> Captured {
        let context = Captured::context(py);
        if let Err(error) = context {
            let interrupt = Interrupt::new();
            interrupt.raise(error);
            return Captured(Some(Observed {
                context: None,
                interrupt: Arc::new(interrupt),
            }));
        }
        match context.ok().flatten() {
            Some(context) => Captured(Some(Observed {
                context: Some(context),
                interrupt: Arc::new(Interrupt::new()),
            })),
            // Not observed, but logged: what a signal's handler run by the logger's
            // handlers raises reaches the caller at the call's end (the call goes on,
            // as it does where no Python code runs during it).
            None if logged => Captured(Some(Observed {
                context: None,
                interrupt: Arc::new(Interrupt::with(None)),
            })),
            None => Captured(None),
        }
    }

    /// The context `capture()` gives (None: not observed); Err: what interrupts the
    /// call (a `BaseException` that is not an `Exception`, raised in `capture`).
    fn context(py: Python<'_>) -> Result<Option<Py<PyAny>>, PyErr> {
        if !ACTIVE.load(Ordering::Acquire) {
            return Ok(None);
        }
        let Some(capture) = CAPTURE.get(py) else {
            return Ok(None);
        };
        match capture.call0(py) {
            Ok(context) => Ok((!context.is_none(py)).then_some(context)),
            Err(e) if e.is_instance_of::<PyException>(py) => {
                report(py, e);
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    /// The token that cancels this call when a hook interrupts it (None: not
    /// observed): for a call that has no token of its caller's.
    pub(crate) fn token(&self) -> Option<CoreToken> {
        self.0.as_ref().and_then(|o| o.interrupt.token.clone())
    }

    /// Gives up the call's own token: it runs with its caller's (a client made
    /// `with_cancel`, an iterator's), which a hook must not cancel.
    pub(crate) fn without_token(mut self) -> Captured {
        if let Some(observed) = &mut self.0 {
            if let Some(interrupt) = Arc::get_mut(&mut observed.interrupt) {
                interrupt.token = None;
            }
        }
        self
    }

    /// Takes `token` as the call's own (an `AsyncClient` call's, made for that call
    /// alone): a hook that interrupts the call cancels it, so that a create is not
    /// sent after its caller was given the exception.
    pub(crate) fn with_token(mut self, token: CoreToken) -> Captured {
        if let Some(observed) = &mut self.0 {
            if let Some(interrupt) = Arc::get_mut(&mut observed.interrupt) {
                if interrupt.is_raised() {
                    token.cancel();
                }
                interrupt.token = Some(token);
            }
        }
        self
    }

    /// Runs `f` (a core call, on this thread or a worker, without the GIL) with the
    /// context set for core's `start_call` hooks of the calls `f` makes. Its result,
    /// or what interrupted it (see [`Interrupt`]), which the caller raises instead.
    pub(crate) fn run<R>(self, f: impl FnOnce() -> R) -> Interruptible<R> {
        let Some(observed) = self.0 else {
            return Interruptible(f(), None);
        };
        // Interrupted already (in `capture`): its cancelled token fails it at once.
        let interrupt = Arc::clone(&observed.interrupt);
        /// Puts the outer context back, even when `f` panics.
        struct Restore(Option<Observed>);
        impl Drop for Restore {
            fn drop(&mut self) {
                let outer = self.0.take();
                // The captured context leaves with the scope (a deferred decref
                // without the GIL, which pyo3 does when next taken).
                drop(CONTEXT.with(|c| c.replace(outer)));
            }
        }
        let value = {
            let _restore = Restore(CONTEXT.with(|c| c.replace(Some(observed))));
            f()
        };
        Interruptible(value, Some(interrupt))
    }
}

/// A call's result, and what interrupted it (see [`Interrupt`]).
pub(crate) struct Interruptible<R>(R, Option<Arc<Interrupt>>);

impl<R> Interruptible<R> {
    /// The result, or the exception that interrupted the call (raised instead).
    pub(crate) fn into_result(self) -> Result<R, PyErr> {
        match self.1.as_deref().and_then(Interrupt::take) {
            Some(error) => Err(error),
            None => Ok(self.0),
        }
    }
}

/// Whether the call running on this thread (inside [`Captured::run`]) was interrupted:
/// its caller gets the exception instead of its result (`Interruptible::into_result`).
/// An iterator's step asks once it has fetched, under its state's lock, and keeps what
/// it fetched for its next step rather than lose it with the result.
pub(crate) fn interrupted() -> bool {
    CONTEXT.with(|c| c.borrow().as_ref().is_some_and(|o| o.interrupt.is_raised()))
}

/// A client's instrumentation: its telemetry's Python side (`_telemetry.ClientTelemetry`),
/// and the `_telemetry._Shape` of each kind of call it made.
pub(crate) struct PyInstrumentation {
    telemetry: Py<PyAny>,
    /// What `ClientTelemetry.shape` made of each kind of call (operation, method,
    /// template, server), made at its first call: a call hands Python only its own
    /// part (its URL and start), not the facts and attribute sets every call of its
    /// kind shares. Read and written with the GIL held (never held across Python
    /// code), so never contended, nor held by another thread at a fork.
    shapes: Mutex<Vec<(ShapeKey, Py<PyAny>)>>,
}

/// The most kinds of call a client keeps the shape of (a raw request to a path no
/// operation declares has no template: the kinds are the operations, by server).
const MAX_SHAPES: usize = 64;

/// What a call's shape is made of (see [`CallFacts`]).
struct ShapeKey {
    operation: &'static str,
    method: String,
    url_template: Option<String>,
    server_address: String,
    server_port: u16,
    protocol_version: &'static str,
}

impl ShapeKey {
    fn of(call: &CallInfo<'_>) -> ShapeKey {
        ShapeKey {
            operation: call.operation,
            method: call.method.to_owned(),
            url_template: call.url_template.map(str::to_owned),
            server_address: call.server_address.to_owned(),
            server_port: call.server_port,
            protocol_version: call.protocol_version,
        }
    }

    fn matches(&self, call: &CallInfo<'_>) -> bool {
        self.operation == call.operation
            && self.method == call.method
            && self.url_template.as_deref() == call.url_template
            && self.server_address == call.server_address
            && self.server_port == call.server_port
            && self.protocol_version == call.protocol_version
    }
}

/// Nanoseconds since the epoch, as OpenTelemetry's Python API takes a time.
fn nanos(at: SystemTime) -> u64 {
    at.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

impl PyInstrumentation {
    /// The shape of `call`'s kind: kept, or made now by `ClientTelemetry.shape`.
    fn shape(&self, py: Python<'_>, call: &CallInfo<'_>) -> PyResult<Py<PyAny>> {
        let lock = || self.shapes.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, shape)) = lock().iter().find(|(key, _)| key.matches(call)) {
            return Ok(shape.clone_ref(py));
        }
        let facts = CallFacts {
            operation: call.operation,
            call_name: call.call_span_name(),
            attempt_name: call.attempt_span_name(),
            method: call.request_method(),
            server_address: call.server_address.to_owned(),
            server_port: call.server_port,
            url_template: call.url_template.map(str::to_owned),
            protocol_version: call.protocol_version,
        };
        let shape =
            self.telemetry
                .call_method1(py, pyo3::intern!(py, "shape"), (Py::new(py, facts)?,))?;
        let mut shapes = lock();
        if shapes.len() < MAX_SHAPES && !shapes.iter().any(|(key, _)| key.matches(call)) {
            shapes.push((ShapeKey::of(call), shape.clone_ref(py)));
        }
        Ok(shape)
    }
}

impl Instrumentation for PyInstrumentation {
    fn start_call(&self, call: &CallInfo<'_>) -> Option<Box<dyn CallObserver>> {
        // Not observed (no context captured where it was made): no GIL taken.
        if CONTEXT.with(|c| c.borrow().as_ref().is_none_or(|o| o.context.is_none())) {
            return None;
        }
        crate::exiting::attach(|py| {
            let (parent, interrupt) = CONTEXT.with(|c| {
                c.borrow().as_ref().and_then(|o| {
                    let context = o.context.as_ref()?.clone_ref(py);
                    Some((context, Arc::clone(&o.interrupt)))
                })
            })?;
            interrupt.check_signals(py);
            let observer = self.shape(py, call).and_then(|shape| {
                self.telemetry.call_method1(
                    py,
                    pyo3::intern!(py, "start_call"),
                    (parent, shape, call.url_full(), nanos(call.started_at)),
                )
            });
            match observer {
                Ok(observer) if !observer.is_none(py) => {
                    Some(Box::new(PyCall::new(observer, interrupt)) as Box<dyn CallObserver>)
                }
                Ok(_) => None,
                Err(e) => {
                    interrupt.failed(py, e);
                    None
                }
            }
        })
        .flatten()
    }
}

/// What every call of one kind shares, as `_telemetry._Shape` takes it (by name):
/// a call's facts at its start but its URL (`url.full`) and its time, which
/// `ClientTelemetry.start_call` is given with each call.
#[pyclass(frozen, module = "roomchat._native")]
pub struct CallFacts {
    /// `roomchat.operation`.
    #[pyo3(get)]
    operation: &'static str,
    /// The call span's name.
    #[pyo3(get)]
    call_name: String,
    /// Each attempt span's name.
    #[pyo3(get)]
    attempt_name: String,
    /// `http.request.method`.
    #[pyo3(get)]
    method: &'static str,
    /// `server.address`.
    #[pyo3(get)]
    server_address: String,
    /// `server.port`.
    #[pyo3(get)]
    server_port: u16,
    /// `url.template`, if declared.
    #[pyo3(get)]
    url_template: Option<String>,
    /// `network.protocol.version`.
    #[pyo3(get)]
    protocol_version: &'static str,
}

/// An attempt's end, as `_Call.attempt_end` takes it (by name).
#[pyclass(frozen, module = "roomchat._native")]
pub struct AttemptOutcome {
    /// Its end, in nanoseconds since the epoch.
    #[pyo3(get)]
    ended_at: u64,
    /// Its duration, in seconds.
    #[pyo3(get)]
    duration: f64,
    /// `http.response.status_code`, when an answer came.
    #[pyo3(get)]
    status: Option<u16>,
    /// `error.type`: the status as text for an answer, the kind for none.
    #[pyo3(get)]
    error_type: Option<&'static str>,
    /// `roomchat.error.kind`.
    #[pyo3(get)]
    error_kind: Option<&'static str>,
    /// Its events: `(name, at_ns, attributes)`.
    #[pyo3(get)]
    events: Py<PyList>,
}

/// A call's end, as `_Call.call_end` takes it (by name).
#[pyclass(frozen, module = "roomchat._native")]
pub struct CallOutcome {
    /// Its end, in nanoseconds since the epoch.
    #[pyo3(get)]
    ended_at: u64,
    /// Its duration, in seconds.
    #[pyo3(get)]
    duration: f64,
    /// `roomchat.attempts`.
    #[pyo3(get)]
    attempts: u32,
    /// `error.type`: the kind, if it failed.
    #[pyo3(get)]
    error_type: Option<&'static str>,
    /// The span status's description, if it failed.
    #[pyo3(get)]
    description: Option<String>,
    /// `roomchat.rate_limit.wait.duration`, in seconds.
    #[pyo3(get)]
    rate_limit_wait: f64,
    /// `roomchat.retry.wait.duration`, in seconds.
    #[pyo3(get)]
    retry_wait: f64,
    /// Its last events: `(name, at_ns, attributes)`.
    #[pyo3(get)]
    events: Py<PyList>,
}

/// Hands `error` (an exception a telemetry step raised, which `_telemetry` caught to
/// go on with the other steps) to `sys.unraisablehook`, as the native side reports
/// the hooks' own failures.
#[pyfunction]
pub fn _report_unraisable(py: Python<'_>, error: Bound<'_, PyAny>) {
    report(py, PyErr::from_value(error));
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
    interrupt: Arc<Interrupt>,
    /// The attempt starting was interrupted before it was sent: no span, no metric.
    unsent: bool,
}

impl PyCall {
    fn new(observer: Py<PyAny>, interrupt: Arc<Interrupt>) -> PyCall {
        PyCall {
            observer: Some(observer),
            ended: None,
            interrupt,
            unsent: false,
        }
    }
}

/// What `_Call.attempt_end` is given.
struct Ended {
    at: u64,
    duration: f64,
    status: Option<u16>,
    error_type: Option<&'static str>,
    error_kind: Option<&'static str>,
    events: Vec<CallEvent>,
}

/// Hands `ended` (an attempt's end core reported earlier) to `observer`.
fn attempt_end(py: Python<'_>, observer: &Py<PyAny>, ended: Option<Ended>) -> PyResult<()> {
    let Some(ended) = ended else { return Ok(()) };
    let outcome = AttemptOutcome {
        ended_at: ended.at,
        duration: ended.duration,
        status: ended.status,
        error_type: ended.error_type,
        error_kind: ended.error_kind,
        events: events(py, &ended.events)?.unbind(),
    };
    observer.call_method1(
        py,
        pyo3::intern!(py, "attempt_end"),
        (Py::new(py, outcome)?,),
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
        let interrupt = &self.interrupt;
        let unsent = &mut self.unsent;
        crate::exiting::attach(|py| {
            // A signal that arrived during a budget or retry wait: its handler runs
            // now, and its exception cancels the call before this attempt is sent.
            interrupt.check_signals(py);
            // Each part on its own: one that fails (an application's span processor
            // that raises) costs only itself, never this attempt's span or headers.
            if let Err(e) = attempt_end(py, observer, ended) {
                interrupt.failed(py, e);
            }
            // Cancelled before it is sent (its token cancelled): no span for it.
            if interrupt.is_raised() && interrupt.token.is_some() {
                *unsent = true;
                return;
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
                interrupt.failed(py, e);
            }
        });
    }

    fn attempt_end(&mut self, _call: &CallInfo<'_>, attempt: &AttemptEnd<'_>) {
        if std::mem::take(&mut self.unsent) {
            return;
        }
        self.ended = Some(Ended {
            at: nanos(attempt.ended_at),
            duration: attempt.duration.as_secs_f64(),
            status: attempt.status,
            error_type: attempt.error_type(),
            error_kind: attempt.error_kind(),
            events: attempt.events.to_vec(),
        });
    }

    fn call_end(&mut self, _call: &CallInfo<'_>, end: &CallEnd<'_>) {
        let Some(observer) = self.observer.take() else {
            return;
        };
        let ended = self.ended.take();
        let interrupt = &self.interrupt;
        crate::exiting::attach(|py| {
            // A signal that arrived while the last attempt was on the wire.
            interrupt.check_signals(py);
            if let Err(e) = attempt_end(py, &observer, ended) {
                interrupt.failed(py, e);
            }
            // An interrupted call ends as cancelled: its caller gets the exception,
            // never its result.
            let (error_type, description) = match end.error_type() {
                None if interrupt.is_raised() => {
                    (Some("cancelled"), Some("the call was cancelled".to_owned()))
                }
                error_type => (error_type, end.status_description()),
            };
            let done = events(py, end.events).and_then(|events| {
                let outcome = CallOutcome {
                    ended_at: nanos(end.ended_at),
                    duration: end.duration.as_secs_f64(),
                    attempts: end.attempts,
                    error_type,
                    description,
                    rate_limit_wait: end.rate_limit_wait.as_secs_f64(),
                    retry_wait: end.retry_wait.as_secs_f64(),
                    events: events.unbind(),
                };
                observer.call_method1(py, pyo3::intern!(py, "call_end"), (Py::new(py, outcome)?,))
            });
            if let Err(e) = done {
                interrupt.failed(py, e);
            }
            // Let go of the call's Python side with the GIL held.
            drop(observer);
        });
    }
}
