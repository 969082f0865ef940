"""OpenTelemetry at its edges (issue 51): a span processor, instrument or propagator that
raises at each point costs exactly its own part (item 2); the budget gauge keeps only live
clients' series (item 4); wait durations are doubles (6c); the gauge's ``server.address``
is its spans' (6e); ``suppress_http_instrumentation`` is honoured as httpx's
instrumentation honours it (6h). Against the SDK's in-memory exporter and reader and the
emulator's journal."""

from __future__ import annotations

import gc
import sys
from typing import Any, Dict, Iterator, List, Optional

import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry import context, propagate  # noqa: E402
from opentelemetry.sdk.metrics import MeterProvider  # noqa: E402
from opentelemetry.sdk.metrics.export import InMemoryMetricReader  # noqa: E402
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402

import roomchat  # noqa: E402

from conftest import Emulator  # noqa: E402
from test_opentelemetry import Sdk, header, named, otel, parent_id, points, span_id, traceparent  # noqa: E402,F401

USERS = "/consumer/api/v2/users"
CALL = "roomchat list_users"
ATTEMPT = "GET /consumer/api/v2/users"


@pytest.fixture
def unraisable() -> Iterator[List[str]]:
    reported: List[str] = []
    hook, sys.unraisablehook = sys.unraisablehook, lambda u: reported.append(str(u.exc_value))
    try:
        yield reported
    finally:
        sys.unraisablehook = hook


class Failing:
    """Raises at one point: a span's start or end (by span name), an instrument's
    measurement (by instrument name), or the propagator's inject."""

    def __init__(self, point: str, name: str) -> None:
        self.point = point
        self.name = name

    def processor(self) -> SpanProcessor:
        failing = self

        class Raising(SpanProcessor):
            def on_start(self, span: Any, parent_context: Any = None) -> None:
                if failing.point == "on_start" and span.name == failing.name:
                    raise RuntimeError(f"on_start {span.name}")

            def on_end(self, span: ReadableSpan) -> None:
                if failing.point == "on_end" and span.name == failing.name:
                    raise RuntimeError(f"on_end {span.name}")

        return Raising()


class _RaisingInstrument:
    def __init__(self, name: str) -> None:
        self.name = name

    def record(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError(f"record {self.name}")

    def add(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError(f"add {self.name}")


class _Meter:
    def __init__(self, inner: Any, failing: str) -> None:
        self.inner = inner
        self.failing = failing

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def create_histogram(self, name: str, *args: Any, **kwargs: Any) -> Any:
        made = self.inner.create_histogram(name, *args, **kwargs)
        return _RaisingInstrument(name) if name == self.failing else made

    def create_counter(self, name: str, *args: Any, **kwargs: Any) -> Any:
        made = self.inner.create_counter(name, *args, **kwargs)
        return _RaisingInstrument(name) if name == self.failing else made


class _MeterProvider:
    """The SDK's provider, one of whose instruments raises at each measurement."""

    def __init__(self, inner: MeterProvider, failing: str) -> None:
        self.inner = inner
        self.failing = failing

    def get_meter(self, *args: Any, **kwargs: Any) -> Any:
        return _Meter(self.inner.get_meter(*args, **kwargs), self.failing)


class _RaisingPropagator:
    fields = {"traceparent"}

    def inject(self, carrier: Any, context: Any = None, setter: Any = None) -> None:
        raise RuntimeError("inject")

    def extract(self, carrier: Any, context: Any = None, getter: Any = None) -> Any:
        return context


def _call_that_waits_and_retries(emu: Emulator, client: roomchat.Client, tracer: Any) -> None:
    """Two calls under an application span: the first takes the budget's one slot, the
    second waits for it, is answered 429 and is sent again (after another wait)."""
    with tracer.start_as_current_span("job"):
        client.list_users(limit=5)
        emu.fault(
            USERS,
            {"kind": "respond", "status": 429, "body": '{"message":"slow down"}', "headers": {"Retry-After": "0"}},
            method="GET",
        )
        client.list_users(limit=5)


POINTS = [
    ("on_start", CALL),
    ("on_start", ATTEMPT),
    ("on_end", CALL),
    ("on_end", ATTEMPT),
    ("instrument", "http.client.request.duration"),
    ("instrument", "roomchat.client.call.duration"),
    ("instrument", "roomchat.rate_limit.wait.duration"),
    ("instrument", "roomchat.client.retries"),
    ("inject", ""),
]


@pytest.mark.parametrize("point,name", POINTS)
def test_a_raise_at_each_point_costs_exactly_its_own_part(
    emu: Emulator, unraisable: List[str], point: str, name: str
) -> None:
    failing = Failing(point, name)
    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    # After the exporter's: the SDK stops at a processor that raises.
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer_provider.add_span_processor(failing.processor())
    reader = InMemoryMetricReader()
    sdk_meters = MeterProvider(metric_readers=[reader])
    meter_provider: Any = _MeterProvider(sdk_meters, name) if point == "instrument" else sdk_meters
    tracer = tracer_provider.get_tracer("app")
    key = f"sk_live_pytest_otel_raise_{point}_{name}"
    previous = propagate.get_global_textmap()
    if point == "inject":
        propagate.set_global_textmap(_RaisingPropagator())  # type: ignore[arg-type]
    try:
        with emu.other_key(key), emu.client(
            private_key=key,
            rate_limit=roomchat.RateLimit(requests=1, window=0.3),
            tracer_provider=tracer_provider,
            meter_provider=meter_provider,
        ) as client:
            _call_that_waits_and_retries(emu, client, tracer)
            data = reader.get_metrics_data()
    finally:
        propagate.set_global_textmap(previous)
    journal = emu.journal()
    assert len(journal) == 3

    spans = list(exporter.get_finished_spans())
    calls = named(spans, CALL)
    attempts = named(spans, ATTEMPT)
    [job] = named(spans, "job")
    # The spans: all but the one whose start raised (on_end's are ended and exported,
    # the processor after the exporter's).
    assert len(calls) == (0 if (point, name) == ("on_start", CALL) else 2)
    assert len(attempts) == (0 if (point, name) == ("on_start", ATTEMPT) else 3)
    if calls and attempts:
        assert [parent_id(a) for a in attempts] == [span_id(calls[0]), span_id(calls[1]), span_id(calls[1])]
        waits = [e for e in calls[1].events if e.name == "roomchat.rate_limit.wait"]
        retries = [e for e in calls[1].events if e.name == "roomchat.retry"]
        # The second call waits for the budget before each of its attempts.
        assert len(waits) == 2 and len(retries) == 1
    if not calls:  # the attempts belong to the application's span
        assert [parent_id(a) for a in attempts] == [span_id(job)] * 3

    # The trace context on the wire: the attempt's span, or the call's when the
    # attempt's start raised; none when the propagator raised.
    sent = [header(e, "traceparent") for e in journal]
    if point == "inject":
        assert sent == [None, None, None]
    elif attempts:
        assert sent == [traceparent(a) for a in attempts]
    else:
        assert sent == [traceparent(calls[0]), traceparent(calls[1]), traceparent(calls[1])]

    # The metrics: every one but the instrument that raised.
    found: Dict[str, Any] = {m.name: m for r in data.resource_metrics for s in r.scope_metrics for m in s.metrics}
    counts = {
        "http.client.request.duration": 3,
        "roomchat.client.call.duration": 2,
        "roomchat.rate_limit.wait.duration": 2,
        "roomchat.client.retries": 1,
    }
    for metric, count in counts.items():
        if point == "instrument" and metric == name:
            assert metric not in found
            continue
        recorded = found[metric].data.data_points
        total = sum(getattr(p, "count", None) or getattr(p, "value", 0) for p in recorded)
        assert total == count, (metric, recorded)
    assert all(p.value == 0 for p in found["roomchat.client.active_calls"].data.data_points)

    # Each raise reported (sys.unraisablehook), nothing else.
    expected = {
        ("on_start", CALL): 2,
        ("on_start", ATTEMPT): 3,
        ("on_end", CALL): 2,
        ("on_end", ATTEMPT): 3,
        ("inject", ""): 3,
    }.get((point, name), counts.get(name, 0))
    assert len(unraisable) == expected, unraisable


def test_a_dropped_client_leaves_the_budget_gauge(emu: Emulator, otel: Sdk) -> None:
    with emu.client(**otel.providers()) as kept:
        kept.list_chat_rooms()
        for _ in range(20):
            client = emu.client(**otel.providers())
            client.list_chat_rooms()
            del client
        gc.collect()
        gauge = points(otel.metrics(), "roomchat.rate_limit.remaining")
        # One series: the live client's; the 20 collected ones are gone.
        assert len(gauge) == 1, [dict(p.attributes) for p in gauge]
        kept_id = gauge[0].attributes["roomchat.client.id"]
        assert points(otel.metrics(), "roomchat.rate_limit.remaining")[0].attributes["roomchat.client.id"] == kept_id


def test_wait_durations_are_doubles_even_when_whole(emu: Emulator, otel: Sdk) -> None:
    key = "sk_live_pytest_otel_doubles"
    with emu.other_key(key), emu.client(private_key=key, **otel.providers()) as client:
        emu.fault(
            USERS,
            {"kind": "respond", "status": 429, "body": '{"message":"slow down"}', "headers": {"Retry-After": "0"}},
            method="GET",
        )
        client.list_users(limit=5)
    [call] = named(otel.spans(), CALL)
    assert call.attributes is not None
    for attribute in ("roomchat.rate_limit.wait.duration", "roomchat.retry.wait.duration"):
        assert type(call.attributes[attribute]) is float, attribute
    [retry] = [e for e in call.events if e.name == "roomchat.retry"]
    assert retry.attributes is not None
    assert retry.attributes["roomchat.wait.duration"] == 0.0
    assert type(retry.attributes["roomchat.wait.duration"]) is float


def test_the_gauge_names_the_server_as_the_spans_do(emu: Emulator, otel: Sdk) -> None:
    upper = emu.base_url.replace("127.0.0.1", "LocalHost")
    assert upper != emu.base_url
    with emu.client(base_url=upper, allow_insecure_http=True, **otel.providers()) as client:
        client.list_chat_rooms()
        [gauge] = points(otel.metrics(), "roomchat.rate_limit.remaining")
    [attempt] = named(otel.spans(), "GET /consumer/api/v1/chatrooms")
    assert attempt.attributes is not None
    assert gauge.attributes["server.address"] == attempt.attributes["server.address"]
    # Core's one rule: the base URL's host lowercased, as URL parsers give it.
    assert attempt.attributes["server.address"] == "localhost"


def test_suppressed_http_instrumentation_makes_no_span_no_metric_and_sends_no_context(
    emu: Emulator, otel: Sdk
) -> None:
    from opentelemetry.instrumentation.utils import suppress_http_instrumentation

    with emu.client(**otel.providers()) as client:
        with otel.tracer.start_as_current_span("handle request"):
            with suppress_http_instrumentation():
                client.list_chat_rooms()
            client.list_chat_rooms()
    journal = emu.journal()
    assert [header(e, "traceparent") is not None for e in journal] == [False, True]
    assert len(named(otel.spans(), "roomchat list_chat_rooms")) == 1
    assert len(named(otel.spans(), "GET /consumer/api/v1/chatrooms")) == 1
    [duration] = points(otel.metrics(), "http.client.request.duration")
    assert duration.count == 1


_REQUESTS_SPAN = r"""
import json, sys
import requests
from opentelemetry import trace
from opentelemetry.instrumentation.requests import RequestsInstrumentor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
trace.set_tracer_provider(provider)
RequestsInstrumentor().instrument()
requests.get(sys.argv[1], timeout=30)
[span] = exporter.get_finished_spans()
print(json.dumps({"name": span.name, "attributes": sorted(span.attributes or {})}))
"""


def _requests_span(url: str, opt_in: Optional[str]) -> Dict[str, Any]:
    import json
    import os
    import subprocess

    env = {k: v for k, v in os.environ.items() if k != "OTEL_SEMCONV_STABILITY_OPT_IN"}
    if opt_in is not None:
        env["OTEL_SEMCONV_STABILITY_OPT_IN"] = opt_in
    out = subprocess.run([sys.executable, "-c", _REQUESTS_SPAN, url], env=env, capture_output=True, text=True, check=True)
    span: Dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return span


def test_requests_instrumentation_gives_the_same_picture_only_under_the_stable_opt_in(emu: Emulator, otel: Sdk) -> None:
    url = f"{emu.base_url}/consumer/api/v1/chatrooms?auth={emu.private_key}"
    with emu.client(**otel.providers()) as client:
        client.list_chat_rooms()
    [attempt] = named(otel.spans(), "GET /consumer/api/v1/chatrooms")
    ours = set(attempt.attributes or {})
    # By default requests' instrumentation names its attributes by the old conventions.
    default = set(_requests_span(url, None)["attributes"])
    assert {"http.method", "http.url"} <= default
    assert not default & {"http.request.method", "url.full"}
    # Under OTEL_SEMCONV_STABILITY_OPT_IN=http, its span's attributes are ours but for the
    # three the guide names.
    stable = set(_requests_span(url, "http")["attributes"])
    assert {"http.request.method", "url.full", "server.address", "http.response.status_code"} <= stable
    assert stable - ours == {"network.peer.address", "network.peer.port", "user_agent.original"}
