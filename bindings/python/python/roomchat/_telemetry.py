"""The package's OpenTelemetry: each call a span of the context current when it is
made, each HTTP attempt a CLIENT span under it, the HTTP client metrics, and W3C
trace context (the global propagator's) on every attempt, through
``opentelemetry-api`` (the extra ``roomchat[opentelemetry]``). The same picture as
core's cargo feature ``opentelemetry`` (core/src/send/otel.rs) and the Node
package's ``telemetry.js``: the same names, kinds, attributes, events, statuses,
metrics, units and buckets.

Imported when the first client is made (never by ``import roomchat``). The timings,
outcomes and events are core's: the native side (src/telemetry.rs) calls a
``_Call`` of this module from core's hooks, on the thread that runs the call, with
the GIL taken for the hook only and never while a request is on the wire. The
context a call belongs to is captured where the call is made (``capture``, on the
caller's thread: an ``AsyncClient`` call's task, an iterator's ``next()``) and the
call's span is made its child explicitly, whichever thread runs the call.
"""

from __future__ import annotations

import contextvars
import importlib
import itertools
import os
import threading
import weakref
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

try:
    from opentelemetry import context as _context
    from opentelemetry import metrics as _metrics
    from opentelemetry import propagate as _propagate
    from opentelemetry import trace as _trace
    from opentelemetry.metrics import NoOpMeterProvider, Observation
    from opentelemetry.trace import NoOpTracerProvider, ProxyTracerProvider, SpanKind, Status, StatusCode

    try:  # the global meter provider until one is set
        from opentelemetry.metrics._internal import _ProxyMeterProvider

        _NOOP_METER_PROVIDERS: Tuple[type, ...] = (NoOpMeterProvider, _ProxyMeterProvider)
    except ImportError:  # pragma: no cover - an API without it
        _NOOP_METER_PROVIDERS = (NoOpMeterProvider,)
    _NOOP_TRACER_PROVIDERS: Tuple[type, ...] = (NoOpTracerProvider, ProxyTracerProvider)
    from opentelemetry.environment_variables import OTEL_PYTHON_METER_PROVIDER, OTEL_PYTHON_TRACER_PROVIDER

    # Where the API keeps the global providers until one is set (None): read directly,
    # a set provider is seen at the next call for a tenth of what `get_tracer_provider()`
    # costs (it reads the environment). An API without them, or providers named in the
    # environment (loaded by the getters), take the getters' way.
    _metrics_state: Any = importlib.import_module("opentelemetry.metrics._internal")
    _FAST_UNSET = (
        hasattr(_trace, "_TRACER_PROVIDER")
        and hasattr(_metrics_state, "_METER_PROVIDER")
        and OTEL_PYTHON_TRACER_PROVIDER not in os.environ
        and OTEL_PYTHON_METER_PROVIDER not in os.environ
    )
    # The current context, read straight from the API's context variable when the
    # runtime context is the API's own (a tenth of `context.get_current()`'s cost).
    _runtime = getattr(_context, "_RUNTIME_CONTEXT", None)
    _context_var = getattr(_runtime, "_current_context", None)
    _get_current: Callable[[], Any] = (
        _context_var.get
        if type(_runtime).__name__ == "ContextVarsRuntimeContext" and isinstance(_context_var, contextvars.ContextVar)
        else _context.get_current
    )
    # What OpenTelemetry's own HTTP instrumentations (httpx's, requests') honour: no
    # span, no metric and nothing on the wire for what runs under
    # `suppress_instrumentation` (exporters' own requests) or
    # `suppress_http_instrumentation` (a library's instrumentation that makes its own
    # span of the requests it sends), by either key the API has.
    _SUPPRESS_KEYS: Tuple[Any, ...] = tuple(
        key
        for key in (
            getattr(_context, "_SUPPRESS_INSTRUMENTATION_KEY", None),
            getattr(_context, "_SUPPRESS_HTTP_INSTRUMENTATION_KEY", None),
            "suppress_instrumentation",
        )
        if key is not None
    )
    AVAILABLE = True
except ImportError:
    AVAILABLE = False

from ._native import __version__ as _VERSION
from ._native import _report_unraisable
from . import _telemetry_names as N

#: The instrumentation scope of every span and instrument.
_NAME = "roomchat"

#: ``http.client.request.duration``'s buckets (the HTTP conventions'), also
#: ``roomchat.client.call.duration``'s, in seconds.
DURATION_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0)
#: ``roomchat.rate_limit.wait.duration``'s, in seconds: up to the rate limit's window
#: (60 s by default) or a 429's hold.
WAIT_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)

#: A client was given its own providers: a call may be recorded whatever the global ones are.
_explicit = False


def capture() -> Any:
    """The context a call made now belongs to, or None when nothing would be recorded
    or sent (no SDK set globally, no client with its own providers, nothing in the
    context to propagate): then the call is not observed at all. Called by the native
    side on the caller's thread for every call, so it stays cheap."""
    current = _get_current()
    if current:
        for key in _SUPPRESS_KEYS:
            if current.get(key):
                return None
        return current
    if _explicit:
        return current
    if _FAST_UNSET:
        # The providers set, read where the API keeps them (None: not set yet, the
        # getters' no-op proxies): the getters read the environment at every call.
        tracer_provider = _trace._TRACER_PROVIDER
        meter_provider = _metrics_state._METER_PROVIDER
        if (tracer_provider is None or isinstance(tracer_provider, _NOOP_TRACER_PROVIDERS)) and (
            meter_provider is None or isinstance(meter_provider, _NOOP_METER_PROVIDERS)
        ):
            return None
        return current
    if isinstance(_trace.get_tracer_provider(), _NOOP_TRACER_PROVIDERS) and isinstance(
        _metrics.get_meter_provider(), _NOOP_METER_PROVIDERS
    ):
        return None
    return current


class _Instruments:
    """The instruments of one meter provider, and its gauge of the budgets of the
    clients that use it."""

    def __init__(self, provider: Any) -> None:
        meter = provider.get_meter(_NAME, _VERSION)

        def histogram(name: str, description: str, buckets: Sequence[float]) -> Any:
            return meter.create_histogram(
                name, unit="s", description=description, explicit_bucket_boundaries_advisory=list(buckets)
            )

        self.request_duration = histogram(
            N.METRIC_HTTP_CLIENT_REQUEST_DURATION, "Duration of HTTP client requests.", DURATION_BUCKETS
        )
        self.call_duration = histogram(
            N.METRIC_ROOMCHAT_CLIENT_CALL_DURATION,
            "Duration of roomchat calls, from the call to its result: every attempt, rate-limit wait and backoff.",
            DURATION_BUCKETS,
        )
        self.rate_limit_wait = histogram(
            N.METRIC_ROOMCHAT_RATE_LIMIT_WAIT_DURATION,
            "Time a call waited for a slot of the key's rate-limit budget.",
            WAIT_BUCKETS,
        )
        self.retries = meter.create_counter(
            N.METRIC_ROOMCHAT_CLIENT_RETRIES, unit="{retry}", description="Attempts sent again, by reason."
        )
        self.degraded = meter.create_counter(
            N.EVENT_ROOMCHAT_BUDGET_DEGRADED,
            unit="{event}",
            description="Times the shared rate-limit budget in Redis failed and the client followed its OnRedisError policy.",
        )
        # Calls in flight: counted by each `_Call` (under `active_lock`), observed when the reader collects (an
        # asynchronous up-down counter: the same non-monotonic sum as core's synchronous
        # one, without two measurements through the SDK per call).
        self.active: Dict[Tuple[str, str, int], int] = {}
        self.active_lock = threading.Lock()
        meter.create_observable_up_down_counter(
            N.METRIC_ROOMCHAT_CLIENT_ACTIVE_CALLS,
            callbacks=[lambda options: self._observe_active()],
            unit="{call}",
            description="Calls in flight.",
        )
        # Lives as long as the meter's provider. The callback holds the provider weakly:
        # the instruments this module keeps lead to it, and through it to the provider.
        provider_ref: Callable[[], Any]
        try:
            provider_ref = weakref.ref(provider)
        except TypeError:  # not weak-referenceable: held, as the SDK holds it anyway

            def provider_ref() -> Any:
                return provider

        def observe_budgets(options: Any) -> Iterable[Any]:
            alive = provider_ref()
            return [] if alive is None else _observe_budgets(alive)

        meter.create_observable_gauge(
            N.METRIC_ROOMCHAT_RATE_LIMIT_REMAINING,
            callbacks=[observe_budgets],
            unit="{request}",
            description="Requests the key's rate-limit budget allows now, per client.",
        )

    def _observe_active(self) -> Iterable[Any]:
        with self.active_lock:
            counts = list(self.active.items())
        return [
            Observation(
                count,
                {N.ATTR_ROOMCHAT_OPERATION: operation, N.ATTR_SERVER_ADDRESS: address, N.ATTR_SERVER_PORT: port},
            )
            for (operation, address, port), count in counts
        ]


#: Instruments by meter provider (``id``: providers need not be hashable), with a
#: weak reference to the provider (so that a provider dropped is not kept alive, and
#: its entry goes with it) or, for one that takes none, the provider itself.
_instruments: Dict[int, Tuple[Callable[[], Any], Optional[_Instruments]]] = {}
#: Tracers by tracer provider, likewise.
_tracers: Dict[int, Tuple[Callable[[], Any], Any]] = {}
_made = threading.Lock()


def _remember(table: Dict[int, Tuple[Callable[[], Any], Any]], provider: Any, value: Any) -> None:
    """Keeps `value` for `provider` in `table` while the provider lives."""
    key = id(provider)

    def forget(_gone: Any) -> None:
        # Called as the provider goes, before its id can be another object's.
        table.pop(key, None)

    def kept() -> Any:
        return provider

    ref: Callable[[], Any]
    try:
        ref = weakref.ref(provider, forget)
    except TypeError:  # not weak-referenceable: kept, so that its id is not reused
        ref = kept
    table[key] = (ref, value)


def _tracer_of(provider: Any) -> Any:
    """The package's tracer of `provider`; None for a provider that records nothing."""
    known = _tracers.get(id(provider))
    if known is not None and known[0]() is provider:
        return known[1]
    tracer = None if isinstance(provider, _NOOP_TRACER_PROVIDERS) else provider.get_tracer(_NAME, _VERSION)
    _remember(_tracers, provider, tracer)
    return tracer


def _instruments_of(provider: Any) -> Optional[_Instruments]:
    """The instruments of `provider`, made once; None for a provider that records nothing."""
    known = _instruments.get(id(provider))
    if known is not None and known[0]() is provider:
        return known[1]
    with _made:
        known = _instruments.get(id(provider))
        if known is not None and known[0]() is provider:
            return known[1]
        instruments = None if isinstance(provider, _NOOP_METER_PROVIDERS) else _Instruments(provider)
        _remember(_instruments, provider, instruments)
        return instruments


def _after_fork_in_child() -> None:
    """A forked child has none of its parent's calls in flight, nor a lock another of
    the parent's threads held."""
    for _provider, instruments in list(_instruments.values()):
        if instruments is not None:
            instruments.active = {}
            instruments.active_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


#: The clients the budget gauge reports (their ``ClientTelemetry``), while their client lives.
_clients: "weakref.WeakSet[ClientTelemetry]" = weakref.WeakSet()
_serials = itertools.count(1)


def _observe_budgets(provider: Any) -> Iterable[Any]:
    observations = []
    for client in list(_clients):
        if client.meter_provider() is not provider:
            continue
        remaining = client.remaining()
        if remaining is not None:
            observations.append(
                Observation(
                    remaining, {N.ATTR_ROOMCHAT_CLIENT_ID: client.serial, N.ATTR_SERVER_ADDRESS: client.server_address}
                )
            )
    return observations


class ClientTelemetry:
    """One client's (and its views'): its providers (None: the global ones, as they are
    when each call starts), its number and server for the budget gauge."""

    __slots__ = ("_tracer_provider", "_meter_provider", "serial", "server_address", "_probe", "_last", "__weakref__")

    def __init__(self, tracer_provider: Any, meter_provider: Any) -> None:
        self._tracer_provider = tracer_provider
        self._meter_provider = meter_provider
        #: The providers of this client's last call, and their tracer and instruments:
        #: looked up again only when a provider changes (the global ones once set).
        self._last: Optional[Tuple[Any, Any, Any, Optional[_Instruments]]] = None
        self.serial = next(_serials)
        self.server_address = ""
        self._probe: Optional[Callable[[], Optional[int]]] = None

    def watch(self, probe: Any, server_address: str) -> None:
        """Reports the budget `probe.remaining()` gives (None once the client is gone)
        in the gauge, as this client's, with core's `server.address` of its calls (the
        one rule its spans follow)."""
        self._probe = probe.remaining
        self.server_address = server_address
        _clients.add(self)

    def remaining(self) -> Optional[int]:
        probe = self._probe
        value = probe() if probe is not None else None
        if value is None:
            _clients.discard(self)
        return value

    def meter_provider(self) -> Any:
        if self._meter_provider is not None:
            return self._meter_provider
        # The global one, read where the API keeps it once set (see `_FAST_UNSET`).
        if _FAST_UNSET:
            provider = _metrics_state._METER_PROVIDER
            if provider is not None:
                return provider
        return _metrics.get_meter_provider()

    def tracer_provider(self) -> Any:
        if self._tracer_provider is not None:
            return self._tracer_provider
        if _FAST_UNSET:
            provider = _trace._TRACER_PROVIDER
            if provider is not None:
                return provider
        return _trace.get_tracer_provider()

    def shape(self, facts: Any) -> "_Shape":
        """What the calls of one operation of this client share (core's facts at a
        call's start but its URL and time: ``_native.CallFacts``), with the attribute
        sets their spans and metrics take. Asked by the native side once per kind of
        call (it keeps what this returns), so that a call builds only its own part."""
        return _Shape(facts)

    def start_call(self, parent: Any, shape: "_Shape", url_full: str, started_at: int) -> Any:
        """The observer of a call starting now in `parent` (core's hook ``start_call``:
        its `shape`, its ``url.full`` and its start in nanoseconds since the epoch), or
        None when nothing is to be recorded or sent."""
        tracer_provider = self._tracer_provider
        if tracer_provider is None:
            tracer_provider = (_FAST_UNSET and _trace._TRACER_PROVIDER) or self.tracer_provider()
        meter_provider = self._meter_provider
        if meter_provider is None:
            meter_provider = (_FAST_UNSET and _metrics_state._METER_PROVIDER) or self.meter_provider()
        last = self._last
        if last is not None and last[0] is tracer_provider and last[1] is meter_provider:
            tracer, instruments = last[2], last[3]
        else:
            tracer = _tracer_of(tracer_provider)
            instruments = _instruments_of(meter_provider)
            self._last = (tracer_provider, meter_provider, tracer, instruments)
        if tracer is None and instruments is None:
            # No SDK: no span; the parent's context (its baggage) still goes on the wire.
            return _HeadersOnly(parent) if parent else None
        return _Call(tracer, instruments, parent, shape, url_full, started_at)


#: The most attribute sets a `_Shape` keeps of each kind (an attempt's metric has one
#: per status and `error.type`): beyond that a point's set is made for it.
_MAX_KEPT = 64


class _Shape:
    """The facts every call of one operation of one client shares, and the attribute
    sets made of them, made once: the call span's, the in-flight count's key, the
    events' metric's, each attempt's metric's (per status and `error.type`) and the
    call's metric's (per `error.type`). A set handed to the API is never changed
    afterwards (the API copies what it keeps)."""

    __slots__ = (
        "operation",
        "call_name",
        "attempt_name",
        "method",
        "server_address",
        "server_port",
        "url_template",
        "protocol_version",
        "call_attributes",
        "active",
        "event_metric",
        "_attempt_metrics",
        "_call_metrics",
    )

    def __init__(self, facts: Any) -> None:
        operation = facts.operation
        address = facts.server_address
        port = facts.server_port
        self.operation = operation
        self.call_name = facts.call_name
        self.attempt_name = facts.attempt_name
        self.method = facts.method
        self.server_address = address
        self.server_port = port
        self.url_template = facts.url_template
        self.protocol_version = facts.protocol_version
        self.call_attributes = {N.ATTR_ROOMCHAT_OPERATION: operation}
        self.active = (operation, address, port)
        self.event_metric = {N.ATTR_ROOMCHAT_OPERATION: operation, N.ATTR_SERVER_ADDRESS: address}
        self._attempt_metrics: Dict[Tuple[Optional[int], Optional[str]], Dict[str, Any]] = {}
        self._call_metrics: Dict[Optional[str], Dict[str, Any]] = {}

    def attempt_attributes(self, url_full: str) -> Dict[str, Any]:
        """Every attempt span's attributes at its start (the HTTP client conventions')."""
        attributes = {
            N.ATTR_HTTP_REQUEST_METHOD: self.method,
            N.ATTR_SERVER_ADDRESS: self.server_address,
            N.ATTR_SERVER_PORT: self.server_port,
            N.ATTR_URL_FULL: url_full,
            N.ATTR_NETWORK_PROTOCOL_VERSION: self.protocol_version,
        }
        template = self.url_template
        if template is not None:
            attributes[N.ATTR_URL_TEMPLATE] = template
        return attributes

    def attempt_metric(self, status: Optional[int], error_type: Optional[str]) -> Dict[str, Any]:
        """An attempt's ``http.client.request.duration`` attributes."""
        kept = self._attempt_metrics.get((status, error_type))
        if kept is not None:
            return kept
        metric = {
            N.ATTR_HTTP_REQUEST_METHOD: self.method,
            N.ATTR_SERVER_ADDRESS: self.server_address,
            N.ATTR_SERVER_PORT: self.server_port,
            N.ATTR_NETWORK_PROTOCOL_VERSION: self.protocol_version,
        }
        template = self.url_template
        if template is not None:
            metric[N.ATTR_URL_TEMPLATE] = template
        if status is not None:
            metric[N.ATTR_HTTP_RESPONSE_STATUS_CODE] = status
        if error_type is not None:
            metric[N.ATTR_ERROR_TYPE] = error_type
        if len(self._attempt_metrics) < _MAX_KEPT:
            self._attempt_metrics[(status, error_type)] = metric
        return metric

    def call_metric(self, error_type: Optional[str]) -> Dict[str, Any]:
        """A call's ``roomchat.client.call.duration`` attributes."""
        kept = self._call_metrics.get(error_type)
        if kept is not None:
            return kept
        metric = {
            N.ATTR_ROOMCHAT_OPERATION: self.operation,
            N.ATTR_SERVER_ADDRESS: self.server_address,
            N.ATTR_SERVER_PORT: self.server_port,
        }
        if error_type is not None:
            metric[N.ATTR_ERROR_TYPE] = error_type
        if len(self._call_metrics) < _MAX_KEPT:
            self._call_metrics[error_type] = metric
        return metric


class _HeadersOnly:
    """A call nothing records: each attempt only carries the parent's context."""

    __slots__ = ("parent",)

    def __init__(self, parent: Any) -> None:
        self.parent = parent

    def attempt_start(
        self, attempt: int, resend_count: int, start: int, events: List[Any], propagate: bool
    ) -> Optional[Dict[str, str]]:
        if not propagate:
            return None
        headers: Dict[str, str] = {}
        _propagate.inject(headers, context=self.parent)
        return headers

    def attempt_end(self, outcome: Any) -> None:
        pass

    def call_end(self, outcome: Any) -> None:
        pass


def _guarded(part: Callable[..., Any], *args: Any) -> Any:
    """`part(*args)`, or None when it raises an ``Exception`` (an application's span
    processor, instrument or propagator): that is reported (``sys.unraisablehook``) and
    costs only this part. Anything else (``KeyboardInterrupt``) goes to the native side,
    which hands it to the call's caller. (The steps every call takes are guarded the
    same way inline: ``try: ... except Exception as error: _report_unraisable(error)``.)"""
    try:
        return part(*args)
    except Exception as error:
        _report_unraisable(error)
        return None


class _Call:
    """One call's spans and metrics, from core's hooks. Each step is guarded on its own
    (an ``Exception`` it raises is reported, as `_guarded` does): one that raises costs
    only itself, never another span, metric or the attempt's trace context."""

    __slots__ = (
        "tracer",
        "instruments",
        "parent",
        "context",
        "span",
        "attempt_span",
        "shape",
        "attributes",
    )

    def __init__(
        self, tracer: Any, instruments: Optional[_Instruments], parent: Any, shape: _Shape, url_full: str, start: int
    ) -> None:
        self.tracer = tracer
        self.instruments = instruments
        self.parent = parent
        self.shape = shape
        self.span: Any = None
        self.context = parent
        self.attempt_span: Any = None
        self.attributes: Any = None
        # The span first: what a processor's `on_start` raises that is not an
        # `Exception` (`SystemExit`) leaves no call counted in flight that no
        # `call_end` would take out (the native side gets no observer then).
        if tracer is not None:
            self.attributes = shape.attempt_attributes(url_full)
            try:
                span = tracer.start_span(
                    shape.call_name,
                    context=parent,
                    kind=SpanKind.INTERNAL,
                    attributes=shape.call_attributes,
                    start_time=start,
                )
                # A span that records nothing and has no context to pass on: the
                # attempts need no span either, only the parent's context on the wire.
                if span.is_recording() or span.get_span_context().is_valid:
                    self.span = span
                    self.context = _trace.set_span_in_context(span, parent)
                else:
                    self.tracer = None
            except Exception as error:
                _report_unraisable(error)
        if instruments is not None:
            with instruments.active_lock:
                active = instruments.active
                active[shape.active] = active.get(shape.active, 0) + 1

    def _events(self, events: List[Tuple[str, int, Dict[str, Any]]]) -> None:
        """The call span's event and the metric of each of core's `events`, each on its own."""
        span = self.span
        instruments = self.instruments
        metric = self.shape.event_metric
        for name, at, attributes in events:
            if span is not None:
                _guarded(span.add_event, name, attributes, at)
            if instruments is None:
                continue
            if name == N.EVENT_ROOMCHAT_RATE_LIMIT_WAIT:
                _guarded(instruments.rate_limit_wait.record, attributes[N.ATTR_ROOMCHAT_WAIT_DURATION], metric)
            elif name == N.EVENT_ROOMCHAT_RETRY:
                reason = {**metric, N.ATTR_ROOMCHAT_RETRY_REASON: attributes[N.ATTR_ROOMCHAT_RETRY_REASON]}
                _guarded(instruments.retries.add, 1, reason)
            elif name == N.EVENT_ROOMCHAT_BUDGET_DEGRADED:
                _guarded(instruments.degraded.add, 1, metric)

    def attempt_start(
        self, attempt: int, resend_count: int, start: int, events: List[Any], propagate: bool
    ) -> Optional[Dict[str, str]]:
        """Core's hook before attempt `attempt` is sent: its span; the headers it carries."""
        if events:
            self._events(events)
        context = self.context
        tracer = self.tracer
        if tracer is not None:
            attributes = self.attributes
            if resend_count > 0:
                attributes = dict(attributes)
                attributes[N.ATTR_HTTP_REQUEST_RESEND_COUNT] = resend_count
            try:
                span = tracer.start_span(
                    self.shape.attempt_name, context=context, kind=SpanKind.CLIENT, attributes=attributes, start_time=start
                )
            except Exception as error:
                _report_unraisable(error)
                span = None
            self.attempt_span = span
            if span is not None:
                context = _trace.set_span_in_context(span, context)
        if not propagate or not context:
            return None
        headers: Dict[str, str] = {}
        try:
            _propagate.inject(headers, context)
        except Exception as error:
            _report_unraisable(error)
        return headers

    def attempt_end(self, outcome: Any) -> None:
        """Core's hook after an attempt (``_native.AttemptOutcome``): its span ended
        with core's time; its duration. `error_type` is the status as text for an
        answer (``"429"``), the kind for none; `error_kind` roomchat's kind
        (``rate_limited``)."""
        span = self.attempt_span
        self.attempt_span = None
        status = outcome.status
        error_type = outcome.error_type
        # Each part runs even when another raises what the guards do not catch
        # (`SystemExit` from a processor, a signal's handler): that goes on to the
        # native side once the others have run.
        try:
            if span is not None:
                try:
                    self._end_attempt_span(span, outcome.ended_at, status, error_type, outcome.error_kind)
                except Exception as error:
                    _report_unraisable(error)
        finally:
            try:
                instruments = self.instruments
                if instruments is not None:
                    try:
                        shape = self.shape
                        metric = shape._attempt_metrics.get((status, error_type)) or shape.attempt_metric(
                            status, error_type
                        )
                        instruments.request_duration.record(outcome.duration, metric)
                    except Exception as error:
                        _report_unraisable(error)
            finally:
                events = outcome.events
                if events:
                    self._events(events)

    @staticmethod
    def _end_attempt_span(
        span: Any, end: int, status: Optional[int], error_type: Optional[str], error_kind: Optional[str]
    ) -> None:
        try:
            if status is not None:
                span.set_attribute(N.ATTR_HTTP_RESPONSE_STATUS_CODE, status)
            if error_type is not None:
                span.set_attribute(N.ATTR_ERROR_TYPE, error_type)
                if error_kind is not None:
                    span.set_attribute(N.ATTR_ROOMCHAT_ERROR_KIND, error_kind)
                span.set_status(Status(StatusCode.ERROR))
        finally:  # ended whatever interrupts the attributes (a signal's handler)
            span.end(end)

    def call_end(self, outcome: Any) -> None:
        """Core's hook at the call's end (``_native.CallOutcome``): its span ended with
        core's time; its metrics. Each part runs even when another raises: the call is
        always taken out of the calls in flight."""
        error_type = outcome.error_type
        instruments = self.instruments
        # Each part runs even when another raises what the guards do not catch (see
        # `attempt_end`): the span ends, the call leaves the calls in flight.
        try:
            events = outcome.events
            if events:
                self._events(events)
        finally:
            try:
                if self.span is not None:
                    try:
                        self._end_call_span(outcome, error_type)
                    except Exception as error:
                        _report_unraisable(error)
            finally:
                try:
                    if instruments is not None:
                        try:
                            shape = self.shape
                            metric = shape._call_metrics.get(error_type) or shape.call_metric(error_type)
                            instruments.call_duration.record(outcome.duration, metric)
                        except Exception as error:
                            _report_unraisable(error)
                finally:
                    if instruments is not None:
                        key = self.shape.active
                        with instruments.active_lock:
                            active = instruments.active
                            active[key] = active.get(key, 0) - 1

    def _end_call_span(self, outcome: Any, error_type: Optional[str]) -> None:
        span = self.span
        try:
            span.set_attributes(
                {
                    N.ATTR_ROOMCHAT_ATTEMPTS: outcome.attempts,
                    N.ATTR_ROOMCHAT_RATE_LIMIT_WAIT_DURATION: outcome.rate_limit_wait,
                    N.ATTR_ROOMCHAT_RETRY_WAIT_DURATION: outcome.retry_wait,
                }
            )
            if error_type is not None:
                span.set_attribute(N.ATTR_ERROR_TYPE, error_type)
                span.set_status(Status(StatusCode.ERROR, outcome.description))
        finally:  # ended whatever interrupts the attributes (a signal's handler)
            span.end(outcome.ended_at)


def client_telemetry(tracer_provider: Any, meter_provider: Any) -> Optional[ClientTelemetry]:
    """The telemetry of a client made now (None when ``opentelemetry-api`` is not
    installed); raises for providers given without it."""
    global _explicit
    given = tracer_provider is not None or meter_provider is not None
    if not AVAILABLE:
        if given:
            from ._errors import ConfigurationError

            raise ConfigurationError(
                "tracer_provider and meter_provider need opentelemetry-api, which is not installed "
                "(pip install roomchat[opentelemetry])"
            )
        return None
    if tracer_provider is not None and not callable(getattr(tracer_provider, "get_tracer", None)):
        raise TypeError(f"tracer_provider must be an OpenTelemetry TracerProvider, not {type(tracer_provider).__name__}")
    if meter_provider is not None and not callable(getattr(meter_provider, "get_meter", None)):
        raise TypeError(f"meter_provider must be an OpenTelemetry MeterProvider, not {type(meter_provider).__name__}")
    if given:
        _explicit = True
    return ClientTelemetry(tracer_provider, meter_provider)
