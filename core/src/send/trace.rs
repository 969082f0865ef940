//! The cargo feature `tracing`: one span per call, the observer's events inside it.
//!
//! Each call of a [`Client`](crate::Client) endpoint is a `roomchat.call` span
//! (level INFO, target `roomchat`) with the fields `operation` (`list_users`,
//! `create_user`, …, `raw` for [`Client::raw_request`](crate::Client::raw_request)),
//! `method`, `path` (with the key shown as `REDACTED`), and, as the call goes,
//! `attempt` (the attempts made so far), `status` (the last answer's),
//! `wait_ms` (time spent waiting for the rate-limit budget and before
//! retries) and `error` (the [`ErrorKind`](crate::ErrorKind) name of a call
//! that failed). Inside it, every [`Event`] is a tracing event of target
//! `roomchat` carrying the observer's line: DEBUG per attempt, WARN per retry,
//! rate-limit wait and Redis failure. Without the feature all of this compiles
//! to nothing.

use crate::error::Error;
use crate::send::observe::{Event, Level};
use crate::wire::WireRequest;

#[cfg(feature = "tracing")]
pub(crate) use with_tracing::CallSpan;
#[cfg(not(feature = "tracing"))]
pub(crate) use without_tracing::CallSpan;

/// Whether a tracing subscriber wants events of `level` from this crate.
#[inline]
pub(crate) fn wants(#[allow(unused_variables)] level: Level) -> bool {
    #[cfg(feature = "tracing")]
    {
        match level {
            Level::Debug => tracing::enabled!(target: "roomchat", tracing::Level::DEBUG),
            Level::Warning => tracing::enabled!(target: "roomchat", tracing::Level::WARN),
        }
    }
    #[cfg(not(feature = "tracing"))]
    {
        false
    }
}

/// `event` as a tracing event (inside the call's span).
#[inline]
pub(crate) fn event(#[allow(unused_variables)] event: &Event<'_>) {
    #[cfg(feature = "tracing")]
    {
        let kind = match event.kind {
            crate::send::observe::EventKind::Attempt => "attempt",
            crate::send::observe::EventKind::Retry => "retry",
            crate::send::observe::EventKind::RateLimitWait => "rate_limit_wait",
            crate::send::observe::EventKind::BudgetDegraded => "budget_degraded",
        };
        let error = event.error.map(|e| e.kind().name());
        let elapsed_ms = event.elapsed.as_secs_f64() * 1000.0;
        let wait_ms = event.wait.map(|w| w.as_secs_f64() * 1000.0);
        match event.level() {
            Level::Debug => tracing::debug!(
                target: "roomchat",
                event = kind, attempt = event.attempt, status = event.status,
                elapsed_ms, wait_ms, error,
                "{event}"
            ),
            Level::Warning => tracing::warn!(
                target: "roomchat",
                event = kind, attempt = event.attempt, status = event.status,
                elapsed_ms, wait_ms, error,
                "{event}"
            ),
        }
    }
}

/// The name a call's span gives its operation.
#[cfg(feature = "tracing")]
fn operation_name(request: &WireRequest, raw: bool) -> &'static str {
    if raw {
        return "raw";
    }
    crate::wire::operation::Operation::sent_as(&request.method, &request.path)
        .map_or("unknown", crate::wire::operation::Operation::name)
}

#[cfg(feature = "tracing")]
mod with_tracing {
    use std::cell::Cell;
    use std::time::Duration;

    use super::*;

    /// One call's span.
    pub(crate) struct CallSpan {
        span: tracing::Span,
        waited: Cell<Duration>,
    }

    impl CallSpan {
        /// The span of a call of `request` (`raw`: made by `raw_request`).
        pub(crate) fn start(request: &WireRequest, raw: bool) -> CallSpan {
            use tracing::field::Empty;
            let span = tracing::info_span!(
                target: "roomchat",
                "roomchat.call",
                operation = operation_name(request, raw),
                method = %request.method,
                path = Empty,
                attempt = Empty,
                status = Empty,
                wait_ms = 0.0,
                error = Empty,
            );
            if !span.is_disabled() {
                span.record("path", request.redacted_target().as_str());
            }
            CallSpan {
                span,
                waited: Cell::new(Duration::ZERO),
            }
        }

        pub(crate) fn enter(&self) -> tracing::span::Entered<'_> {
            self.span.enter()
        }

        pub(crate) fn attempt(&self, attempt: u32) {
            self.span.record("attempt", attempt);
        }

        pub(crate) fn status(&self, status: u16) {
            self.span.record("status", status);
        }

        /// Adds `wait` to the time the call spent waiting.
        pub(crate) fn waited(&self, wait: Duration) {
            if wait.is_zero() {
                return;
            }
            let total = self.waited.get().saturating_add(wait);
            self.waited.set(total);
            self.span.record("wait_ms", total.as_secs_f64() * 1000.0);
        }

        pub(crate) fn failed(&self, error: &Error) {
            self.span.record("error", error.kind().name());
        }
    }
}

#[cfg(not(feature = "tracing"))]
mod without_tracing {
    use std::time::Duration;

    use super::*;

    /// Nothing: the crate was built without the feature `tracing`.
    pub(crate) struct CallSpan;

    /// What entering no span gives.
    pub(crate) struct Entered;

    impl CallSpan {
        #[inline(always)]
        pub(crate) fn start(_request: &WireRequest, _raw: bool) -> CallSpan {
            CallSpan
        }
        #[inline(always)]
        pub(crate) fn enter(&self) -> Entered {
            Entered
        }
        #[inline(always)]
        pub(crate) fn attempt(&self, _attempt: u32) {}
        #[inline(always)]
        pub(crate) fn status(&self, _status: u16) {}
        #[inline(always)]
        pub(crate) fn waited(&self, _wait: Duration) {}
        #[inline(always)]
        pub(crate) fn failed(&self, _error: &Error) {}
    }
}
