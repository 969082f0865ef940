//! The rate budget every call takes a slot from: this process's, or, with the
//! feature `redis`, one shared by every process through Redis.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::cancel::CancelToken;
use crate::error::{Error, Result};
use ratelimit::{Budget, RateLimitState};

pub(crate) mod ratelimit;
#[cfg(feature = "redis")]
pub(crate) mod shared_budget;

/// Every budget lock, held: see [`crate::transport::fork`].
#[cfg(unix)]
pub(crate) struct AllLocked {
    // Released in declaration order: the reverse of the order taken.
    _local: ratelimit::LocalLocked,
    #[cfg(feature = "redis")]
    _shared: std::sync::MutexGuard<'static, shared_budget::Registry>,
}

/// Takes every budget lock for a fork: the shared budgets' registry (which is
/// held while a fallback budget is made), then this process's.
#[cfg(unix)]
pub(crate) fn lock_all() -> AllLocked {
    #[cfg(feature = "redis")]
    let shared = shared_budget::registry();
    AllLocked {
        _local: ratelimit::lock_local(),
        #[cfg(feature = "redis")]
        _shared: shared,
    }
}

/// The budget a client counts its starts in: this process's, or Redis's.
#[derive(Clone)]
pub(crate) enum Budgets {
    /// In this process.
    Local(std::sync::Arc<Budget>),
    /// In Redis, shared by every process of the key.
    #[cfg(feature = "redis")]
    Shared(std::sync::Arc<shared_budget::SharedBudget>),
}

impl Budgets {
    /// Takes a slot for one start (see [`Budget::acquire`]); `on_degraded` hears of Redis failing.
    ///
    /// Waiting for Redis ends at `deadline` (the local budget waits as its policy says).
    pub(crate) fn acquire(
        &self,
        cancel: Option<&CancelToken>,
        #[allow(unused_variables)] deadline: Instant,
        on_wait: impl FnMut(Duration),
        #[allow(unused_variables, unused_mut)] mut on_degraded: impl FnMut(&Error),
    ) -> Result<Instant> {
        match self {
            Budgets::Local(budget) => budget.acquire(cancel, on_wait),
            #[cfg(feature = "redis")]
            Budgets::Shared(shared) => shared.acquire(cancel, deadline, on_wait, on_degraded),
        }
    }

    /// Holds every caller of the key off for `duration`.
    pub(crate) fn block_for(&self, duration: Duration) {
        match self {
            Budgets::Local(budget) => budget.block_for(duration),
            #[cfg(feature = "redis")]
            Budgets::Shared(shared) => shared.block_for(duration),
        }
    }

    /// The window the service clears a 429 within when it says nothing (the
    /// longest hold such a 429 gets, [`UnexplainedHolds`]).
    pub(crate) fn window(&self) -> Duration {
        match self {
            Budgets::Local(budget) => budget.window(),
            #[cfg(feature = "redis")]
            Budgets::Shared(shared) => shared.service_window(),
        }
    }

    pub(crate) fn snapshot(&self) -> RateLimitState {
        match self {
            Budgets::Local(budget) => budget.snapshot(),
            #[cfg(feature = "redis")]
            Budgets::Shared(shared) => shared.snapshot(),
        }
    }
}

/// How long a 429 that says nothing holds the key off (no `Retry-After`, or an
/// implausible one): a sixtieth of the window (1 s for the service's 60 s),
/// doubling with each such 429 in a row, up to the window, which the contract
/// says the limit clears within (1, 2, 4, … 32, then 60 s). Holding a whole
/// window at the first one paused a caller 60 s where the service's rolling
/// window often frees a slot within a second or two.
///
/// "In a row": a 429 counts only when its request started after the last
/// hold began (the answers of one burst count once), and an answer that is not
/// a 429 to a request started after it ends the row. Lock-free (atomics), so
/// that a fork in the middle of a call leaves nothing held.
pub(crate) struct UnexplainedHolds {
    /// 429s in a row that said nothing.
    streak: AtomicU32,
    /// When the last hold began, as nanoseconds since `epoch` plus one (0: none).
    began: AtomicU64,
    epoch: Instant,
}

impl UnexplainedHolds {
    pub(crate) fn new() -> UnexplainedHolds {
        UnexplainedHolds {
            streak: AtomicU32::new(0),
            began: AtomicU64::new(0),
            epoch: Instant::now(),
        }
    }

    fn stamp(&self, at: Instant) -> u64 {
        let nanos = at.saturating_duration_since(self.epoch).as_nanos();
        u64::try_from(nanos).unwrap_or(u64::MAX - 1) + 1
    }

    /// Whether a request that started at `started` started after the last hold began.
    fn after_last_hold(&self, started: Instant) -> bool {
        let began = self.began.load(Ordering::Relaxed);
        began == 0 || self.stamp(started) >= began
    }

    /// The hold for a 429 that said nothing, to a request started at `started`.
    pub(crate) fn hold(&self, started: Instant, window: Duration) -> Duration {
        let streak = if self.after_last_hold(started) {
            self.began
                .store(self.stamp(Instant::now()), Ordering::Relaxed);
            self.streak
                .fetch_add(1, Ordering::Relaxed)
                .saturating_add(1)
        } else {
            self.streak.load(Ordering::Relaxed).max(1)
        };
        let first = (window / 60).max(Duration::from_millis(1));
        first
            .saturating_mul(1u32 << (streak - 1).min(20))
            .min(window)
    }

    /// An answer other than a 429, to a request started at `started`: the row ends.
    pub(crate) fn answered(&self, started: Instant) {
        if self.streak.load(Ordering::Relaxed) != 0 && self.after_last_hold(started) {
            self.streak.store(0, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_of_429s_counts_once_and_another_answer_ends_the_row() {
        let holds = UnexplainedHolds::new();
        let window = Duration::from_secs(60);
        let burst = Instant::now();
        assert_eq!(holds.hold(burst, window), Duration::from_secs(1));
        // Another answer of the same burst (sent before the hold began): no growth.
        assert_eq!(holds.hold(burst, window), Duration::from_secs(1));
        assert_eq!(holds.hold(Instant::now(), window), Duration::from_secs(2));
        // An answer to a request sent before the last hold does not end the row.
        holds.answered(burst);
        assert_eq!(holds.hold(Instant::now(), window), Duration::from_secs(4));
        holds.answered(Instant::now());
        assert_eq!(holds.hold(Instant::now(), window), Duration::from_secs(1));
        for _ in 0..40 {
            holds.hold(Instant::now(), window);
        }
        assert_eq!(holds.hold(Instant::now(), window), window);
        // A tiny window still holds a little.
        let tiny = UnexplainedHolds::new();
        assert_eq!(
            tiny.hold(Instant::now(), Duration::from_millis(30)),
            Duration::from_millis(1)
        );
    }
}
