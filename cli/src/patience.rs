//! Waiting out the rate limit, as a long job must: `--all` (and, once it
//! adopts this, `export`, whose `call_patiently` this generalises) reads a
//! listing of any length in one run.
//!
//! The client waits for its budget and retries a 429 a few times on its own;
//! past that a call fails with `rate_limited` (the service kept refusing, the
//! budget's next slot is further off than the client waits, another process
//! of the key took the budget). A long job then waits as long as it is told
//! and sends the same call again, however many times it takes: a listing's
//! call is repeatable, and nothing is skipped. `--max-retry-wait` bounds
//! one wait; without it the job waits as long as the limit says.

use std::time::{Duration, Instant};

use roomchat::{Client, Error, ErrorKind};

/// The longest one pause lasts: a longer wait is slept in pauses of this,
/// each followed by the call (which says again how long is left).
const LONGEST_PAUSE: Duration = Duration::from_secs(30);

/// How often a pause looks whether the job was stopped (Ctrl-C).
const STOP_CHECK: Duration = Duration::from_millis(50);

/// How a job waits out a rate limit and a transient failure.
#[derive(Debug, Clone, Copy, Default)]
pub struct Patience {
    /// The longest a wait for the rate limit may be (`--max-retry-wait`): a
    /// longer one ends the call with its `rate_limited` error. `None`: waits
    /// as long as the limit says.
    pub max_wait: Option<Duration>,
    /// Retries of a transient failure (a timeout, a broken connection, a 5xx)
    /// after the client's own, with a growing pause: 0 when the client's
    /// retries are enough.
    pub transient_retries: u32,
}

impl Patience {
    /// Runs `call` (a repeatable call through `client`) until it succeeds:
    /// through any number of rate limits, each waited out as long as the error
    /// or the budget says (or, when neither says, a pause doubling from 1 s to
    /// 30 s), unless a wait is longer than `max_wait`; and through
    /// `transient_retries` transient failures. `met` is told of each error
    /// that is waited out before the call is sent again. `stopped` is asked
    /// during every pause: when it says so, the pause ends with `cancelled`.
    pub fn call<T>(
        &self,
        client: &Client,
        stopped: &dyn Fn() -> bool,
        mut met: impl FnMut(&Error),
        mut call: impl FnMut() -> roomchat::Result<T>,
    ) -> roomchat::Result<T> {
        let mut limited = 0u32;
        let mut transient = 0u32;
        loop {
            let error = match call() {
                Ok(value) => return Ok(value),
                Err(error) => error,
            };
            let pause = if error.kind() == ErrorKind::RateLimited {
                limited = limited.saturating_add(1);
                let wait = error
                    .retry_after()
                    .or(client.rate_limit_state().blocked_for)
                    .unwrap_or_else(|| Duration::from_millis(500) * 2u32.pow(limited.min(6)));
                if self.max_wait.is_some_and(|max| wait > max) {
                    return Err(error);
                }
                wait.min(LONGEST_PAUSE)
            } else if is_transient(&error) && transient < self.transient_retries {
                transient += 1;
                Duration::from_millis(250) * 2u32.pow(transient.min(6))
            } else {
                return Err(error);
            };
            met(&error);
            pause_for(pause, stopped)?;
        }
    }
}

/// A failure that the same call may not meet again.
fn is_transient(error: &Error) -> bool {
    matches!(
        error.kind(),
        ErrorKind::Timeout | ErrorKind::Connection | ErrorKind::ServerError
    ) || error.status() == Some(503)
}

/// Sleeps `pause`, or less when `stopped` says so (then `cancelled`).
fn pause_for(pause: Duration, stopped: &dyn Fn() -> bool) -> roomchat::Result<()> {
    let until = Instant::now() + pause;
    loop {
        if stopped() {
            return Err(Error::new(
                ErrorKind::Cancelled,
                "stopped while waiting for the rate limit",
            ));
        }
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(());
        }
        std::thread::sleep(left.min(STOP_CHECK));
    }
}
