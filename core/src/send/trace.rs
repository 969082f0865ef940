//! The cargo feature `tracing`: a span per call and per attempt, named and
//! filled as the OpenTelemetry conventions say, so that a `tracing-opentelemetry`
//! user sees what the feature `opentelemetry` makes; the observer's events
//! inside the call's span.
//!
//! Each call of a [`Client`](crate::Client) endpoint is a `roomchat.call` span
//! (level INFO, target `roomchat`) with the fields `otel.name` (`roomchat
//! list_users`), `otel.kind` (`internal`), `roomchat.operation` (`list_users`,
//! `create_user`, …, `raw` for [`Client::raw_request`](crate::Client::raw_request)),
//! and, as the call goes, `roomchat.attempts` (the attempts made so far),
//! `roomchat.rate_limit.wait.duration` and `roomchat.retry.wait.duration`
//! (seconds spent waiting for the rate-limit budget and before retries), and
//! for a call that failed `error.type` (the [`ErrorKind`](crate::ErrorKind)
//! name) and `otel.status_code` (`error`). Inside it each attempt is a
//! `roomchat.attempt` span (level INFO) with `otel.name` (`GET
//! /consumer/api/v2/users`), `otel.kind` (`client`), `http.request.method`,
//! `url.full` (credentials shown as `REDACTED`), `url.template`,
//! `server.address`, `server.port`, `network.protocol.version`,
//! `http.request.resend_count` (from the second attempt), and at its end
//! `http.response.status_code`, `error.type` and `otel.status_code`. Every
//! [`Event`] is a tracing event of target `roomchat` in the call's span,
//! carrying the observer's line: DEBUG per attempt, WARN per retry, rate-limit
//! wait and Redis failure. Without the feature all of this compiles to nothing.

use crate::error::Error;
use crate::send::observe::{Event, Level};
use crate::send::observed::ClientFacts;
use crate::wire::WireRequest;

#[cfg(feature = "tracing")]
pub(crate) use with_tracing::{AttemptSpan, CallSpan};
#[cfg(not(feature = "tracing"))]
pub(crate) use without_tracing::{AttemptSpan, CallSpan};

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

#[cfg(feature = "tracing")]
mod with_tracing {
    use std::cell::Cell;
    use std::time::Duration;

    use tracing::field::Empty;

    use super::*;
    use crate::send::observed::CallFacts;

    /// One call's span, and the facts its attempts' spans show.
    pub(crate) struct CallSpan<'a> {
        span: tracing::Span,
        facts: Option<CallFacts<'a>>,
        budget_wait: Cell<Duration>,
        retry_wait: Cell<Duration>,
    }

    /// One attempt's span: closed when dropped.
    pub(crate) struct AttemptSpan(tracing::Span);

    impl<'a> CallSpan<'a> {
        /// The span of a call of `request` (`raw`: made by `raw_request`) by a client of `client`.
        pub(crate) fn start(
            request: &'a WireRequest,
            raw: bool,
            client: &'a ClientFacts,
        ) -> CallSpan<'a> {
            let span = tracing::info_span!(
                target: "roomchat",
                "roomchat.call",
                otel.name = Empty,
                otel.kind = "internal",
                otel.status_code = Empty,
                roomchat.operation = Empty,
                roomchat.attempts = Empty,
                roomchat.rate_limit.wait.duration = 0.0,
                roomchat.retry.wait.duration = 0.0,
                error.type = Empty,
            );
            let facts = (!span.is_disabled()).then(|| CallFacts::new(client, request, raw));
            if let Some(facts) = &facts {
                let info = facts.info();
                span.record("otel.name", info.call_span_name());
                span.record("roomchat.operation", info.operation);
            }
            CallSpan {
                span,
                facts,
                budget_wait: Cell::new(Duration::ZERO),
                retry_wait: Cell::new(Duration::ZERO),
            }
        }

        pub(crate) fn enter(&self) -> tracing::span::Entered<'_> {
            self.span.enter()
        }

        pub(crate) fn attempt(&self, attempt: u32) {
            self.span.record("roomchat.attempts", attempt);
        }

        /// The span of attempt `attempt`, starting now.
        pub(crate) fn attempt_start(&self, attempt: u32) -> AttemptSpan {
            let Some(facts) = &self.facts else {
                return AttemptSpan(tracing::Span::none());
            };
            let info = facts.info();
            let span = tracing::info_span!(
                target: "roomchat",
                parent: &self.span,
                "roomchat.attempt",
                otel.name = info.attempt_span_name(),
                otel.kind = "client",
                otel.status_code = Empty,
                http.request.method = info.method,
                url.full = info.url_full(),
                url.template = info.url_template,
                server.address = info.server_address,
                server.port = info.server_port,
                network.protocol.version = info.protocol_version,
                http.request.resend_count = Empty,
                http.response.status_code = Empty,
                error.type = Empty,
            );
            if attempt > 1 {
                span.record("http.request.resend_count", attempt - 1);
            }
            AttemptSpan(span)
        }

        /// Closes `attempt`'s span: answered with `status`, or failed with `error`.
        pub(crate) fn attempt_end(
            &self,
            attempt: AttemptSpan,
            status: Option<u16>,
            error: Option<&Error>,
        ) {
            let span = attempt.0;
            if let Some(status) = status {
                span.record("http.response.status_code", status);
            }
            if let Some(error) = error {
                span.record("error.type", error.kind().name());
                span.record("otel.status_code", "error");
            }
        }

        /// The last answer's status (the attempt's span has it).
        pub(crate) fn status(&self, _status: u16) {}

        /// Adds `wait` to the time the call waited for the rate-limit budget.
        pub(crate) fn waited_for_budget(&self, wait: Duration) {
            add(
                &self.span,
                &self.budget_wait,
                "roomchat.rate_limit.wait.duration",
                wait,
            );
        }

        /// Adds `wait` to the time the call slept before retries.
        pub(crate) fn waited_before_retry(&self, wait: Duration) {
            add(
                &self.span,
                &self.retry_wait,
                "roomchat.retry.wait.duration",
                wait,
            );
        }

        pub(crate) fn failed(&self, error: &Error) {
            self.span.record("error.type", error.kind().name());
            self.span.record("otel.status_code", "error");
        }
    }

    fn add(span: &tracing::Span, total: &Cell<Duration>, field: &str, wait: Duration) {
        if wait.is_zero() {
            return;
        }
        let sum = total.get().saturating_add(wait);
        total.set(sum);
        span.record(field, sum.as_secs_f64());
    }
}

#[cfg(not(feature = "tracing"))]
mod without_tracing {
    use std::marker::PhantomData;
    use std::time::Duration;

    use super::*;

    /// Nothing: the crate was built without the feature `tracing`.
    pub(crate) struct CallSpan<'a>(PhantomData<&'a ()>);

    /// Nothing.
    pub(crate) struct AttemptSpan;

    /// What entering no span gives.
    pub(crate) struct Entered;

    impl<'a> CallSpan<'a> {
        #[inline(always)]
        pub(crate) fn start(
            _request: &'a WireRequest,
            _raw: bool,
            _client: &'a ClientFacts,
        ) -> CallSpan<'a> {
            CallSpan(PhantomData)
        }
        #[inline(always)]
        pub(crate) fn enter(&self) -> Entered {
            Entered
        }
        #[inline(always)]
        pub(crate) fn attempt(&self, _attempt: u32) {}
        #[inline(always)]
        pub(crate) fn attempt_start(&self, _attempt: u32) -> AttemptSpan {
            AttemptSpan
        }
        #[inline(always)]
        pub(crate) fn attempt_end(
            &self,
            _attempt: AttemptSpan,
            _status: Option<u16>,
            _error: Option<&Error>,
        ) {
        }
        #[inline(always)]
        pub(crate) fn status(&self, _status: u16) {}
        #[inline(always)]
        pub(crate) fn waited_for_budget(&self, _wait: Duration) {}
        #[inline(always)]
        pub(crate) fn waited_before_retry(&self, _wait: Duration) {}
        #[inline(always)]
        pub(crate) fn failed(&self, _error: &Error) {}
    }
}
