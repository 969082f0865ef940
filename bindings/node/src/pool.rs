//! The package's own threads for blocking core calls.
//!
//! Core's calls block (sync HTTP, rate-limit waits, retry backoff). They run
//! here: neither on Node's event loop nor on libuv's thread pool, which has 4
//! threads by default and also serves `fs`, `dns.lookup`, `crypto` and zlib.
//!
//! One pool per process, shared by every worker thread's copy of the addon.
//! Threads are started on demand, up to a maximum (`ROOMCHAT_NODE_THREADS`,
//! or `setMaxThreads`; default [`DEFAULT_MAX_THREADS`]); calls beyond it wait
//! in a queue. A thread idle for [`IDLE_TIMEOUT`] exits. The threads are not
//! libuv handles, so they never keep a process alive.
//!
//! On Linux the threads run under the normal policy (`SCHED_OTHER`), like the
//! event loop's thread. `ROOMCHAT_NODE_THREAD_POLICY=batch` puts them under
//! `SCHED_BATCH` instead: a pool thread that wakes (its response arrived) then
//! does not preempt the event loop's thread mid-callback, but neither does it
//! preempt any other busy process, so on a loaded CPU it waits for their time
//! slices. It was the default, tuned on an idle 2-core machine for the loop's
//! p99 with 16 calls in flight; measured again idle and loaded (one busy-loop
//! process per core beside it, `bench/list-users.mjs`, 6 alternating runs of
//! 500 calls per client, medians), `normal` is as fast or faster everywhere:
//! one call at a time 315 µs idle and 393 µs loaded against batch's 328 and
//! 497 (undici.request 410-660 µs; roomchat 1.75-1.78x its calls/s, batch
//! 1.32-1.35x), loop p99 3.9 / 5.0 ms against 4.7 / 8.0; 16 in flight equal
//! calls/s idle and loaded, loop p99 loaded 6.4 ms against 9.8, idle 8.3 ms
//! against batch's 5.3 (the one figure batch still wins). Earlier, on a machine
//! with two busy processes, batch's one-at-a-time calls took 1.1-2.7 ms, 2-7x
//! undici's. `ROOMCHAT_NODE_THREAD_NICENESS` (0 to 19, default [`DEFAULT_NICENESS`])
//! makes them that much nicer than the event loop's thread, so that the loop
//! gets contended CPUs first; measured on a shared 2-core machine it cost the
//! calls more (they then also lose to every other process) than it gave the
//! loop, hence off by default.
//!
//! A thread that finished a call looks for the next one for up to
//! [`DEFAULT_SPIN`] (`ROOMCHAT_NODE_SPIN_US`) before it sleeps: one call at a
//! time, every call otherwise began by waking a sleeping thread, a hand-over
//! undici does not make (see [`spin_for_work`]).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

/// Threads the pool starts at most, unless configured.
pub const DEFAULT_MAX_THREADS: usize = 64;
/// The largest maximum accepted.
pub const MAX_THREADS_LIMIT: usize = 1024;
/// How long an idle thread waits for work before it exits.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(10);
/// How much nicer than the process the pool's threads are (Linux), unless configured.
#[cfg(target_os = "linux")]
pub const DEFAULT_NICENESS: i32 = 0;
/// Stack of each pool thread.
const STACK_SIZE: usize = 512 * 1024;
/// How long a thread that finished a call keeps looking for the next one
/// before it sleeps, unless configured (`ROOMCHAT_NODE_SPIN_US`, 0 to 10000;
/// 0: never). See [`spin_for_work`].
pub const DEFAULT_SPIN: Duration = Duration::from_micros(300);

type Job = Box<dyn FnOnce() + Send + 'static>;

struct State {
    queue: VecDeque<Job>,
    /// Threads alive.
    threads: usize,
    /// Threads waiting for work.
    idle: usize,
    /// Threads looking for work without sleeping (0 or 1): see [`spin_for_work`].
    spinning: usize,
    max: usize,
}

struct Pool {
    state: Mutex<State>,
    work: Condvar,
    /// `state.queue.len()`, readable without the lock (by the spinning thread).
    queued: AtomicUsize,
    spin: Duration,
}

fn pool() -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    POOL.get_or_init(|| {
        let max = std::env::var("ROOMCHAT_NODE_THREADS")
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
            .filter(|n| (1..=MAX_THREADS_LIMIT).contains(n))
            .unwrap_or(DEFAULT_MAX_THREADS);
        let spin = std::env::var("ROOMCHAT_NODE_SPIN_US")
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
            .filter(|us| *us <= 10_000)
            .map_or(DEFAULT_SPIN, Duration::from_micros);
        Pool {
            state: Mutex::new(State {
                queue: VecDeque::new(),
                threads: 0,
                idle: 0,
                spinning: 0,
                max,
            }),
            work: Condvar::new(),
            queued: AtomicUsize::new(0),
            spin,
        }
    })
}

fn lock() -> MutexGuard<'static, State> {
    // Jobs run outside the lock and catch their own panics: a poisoned lock
    // still holds consistent counters.
    pool().state.lock().unwrap_or_else(|p| p.into_inner())
}

/// Runs `job` on a pool thread.
pub fn submit(job: Job) {
    let pool = pool();
    let mut state = lock();
    state.queue.push_back(job);
    pool.queued.store(state.queue.len(), Ordering::Release);
    // A spinning thread takes the first job without being woken.
    let waiting = state.queue.len().saturating_sub(state.spinning);
    if waiting == 0 {
        return;
    }
    // Every idle thread will be woken for one job; start another thread when
    // more jobs wait than idle threads can take.
    if waiting > state.idle && state.threads < state.max {
        state.threads += 1;
        let spawned = std::thread::Builder::new()
            .name("roomchat".into())
            .stack_size(STACK_SIZE)
            .spawn(work);
        if spawned.is_err() {
            // The queued job runs when a thread frees up (there is at least
            // one, or the next submit tries again).
            state.threads -= 1;
        }
    }
    drop(state);
    pool.work.notify_one();
}

/// Sets the maximum number of threads (1 to [`MAX_THREADS_LIMIT`]); returns the previous one.
pub fn set_max_threads(max: usize) -> usize {
    let mut state = lock();
    std::mem::replace(&mut state.max, max)
}

/// (threads alive, threads idle, jobs queued, maximum); a spinning thread counts as idle.
pub fn stats() -> (usize, usize, usize, usize) {
    let state = lock();
    (
        state.threads,
        state.idle + state.spinning,
        state.queue.len(),
        state.max,
    )
}

/// Looks for a job for up to the pool's spin time without sleeping; true if
/// one was queued meanwhile (the caller takes it under the lock).
///
/// One call at a time, the next call comes a few tens of microseconds after
/// the last one's outcome was delivered (the event loop reads it and the
/// caller's code makes the next call). A thread asleep on the condition
/// variable must then be woken: on an idle machine its CPU has gone idle too,
/// and waking it (an inter-processor interrupt; in a virtual machine an exit
/// to the hypervisor) took longer than the gap; on a loaded one the woken
/// thread waits for a time slice. A thread still looking takes the call at
/// once. Only one thread spins at a time, briefly, and it yields its CPU
/// between looks, so that on a busy machine it gives way to whatever else is
/// runnable (the event loop's thread first of all).
fn spin_for_work(pool: &Pool) -> bool {
    let started = Instant::now();
    let mut last = started;
    loop {
        for _ in 0..64 {
            if pool.queued.load(Ordering::Acquire) > 0 {
                return true;
            }
            std::hint::spin_loop();
        }
        let now = Instant::now();
        // Time out; or this thread was preempted between two looks: the
        // machine is busy, and a sleeping thread is woken as soon as one that
        // spins would get its turn again: stop competing for the CPU.
        if now.duration_since(started) >= pool.spin || now.duration_since(last) >= CONTENDED {
            return false;
        }
        std::thread::yield_now();
        last = Instant::now();
        // The same when the yield gave the CPU away (another thread ran meanwhile).
        if last.duration_since(now) >= CONTENDED {
            return false;
        }
    }
}

/// A pause this long between two looks (or in a `yield_now`) means another
/// thread ran on this CPU meanwhile: see [`spin_for_work`].
const CONTENDED: Duration = Duration::from_micros(20);

/// Whether the pool's threads may spin at all: not on a single CPU, where a
/// spinning thread only delays the one that would give it work.
fn may_spin() -> bool {
    static MAY: OnceLock<bool> = OnceLock::new();
    *MAY.get_or_init(|| std::thread::available_parallelism().is_ok_and(|n| n.get() > 1))
}

#[cfg(target_os = "linux")]
fn niceness() -> i32 {
    static NICENESS: OnceLock<i32> = OnceLock::new();
    *NICENESS.get_or_init(|| {
        std::env::var("ROOMCHAT_NODE_THREAD_NICENESS")
            .ok()
            .and_then(|v| v.trim().parse::<i32>().ok())
            .filter(|n| (0..=19).contains(n))
            .unwrap_or(DEFAULT_NICENESS)
    })
}

/// Whether the pool's threads run under `SCHED_BATCH` (Linux; see the module
/// docs): only if `ROOMCHAT_NODE_THREAD_POLICY` is `batch`.
#[cfg(target_os = "linux")]
fn batch_policy() -> bool {
    static BATCH: OnceLock<bool> = OnceLock::new();
    *BATCH.get_or_init(|| {
        std::env::var("ROOMCHAT_NODE_THREAD_POLICY").is_ok_and(|v| v.trim() == "batch")
    })
}

#[cfg(target_os = "linux")]
fn lower_priority() {
    if batch_policy() {
        // SAFETY: sched_param is plain integers, all zero valid (musl's has
        // more fields than glibc's, so it is not spelled out field by field).
        let mut param: libc::sched_param = unsafe { std::mem::zeroed() };
        param.sched_priority = 0;
        // SAFETY: this thread (0) only; failure leaves the policy as it was.
        unsafe { libc::sched_setscheduler(0, libc::SCHED_BATCH, &param) };
    }
    if niceness() == 0 {
        return;
    }
    // SAFETY: plain syscalls on this thread's own id; failure leaves the priority as it was.
    unsafe {
        let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
        let current = libc::getpriority(libc::PRIO_PROCESS, tid);
        libc::setpriority(libc::PRIO_PROCESS, tid, (current + niceness()).min(19));
    }
}

#[cfg(not(target_os = "linux"))]
fn lower_priority() {}

fn work() {
    lower_priority();
    let pool = pool();
    let mut state = lock();
    // Whether the last thing this thread did was a job: then it may spin.
    let mut worked = false;
    loop {
        if let Some(job) = state.queue.pop_front() {
            pool.queued.store(state.queue.len(), Ordering::Release);
            drop(state);
            // A panic in core must not take the thread's accounting with it;
            // the job itself reports its outcome (see `lib.rs`).
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
            worked = true;
            state = lock();
            continue;
        }
        if state.threads > state.max {
            break;
        }
        if worked && state.spinning == 0 && !pool.spin.is_zero() && may_spin() {
            worked = false;
            state.spinning = 1;
            drop(state);
            spin_for_work(pool);
            state = lock();
            state.spinning = 0;
            // A job queued while spinning was not announced: take it now.
            continue;
        }
        worked = false;
        state.idle += 1;
        let (next, timeout) = pool
            .work
            .wait_timeout(state, IDLE_TIMEOUT)
            .unwrap_or_else(|p| p.into_inner());
        state = next;
        state.idle -= 1;
        if timeout.timed_out() && state.queue.is_empty() {
            break;
        }
    }
    state.threads -= 1;
}
