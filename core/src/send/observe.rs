//! What the client tells an observer: each attempt, each retry, each rate-limit wait.
//!
//! The Python package turns these into `logging` records, the Node package
//! into `NODE_DEBUG=roomchat` lines, a Rust user into whatever they log with.
//! Every event carries the request's path with the key already redacted, and
//! [`Event::message`] renders the one line all of them print.

use std::fmt;
use std::time::{Duration, Instant};

use crate::error::Error;

/// How much an event matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// Routine: one per attempt.
    Debug,
    /// Worth a look: a retry, or a wait for the rate-limit budget.
    Warning,
}

/// What happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum EventKind {
    /// One attempt ended: answered (any status) or failed. [`Level::Debug`].
    Attempt,
    /// The call will be sent again after [`Event::wait`]. [`Level::Warning`].
    Retry,
    /// The call waits [`Event::wait`] for a slot of the key's rate-limit budget. [`Level::Warning`].
    RateLimitWait,
    /// The shared budget in Redis failed ([`Event::error`]); the client follows its
    /// `OnRedisError` policy until Redis answers again. [`Level::Warning`].
    BudgetDegraded,
}

impl EventKind {
    /// The level events of this kind are reported at.
    pub fn level(self) -> Level {
        match self {
            EventKind::Attempt => Level::Debug,
            EventKind::Retry | EventKind::RateLimitWait | EventKind::BudgetDegraded => {
                Level::Warning
            }
        }
    }
}

/// One event of one call. Borrowed: copy out what you keep.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct Event<'a> {
    /// What happened.
    pub kind: EventKind,
    /// The request's method.
    pub method: &'a str,
    /// The request's path and query, with the key shown as `REDACTED`.
    pub path: &'a str,
    /// The attempt this event belongs to, from 1.
    pub attempt: u32,
    /// The HTTP status of the answer, when there was one.
    pub status: Option<u16>,
    /// The attempt's error (for [`EventKind::Attempt`] that failed, and [`EventKind::Retry`]).
    pub error: Option<&'a Error>,
    /// How long the attempt took ([`EventKind::Attempt`]); zero otherwise.
    pub elapsed: Duration,
    /// When the attempt began: the instant its slot of the rate-limit budget
    /// was taken, exactly as the budget counts it ([`EventKind::Attempt`]);
    /// when the event happened, otherwise.
    pub started_at: Instant,
    /// How long the call now waits ([`EventKind::Retry`], [`EventKind::RateLimitWait`]).
    pub wait: Option<Duration>,
}

impl Event<'_> {
    /// The event's level.
    pub fn level(&self) -> Level {
        self.kind.level()
    }

    /// The line every package logs for this event, e.g.
    /// `GET /consumer/api/v2/users?auth=REDACTED&limit=50 -> 200 (attempt 1, 0.412 ms)`.
    pub fn message(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for Event<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (method, path, attempt) = (self.method, self.path, self.attempt);
        let wait = self.wait.unwrap_or_default().as_secs_f64();
        match self.kind {
            EventKind::Attempt => {
                write!(f, "{method} {path} -> ")?;
                match (self.status, self.error) {
                    (Some(status), _) => write!(f, "{status}")?,
                    (None, Some(error)) => write!(f, "{}", error.kind())?,
                    (None, None) => f.write_str("?")?,
                }
                write!(
                    f,
                    " (attempt {attempt}, {:.3} ms)",
                    self.elapsed.as_secs_f64() * 1000.0
                )
            }
            EventKind::Retry => {
                write!(f, "retrying {method} {path} in {wait:.3} s after ")?;
                match self.error {
                    Some(error) => write!(f, "{}", error.kind())?,
                    None => f.write_str("a failure")?,
                }
                if let Some(status) = self.status {
                    write!(f, " (HTTP {status})")?;
                }
                write!(f, " (attempt {attempt} failed)")
            }
            EventKind::RateLimitWait => write!(
                f,
                "waiting {wait:.3} s for the rate-limit budget of this key before {method} {path}"
            ),
            EventKind::BudgetDegraded => {
                write!(
                    f,
                    "the shared rate-limit budget failed before {method} {path}"
                )?;
                if let Some(error) = self.error {
                    write!(f, ": {}", error.message())?;
                }
                Ok(())
            }
        }
    }
}

/// Receives a client's events: set with [`ClientBuilder::observer`](crate::ClientBuilder::observer).
///
/// Called on the thread making the call, never with a lock of the client held.
/// Keep it quick; it must not call back into the same client.
pub trait Observer: Send + Sync {
    /// Whether events of `level` are wanted now; when not, none is built (so a
    /// disabled observer costs one call per attempt).
    fn enabled(&self, level: Level) -> bool;

    /// One event.
    fn event(&self, event: &Event<'_>);
}

/// The environment variable that turns on [`StderrObserver`] for a client
/// built without an observer: `debug` (every attempt and every warning),
/// `info` or `warn` (the warnings: retries, rate-limit waits, Redis failures;
/// no event is at info level). Any other value, or none, prints nothing.
pub const ENV_LOG: &str = "ROOMCHAT_LOG";

impl Level {
    /// The level a `ROOMCHAT_LOG` value asks for (any case; `warning` too):
    /// the lowest level printed. `None` for any other value.
    pub fn from_log_setting(value: &str) -> Option<Level> {
        match value.trim().to_ascii_lowercase().as_str() {
            "debug" => Some(Level::Debug),
            "info" | "warn" | "warning" => Some(Level::Warning),
            _ => None,
        }
    }

    /// `DEBUG` or `WARNING`, as every package prints it.
    pub fn label(self) -> &'static str {
        match self {
            Level::Debug => "DEBUG",
            Level::Warning => "WARNING",
        }
    }
}

/// Prints each event of `level` and above to standard error as
/// `[roomchat] DEBUG: GET /consumer/api/v2/users?auth=REDACTED -> 200 (attempt 1, 0.412 ms)`:
/// quick debugging without a logging setup. A client built without
/// [`ClientBuilder::observer`](crate::ClientBuilder::observer) gets one when
/// [`ENV_LOG`] (`ROOMCHAT_LOG`) is set.
#[derive(Debug, Clone, Copy)]
pub struct StderrObserver {
    level: Level,
}

impl StderrObserver {
    /// Prints the events of `level` and above.
    pub fn new(level: Level) -> StderrObserver {
        StderrObserver { level }
    }

    /// The observer `ROOMCHAT_LOG` asks for, if it asks for one.
    pub fn from_env() -> Option<StderrObserver> {
        let value = std::env::var(ENV_LOG).ok()?;
        Level::from_log_setting(&value).map(StderrObserver::new)
    }
}

impl Observer for StderrObserver {
    fn enabled(&self, level: Level) -> bool {
        level >= self.level
    }

    fn event(&self, event: &Event<'_>) {
        use std::io::Write;
        // One write per line, so that lines of calls on other threads do not interleave.
        let line = format!("[roomchat] {}: {event}\n", event.level().label());
        let _ = std::io::stderr().write_all(line.as_bytes());
    }
}
