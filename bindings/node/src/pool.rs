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
//! A thread that finished a call sleeps at once unless `ROOMCHAT_NODE_SPIN_US`
//! (1 to 1000) asks it to spin that long for the next one first, one thread
//! at a time, as Go's scheduler spins an idle thread for new work: one call at
//! a time (a loop awaiting one call after another, a paging iterator), the
//! next call is then taken without waking a sleeping thread (a futex wake; the
//! hand-over undici.request does not make). A job posted while a thread spins
//! wakes nobody. A spinner that sees it was preempted (more than [`PREEMPTED`]
//! between two looks: the CPUs are contended) stops at once and turns spinning
//! off for [`SPIN_OFF`], so on a loaded machine a call waits for a preempted
//! spinner's next time slice at most once per [`SPIN_OFF`]. Off by default:
//! an earlier spin (300 µs, on by default, any number of preemptions; issue
//! 37) saved nothing measurable idle (369 against 362 µs per call) and made
//! one call at a time 2-4x slower on a loaded CPU (339 contended spins held
//! their calls for 523 ms); this one (issue 51, item 12) could only be
//! measured on a machine at load average 15-25, where its preemption check
//! kept it off, and where a 100 µs spin caught the next call in 5% of its
//! spins (1000 µs: 73%). `bench/peer.mjs` prints it beside the default
//! (`roomchat-spin`, 100 µs): CPU time and µs per call, idle and loaded.

use std::cell::Cell;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
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

type Job = Box<dyn FnOnce() + Send + 'static>;

struct State {
    queue: VecDeque<Job>,
    /// Threads alive.
    threads: usize,
    /// Threads waiting for work.
    idle: usize,
    /// Threads spinning for the next job (at most one, see [`spin`]).
    spinning: usize,
    max: usize,
}

struct Pool {
    state: Mutex<State>,
    work: Condvar,
}

fn pool() -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    POOL.get_or_init(|| {
        let max = std::env::var("ROOMCHAT_NODE_THREADS")
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
            .filter(|n| (1..=MAX_THREADS_LIMIT).contains(n))
            .unwrap_or(DEFAULT_MAX_THREADS);
        Pool {
            state: Mutex::new(State {
                queue: VecDeque::new(),
                threads: 0,
                idle: 0,
                spinning: 0,
                max,
            }),
            work: Condvar::new(),
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
    let mut state = lock();
    state.queue.push_back(job);
    POSTED.fetch_add(1, Ordering::Release);
    // A spinning thread takes the first job without being woken.
    let spinner_takes = state.queue.len() <= state.spinning;
    // Every idle thread will be woken for one job; start another thread when
    // more jobs wait than idle and spinning threads can take.
    if state.queue.len() > state.idle + state.spinning && state.threads < state.max {
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
    if !spinner_takes {
        pool().work.notify_one();
    }
}

thread_local! {
    /// This pool thread counts as idle already: its job called [`finishing`].
    static COUNTED_IDLE: Cell<bool> = const { Cell::new(false) };
}

/// Called by a job on a pool thread just before it hands its outcome to the
/// event loop: from then on the thread counts as idle, so that a call made in
/// answer to that outcome (a paging iterator's next page, a loop awaiting one
/// call after another) is taken by this thread rather than starting another.
/// Without it, that call often came before the thread was back waiting, and a
/// sequential export spread its pages over 2-6 threads, each with allocator
/// caches of its own: the first export's RSS grew by 8 to 24 MiB from run to
/// run (`bench/export-messages.mjs`).
pub fn finishing() {
    if COUNTED_IDLE.with(|c| c.replace(true)) {
        return;
    }
    lock().idle += 1;
}

/// Sets the maximum number of threads (1 to [`MAX_THREADS_LIMIT`]); returns the previous one.
pub fn set_max_threads(max: usize) -> usize {
    let mut state = lock();
    std::mem::replace(&mut state.max, max)
}

/// (threads alive, threads idle, jobs queued, maximum).
pub fn stats() -> (usize, usize, usize, usize) {
    let state = lock();
    (state.threads, state.idle, state.queue.len(), state.max)
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

/// Jobs submitted so far: a spinning thread watches it move.
static POSTED: AtomicU64 = AtomicU64::new(0);
/// No thread spins before this time (µs since [`epoch`]): set when a spinner
/// was preempted, as it is on a loaded machine.
static SPIN_OFF_UNTIL: AtomicU64 = AtomicU64::new(0);
/// How long a spinner may go without running before it counts as preempted.
const PREEMPTED: Duration = Duration::from_micros(50);
/// How long spinning stays off after a spinner was preempted.
const SPIN_OFF: Duration = Duration::from_millis(100);
/// How long a thread spins for the next job, unless configured: not at all.
pub const DEFAULT_SPIN: Duration = Duration::ZERO;
/// The longest spin accepted.
const MAX_SPIN: Duration = Duration::from_millis(1);

fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

fn micros_since_epoch(at: Instant) -> u64 {
    at.saturating_duration_since(epoch()).as_micros() as u64
}

/// How long a thread spins for the next job: `ROOMCHAT_NODE_SPIN_US` (0 to
/// 1000; 0: never), default [`DEFAULT_SPIN`] (never).
fn spin_budget() -> Duration {
    static BUDGET: OnceLock<Duration> = OnceLock::new();
    *BUDGET.get_or_init(|| {
        std::env::var("ROOMCHAT_NODE_SPIN_US")
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_micros)
            .filter(|d| *d <= MAX_SPIN)
            .unwrap_or(DEFAULT_SPIN)
    })
}

fn spin_allowed() -> bool {
    !spin_budget().is_zero()
        && SPIN_OFF_UNTIL.load(Ordering::Relaxed) <= micros_since_epoch(Instant::now())
}

/// Spins for up to [`spin_budget`] until a job is posted (POSTED moves from
/// `seen`); a spinner that was preempted stops, and turns spinning off for
/// [`SPIN_OFF`].
fn spin(seen: u64) {
    let budget = spin_budget();
    let start = Instant::now();
    let mut last = start;
    loop {
        let mut posted = false;
        for _ in 0..64 {
            if POSTED.load(Ordering::Acquire) != seen {
                posted = true;
                break;
            }
            std::hint::spin_loop();
        }
        let now = Instant::now();
        // Preempted since the last look (a job that came meanwhile waited for
        // this thread's next time slice): the CPUs are contended, stop.
        if now.duration_since(last) > PREEMPTED {
            SPIN_OFF_UNTIL.store(micros_since_epoch(now + SPIN_OFF), Ordering::Relaxed);
            return;
        }
        if posted || now.duration_since(start) >= budget {
            return;
        }
        last = now;
    }
}

fn work() {
    lower_priority();
    let pool = pool();
    let mut state = lock();
    loop {
        if let Some(job) = state.queue.pop_front() {
            drop(state);
            // A panic in core must not take the thread's accounting with it;
            // the job itself reports its outcome (see `lib.rs`).
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
            state = lock();
            if COUNTED_IDLE.with(|c| c.replace(false)) {
                state.idle -= 1;
            }
            continue;
        }
        if state.threads > state.max {
            break;
        }
        if state.spinning == 0 && spin_allowed() {
            // The queue is empty now: any job posted from here on moves POSTED.
            let seen = POSTED.load(Ordering::Acquire);
            state.spinning += 1;
            drop(state);
            spin(seen);
            state = lock();
            state.spinning -= 1;
            // A job posted during the spin woke nobody (`submit`): take it.
            if !state.queue.is_empty() {
                continue;
            }
        }
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
