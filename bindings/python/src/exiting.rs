//! Interpreter exit. Before Python 3.14, a thread that takes the GIL once the
//! interpreter is finalizing is ended there with `pthread_exit`, whose forced
//! unwinding through Rust frames crashes the process (SIGSEGV): a daemon thread
//! whose call comes back during exit, or a worker thread's telemetry hook. The
//! only threads left then are daemon threads and the library's own: they must not
//! take the GIL any more. An `atexit` hook registered when the module is imported
//! tells when: atexit runs once the non-daemon threads are joined and before the
//! interpreter starts finalizing. The thread running it (the one that finalizes)
//! goes on as before, so that an application's own atexit hooks that run after
//! ours can still make calls.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use pyo3::prelude::*;

/// Set by the atexit hook: the interpreter is exiting.
static EXITING: AtomicBool = AtomicBool::new(false);
/// The thread that ran the atexit hook (see [`thread_number`]).
static EXITING_THREAD: AtomicU64 = AtomicU64::new(0);

/// This thread's number, unique in the process (never 0).
fn thread_number() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    thread_local! {
        static NUMBER: u64 = NEXT.fetch_add(1, Ordering::Relaxed);
    }
    NUMBER.with(|n| *n)
}

/// The atexit hook.
#[pyfunction]
fn interpreter_exiting() {
    EXITING_THREAD.store(thread_number(), Ordering::Release);
    EXITING.store(true, Ordering::Release);
}

/// Registers the atexit hook (at import).
pub(crate) fn register(py: Python<'_>, module: &Bound<'_, PyModule>) -> PyResult<()> {
    let hook = wrap_pyfunction!(interpreter_exiting, module)?;
    py.import("atexit")?.call_method1("register", (hook,))?;
    Ok(())
}

/// Whether this thread must not take the GIL: the interpreter is exiting and this
/// is not the thread that finalizes it.
pub(crate) fn must_not_attach() -> bool {
    EXITING.load(Ordering::Acquire) && EXITING_THREAD.load(Ordering::Acquire) != thread_number()
}

/// `Python::attach(f)`, or `None` without taking the GIL when this thread must not.
pub(crate) fn attach<R>(f: impl FnOnce(Python<'_>) -> R) -> Option<R> {
    if must_not_attach() {
        return None;
    }
    Some(Python::attach(f))
}

/// For a thread about to take the GIL back after a call made without it: once the
/// interpreter is exiting, it never does, and waits for the process to end.
pub(crate) fn park_if_exiting() {
    while must_not_attach() {
        std::thread::park();
    }
}
