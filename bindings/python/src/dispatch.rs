//! The threads `AsyncClient` runs core's blocking calls on, and how their results reach
//! the event loop without the worker threads ever taking the GIL.
//!
//! A worker runs a job (a core call) and queues its result as a Rust value; when the
//! queue was empty it writes one byte to a pipe whose read end the event loop watches
//! (`loop.add_reader(dispatcher.fileno(), dispatcher.drain)`). `drain` runs on the loop
//! thread: it wraps each result into Python objects and completes its future. So the
//! only thread that runs Python for an async call is the loop's own, and the loop never
//! waits for the GIL behind a pool of threads (no convoy).
//!
//! Threads are made on demand up to `max_workers`, leave after 10 s idle, and leave at
//! once when the dispatcher is closed. A job that panics completes its future with an
//! error and its thread goes on. A forked child makes its own dispatcher: the parent's
//! threads do not exist there and a lock one of them held at the fork stays held, so a
//! dispatcher is never touched in a process other than the one that made it.

use std::collections::{HashMap, VecDeque};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

use crate::errors::to_py;

/// Turns a finished call's result into the future's result (run on the loop thread).
pub(crate) type Deliver = Box<dyn FnOnce(Python<'_>) -> PyResult<Py<PyAny>> + Send>;
/// One blocking call, run on a worker thread without the GIL.
pub(crate) type Job = Box<dyn FnOnce() -> Deliver + Send>;

const IDLE_EXIT: Duration = Duration::from_secs(10);

struct Queue {
    jobs: VecDeque<(u64, Job)>,
    threads: usize,
    idle: usize,
    closed: bool,
}

struct Shared {
    queue: Mutex<Queue>,
    work: Condvar,
    done: Mutex<Vec<(u64, Deliver)>>,
    wake: WakePipe,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The wake-up pipe. Both ends live as long as any worker: a worker that finishes
/// after the `Dispatcher` is gone still writes to a pipe with a reader, never to a
/// closed one (EPIPE, and SIGPIPE in a process that restored its default action).
struct WakePipe {
    #[cfg(unix)]
    read: std::os::fd::OwnedFd,
    #[cfg(unix)]
    write: std::os::fd::OwnedFd,
}

impl WakePipe {
    fn wake(&self) {
        #[cfg(unix)]
        {
            use std::os::fd::AsRawFd;
            // SAFETY: a one-byte write to a pipe we own; a full pipe (EAGAIN) already wakes the reader.
            let _ = unsafe { libc::write(self.write.as_raw_fd(), b"x".as_ptr().cast(), 1) };
        }
    }

    /// Empties the pipe (on the loop thread, before taking the finished calls).
    fn clear(&self) {
        #[cfg(unix)]
        {
            use std::os::fd::AsRawFd;
            let mut buf = [0u8; 256];
            // SAFETY: reads into our buffer from a non-blocking pipe we own.
            while unsafe { libc::read(self.read.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) }
                > 0
            {}
        }
    }
}

/// The error a panicking call completes its future with (as Node's pool does).
fn panicked() -> roomchat::Error {
    roomchat::Error::new(
        roomchat::ErrorKind::Decode,
        "internal error: the call panicked (please report it)",
    )
}

/// Runs `AsyncClient`'s calls (see the module docs). Made by `AsyncClient`, one per event loop.
#[pyclass(frozen, module = "roomchat._native")]
pub struct Dispatcher {
    shared: Arc<Shared>,
    max_workers: usize,
    next_id: AtomicU64,
    /// The futures of the calls in flight (touched with the GIL held only).
    pending: Mutex<HashMap<u64, Py<PyAny>>>,
    /// The process that made it: in any other (a forked child) it is gone.
    pid: u32,
}

/// A non-blocking pipe whose ends are closed on exec, made so atomically where the
/// system can (`pipe2`): set afterwards, a program another thread starts in between
/// (fork + exec) would inherit both ends.
#[cfg(unix)]
fn pipe() -> PyResult<(std::os::fd::OwnedFd, std::os::fd::OwnedFd)> {
    use std::os::fd::{FromRawFd, OwnedFd};
    let mut fds = [0; 2];
    #[cfg(not(any(target_os = "macos", target_os = "ios")))]
    {
        // SAFETY: pipe2() fills two descriptors we then own.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } != 0 {
            return Err(std::io::Error::last_os_error().into());
        }
    }
    #[cfg(any(target_os = "macos", target_os = "ios"))]
    {
        // No pipe2 here: the flags are set at once after (the race above remains).
        // SAFETY: pipe() fills two descriptors we then own; flags on descriptors we own.
        if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
            return Err(std::io::Error::last_os_error().into());
        }
        for fd in fds {
            unsafe {
                libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
                libc::fcntl(
                    fd,
                    libc::F_SETFL,
                    libc::fcntl(fd, libc::F_GETFL) | libc::O_NONBLOCK,
                );
            }
        }
    }
    // SAFETY: both descriptors were just made and are owned by nothing else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

impl Dispatcher {
    /// Whether this process is not the one that made the dispatcher (a forked child).
    fn forked(&self) -> bool {
        std::process::id() != self.pid
    }

    /// Completes the future of call `id` with what `deliver` makes of its result.
    fn complete(&self, py: Python<'_>, id: u64, deliver: Deliver) -> PyResult<()> {
        let Some(future) = lock(&self.pending).remove(&id) else {
            return Ok(());
        };
        let future = future.bind(py);
        if future
            .call_method0(pyo3::intern!(py, "done"))?
            .is_truthy()?
        {
            return Ok(()); // cancelled meanwhile: the result is dropped
        }
        let outcome = catch_unwind(AssertUnwindSafe(|| deliver(py)))
            .unwrap_or_else(|_| Err(to_py(py, &panicked())));
        match outcome {
            Ok(value) => future.call_method1(pyo3::intern!(py, "set_result"), (value,))?,
            Err(e) => future.call_method1(pyo3::intern!(py, "set_exception"), (e.value(py),))?,
        };
        Ok(())
    }

    /// Queues `job` for a worker; its result completes `future`.
    pub(crate) fn submit(&self, py: Python<'_>, future: Py<PyAny>, job: Job) -> PyResult<()> {
        if self.forked() {
            return Err(PyRuntimeError::new_err(
                "the dispatcher belongs to the parent process (its threads do not exist here)",
            ));
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let spawn = {
            let mut queue = lock(&self.shared.queue);
            if queue.closed {
                return Err(PyRuntimeError::new_err("the dispatcher is closed"));
            }
            lock(&self.pending).insert(id, future.clone_ref(py));
            queue.jobs.push_back((id, job));
            let spawn = queue.idle < queue.jobs.len() && queue.threads < self.max_workers;
            if spawn {
                queue.threads += 1;
            }
            spawn
        };
        self.shared.work.notify_one();
        if spawn {
            let shared = self.shared.clone();
            let started = std::thread::Builder::new()
                .name("roomchat-async".into())
                .spawn(move || work(&shared));
            if let Err(e) = started {
                lock(&self.shared.queue).threads -= 1;
                return Err(e.into());
            }
        }
        Ok(())
    }
}

fn work(shared: &Shared) {
    loop {
        let (id, job) = {
            let mut queue = lock(&shared.queue);
            loop {
                if let Some(next) = queue.jobs.pop_front() {
                    break next;
                }
                if queue.closed {
                    queue.threads -= 1;
                    return;
                }
                queue.idle += 1;
                let (guard, timeout) = shared
                    .work
                    .wait_timeout(queue, IDLE_EXIT)
                    .unwrap_or_else(|p| p.into_inner());
                queue = guard;
                queue.idle -= 1;
                if timeout.timed_out() && queue.jobs.is_empty() {
                    queue.threads -= 1;
                    return;
                }
            }
        };
        // A panic fails this call only: its future gets an error, the thread goes on.
        let deliver = catch_unwind(AssertUnwindSafe(job))
            .unwrap_or_else(|_| Box::new(|py: Python<'_>| Err(to_py(py, &panicked()))));
        let was_empty = {
            let mut done = lock(&shared.done);
            done.push((id, deliver));
            done.len() == 1
        };
        if was_empty {
            shared.wake.wake();
        }
    }
}

#[pymethods]
impl Dispatcher {
    #[new]
    fn new(max_workers: usize) -> PyResult<Dispatcher> {
        #[cfg(unix)]
        let (read, write) = pipe()?;
        Ok(Dispatcher {
            shared: Arc::new(Shared {
                queue: Mutex::new(Queue {
                    jobs: VecDeque::new(),
                    threads: 0,
                    idle: 0,
                    closed: false,
                }),
                work: Condvar::new(),
                done: Mutex::new(Vec::new()),
                #[cfg(unix)]
                wake: WakePipe { read, write },
                #[cfg(not(unix))]
                wake: WakePipe {},
            }),
            max_workers: max_workers.max(1),
            next_id: AtomicU64::new(0),
            pending: Mutex::new(HashMap::new()),
            pid: std::process::id(),
        })
    }

    /// The descriptor the event loop watches.
    fn fileno(&self) -> i64 {
        #[cfg(unix)]
        {
            use std::os::fd::AsRawFd;
            i64::from(self.shared.wake.read.as_raw_fd())
        }
        #[cfg(not(unix))]
        {
            -1
        }
    }

    /// Completes the futures of the calls that finished (the loop's reader callback).
    /// Every one of them, even when completing one raises: the first such error is
    /// raised at the end (the loop reports it).
    fn drain(&self, py: Python<'_>) -> PyResult<()> {
        if self.forked() {
            // The pipe is shared with the parent: a byte read here would be its wake-up.
            return Ok(());
        }
        self.shared.wake.clear();
        let finished = std::mem::take(&mut *lock(&self.shared.done));
        let mut first_error = None;
        for (id, deliver) in finished {
            if let Err(e) = self.complete(py, id, deliver) {
                first_error.get_or_insert(e);
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// Takes no new calls; idle threads leave now, busy ones after their call. In a
    /// forked child, nothing (the dispatcher is the parent's).
    fn close(&self) {
        if self.forked() {
            return;
        }
        lock(&self.shared.queue).closed = true;
        self.shared.work.notify_all();
    }

    /// Worker threads alive now (none in a forked child).
    #[getter]
    fn threads(&self) -> usize {
        if self.forked() {
            return 0;
        }
        lock(&self.shared.queue).threads
    }

    /// Calls whose futures are not completed yet (none in a forked child: they are the parent's).
    #[getter]
    fn pending(&self) -> usize {
        if self.forked() {
            return 0;
        }
        lock(&self.pending).len()
    }

    /// Test hook, not API: queues a job that panics (`"panic"`), one whose result panics
    /// on the loop thread (`"panic_in_result"`), or one that holds this dispatcher's
    /// queue lock for `seconds` (`"hold_queue"`, as a worker does for an instant while it
    /// takes a job), then completes `future` with `None`.
    #[pyo3(signature = (future, action, seconds=0.0))]
    fn _submit_test_job(
        &self,
        py: Python<'_>,
        future: Py<PyAny>,
        action: &str,
        seconds: f64,
    ) -> PyResult<()> {
        let none: Deliver = Box::new(|py: Python<'_>| Ok(py.None()));
        let job: Job = match action {
            "panic" => Box::new(|| panic!("test hook: a job that panics")),
            "panic_in_result" => Box::new(|| {
                Box::new(|_: Python<'_>| -> PyResult<Py<PyAny>> {
                    panic!("test hook: a result that panics")
                }) as Deliver
            }),
            "hold_queue" => {
                let shared = self.shared.clone();
                let hold = Duration::try_from_secs_f64(seconds)
                    .map_err(|e| PyValueError::new_err(e.to_string()))?;
                Box::new(move || {
                    let _held = lock(&shared.queue);
                    std::thread::sleep(hold);
                    none
                })
            }
            other => return Err(PyValueError::new_err(format!("no test job {other:?}"))),
        };
        self.submit(py, future, job)
    }
}
