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
//! once when the dispatcher is closed. A forked child makes its own dispatcher (the
//! parent's threads do not exist there); nothing here is locked across a fork by a
//! thread holding the GIL.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

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
    wake: Waker,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The write end of the wake-up pipe.
struct Waker {
    #[cfg(unix)]
    fd: std::os::fd::OwnedFd,
}

impl Waker {
    fn wake(&self) {
        #[cfg(unix)]
        {
            use std::os::fd::AsRawFd;
            // SAFETY: a one-byte write to a pipe we own; a full pipe (EAGAIN) already wakes the reader.
            let _ = unsafe { libc::write(self.fd.as_raw_fd(), b"x".as_ptr().cast(), 1) };
        }
    }
}

/// Runs `AsyncClient`'s calls (see the module docs). Made by `AsyncClient`, one per event loop.
#[pyclass(frozen, module = "roomchat._native")]
pub struct Dispatcher {
    shared: Arc<Shared>,
    max_workers: usize,
    next_id: AtomicU64,
    /// The futures of the calls in flight (touched with the GIL held only).
    pending: Mutex<HashMap<u64, Py<PyAny>>>,
    #[cfg(unix)]
    read: std::os::fd::OwnedFd,
}

#[cfg(unix)]
fn pipe() -> PyResult<(std::os::fd::OwnedFd, std::os::fd::OwnedFd)> {
    use std::os::fd::{FromRawFd, OwnedFd};
    let mut fds = [0; 2];
    // SAFETY: pipe() fills two descriptors we then own.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return Err(std::io::Error::last_os_error().into());
    }
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    for fd in fds {
        // SAFETY: flags on descriptors we own.
        unsafe {
            libc::fcntl(
                fd,
                libc::F_SETFL,
                libc::fcntl(fd, libc::F_GETFL) | libc::O_NONBLOCK,
            );
            libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
        }
    }
    Ok((read, write))
}

impl Dispatcher {
    /// Queues `job` for a worker; its result completes `future`.
    pub(crate) fn submit(&self, py: Python<'_>, future: Py<PyAny>, job: Job) -> PyResult<()> {
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
        let deliver = job();
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
                wake: Waker { fd: write },
                #[cfg(not(unix))]
                wake: Waker {},
            }),
            max_workers: max_workers.max(1),
            next_id: AtomicU64::new(0),
            pending: Mutex::new(HashMap::new()),
            #[cfg(unix)]
            read,
        })
    }

    /// The descriptor the event loop watches.
    fn fileno(&self) -> i64 {
        #[cfg(unix)]
        {
            use std::os::fd::AsRawFd;
            i64::from(self.read.as_raw_fd())
        }
        #[cfg(not(unix))]
        {
            -1
        }
    }

    /// Completes the futures of the calls that finished (the loop's reader callback).
    fn drain(&self, py: Python<'_>) -> PyResult<()> {
        #[cfg(unix)]
        {
            use std::os::fd::AsRawFd;
            let mut buf = [0u8; 256];
            // SAFETY: reads into our buffer from a non-blocking pipe we own.
            while unsafe { libc::read(self.read.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) }
                > 0
            {}
        }
        let finished = std::mem::take(&mut *lock(&self.shared.done));
        for (id, deliver) in finished {
            let Some(future) = lock(&self.pending).remove(&id) else {
                continue;
            };
            let future = future.bind(py);
            if future
                .call_method0(pyo3::intern!(py, "done"))?
                .is_truthy()?
            {
                continue; // cancelled meanwhile: the result is dropped
            }
            match deliver(py) {
                Ok(value) => future.call_method1(pyo3::intern!(py, "set_result"), (value,))?,
                Err(e) => {
                    future.call_method1(pyo3::intern!(py, "set_exception"), (e.value(py),))?
                }
            };
        }
        Ok(())
    }

    /// Takes no new calls; idle threads leave now, busy ones after their call.
    fn close(&self) {
        lock(&self.shared.queue).closed = true;
        self.shared.work.notify_all();
    }

    /// Worker threads alive now.
    #[getter]
    fn threads(&self) -> usize {
        lock(&self.shared.queue).threads
    }

    /// Calls whose futures are not completed yet.
    #[getter]
    fn pending(&self) -> usize {
        lock(&self.pending).len()
    }
}
