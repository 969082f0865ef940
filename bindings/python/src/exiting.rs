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

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use pyo3::prelude::*;

/// Set by the atexit hook: the interpreter is exiting.
static EXITING: AtomicBool = AtomicBool::new(false);
/// The thread that ran the atexit hook (see [`thread_number`]).
static EXITING_THREAD: AtomicU64 = AtomicU64::new(0);
/// Threads between their check of [`EXITING`] and letting go of the GIL again: the
/// atexit hook waits for them, so that none is still on its way to the GIL when the
/// interpreter starts finalizing (a check alone leaves that window open).
static ATTACHING: AtomicUsize = AtomicUsize::new(0);
/// How long the atexit hook waits for them at most.
const DRAIN: Duration = Duration::from_secs(2);

/// This thread's number, unique in the process (never 0).
fn thread_number() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    thread_local! {
        static NUMBER: u64 = NEXT.fetch_add(1, Ordering::Relaxed);
    }
    NUMBER.with(|n| *n)
}

/// The atexit hook: from now on no other thread takes the GIL; those on their way
/// to it are let through first (the GIL let go meanwhile).
#[pyfunction]
fn interpreter_exiting(py: Python<'_>) {
    EXITING_THREAD.store(thread_number(), Ordering::SeqCst);
    EXITING.store(true, Ordering::SeqCst);
    py.detach(|| {
        let until = Instant::now() + DRAIN;
        while ATTACHING.load(Ordering::SeqCst) > 0 && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(1));
        }
    });
}

/// Registers the atexit hook (at import).
pub(crate) fn register(py: Python<'_>, module: &Bound<'_, PyModule>) -> PyResult<()> {
    let hook = wrap_pyfunction!(interpreter_exiting, module)?;
    py.import("atexit")?.call_method1("register", (hook,))?;
    Ok(())
}

/// Whether this thread must not take the GIL: the interpreter is exiting and this
/// is not the thread that finalizes it.
fn must_not_attach() -> bool {
    EXITING.load(Ordering::SeqCst) && EXITING_THREAD.load(Ordering::SeqCst) != thread_number()
}

/// One thread on its way to the GIL, counted in [`ATTACHING`] until dropped (with
/// the GIL let go again, or held by the caller who drops it).
struct OnTheWay;

impl OnTheWay {
    /// Counted, or `None` (not counted) when this thread must not take the GIL.
    fn enter() -> Option<OnTheWay> {
        ATTACHING.fetch_add(1, Ordering::SeqCst);
        if must_not_attach() {
            ATTACHING.fetch_sub(1, Ordering::SeqCst);
            return None;
        }
        Some(OnTheWay)
    }
}

impl Drop for OnTheWay {
    fn drop(&mut self) {
        ATTACHING.fetch_sub(1, Ordering::SeqCst);
    }
}

/// `Python::attach(f)`, or `None` without taking the GIL when this thread must not.
pub(crate) fn attach<R>(f: impl FnOnce(Python<'_>) -> R) -> Option<R> {
    let _on_the_way = OnTheWay::enter()?;
    Some(Python::attach(f))
}

/// `py.detach(f)`: `f` without the GIL. A thread whose `f` ends once the interpreter
/// is exiting never takes the GIL back: it waits for the process to end.
pub(crate) fn detach<T: Send>(py: Python<'_>, f: impl FnOnce() -> T + Send) -> T {
    let (value, on_the_way) = py.detach(move || {
        let value = f();
        loop {
            match OnTheWay::enter() {
                Some(on_the_way) => break (value, on_the_way),
                None => std::thread::park(),
            }
        }
    });
    // The GIL is held again: this thread is no longer on its way to it.
    drop(on_the_way);
    value
}
