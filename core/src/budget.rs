//! The rate budget every call takes a slot from: this process's, or, with the
//! feature `redis`, one shared by every process through Redis.

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

    /// The window the service clears a 429 within when it says nothing.
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
