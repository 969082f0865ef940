//! Rate-limit accounting shared by every client of one private key in the process.
//!
//! The service allows 600 requests per rolling minute per private key and
//! counts *arrivals*. The client counts *starts*, so it keeps a small margin:
//! a window a little longer than the service's, which absorbs the spread of
//! the delay between start and arrival (at most N starts in any window of
//! W + J means at most N arrivals in any window of W, as long as those delays
//! differ by J at most), and, from 10 requests up, 2 % of the limit (at least
//! one) in reserve for a burst whose delays spread wider than J (requests
//! queued behind new connections and busy CPUs) and for arrivals the client
//! cannot count. Below 10 a reserved request would cost more than a tenth of
//! the budget, and a burst is too short to spread.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use once_cell::sync::Lazy;

use crate::cancel::CancelToken;
use crate::error::{Error, ErrorKind, Result};
use crate::time::{check_duration, instant_after};

/// What the default longest wait for a slot adds to the window and its jitter
/// allowance (see [`RateLimitConfig::when_limited`]): a caller measures its wait
/// from before it takes the budget's lock (or asks Redis), so the slot it gets
/// may free a little later than a window after it began.
pub(crate) const WAIT_SLACK: Duration = Duration::from_secs(1);

/// The shortest default longest wait for a slot (see
/// [`RateLimitConfig::when_limited`]): a minute, within which the contract says
/// the service's limit clears. A short window's budget (2 per 5 s) under
/// sustained load from many callers may keep one of them waiting several windows.
pub(crate) const SHORTEST_DEFAULT_WAIT: Duration = Duration::from_secs(60);

/// The default jitter allowance of `window`: 5 % of it, at most 1 s.
fn jitter_allowance(window: Duration) -> Duration {
    (window / 20).min(Duration::from_secs(1))
}

/// What to do when the budget has no free slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WhenLimited {
    /// Wait for the next free slot, up to this long; past it, fail with [`ErrorKind::RateLimited`].
    Wait(Duration),
    /// Fail at once with [`ErrorKind::RateLimited`], saying how long to wait.
    Fail,
}

/// The client-side rate limit of one private key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimitConfig {
    /// Requests the service allows per window (default 600).
    pub requests: u32,
    /// The service's rolling window (default 60 s).
    pub window: Duration,
    /// Requests of the limit kept in reserve (default: 2 % of the limit, at
    /// least 1, from 10 requests up; none below, so that a small budget such as
    /// 2 per 5 s sends 2, not 1).
    pub reserve: u32,
    /// Added to the window to absorb jitter between start and arrival (default: 5 % of the window, at most 1 s).
    pub jitter_allowance: Duration,
    /// Wait for a slot, or fail at once (default: wait up to the window plus
    /// its jitter allowance, the longest a slot of a spent budget can take to
    /// free, and a second more for callers contending for the budget's lock
    /// and for the round trip to Redis; and at least a minute, within which the
    /// contract says the service's limit clears, so that a caller queued behind others under sustained load is not failed
    /// after one short window. 62 s for the default 60 s window: spending the
    /// budget never fails a call that waiting would let through). Set by
    /// [`RateLimitConfig::new`]; a window changed afterwards keeps this wait.
    pub when_limited: WhenLimited,
}

impl RateLimitConfig {
    /// `requests` per `window`, with the default margins and waiting policy
    /// (see the fields).
    pub fn new(requests: u32, window: Duration) -> RateLimitConfig {
        let jitter_allowance = jitter_allowance(window);
        RateLimitConfig {
            requests,
            window,
            reserve: if requests >= 10 {
                requests.div_ceil(50)
            } else {
                0
            },
            jitter_allowance,
            when_limited: WhenLimited::Wait(RateLimitConfig::default_max_wait(window)),
        }
    }

    /// The longest a call waits for a slot of a budget with this `window`
    /// unless told otherwise (see [`RateLimitConfig::when_limited`]): the
    /// window, its jitter allowance and a second, and at least a minute (62 s
    /// for the default 60 s window). The C library hands it to the bindings
    /// over it (`roomchat_rate_limit_default_max_wait_ms`), so that every
    /// language waits as long.
    pub fn default_max_wait(window: Duration) -> Duration {
        // At most MAX_DURATION, so that the longest window valid stays valid.
        window
            .saturating_add(jitter_allowance(window))
            .saturating_add(WAIT_SLACK)
            .max(SHORTEST_DEFAULT_WAIT)
            .min(crate::time::MAX_DURATION)
    }

    /// The same, failing at once instead of waiting.
    pub fn fail_fast(mut self) -> RateLimitConfig {
        self.when_limited = WhenLimited::Fail;
        self
    }

    /// Starts the client allows itself per (padded) window.
    pub fn effective_requests(&self) -> u32 {
        self.requests.saturating_sub(self.reserve).max(1)
    }

    fn effective_window(&self) -> Duration {
        self.window + self.jitter_allowance
    }

    pub(crate) fn validate(&self) -> Result<()> {
        if self.requests == 0 || self.window.is_zero() {
            return Err(Error::configuration(
                "rate limit must allow at least one request per non-zero window",
            ));
        }
        check_duration("the rate-limit window", self.window)?;
        check_duration("the rate-limit jitter allowance", self.jitter_allowance)?;
        if let WhenLimited::Wait(max) = self.when_limited {
            check_duration("the longest rate-limit wait", max)?;
        }
        Ok(())
    }
}

impl Default for RateLimitConfig {
    /// The service's limit: 600 requests per 60 s (section 8).
    fn default() -> Self {
        RateLimitConfig::new(600, Duration::from_secs(60))
    }
}

/// Where a key's budget is counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum BudgetBackend {
    /// In this process: every client of the key in the process shares it (the default).
    #[default]
    Local,
    /// In Redis: every process and host of the key shares it (feature `redis`).
    Redis,
}

impl BudgetBackend {
    /// `local` or `redis`.
    pub fn name(self) -> &'static str {
        match self {
            BudgetBackend::Local => "local",
            BudgetBackend::Redis => "redis",
        }
    }
}

/// Where a key's budget stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimitState {
    /// Requests the client allows itself per window (the service's limit less the reserve).
    pub limit: u32,
    /// The window the client counts in (the service's plus the jitter allowance).
    pub window: Duration,
    /// Requests started within the current window.
    pub used: u32,
    /// Requests that may start now without waiting.
    pub remaining: u32,
    /// How long until the next request may start (zero when one may start now).
    pub next_free_in: Duration,
    /// How long every caller is still held off after a 429 or exhausted `X-RateLimit-Remaining`.
    pub blocked_for: Option<Duration>,
    /// Where the budget is counted.
    pub backend: BudgetBackend,
    /// Redis is the backend but cannot be reached: the figures are the fallback's.
    pub degraded: bool,
}

struct BudgetState {
    config: RateLimitConfig,
    starts: VecDeque<Instant>,
    blocked_until: Option<Instant>,
}

impl BudgetState {
    fn prune(&mut self, now: Instant) {
        let window = self.config.effective_window();
        while self
            .starts
            .front()
            .is_some_and(|t| now.duration_since(*t) >= window)
        {
            self.starts.pop_front();
        }
        if self.blocked_until.is_some_and(|b| b <= now) {
            self.blocked_until = None;
        }
    }

    /// How long until a start is allowed (zero: now).
    fn wait(&self, now: Instant) -> Duration {
        let blocked = self
            .blocked_until
            .map(|b| b.saturating_duration_since(now))
            .unwrap_or_default();
        let full = self.starts.len() >= self.config.effective_requests() as usize;
        let slot = match (full, self.starts.front()) {
            (true, Some(oldest)) => {
                (*oldest + self.config.effective_window()).saturating_duration_since(now)
            }
            _ => Duration::ZERO,
        };
        blocked.max(slot)
    }
}

/// The budget of one private key, shared process-wide by every client of the
/// key. It outlives its last client for as long as it still counts starts (or
/// holds callers off), so that a client made again at once starts from the
/// same count; then it goes (see [`Budget::for_key`]).
pub(crate) struct Budget {
    state: Mutex<BudgetState>,
    freed: Condvar,
}

/// Budgets by private key, and how large the registry may grow before its
/// unused budgets are looked for. The key is only used as a map key, never
/// shown. A `BTreeMap`: its nodes are pointed at from their start, so what is
/// left in it at exit is "still reachable" to a leak checker, not "possibly lost".
#[derive(Default)]
pub(crate) struct Registry {
    budgets: BTreeMap<String, Arc<Budget>>,
    sweep_at: usize,
}

static REGISTRY: Lazy<Mutex<Registry>> = Lazy::new(Default::default);

fn registry() -> MutexGuard<'static, Registry> {
    REGISTRY.lock().unwrap_or_else(|p| p.into_inner())
}

/// Makes the registry before any fork handler may need it.
#[cfg(unix)]
pub(crate) fn init_registry() {
    Lazy::force(&REGISTRY);
}

/// This process's budget locks, held (registry first, as in [`Budget::for_key`]):
/// see [`crate::budget::lock_all`].
#[cfg(unix)]
pub(crate) struct LocalLocked {
    // Released in declaration order: the reverse of the order taken.
    _budgets: Vec<MutexGuard<'static, BudgetState>>,
    _registry: MutexGuard<'static, Registry>,
}

/// Takes the registry, then each budget.
#[cfg(unix)]
pub(crate) fn lock_local() -> LocalLocked {
    let registry = registry();
    let budgets = registry
        .budgets
        .values()
        .map(|b| {
            let budget: *const Budget = Arc::as_ptr(b);
            // SAFETY: a budget leaves the registry (and may be freed) only with
            // the registry's lock held, which `LocalLocked` holds until after
            // these guards are released (its fields drop in declaration order).
            unsafe { &*budget }.lock()
        })
        .collect();
    LocalLocked {
        _budgets: budgets,
        _registry: registry,
    }
}

/// Budgets no client holds whose every start has left the window (and that
/// hold no one off) are dropped once the registry has doubled since the last
/// look: amortized, a client made costs O(1) more, and the registry stays
/// within twice the budgets in use.
const FIRST_SWEEP: usize = 64;

impl Budget {
    /// The budget of `private_key`, created on first use. A client built later
    /// with other settings for the same key replaces the settings (counts are kept).
    pub(crate) fn for_key(private_key: &str, config: RateLimitConfig) -> Arc<Budget> {
        let mut registry = registry();
        if let Some(budget) = registry.budgets.get(private_key) {
            let budget = budget.clone();
            budget.lock().config = config;
            return budget;
        }
        if registry.budgets.len() >= registry.sweep_at {
            let now = Instant::now();
            registry
                .budgets
                .retain(|_, budget| Arc::strong_count(budget) > 1 || !budget.unused(now));
            registry.sweep_at = (registry.budgets.len() * 2).max(FIRST_SWEEP);
        }
        let budget = Arc::new(Budget {
            state: Mutex::new(BudgetState {
                config,
                starts: VecDeque::new(),
                blocked_until: None,
            }),
            freed: Condvar::new(),
        });
        registry
            .budgets
            .insert(private_key.to_owned(), budget.clone());
        budget
    }

    /// Counts a start admitted elsewhere (by Redis) at `at`, without waiting.
    #[cfg_attr(not(feature = "redis"), allow(dead_code))]
    pub(crate) fn record(&self, at: Instant) {
        let mut state = self.lock();
        state.prune(at);
        state.starts.push_back(at);
    }

    /// Counts at least `count` starts in the window at `at`, adding starts at
    /// `at` up to it: a share of starts admitted elsewhere whose times are not
    /// known, taken as late as they can have been (so they leave the window no
    /// earlier than the real ones).
    #[cfg_attr(not(feature = "redis"), allow(dead_code))]
    pub(crate) fn record_at_least(&self, at: Instant, count: usize) {
        let mut state = self.lock();
        state.prune(at);
        while state.starts.len() < count {
            state.starts.push_back(at);
        }
    }

    /// Whether the budget counts nothing any more: no start in the window, no hold.
    fn unused(&self, now: Instant) -> bool {
        let mut state = self.lock();
        state.prune(now);
        state.starts.is_empty() && state.blocked_until.is_none()
    }

    fn lock(&self) -> MutexGuard<'_, BudgetState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes a slot for one request start, waiting as configured, and returns
    /// the instant the slot was taken at (the start the budget counts). `on_wait` is
    /// told how long the caller will wait, once, before it first waits (with no
    /// lock held). A cancelled `cancel` ends the wait with [`ErrorKind::Cancelled`].
    pub(crate) fn acquire(
        self: &Arc<Self>,
        cancel: Option<&CancelToken>,
        mut on_wait: impl FnMut(Duration),
    ) -> Result<Instant> {
        loop {
            if let Some(at) = self.acquire_until(cancel, &mut on_wait, None)? {
                return Ok(at);
            }
        }
    }

    /// As [`Budget::acquire`], but a wait that would go past `until` ends
    /// there with `Ok(None)`, no slot taken (the Redis budget's fallback
    /// stops waiting when Redis may be tried again).
    pub(crate) fn acquire_until(
        self: &Arc<Self>,
        cancel: Option<&CancelToken>,
        mut on_wait: impl FnMut(Duration),
        until: Option<Instant>,
    ) -> Result<Option<Instant>> {
        let started_waiting = Instant::now();
        let mut announced = false;
        let mut state = self.lock();
        loop {
            if let Some(token) = cancel {
                token.check()?;
            }
            let now = Instant::now();
            state.prune(now);
            let wait = state.wait(now);
            if wait.is_zero() {
                state.starts.push_back(now);
                return Ok(Some(now));
            }
            if until.is_some_and(|u| u <= now) {
                return Ok(None);
            }
            let allowed = match state.config.when_limited {
                WhenLimited::Fail => Duration::ZERO,
                WhenLimited::Wait(max) => max.saturating_sub(now.duration_since(started_waiting)),
            };
            if wait > allowed {
                return Err(Error::new(
                    ErrorKind::RateLimited,
                    format!(
                        "the client-side rate limit of {} requests per {:?} is spent; the next slot frees in {:.3}s",
                        state.config.requests,
                        state.config.window,
                        wait.as_secs_f64()
                    ),
                )
                .with_retry_after(Some(wait)));
            }
            if !announced {
                // Told with no lock held (an observer may take a language's global
                // lock), then everything is looked at again.
                announced = true;
                drop(state);
                on_wait(wait);
                state = self.lock();
                continue;
            }
            if let Some(token) = cancel {
                token.waiting_in(Arc::downgrade(self) as std::sync::Weak<dyn crate::cancel::Waiters>);
                token.check()?;
            }
            // Woken early when a 429, a settings change or a cancel alters the picture.
            let wait = match until {
                Some(u) => wait.min(u - now),
                None => wait,
            };
            state = self
                .freed
                .wait_timeout(state, wait)
                .map(|(g, _)| g)
                .unwrap_or_else(|p| p.into_inner().0);
        }
    }

    /// Wakes every waiter to look again (after a cancel).
    pub(crate) fn wake_all(&self) {
        let _state = self.lock();
        self.freed.notify_all();
    }
}

impl crate::cancel::Waiters for Budget {
    fn wake_all(&self) {
        Budget::wake_all(self);
    }
}

impl Budget {
    /// Holds every caller of this key off for `duration` (after a 429 or `X-RateLimit-Remaining: 0`).
    pub(crate) fn block_for(&self, duration: Duration) {
        let until = instant_after(Instant::now(), duration);
        let mut state = self.lock();
        if state.blocked_until.is_none_or(|b| b < until) {
            state.blocked_until = Some(until);
        }
        drop(state);
        self.freed.notify_all();
    }

    /// The window the service clears a 429 within when it says nothing.
    pub(crate) fn window(&self) -> Duration {
        self.lock().config.window
    }

    pub(crate) fn snapshot(&self) -> RateLimitState {
        let now = Instant::now();
        let mut state = self.lock();
        state.prune(now);
        let limit = state.config.effective_requests();
        let used = state.starts.len() as u32;
        let blocked_for = state
            .blocked_until
            .map(|b| b.saturating_duration_since(now));
        RateLimitState {
            limit,
            window: state.config.effective_window(),
            used,
            remaining: if blocked_for.is_some() {
                0
            } else {
                limit.saturating_sub(used)
            },
            next_free_in: state.wait(now),
            blocked_for,
            backend: BudgetBackend::Local,
            degraded: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fails_fast_with_the_wait() {
        let config = RateLimitConfig::new(3, Duration::from_secs(10)).fail_fast();
        let budget = Budget::for_key("unit-test-key-fail-fast", config);
        for _ in 0..config.effective_requests() {
            budget.acquire(None, |_| {}).unwrap();
        }
        let e = budget.acquire(None, |_| {}).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::RateLimited);
        assert!(e.retry_after().unwrap() > Duration::from_secs(9));
        let s = budget.snapshot();
        assert_eq!((s.limit, s.used, s.remaining), (3, 3, 0));
    }

    #[test]
    fn a_block_holds_everyone_off() {
        let config = RateLimitConfig::new(100, Duration::from_secs(10)).fail_fast();
        let budget = Budget::for_key("unit-test-key-block", config);
        budget.block_for(Duration::from_secs(5));
        assert_eq!(
            budget.acquire(None, |_| {}).unwrap_err().kind(),
            ErrorKind::RateLimited
        );
        assert_eq!(budget.snapshot().remaining, 0);
    }

    #[test]
    fn a_budget_goes_once_unheld_and_its_window_has_passed() {
        let config = RateLimitConfig::new(5, Duration::from_millis(20));
        let held = Budget::for_key("unit-test-release-held", config);
        held.acquire(None, |_| {}).unwrap();
        for i in 0..300 {
            let budget = Budget::for_key(&format!("unit-test-release-{i}"), config);
            budget.acquire(None, |_| {}).unwrap();
        }
        // Unheld, but within its window: kept (a client made again counts on).
        let recent = Budget::for_key("unit-test-release-299", config);
        assert_eq!(recent.snapshot().used, 1);
        drop(recent);
        std::thread::sleep(Duration::from_millis(30));
        for i in 0..300 {
            drop(Budget::for_key(
                &format!("unit-test-release-again-{i}"),
                config,
            ));
        }
        let registry = registry();
        assert!(!registry.budgets.contains_key("unit-test-release-0"));
        assert!(registry.budgets.contains_key("unit-test-release-held"));
        drop(registry);
        drop(held);
    }
}
