//! One call's instrumentation, driven by the send path: its observers, the
//! facts they are given, and the events gathered between two of their calls.
//! Built only for a call that has an observer (see [`Observation::start`]).

use std::borrow::Cow;
use std::cell::{Cell, OnceCell, RefCell};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use crate::error::Error;
use crate::send::instrument::{
    AttemptEnd, AttemptStart, CallEnd, CallEvent, CallEventKind, CallInfo, CallObserver,
    Instrumentation, RequestHeaders, RetryReason, PROTOCOL_VERSION,
};
use crate::wire::{Operation, WireRequest};

/// What every call of a client shares: where its requests go.
pub(crate) struct ClientFacts {
    /// The base URL as checked (no trailing slash): `url.full`'s start.
    pub(crate) base_url: String,
    /// The base URL's own path (no trailing slash; empty for none).
    pub(crate) base_path: String,
    pub(crate) server_address: String,
    pub(crate) server_port: u16,
    pub(crate) scheme: &'static str,
    pub(crate) client_id: u64,
    /// The texts no URL shown may hold (the keys, the proxy's password), each
    /// as written and percent-encoded: `url.full` hides them wherever a raw
    /// request put them. Made once per client, not per call.
    pub(crate) secrets: Vec<String>,
}

/// What a call is: the owned form of [`CallInfo`], made once per call.
pub(crate) struct CallFacts<'a> {
    pub(crate) client: &'a ClientFacts,
    pub(crate) operation: &'static str,
    pub(crate) method: &'a str,
    pub(crate) url_template: Option<Cow<'static, str>>,
    pub(crate) request: &'a WireRequest,
    pub(crate) url_full: OnceCell<String>,
    pub(crate) started_at: SystemTime,
    pub(crate) started: Instant,
}

impl<'a> CallFacts<'a> {
    /// The facts of a call of `request` (`raw`: made as a raw request), starting now.
    pub(crate) fn new(
        client: &'a ClientFacts,
        request: &'a WireRequest,
        raw: bool,
    ) -> CallFacts<'a> {
        let declared = Operation::sent_as(&request.method, &request.path);
        let operation = match (raw, declared) {
            (true, _) => "raw",
            (false, Some(op)) => op.name(),
            (false, None) => "unknown",
        };
        let url_template = declared.and_then(Operation::spec).map(|spec| {
            if client.base_path.is_empty() {
                Cow::Borrowed(spec.path)
            } else {
                Cow::Owned(format!("{}{}", client.base_path, spec.path))
            }
        });
        CallFacts {
            client,
            operation,
            method: &request.method,
            url_template,
            request,
            url_full: OnceCell::new(),
            started_at: SystemTime::now(),
            started: Instant::now(),
        }
    }

    pub(crate) fn info(&self) -> CallInfo<'_> {
        CallInfo {
            operation: self.operation,
            method: self.method,
            url_template: self.url_template.as_deref(),
            url_full: &self.url_full,
            url_parts: (&self.client.base_url, self.request, &self.client.secrets),
            server_address: &self.client.server_address,
            server_port: self.client.server_port,
            url_scheme: self.client.scheme,
            protocol_version: PROTOCOL_VERSION,
            started_at: self.started_at,
            started: self.started,
            client_id: self.client.client_id,
        }
    }

    /// `at` by the wall clock (read once, at the call's start, so that wall
    /// times and durations agree).
    pub(crate) fn wall(&self, at: Instant) -> SystemTime {
        self.started_at + at.saturating_duration_since(self.started)
    }
}

/// One call's observers and what they have not been told yet.
pub(crate) struct Observation<'a> {
    facts: CallFacts<'a>,
    observers: Vec<Box<dyn CallObserver>>,
    /// Events since the observers were last called. Pushed from the budget's
    /// callbacks, hence the cell.
    pending: RefCell<Vec<CallEvent>>,
    /// The rate-limit wait under way: its event's index in `pending`, and its start.
    waiting: Cell<Option<(usize, Instant)>>,
    rate_limit_wait: Cell<Duration>,
    retry_wait: Duration,
    attempts: u32,
    status: Option<u16>,
}

impl<'a> Observation<'a> {
    /// The observation of a call of `request`, if any of `instrumentations`
    /// (the client's, then the scope's) observes it: each is asked now, on
    /// the calling thread.
    pub(crate) fn start(
        instrumentations: &[&Arc<dyn Instrumentation>],
        client: &'a ClientFacts,
        request: &'a WireRequest,
        raw: bool,
    ) -> Option<Observation<'a>> {
        if instrumentations.is_empty() {
            return None;
        }
        let facts = CallFacts::new(client, request, raw);
        let info = facts.info();
        let observers: Vec<Box<dyn CallObserver>> = instrumentations
            .iter()
            .filter_map(|i| i.start_call(&info))
            .collect();
        if observers.is_empty() {
            return None;
        }
        Some(Observation {
            facts,
            observers,
            pending: RefCell::new(Vec::new()),
            waiting: Cell::new(None),
            rate_limit_wait: Cell::new(Duration::ZERO),
            retry_wait: Duration::ZERO,
            attempts: 0,
            status: None,
        })
    }

    /// The budget says the call waits before `attempt`.
    pub(crate) fn rate_limit_wait(&self, attempt: u32) {
        let now = Instant::now();
        self.end_wait(now);
        let mut pending = self.pending.borrow_mut();
        self.waiting.set(Some((pending.len(), now)));
        pending.push(CallEvent {
            kind: CallEventKind::RateLimitWait,
            attempt,
            at: self.facts.wall(now),
            wait: Duration::ZERO,
            retry_reason: None,
            status: None,
            error: None,
        });
    }

    /// The budget in Redis failed before `attempt`.
    pub(crate) fn budget_degraded(&self, attempt: u32, error: &Error) {
        self.pending.borrow_mut().push(CallEvent {
            kind: CallEventKind::BudgetDegraded,
            attempt,
            at: self.facts.wall(Instant::now()),
            wait: Duration::ZERO,
            retry_reason: None,
            status: None,
            error: Some(error.clone()),
        });
    }

    /// Closes the rate-limit wait under way, if any, at `now`.
    fn end_wait(&self, now: Instant) {
        if let Some((index, since)) = self.waiting.take() {
            let waited = now.saturating_duration_since(since);
            if let Some(event) = self.pending.borrow_mut().get_mut(index) {
                event.wait = waited;
            }
            self.rate_limit_wait
                .set(self.rate_limit_wait.get().saturating_add(waited));
        }
    }

    /// Attempt `attempt` starts at `started` (its budget slot taken): the
    /// observers are told, and give the headers for it.
    pub(crate) fn attempt_start(
        &mut self,
        attempt: u32,
        started: Instant,
        propagate_trace_context: bool,
    ) -> RequestHeaders {
        self.end_wait(started);
        self.attempts = attempt;
        let events = self.pending.take();
        let start = AttemptStart {
            attempt,
            resend_count: attempt - 1,
            started_at: self.facts.wall(started),
            started,
            events: &events,
            propagate_trace_context,
        };
        let info = self.facts.info();
        let mut headers = RequestHeaders::new();
        for observer in &mut self.observers {
            observer.attempt_start(&info, &start, &mut headers);
        }
        headers
    }

    /// Attempt `attempt`, started at `started`, ended at `ended`; `retry`:
    /// the call sends again after that wait.
    pub(crate) fn attempt_end(
        &mut self,
        attempt: u32,
        started: Instant,
        ended: Instant,
        status: Option<u16>,
        error: Option<&Error>,
        retry: Option<Duration>,
    ) {
        if status.is_some() {
            self.status = status;
        }
        let mut events = self.pending.take();
        if let Some(wait) = retry {
            self.retry_wait = self.retry_wait.saturating_add(wait);
            events.push(CallEvent {
                kind: CallEventKind::Retry,
                attempt,
                at: self.facts.wall(ended),
                wait,
                retry_reason: error.map(RetryReason::of),
                status,
                error: None,
            });
        }
        let end = AttemptEnd {
            attempt,
            resend_count: attempt - 1,
            started_at: self.facts.wall(started),
            ended_at: self.facts.wall(ended),
            duration: ended.saturating_duration_since(started),
            status,
            error,
            events: &events,
        };
        let info = self.facts.info();
        for observer in &mut self.observers {
            observer.attempt_end(&info, &end);
        }
    }

    /// The call ended with `error` (`None`: it succeeded).
    pub(crate) fn finish(mut self, error: Option<&Error>) {
        let now = Instant::now();
        self.end_wait(now);
        let events = self.pending.take();
        let end = CallEnd {
            ended_at: self.facts.wall(now),
            duration: now.saturating_duration_since(self.facts.started),
            attempts: self.attempts,
            status: self.status,
            error,
            rate_limit_wait: self.rate_limit_wait.get(),
            retry_wait: self.retry_wait,
            events: &events,
        };
        let info = self.facts.info();
        for observer in &mut self.observers {
            observer.call_end(&info, &end);
        }
    }
}
