//! Cancelling a call from another thread (an `AbortSignal`, a cancelled asyncio task).

use std::cell::RefCell;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::error::{Error, ErrorKind, Result};

/// Cancels the calls of a client made with [`Client::with_cancel`](crate::Client::with_cancel).
///
/// Cloning gives another handle to the same token. Once [`cancel`](Self::cancel)led,
/// a call fails with [`ErrorKind::Cancelled`] at the next point where it waits:
/// a rate-limit wait or retry backoff is abandoned at once, and a request
/// already on the wire is given up within [`CANCEL_CHECK_INTERVAL`] (its
/// connection is closed, never returned to the pool). A token cannot be reset.
///
/// ```
/// use roomchat::{CancelToken, ErrorKind, ListUsers};
/// # let emu = roomchat_emulator::Emulator::start(Default::default()).unwrap();
/// # let client = roomchat::Client::builder(emu.private_key()).base_url(emu.base_url()).build()?;
/// let token = CancelToken::new();
/// let cancellable = client.with_cancel(token.clone());
/// token.cancel();
/// let error = cancellable.list_users(&ListUsers::default()).unwrap_err();
/// assert_eq!(error.kind(), ErrorKind::Cancelled);
/// # Ok::<(), roomchat::Error>(())
/// ```
#[derive(Clone, Default)]
pub struct CancelToken {
    inner: Arc<Inner>,
}

/// How often a request already on the wire checks whether its call was cancelled.
pub const CANCEL_CHECK_INTERVAL: Duration = Duration::from_millis(50);

/// Where a call may wait for others (a rate budget): a cancel wakes its
/// waiters to look again. Implemented by the layer above, so that this one
/// knows nothing of budgets.
pub(crate) trait Waiters: Send + Sync {
    /// Wakes every waiter to look again.
    fn wake_all(&self);
}

#[derive(Default)]
struct Inner {
    cancelled: AtomicBool,
    /// The budget a call of this token waits in, if any: woken on cancel.
    waiting_in: Mutex<Option<std::sync::Weak<dyn Waiters>>>,
    /// Wakes backoff sleeps (paired with `waiting_in`'s mutex).
    wake: Condvar,
}

impl fmt::Debug for CancelToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CancelToken")
            .field("cancelled", &self.is_cancelled())
            .finish()
    }
}

impl CancelToken {
    /// A token that is not cancelled.
    pub fn new() -> CancelToken {
        CancelToken::default()
    }

    /// Cancels every call made with this token, now and later. Safe to call from any thread, more than once.
    pub fn cancel(&self) {
        self.inner.cancelled.store(true, Ordering::SeqCst);
        let budget = {
            let slot = self.slot();
            self.inner.wake.notify_all();
            slot.as_ref().and_then(std::sync::Weak::upgrade)
        };
        // Outside the token's lock: a waiter holds the budget's lock while it registers here.
        if let Some(budget) = budget {
            budget.wake_all();
        }
    }

    /// Whether [`cancel`](Self::cancel) was called.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancelled.load(Ordering::SeqCst)
    }

    fn slot(&self) -> MutexGuard<'_, Option<std::sync::Weak<dyn Waiters>>> {
        self.inner
            .waiting_in
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    /// Records that a call of this token is about to wait in `budget` (called
    /// with the budget's lock held, before the wait's last check of the flag).
    pub(crate) fn waiting_in(&self, budget: std::sync::Weak<dyn Waiters>) {
        *self.slot() = Some(budget);
    }

    /// Sleeps `duration`, or less when cancelled (then `Err(Cancelled)`).
    pub(crate) fn sleep(&self, duration: Duration) -> Result<()> {
        let deadline = crate::time::instant_after(Instant::now(), duration);
        let mut slot = self.slot();
        loop {
            self.check()?;
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(());
            }
            slot = self
                .inner
                .wake
                .wait_timeout(slot, left)
                .map(|(g, _)| g)
                .unwrap_or_else(|p| p.into_inner().0);
        }
    }

    /// `Err(Cancelled)` once cancelled.
    pub(crate) fn check(&self) -> Result<()> {
        if self.is_cancelled() {
            return Err(cancelled());
        }
        Ok(())
    }
}

pub(crate) fn cancelled() -> Error {
    Error::new(ErrorKind::Cancelled, "the call was cancelled")
}

/// Cancelled with its request on the wire, for a request never sent twice (a
/// create, a post): it may have reached the service, and the message says so.
pub(crate) fn cancelled_outcome_unknown() -> Error {
    Error::new(
        ErrorKind::Cancelled,
        "the call was cancelled with its request on the wire: it may have reached the service, \
         so its outcome is unknown (it was not sent again); look it up before sending it again",
    )
}

/// Sleeps `duration`, abandoned early when `token` is cancelled.
pub(crate) fn sleep(token: Option<&CancelToken>, duration: Duration) -> Result<()> {
    match token {
        Some(token) => token.sleep(duration),
        None => {
            std::thread::sleep(duration);
            Ok(())
        }
    }
}

thread_local! {
    /// The token of the call this thread is sending, read by the transport between reads.
    static IN_FLIGHT: RefCell<Option<CancelToken>> = const { RefCell::new(None) };
}

/// Makes `token` visible to the transport while `f` sends a request on this thread.
pub(crate) fn while_in_flight<T>(token: Option<&CancelToken>, f: impl FnOnce() -> T) -> T {
    let Some(token) = token else {
        return f();
    };
    struct Reset(Option<CancelToken>);
    impl Drop for Reset {
        fn drop(&mut self) {
            let previous = self.0.take();
            IN_FLIGHT.with(|slot| *slot.borrow_mut() = previous);
        }
    }
    let previous = IN_FLIGHT.with(|slot| slot.borrow_mut().replace(token.clone()));
    let _reset = Reset(previous);
    f()
}

/// Whether the call being sent on this thread has a token (the transport then reads in slices).
pub(crate) fn in_flight_is_cancellable() -> bool {
    IN_FLIGHT.with(|slot| slot.borrow().is_some())
}

/// Whether the call being sent on this thread was cancelled.
pub(crate) fn in_flight_is_cancelled() -> bool {
    IN_FLIGHT.with(|slot| {
        slot.borrow()
            .as_ref()
            .is_some_and(CancelToken::is_cancelled)
    })
}
