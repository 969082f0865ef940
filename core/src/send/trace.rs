//! The cargo feature `tracing`: a span per call and per attempt, named and
//! filled as the feature `opentelemetry` fills its own, so that a
//! `tracing-opentelemetry` user gets the same spans, attributes (integers as
//! `i64`, each once) and span events; the observer's lines of each attempt as
//! DEBUG events.
//!
//! Each call of a [`Client`](crate::Client) endpoint is a `roomchat.call` span
//! (level INFO, target `roomchat`) with the fields `otel.name` (`roomchat
//! list_users`), `otel.kind` (`internal`), `roomchat.operation` (`list_users`,
//! `create_user`, …, `raw` for [`Client::raw_request`](crate::Client::raw_request)),
//! and, recorded once when it ends, `roomchat.attempts` (the attempts made),
//! `roomchat.rate_limit.wait.duration` and `roomchat.retry.wait.duration`
//! (seconds spent waiting for the rate-limit budget and before retries), and
//! for a call that failed `error.type` (the [`ErrorKind`](crate::ErrorKind)
//! name), `otel.status_code` (`error`) and `otel.status_description` (as
//! [`CallEnd::status_description`](crate::instrument::CallEnd::status_description)).
//! Inside it each attempt is a `roomchat.attempt` span (level INFO) with
//! `otel.name` (`GET /consumer/api/v2/users`), `otel.kind` (`client`),
//! `http.request.method`, `url.full` (credentials shown as `REDACTED`),
//! `url.template`, `server.address`, `server.port`,
//! `network.protocol.version`, `http.request.resend_count` (from the second
//! attempt), and at its end `http.response.status_code`, `error.type` (the
//! status as text for an answer, else the error's kind), `roomchat.error.kind`
//! and `otel.status_code`. Retries, rate-limit waits and failures of a budget
//! in Redis are WARN events of the call's span named as the feature
//! `opentelemetry` names its span events (`roomchat.retry`,
//! `roomchat.rate_limit.wait`, `roomchat.budget.degraded`), with its
//! attributes as fields and that name as their message too (the event's name
//! in `tracing-opentelemetry`, which takes the message as the name and adds no
//! attribute for it; what a `fmt` subscriber prints before the fields, which
//! shows no event's name); each attempt's line of the observer is a DEBUG
//! event of the call's span. Without the feature all of this compiles to
//! nothing.
//!
//! What this route cannot give: metrics, and trace context on the wire (the
//! OpenTelemetry context of a `tracing` span is held by `tracing-opentelemetry`,
//! which only code depending on it and on `opentelemetry` can read).

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

/// `event` as a tracing event (inside the call's span): an attempt's line as a
/// DEBUG event; a retry, a rate-limit wait or a budget's failure as the WARN
/// event named and filled as the feature `opentelemetry`'s span event.
#[inline]
pub(crate) fn event(#[allow(unused_variables)] event: &Event<'_>) {
    #[cfg(feature = "tracing")]
    {
        use crate::send::instrument::RetryReason;
        use crate::send::observe::EventKind;
        let attempt = i64::from(event.attempt);
        let status = event.status.map(i64::from);
        let wait = event.wait.unwrap_or_default().as_secs_f64();
        match event.kind {
            EventKind::Attempt => tracing::event!(
                target: "roomchat",
                tracing::Level::DEBUG,
                roomchat.attempt = attempt,
                http.response.status_code = status,
                error.type = event.error.map(|e| e.kind().name()),
                elapsed_ms = event.elapsed.as_secs_f64() * 1000.0,
                "{event}"
            ),
            EventKind::Retry => tracing::event!(
                name: "roomchat.retry",
                target: "roomchat",
                tracing::Level::WARN,
                roomchat.attempt = attempt,
                roomchat.retry.reason = event.error.map_or("other", |e| RetryReason::of(e).as_str()),
                roomchat.wait.duration = wait,
                http.response.status_code = status,
                "roomchat.retry"
            ),
            EventKind::RateLimitWait => tracing::event!(
                name: "roomchat.rate_limit.wait",
                target: "roomchat",
                tracing::Level::WARN,
                roomchat.attempt = attempt,
                roomchat.wait.duration = wait,
                "roomchat.rate_limit.wait"
            ),
            EventKind::BudgetDegraded => tracing::event!(
                name: "roomchat.budget.degraded",
                target: "roomchat",
                tracing::Level::WARN,
                roomchat.attempt = attempt,
                error.type = event.error.map(|e| e.kind().name()),
                error.message = event.error.map(|e| e.message()),
                "roomchat.budget.degraded"
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
    use crate::send::instrument::{attempt_error_type, status_description};
    use crate::send::observed::CallFacts;

    /// One call's span, the facts its attempts' spans show, and what it
    /// records when it ends (each field once, as the feature `opentelemetry`
    /// sets its attributes once).
    pub(crate) struct CallSpan<'a> {
        span: tracing::Span,
        facts: Option<CallFacts<'a>>,
        attempts: Cell<u32>,
        /// Whether the budget said the attempt under way waits (the time it
        /// took to be admitted counts only then, as the feature `opentelemetry` counts it).
        waiting: Cell<bool>,
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
                otel.status_description = Empty,
                roomchat.operation = Empty,
                roomchat.attempts = Empty,
                roomchat.rate_limit.wait.duration = Empty,
                roomchat.retry.wait.duration = Empty,
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
                attempts: Cell::new(0),
                waiting: Cell::new(false),
                budget_wait: Cell::new(Duration::ZERO),
                retry_wait: Cell::new(Duration::ZERO),
            }
        }

        pub(crate) fn enter(&self) -> tracing::span::Entered<'_> {
            self.span.enter()
        }

        /// Attempt `attempt` is about to wait for the budget (counted when it starts).
        pub(crate) fn attempt(&self, _attempt: u32) {}

        /// The span of attempt `attempt`, starting now.
        pub(crate) fn attempt_start(&self, attempt: u32) -> AttemptSpan {
            let Some(facts) = &self.facts else {
                return AttemptSpan(tracing::Span::none());
            };
            self.attempts.set(attempt);
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
                server.port = i64::from(info.server_port),
                network.protocol.version = info.protocol_version,
                http.request.resend_count = Empty,
                http.response.status_code = Empty,
                error.type = Empty,
                roomchat.error.kind = Empty,
            );
            if attempt > 1 {
                span.record("http.request.resend_count", i64::from(attempt - 1));
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
                span.record("http.response.status_code", i64::from(status));
            }
            if let Some(error) = error {
                span.record("error.type", attempt_error_type(status, error));
                span.record("roomchat.error.kind", error.kind().name());
                span.record("otel.status_code", "error");
            }
        }

        /// The last answer's status (the attempt's span has it).
        pub(crate) fn status(&self, _status: u16) {}

        /// The budget says the attempt under way waits for a slot.
        pub(crate) fn rate_limit_wait(&self) {
            self.waiting.set(true);
        }

        /// The attempt under way was admitted by the budget after `wait`:
        /// added to the time the call waited if the budget said it waits.
        pub(crate) fn waited_for_budget(&self, wait: Duration) {
            if self.waiting.take() {
                add(&self.budget_wait, wait);
            }
        }

        /// Adds `wait` to the time the call slept before retries.
        pub(crate) fn waited_before_retry(&self, wait: Duration) {
            add(&self.retry_wait, wait);
        }

        /// The call failed with `error` (as its caller gets it).
        pub(crate) fn failed(&self, error: &Error) {
            self.span.record("error.type", error.kind().name());
            // The code first: `tracing-opentelemetry` takes the description as
            // an error status, which a later code "error" would replace.
            self.span.record("otel.status_code", "error");
            self.span.record(
                "otel.status_description",
                status_description(error).as_str(),
            );
        }
    }

    impl Drop for CallSpan<'_> {
        /// The call's totals, once, as its span ends.
        fn drop(&mut self) {
            if self.facts.is_some() {
                self.span
                    .record("roomchat.attempts", i64::from(self.attempts.get()));
                self.span.record(
                    "roomchat.rate_limit.wait.duration",
                    self.budget_wait.get().as_secs_f64(),
                );
                self.span.record(
                    "roomchat.retry.wait.duration",
                    self.retry_wait.get().as_secs_f64(),
                );
            }
        }
    }

    fn add(total: &Cell<Duration>, wait: Duration) {
        total.set(total.get().saturating_add(wait));
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
        pub(crate) fn rate_limit_wait(&self) {}
        #[inline(always)]
        pub(crate) fn waited_for_budget(&self, _wait: Duration) {}
        #[inline(always)]
        pub(crate) fn waited_before_retry(&self, _wait: Duration) {}
        #[inline(always)]
        pub(crate) fn failed(&self, _error: &Error) {}
    }
}
