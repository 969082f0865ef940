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

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;

    /// A client that is never called: the calls below are stand-ins.
    fn client() -> Client {
        Client::builder("sk_test_patience")
            .base_url("http://127.0.0.1:9")
            .build()
            .unwrap()
    }

    /// A call that fails with `kind` `failures` times, then answers.
    fn failing(kind: ErrorKind, failures: u32, calls: &Cell<u32>) -> roomchat::Result<u32> {
        calls.set(calls.get() + 1);
        if calls.get() <= failures {
            Err(Error::new(kind, "a stand-in failure"))
        } else {
            Ok(calls.get())
        }
    }

    #[test]
    fn a_transient_failure_is_retried_as_many_times_as_asked_and_no_more() {
        let client = client();
        for (retries, answer) in [(0, Err(ErrorKind::Timeout)), (1, Ok(2))] {
            let calls = Cell::new(0);
            let met = Cell::new(0);
            let patience = Patience {
                max_wait: None,
                transient_retries: retries,
            };
            let got = patience.call(
                &client,
                &|| false,
                |_| met.set(met.get() + 1),
                || failing(ErrorKind::Timeout, 1, &calls),
            );
            assert_eq!(got.map_err(|e| e.kind()), answer);
            assert_eq!(met.get(), retries);
        }
        // Not transient: returned at once.
        let calls = Cell::new(0);
        let patience = Patience {
            max_wait: None,
            transient_retries: 5,
        };
        let got = patience.call(
            &client,
            &|| false,
            |_| {},
            || failing(ErrorKind::NotFound, 1, &calls),
        );
        assert_eq!(got.map_err(|e| e.kind()), Err(ErrorKind::NotFound));
        assert_eq!(calls.get(), 1);
    }

    #[test]
    fn a_rate_limit_wait_past_max_wait_or_a_stop_ends_the_call() {
        let client = client();
        // No Retry-After and no hold: the first pause is 1 s, past the bound.
        let bounded = Patience {
            max_wait: Some(Duration::from_millis(100)),
            transient_retries: 0,
        };
        let calls = Cell::new(0);
        let started = Instant::now();
        let got = bounded.call(
            &client,
            &|| false,
            |_| {},
            || failing(ErrorKind::RateLimited, 1, &calls),
        );
        assert_eq!(got.map_err(|e| e.kind()), Err(ErrorKind::RateLimited));
        assert_eq!(calls.get(), 1);
        assert!(started.elapsed() < Duration::from_millis(500));

        // Unbounded, the wait is cut short by a stop (Ctrl-C): cancelled.
        let calls = Cell::new(0);
        let got = Patience::default().call(
            &client,
            &|| true,
            |_| {},
            || failing(ErrorKind::RateLimited, 1, &calls),
        );
        assert_eq!(got.map_err(|e| e.kind()), Err(ErrorKind::Cancelled));
        assert_eq!(calls.get(), 1);
    }
}
