//! Core's observer events as records of the `roomchat` logger.
//!
//! Core asks [`Observer::enabled`] before it builds an event, on the calling thread,
//! with the GIL released. Taking the GIL there would cost every call, so the answer
//! is read from a thread-local that each entry into the native module refreshes
//! while it holds the GIL anyway (two `Logger.isEnabledFor` calls, which hit the
//! logger's own level cache): a level change is seen by the next call, and a
//! disabled logger costs nothing inside the call. Only an event that is wanted
//! takes the GIL, to call `Logger.log` with core's one rendered line.

use std::cell::Cell;

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyDict;
use roomchat::{Event, EventKind, Level, Observer};

thread_local! {
    /// Bit 0: DEBUG wanted; bit 1: WARNING wanted (as of this thread's last entry).
    static WANTED: Cell<u8> = const { Cell::new(0) };
}

const DEBUG_BIT: u8 = 1;
const WARNING_BIT: u8 = 2;
const PY_DEBUG: i32 = 10;
const PY_WARNING: i32 = 30;

/// `logging.getLogger("roomchat")` (loggers are never replaced once made).
static LOGGER: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

fn logger(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    LOGGER
        .get_or_try_init(py, || {
            py.import("logging")?
                .call_method1("getLogger", ("roomchat",))
                .map(Bound::unbind)
        })
        .map(|l| l.bind(py))
}

/// Reads which levels the `roomchat` logger wants now, for the calls this thread is about to make.
pub(crate) fn refresh(py: Python<'_>) {
    let wanted = (|| -> PyResult<u8> {
        let logger = logger(py)?;
        let method = pyo3::intern!(py, "isEnabledFor");
        if logger.call_method1(method, (PY_DEBUG,))?.is_truthy()? {
            return Ok(DEBUG_BIT | WARNING_BIT);
        }
        if logger.call_method1(method, (PY_WARNING,))?.is_truthy()? {
            return Ok(WARNING_BIT);
        }
        Ok(0)
    })()
    .unwrap_or(0);
    WANTED.with(|w| w.set(wanted));
}

/// The levels this thread wants (to carry them to the thread that makes the call).
pub(crate) fn current() -> u8 {
    WANTED.with(Cell::get)
}

/// Sets the levels this thread wants (on a worker thread, as read by the caller).
pub(crate) fn set(wanted: u8) {
    WANTED.with(|w| w.set(wanted));
}

/// Sends every wanted event to the `roomchat` logger.
pub(crate) struct LoggingObserver;

impl Observer for LoggingObserver {
    fn enabled(&self, level: Level) -> bool {
        let bit = match level {
            Level::Debug => DEBUG_BIT,
            Level::Warning => WARNING_BIT,
        };
        WANTED.with(|w| w.get() & bit != 0)
    }

    fn event(&self, event: &Event<'_>) {
        let message = event.message();
        // Not once the interpreter is exiting (see `exiting`): the line is dropped.
        // A signal's handler that runs in the logger's handlers interrupts an observed
        // call as in its telemetry's hooks (see `telemetry::Interrupt`).
        crate::exiting::attach(|py| {
            crate::telemetry::failed_in_call(py, log(py, event, &message).err());
        });
    }
}

fn log(py: Python<'_>, event: &Event<'_>, message: &str) -> PyResult<()> {
    let level = match event.level() {
        Level::Debug => PY_DEBUG,
        Level::Warning => PY_WARNING,
    };
    let kind = match event.kind {
        EventKind::Attempt => "attempt",
        EventKind::Retry => "retry",
        EventKind::RateLimitWait => "rate_limit_wait",
        _ => "other",
    };
    // The fields of the line, for structured handlers (`record.roomchat_status` …).
    let extra = PyDict::new(py);
    extra.set_item("roomchat_event", kind)?;
    extra.set_item("roomchat_method", event.method)?;
    extra.set_item("roomchat_path", event.path)?;
    extra.set_item("roomchat_attempt", event.attempt)?;
    extra.set_item("roomchat_status", event.status)?;
    extra.set_item("roomchat_elapsed", event.elapsed.as_secs_f64())?;
    extra.set_item("roomchat_wait", event.wait.map(|w| w.as_secs_f64()))?;
    extra.set_item("roomchat_error", event.error.map(|e| e.kind().name()))?;
    let kwargs = PyDict::new(py);
    kwargs.set_item("extra", extra)?;
    logger(py)?.call_method("log", (level, message), Some(&kwargs))?;
    Ok(())
}
