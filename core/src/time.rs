//! The one bound on every duration: a setting, a server's wait or a Redis
//! answer is checked or capped here before it meets the clock.

use std::time::{Duration, Instant};

use crate::error::{Error, Result};

/// The longest duration any setting accepts (10⁹ s, about 31.7 years): a
/// longer timeout, window or wait is a configuration error, since adding it to
/// the clock could overflow. Every binding checks its arguments against it.
pub const MAX_DURATION: Duration = Duration::from_secs(1_000_000_000);

/// `Err(Configuration)` unless `value` is at most [`MAX_DURATION`].
pub(crate) fn check_duration(what: &str, value: Duration) -> Result<()> {
    if value > MAX_DURATION {
        return Err(Error::configuration(format!(
            "{what} must be at most {} s (got {:.3} s)",
            MAX_DURATION.as_secs(),
            value.as_secs_f64()
        )));
    }
    Ok(())
}

/// `now + duration`, with `duration` first capped at [`MAX_DURATION`] (a wait
/// read from a server or from Redis is never trusted to fit the clock).
pub(crate) fn instant_after(now: Instant, duration: Duration) -> Instant {
    // Unreachable `None` on every supported platform (their clocks span centuries).
    now.checked_add(duration.min(MAX_DURATION)).unwrap_or(now)
}
