"""OpenTelemetry (issue 45), against the SDK's in-memory span exporter and metric reader
and the emulator: the application's span → the call's span → its attempts' CLIENT
spans, for ``Client``, ``AsyncClient`` calls in flight together in different tasks and
iterators' pages; the HTTP client conventions' attributes; retries, rate-limit waits and
errors; the metrics and their values; W3C trace context as the emulator received it
(each request carries its own attempt span's context), and none when turned off; the
global providers; no credential in anything exported. The picture is core's feature
``opentelemetry`` (core/tests/opentelemetry.rs) and the Node package's."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import urllib.parse
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry import baggage, context, metrics, propagate, trace  # noqa: E402
from opentelemetry.baggage.propagation import W3CBaggagePropagator  # noqa: E402
from opentelemetry.propagators.composite import CompositePropagator  # noqa: E402
from opentelemetry.sdk.metrics import MeterProvider  # noqa: E402
from opentelemetry.sdk.metrics.export import InMemoryMetricReader  # noqa: E402
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402
from opentelemetry.trace import SpanKind, StatusCode  # noqa: E402
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator  # noqa: E402

import roomchat  # noqa: E402

from conftest import Emulator, free_port  # noqa: E402

USERS = "/consumer/api/v2/users"
CHATROOMS = "/consumer/api/v1/chatrooms"
CREATE_USER = "/consumer/api/v1/user"
HTTP_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0)

# What an application sets up once (the SDK's default too): W3C trace context and baggage.
propagate.set_global_textmap(CompositePropagator([TraceContextTextMapPropagator(), W3CBaggagePropagator()]))


class Sdk:
    """An SDK of the test's own: in-memory spans and metrics, given to its clients as
    explicit providers."""

    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.reader = InMemoryMetricReader()
        self.meter_provider = MeterProvider(metric_readers=[self.reader])
        self.tracer = self.tracer_provider.get_tracer("app")

    def providers(self) -> Dict[str, Any]:
        return {"tracer_provider": self.tracer_provider, "meter_provider": self.meter_provider}

    def spans(self) -> List[ReadableSpan]:
        """The spans ended so far, in the order they ended."""
        return list(self.exporter.get_finished_spans())

    def metrics(self) -> Dict[str, Any]:
        """Every metric recorded so far (cumulative), by name."""
        data = self.reader.get_metrics_data()
        found: Dict[str, Any] = {}
        if data is None:
            return found
        for resource in data.resource_metrics:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    found[metric.name] = metric
        return found


def named(spans: List[ReadableSpan], name: str) -> List[ReadableSpan]:
    return [s for s in spans if s.name == name]


def span_id(span: Any) -> int:
    return int(span.get_span_context().span_id)


def parent_id(span: ReadableSpan) -> Optional[int]:
    return None if span.parent is None else int(span.parent.span_id)


def traceparent(span: ReadableSpan) -> str:
    """The `traceparent` an attempt span puts on the wire."""
    ctx = span.get_span_context()
    return f"00-{ctx.trace_id:032x}-{ctx.span_id:016x}-{int(ctx.trace_flags):02x}"


def header(entry: Dict[str, Any], name: str) -> Optional[str]:
    for key, value in entry["headers"]:
        if key == name:
            return str(value)
    return None


def server(emu: Emulator) -> Tuple[str, int]:
    url = urllib.parse.urlsplit(emu.base_url)
    assert url.hostname is not None and url.port is not None
    return url.hostname, url.port


def points(all_metrics: Dict[str, Any], name: str) -> List[Any]:
    assert name in all_metrics, f"no metric {name} (have {sorted(all_metrics)})"
    return list(all_metrics[name].data.data_points)


@pytest.fixture
def otel() -> Sdk:
    return Sdk()


def test_the_application_span_over_the_call_span_over_its_attempt(emu: Emulator, otel: Sdk) -> None:
    emu.seed(3)
    with emu.client(**otel.providers()) as client:
        with otel.tracer.start_as_current_span("handle request") as app:
            page = client.list_users(limit=5)
    assert page.total == 3
    spans = otel.spans()
    assert [s.name for s in spans] == ["GET /consumer/api/v2/users", "roomchat list_users", "handle request"]
    attempt, call, _ = spans
    address, port = server(emu)

    assert call.kind == SpanKind.INTERNAL
    assert parent_id(call) == span_id(app)
    assert call.context.trace_id == app.get_span_context().trace_id
    assert call.instrumentation_scope is not None and call.instrumentation_scope.name == "roomchat"
    assert call.instrumentation_scope.version == roomchat.__version__
    assert dict(call.attributes or {}) == {
        "roomchat.operation": "list_users",
        "roomchat.attempts": 1,
        "roomchat.rate_limit.wait.duration": 0.0,
        "roomchat.retry.wait.duration": 0.0,
    }
    assert call.status.status_code == StatusCode.UNSET

    assert attempt.kind == SpanKind.CLIENT
    assert parent_id(attempt) == span_id(call)
    assert dict(attempt.attributes or {}) == {
        "http.request.method": "GET",
        "server.address": address,
        "server.port": port,
        "url.full": f"{emu.base_url}{USERS}?auth=REDACTED&limit=5",
        "url.template": USERS,
        "network.protocol.version": "1.1",
        "http.response.status_code": 200,
    }
    assert attempt.status.status_code == StatusCode.UNSET
    # Core's times: the call holds its attempt.
    assert call.start_time is not None and attempt.start_time is not None
    assert call.end_time is not None and attempt.end_time is not None
    assert call.start_time <= attempt.start_time <= attempt.end_time <= call.end_time
    # The request carried the attempt's context.
    [entry] = emu.journal()
    assert header(entry, "traceparent") == traceparent(attempt)

    all_metrics = otel.metrics()
    [duration] = points(all_metrics, "http.client.request.duration")
    assert all_metrics["http.client.request.duration"].unit == "s"
    assert duration.count == 1
    assert tuple(duration.explicit_bounds) == HTTP_BUCKETS
    assert dict(duration.attributes) == {
        "http.request.method": "GET",
        "server.address": address,
        "server.port": port,
        "network.protocol.version": "1.1",
        "url.template": USERS,
        "http.response.status_code": 200,
    }
    [calls] = points(all_metrics, "roomchat.client.call.duration")
    assert tuple(calls.explicit_bounds) == HTTP_BUCKETS
    assert dict(calls.attributes) == {"roomchat.operation": "list_users", "server.address": address, "server.port": port}
    assert [p.value for p in points(all_metrics, "roomchat.client.active_calls")] == [0]
    assert all_metrics["roomchat.client.active_calls"].unit == "{call}"


def test_async_calls_in_flight_together_each_belong_to_their_task(emu: Emulator, otel: Sdk) -> None:
    emu.room("r1")
    # Each call's answer held back a little, so that the calls are in flight together.
    emu.fault(CHATROOMS, {"kind": "delay", "ms": 150}, method="GET", times=4)

    async def main() -> Dict[str, Any]:
        async with roomchat.AsyncClient(
            emu.private_key,
            base_url=emu.base_url,
            ca_bundle=emu.ca_file,
            rate_limit=roomchat.RateLimit(requests=1_000_000, window=60.0),
            **otel.providers(),
        ) as client:

            async def request(name: str) -> Any:
                with otel.tracer.start_as_current_span(name) as span:
                    await client.list_chat_rooms()
                    return span

            apps = await asyncio.gather(*(request(f"request {i}") for i in range(4)))
            # An iterator's page belongs to the context `__anext__` is called in.
            pages = client.user_pages(page_size=5)
            with otel.tracer.start_as_current_span("paging") as paging:
                async for _ in pages:
                    pass
            return {"apps": apps, "paging": paging}

    made = asyncio.run(main())
    spans = otel.spans()
    calls = named(spans, "roomchat list_chat_rooms")
    attempts = named(spans, "GET /consumer/api/v1/chatrooms")
    assert len(calls) == 4 and len(attempts) == 4
    # In flight together: each overlaps the others.
    assert max(c.start_time or 0 for c in calls) < min(c.end_time or 0 for c in calls)
    # Each call under its own task's span, each attempt under its own call.
    assert sorted(parent_id(c) or 0 for c in calls) == sorted(span_id(a) for a in made["apps"])
    assert sorted(parent_id(a) or 0 for a in attempts) == sorted(span_id(c) for c in calls)
    journal = emu.journal()
    assert sorted(header(e, "traceparent") or "" for e in journal if e["path"] == CHATROOMS) == sorted(
        traceparent(a) for a in attempts
    )
    [page_call] = named(spans, "roomchat list_users")
    assert parent_id(page_call) == span_id(made["paging"])


def test_an_iterator_page_belongs_to_the_context_next_is_called_in(emu: Emulator, otel: Sdk) -> None:
    emu.seed(5)
    with emu.client(**otel.providers()) as client:
        users = client.users(page_size=2)
        with otel.tracer.start_as_current_span("first") as first:
            next(users)
        next(users)  # from the page fetched in `first`
        with otel.tracer.start_as_current_span("second") as second:
            next(users)
        pages = client.user_pages(page_size=5)
        with otel.tracer.start_as_current_span("pages") as third:
            next(pages)
    calls = named(otel.spans(), "roomchat list_users")
    assert [parent_id(c) for c in calls] == [span_id(first), span_id(second), span_id(third)]


def test_a_429_then_a_200_is_two_attempts_the_second_resent_once(emu: Emulator, otel: Sdk) -> None:
    with emu.other_key("sk_live_pytest_otel_429"):
        with emu.client(private_key="sk_live_pytest_otel_429", **otel.providers()) as client:
            emu.fault(
                USERS,
                {"kind": "respond", "status": 429, "body": '{"message":"slow down"}', "headers": {"Retry-After": "0"}},
                method="GET",
            )
            with otel.tracer.start_as_current_span("job"):
                client.list_users(limit=5)
    spans = otel.spans()
    attempts = named(spans, "GET /consumer/api/v2/users")
    [call] = named(spans, "roomchat list_users")
    assert len(attempts) == 2
    first, second = attempts
    assert first.attributes is not None and second.attributes is not None
    assert first.attributes["http.response.status_code"] == 429
    # As requests', httpx's and undici's instrumentations: the status as text; roomchat's
    # kind beside it.
    assert first.attributes["error.type"] == "429"
    assert first.attributes["roomchat.error.kind"] == "rate_limited"
    assert first.status.status_code == StatusCode.ERROR
    assert "http.request.resend_count" not in first.attributes
    assert second.attributes["http.response.status_code"] == 200
    assert second.attributes["http.request.resend_count"] == 1
    assert second.status.status_code == StatusCode.UNSET
    assert all(parent_id(a) == span_id(call) for a in attempts)
    assert (first.end_time or 0) <= (second.start_time or 0)
    assert call.attributes is not None and call.attributes["roomchat.attempts"] == 2
    assert call.status.status_code == StatusCode.UNSET
    [retry] = [e for e in call.events if e.name == "roomchat.retry"]
    assert retry.attributes is not None
    assert retry.attributes["roomchat.retry.reason"] == "429"
    assert retry.attributes["roomchat.attempt"] == 1
    assert retry.attributes["http.response.status_code"] == 429
    assert retry.timestamp == first.end_time
    # Each request carried its own attempt's context.
    assert [header(e, "traceparent") for e in emu.journal()] == [traceparent(a) for a in attempts]

    address, _ = server(emu)
    all_metrics = otel.metrics()
    durations = points(all_metrics, "http.client.request.duration")
    assert sorted(
        (p.attributes["http.response.status_code"], p.attributes.get("error.type"), p.count) for p in durations
    ) == [(200, None, 1), (429, "429", 1)]
    assert [(dict(p.attributes), p.value) for p in points(all_metrics, "roomchat.client.retries")] == [
        ({"roomchat.operation": "list_users", "server.address": address, "roomchat.retry.reason": "429"}, 1)
    ]
    assert all_metrics["roomchat.client.retries"].unit == "{retry}"
    assert [p.count for p in points(all_metrics, "roomchat.client.call.duration")] == [1]


def test_a_rate_limit_wait_is_an_event_of_the_call_and_a_metric(emu: Emulator, otel: Sdk) -> None:
    # 1 start per ~315 ms: the second call waits (a key of its own: a budget is per key).
    key = "sk_live_pytest_otel_wait"
    with emu.other_key(key), emu.client(
        private_key=key, rate_limit=roomchat.RateLimit(requests=1, window=0.3), **otel.providers()
    ) as client:
        client.list_chat_rooms()
        client.list_chat_rooms()
        all_metrics = otel.metrics()
    assert not [e for e in named(otel.spans(), "roomchat list_chat_rooms")[0].events]
    spans = otel.spans()
    calls = named(spans, "roomchat list_chat_rooms")
    attempts = named(spans, "GET /consumer/api/v1/chatrooms")
    assert len(calls) == 2
    waits = [e for e in calls[1].events if e.name == "roomchat.rate_limit.wait"]
    assert len(waits) == 1, calls[1].events
    assert calls[1].attributes is not None and waits[0].attributes is not None
    waited = calls[1].attributes["roomchat.rate_limit.wait.duration"]
    assert 0.1 < waited < 2
    assert waits[0].attributes["roomchat.wait.duration"] == waited
    assert waits[0].attributes["roomchat.attempt"] == 1
    # The attempt span holds the request, not the wait before it.
    assert (attempts[1].start_time or 0) >= waits[0].timestamp + int(waited * 1e9) - 10_000
    assert (calls[1].start_time or 0) <= waits[0].timestamp
    assert [header(e, "traceparent") for e in emu.journal()] == [traceparent(a) for a in attempts]

    [wait] = points(all_metrics, "roomchat.rate_limit.wait.duration")
    assert wait.count == 1
    assert wait.attributes["roomchat.operation"] == "list_chat_rooms"
    assert tuple(wait.explicit_bounds) == (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)
    # The budget's gauge: one series for this client (while it is open).
    [remaining] = points(all_metrics, "roomchat.rate_limit.remaining")
    assert isinstance(remaining.attributes["roomchat.client.id"], int)
    assert remaining.attributes["server.address"] == server(emu)[0]
    assert 0 <= remaining.value <= 2
    assert all_metrics["roomchat.rate_limit.remaining"].unit == "{request}"
    # A closed client is no series any more.
    assert "roomchat.rate_limit.remaining" not in otel.metrics() or not points(
        otel.metrics(), "roomchat.rate_limit.remaining"
    )


def test_a_failed_call_is_an_error_of_its_type_as_are_its_attempts(emu: Emulator, otel: Sdk) -> None:
    with emu.client(**otel.providers()) as client:
        emu.fault(CREATE_USER, {"kind": "respond", "status": 500, "body": ""}, method="POST")
        with pytest.raises(roomchat.ServerError):
            client.create_user(username="jon")
        # Refused before anything is sent: a call without attempts.
        with pytest.raises(roomchat.ValidationError):
            client.list_users(limit=-1)
    # Nothing listens: a connection failure, no status.
    with roomchat.Client(
        emu.private_key, base_url=f"http://127.0.0.1:{free_port()}", max_retries=0, allow_insecure_http=True,
        **otel.providers(),
    ) as nowhere:
        with pytest.raises(roomchat.ConnectionError):
            nowhere.list_chat_rooms()
    spans = otel.spans()
    [create] = named(spans, "roomchat create_user")
    assert create.attributes is not None and create.attributes["error.type"] == "server_error"
    assert create.status.status_code == StatusCode.ERROR
    assert create.status.description == "server_error (HTTP 500)"
    [post] = named(spans, "POST /consumer/api/v1/user")
    assert post.attributes is not None
    assert post.attributes["http.response.status_code"] == 500
    assert post.attributes["error.type"] == "500"
    assert post.attributes["roomchat.error.kind"] == "server_error"
    assert post.status.status_code == StatusCode.ERROR
    [refused] = named(spans, "roomchat list_chat_rooms")
    [connect] = named(spans, "GET /consumer/api/v1/chatrooms")
    assert connect.attributes is not None and refused.attributes is not None
    assert "http.response.status_code" not in connect.attributes
    assert connect.attributes["error.type"] == "connection"
    assert connect.attributes["roomchat.error.kind"] == "connection"
    assert refused.attributes["error.type"] == "connection"
    assert refused.status.status_code == StatusCode.ERROR
    for invalid in named(spans, "roomchat list_users"):
        assert invalid.attributes is not None and invalid.attributes["roomchat.attempts"] == 0
        assert invalid.attributes["error.type"] == "validation"

    all_metrics = otel.metrics()
    types = sorted(str(p.attributes.get("error.type")) for p in points(all_metrics, "roomchat.client.call.duration"))
    assert "server_error" in types and "connection" in types
    assert all(p.value == 0 for p in points(all_metrics, "roomchat.client.active_calls"))


def test_trace_context_and_baggage_on_the_wire_unless_propagation_is_off(emu: Emulator, otel: Sdk) -> None:
    with emu.client(tracer_provider=otel.tracer_provider) as on, emu.client(
        tracer_provider=otel.tracer_provider, propagate_trace_context=False
    ) as off:
        with otel.tracer.start_as_current_span("handle request") as app:
            token = context.attach(baggage.set_baggage("tenant", "acme"))
            try:
                on.list_chat_rooms()
                off.list_chat_rooms()
                next(off.user_pages())  # iterators too
            finally:
                context.detach(token)
    journal = emu.journal()
    attempts = named(otel.spans(), "GET /consumer/api/v1/chatrooms")
    assert len(attempts) == 2, "spans are made either way"
    assert header(journal[0], "traceparent") == traceparent(attempts[0])
    assert header(journal[0], "baggage") == "tenant=acme"
    for entry in journal[1:]:
        for name in ["traceparent", "tracestate", "baggage"]:
            assert header(entry, name) is None, f"{name} was sent"
    calls = named(otel.spans(), "roomchat list_chat_rooms")
    assert all(parent_id(c) == span_id(app) for c in calls)
    assert len(named(otel.spans(), "roomchat list_users")) == 1


def test_no_credential_in_any_exported_span_event_or_metric(emu: Emulator, otel: Sdk) -> None:
    # Keys with the characters URLs treat apart, as core's and Node's tests and the Redis
    # password tests use.
    private_key = "sk_live_S3cr?t#9/x@y+&=%"
    public_key = "pk_live_Pub?l#c/k@y+&=%"
    redis_password = "R3d?s#9/p@ss"
    emu.config(public_key=public_key)
    try:
        with emu.other_key(private_key):
            with emu.client(
                private_key=private_key,
                public_key=public_key,
                base_backoff=0.001,
                # A shared budget whose Redis is not there, its password odd too: the client
                # falls back, and says so in an event.
                rate_limit=roomchat.RateLimit(
                    requests=100,
                    window=60.0,
                    redis_url=f"redis://:{urllib.parse.quote(redis_password, safe='')}@127.0.0.1:{free_port()}/0",
                    on_redis_error="local_fallback",
                    redis_connect_timeout=0.2,
                    redis_timeout=0.2,
                ),
                **otel.providers(),
            ) as client:
                jon = client.create_user(username="jon")
                client.validate_access_token(jon.access_token)
                try:
                    client.raw_request(
                        "GET",
                        "/consumer/api/v1/user/accessToken/validate",
                        query={"accessToken": jon.access_token},
                        auth="public",
                    )
                except roomchat.RoomchatError:
                    pass
                body = json.dumps({"message": f"bad key {private_key} / {public_key}"})
                emu.fault(USERS, {"kind": "respond", "status": 500, "body": body}, method="GET")
                client.list_users(limit=1)
                body = json.dumps({"message": f"bad token {jon.access_token}"})
                emu.fault(USERS, {"kind": "respond", "status": 400, "body": body}, method="GET")
                with pytest.raises(roomchat.RoomchatError):
                    client.list_users(limit=1)
                metrics_data = otel.reader.get_metrics_data()
    finally:
        emu.config(public_key=emu.public_key)
    spans = otel.spans()
    exported = "\n".join(s.to_json() for s in spans) + (metrics_data.to_json() if metrics_data else "")
    assert "roomchat.budget.degraded" in exported, "the fallback was told"
    # The event's attributes, as the guide lists them.
    degraded = [e for s in spans for e in s.events if e.name == "roomchat.budget.degraded"]
    assert degraded and all(
        set(e.attributes or {}) == {"roomchat.attempt", "error.type", "error.message"} for e in degraded
    ), [dict(e.attributes or {}) for e in degraded]
    assert all((e.attributes or {})["roomchat.attempt"] == 1 for e in degraded)
    for secret in [private_key, public_key, jon.access_token, redis_password]:
        for form in [secret, urllib.parse.quote(secret, safe=""), urllib.parse.quote_plus(secret), json.dumps(secret)[1:-1]]:
            assert form not in exported, f"{form} leaked"
    assert "publicKey=REDACTED&accessToken=REDACTED" in exported, "the raw request was traced"
    assert len(named(spans, "roomchat raw")) == 1


def test_the_global_providers_as_they_are_when_each_call_starts_and_opentelemetry_false(emu: Emulator) -> None:
    # In a process of its own: the global providers can be set once per process.
    script = f"""
import json, roomchat
from opentelemetry import trace, metrics
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
options = dict(base_url={emu.base_url!r}, ca_bundle={emu.ca_file!r})
# Made before the providers are set: the providers of the call's start count.
client = roomchat.Client({emu.private_key!r}, **options)
off = roomchat.Client({emu.private_key!r}, opentelemetry=False, **options)
client.list_chat_rooms()  # no SDK yet: nothing recorded, nothing sent
exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
trace.set_tracer_provider(provider)
reader = InMemoryMetricReader()
metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))
with trace.get_tracer("app").start_as_current_span("handle request"):
    client.list_chat_rooms()
    client.with_options(max_retries=0).list_chat_rooms()
    off.list_chat_rooms()
calls = [p.count for r in reader.get_metrics_data().resource_metrics for s in r.scope_metrics
         for m in s.metrics if m.name == "roomchat.client.call.duration" for p in m.data.data_points]
print(json.dumps({{"spans": [s.name for s in exporter.get_finished_spans()], "calls": calls}}))
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    result = json.loads(out.stdout)
    assert result["spans"] == [
        "GET /consumer/api/v1/chatrooms",
        "roomchat list_chat_rooms",
        "GET /consumer/api/v1/chatrooms",
        "roomchat list_chat_rooms",
        "handle request",
    ]
    assert result["calls"] == [2]
    journal = emu.journal()
    assert header(journal[0], "traceparent") is None, "no SDK: nothing sent"
    assert header(journal[1], "traceparent")
    assert header(journal[2], "traceparent"), "a view shares its client's telemetry"
    assert header(journal[3], "traceparent") is None, "off: no context, nothing sent"


def test_bad_options(emu: Emulator, otel: Sdk) -> None:
    with pytest.raises(roomchat.ConfigurationError, match="opentelemetry is False"):
        emu.client(opentelemetry=False, tracer_provider=otel.tracer_provider)
    with pytest.raises(TypeError, match="tracer_provider must be an OpenTelemetry TracerProvider"):
        emu.client(tracer_provider=object())
    with pytest.raises(TypeError, match="meter_provider must be an OpenTelemetry MeterProvider"):
        emu.client(meter_provider=42)
    with pytest.raises(TypeError, match="propagate_trace_context"):
        emu.client(propagate_trace_context="no")


def test_without_opentelemetry_the_package_imports_none_of_it_and_refuses_providers(emu: Emulator) -> None:
    # opentelemetry made unimportable: the client works, sends nothing, refuses providers;
    # and `import roomchat` alone never imports opentelemetry, installed or not.
    script = f"""
import json, sys
if sys.argv[1] == "absent":
    sys.modules["opentelemetry"] = None  # an import of it raises ImportError
import roomchat
imported_at_import = any(m.startswith("opentelemetry") and sys.modules[m] is not None for m in sys.modules)
client = roomchat.Client({emu.private_key!r}, base_url={emu.base_url!r}, ca_bundle={emu.ca_file!r})
rooms = client.list_chat_rooms()
try:
    roomchat.Client({emu.private_key!r}, base_url={emu.base_url!r}, tracer_provider=object())
    refused = "accepted"
except Exception as e:
    refused = type(e).__name__ + ": " + str(e)
print(json.dumps({{"rooms": len(rooms), "imported_at_import": imported_at_import, "refused": refused}}))
"""
    absent = json.loads(
        subprocess.run([sys.executable, "-c", script, "absent"], capture_output=True, text=True, timeout=60, check=True).stdout
    )
    present = json.loads(
        subprocess.run([sys.executable, "-c", script, "present"], capture_output=True, text=True, timeout=60, check=True).stdout
    )
    assert absent["rooms"] == 0
    assert absent["refused"].startswith("ConfigurationError: tracer_provider and meter_provider need opentelemetry-api")
    assert present["refused"].startswith("TypeError: tracer_provider must be")
    assert absent["imported_at_import"] is False and present["imported_at_import"] is False
    for entry in emu.journal():
        assert header(entry, "traceparent") is None


def test_a_failing_telemetry_never_fails_the_call(emu: Emulator, otel: Sdk, monkeypatch: pytest.MonkeyPatch) -> None:
    class Broken:
        def get_tracer(self, *args: Any, **kwargs: Any) -> Any:
            raise RuntimeError("a tracer provider that fails")

    reported: List[str] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda unraisable: reported.append(str(unraisable.exc_value)))
    with emu.client(tracer_provider=Broken(), meter_provider=otel.meter_provider) as client:
        assert client.list_chat_rooms() == []
    assert reported == ["a tracer provider that fails"]
    assert len(emu.journal()) == 1


def test_providers_dropped_by_the_application_are_not_kept_alive(emu: Emulator) -> None:
    import gc
    import weakref

    tracer_provider = TracerProvider(shutdown_on_exit=False)
    meter_provider = MeterProvider(metric_readers=[InMemoryMetricReader()], shutdown_on_exit=False)
    with emu.client(tracer_provider=tracer_provider, meter_provider=meter_provider) as client:
        client.list_users(limit=1)
    gone = [weakref.ref(tracer_provider), weakref.ref(meter_provider)]
    del client, tracer_provider, meter_provider
    gc.collect()
    assert [ref() for ref in gone] == [None, None], "the package's caches keep providers a process made and dropped"


def test_the_interpreter_exits_cleanly_with_calls_in_flight_on_daemon_threads(emu: Emulator) -> None:
    # AsyncClient workers with an SDK (their hooks take the GIL) and sync calls on daemon
    # threads, all in flight as the interpreter exits: before Python 3.14 a thread that
    # takes the GIL then is ended with pthread_exit, which crashed the process (SIGSEGV).
    emu.fault(USERS, {"kind": "delay", "ms": 60}, method="GET", times=100_000)
    script = f"""
import asyncio, sys, threading, time
import roomchat
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.trace import TracerProvider
options = dict(base_url={emu.base_url!r}, ca_bundle={emu.ca_file!r},
               tracer_provider=TracerProvider(), meter_provider=MeterProvider())
aclient = roomchat.AsyncClient({emu.private_key!r}, **options)
client = roomchat.Client({emu.private_key!r}, **options)
async def many():
    async def one():
        while True:
            try:
                await aclient.list_users(limit=1)
            except Exception:
                pass
    await asyncio.gather(*[one() for _ in range(8)])
def calls():
    while True:
        try:
            client.list_users(limit=1)
        except Exception:
            pass
threading.Thread(target=lambda: asyncio.run(many()), daemon=True).start()
for _ in range(4):
    threading.Thread(target=calls, daemon=True).start()
time.sleep(0.5)
print("exiting", flush=True)
"""
    statuses = [
        subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60).returncode
        for _ in range(3)
    ]
    assert statuses == [0, 0, 0]


def test_a_span_processor_that_raises_costs_only_its_own_part(emu: Emulator) -> None:
    from opentelemetry.sdk.trace import SpanProcessor

    exporter = InMemorySpanExporter()

    class Raising(SpanProcessor):
        raised = 0

        def on_end(self, span: ReadableSpan) -> None:
            Raising.raised += 1
            if Raising.raised == 1:
                raise RuntimeError("an exporter bug")

    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(Raising())
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    reader = InMemoryMetricReader()
    meter_provider = MeterProvider(metric_readers=[reader])
    unraisable: List[Any] = []
    hook, sys.unraisablehook = sys.unraisablehook, unraisable.append
    try:
        with emu.client(tracer_provider=tracer_provider, meter_provider=meter_provider) as client:
            client.list_chat_rooms()
            client.list_chat_rooms()
    finally:
        sys.unraisablehook = hook
    names = [s.name for s in exporter.get_finished_spans()]
    # The first span ended (the first call's attempt) met the raise; every other span ended.
    assert names == ["roomchat list_chat_rooms", "GET /consumer/api/v1/chatrooms", "roomchat list_chat_rooms"]
    assert len(unraisable) == 1, "reported once"
    data = reader.get_metrics_data()
    found = {m.name: m for r in data.resource_metrics for s in r.scope_metrics for m in s.metrics}
    assert sum(p.count for p in found["roomchat.client.call.duration"].data.data_points) == 2
    assert all(p.value == 0 for p in found["roomchat.client.active_calls"].data.data_points)


def test_suppressed_instrumentation_makes_no_span_and_sends_no_context(emu: Emulator, otel: Sdk) -> None:
    from opentelemetry.context import _SUPPRESS_INSTRUMENTATION_KEY

    with emu.client(**otel.providers()) as client:
        with otel.tracer.start_as_current_span("handle request"):
            token = context.attach(context.set_value(_SUPPRESS_INSTRUMENTATION_KEY, True))
            try:
                client.list_chat_rooms()
            finally:
                context.detach(token)
            client.list_chat_rooms()
    journal = emu.journal()
    assert [header(e, "traceparent") is not None for e in journal] == [False, True]
    assert len(named(otel.spans(), "roomchat list_chat_rooms")) == 1


def test_a_forked_child_has_no_call_in_flight(emu: Emulator, otel: Sdk) -> None:
    import os

    emu.fault(USERS, {"kind": "delay", "ms": 400}, method="GET")
    with emu.client(**otel.providers()) as client:
        import threading

        slow = threading.Thread(target=lambda: client.list_users(limit=1))
        slow.start()
        import time

        time.sleep(0.15)
        pid = os.fork()
        if pid == 0:  # the child: its in-flight count is its own (none)
            points_ = otel.reader.get_metrics_data()
            values = [
                p.value
                for r in points_.resource_metrics
                for s in r.scope_metrics
                for m in s.metrics
                if m.name == "roomchat.client.active_calls"
                for p in m.data.data_points
            ]
            os._exit(0 if all(v == 0 for v in values) else 3)
        _, status = os.waitpid(pid, 0)
        slow.join()
    assert os.waitstatus_to_exitcode(status) == 0
