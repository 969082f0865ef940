"""End to end through a real OpenTelemetry Collector (scripts/otel-collector.sh, built from
the pinned Go modules): roomchat's spans and metrics exported by the official OTLP exporter
(opentelemetry-exporter-otlp-proto-http, OTLP/HTTP protobuf) behind a batch span processor
and a periodic metric reader, as an application sets them up; what the collector wrote
(OTLP JSON) is asserted: the application's span -> the call -> its attempts (one trace,
parent ids), the HTTP client conventions' attributes, a 429 resent once, the metrics'
points, and no key, token, proxy or Redis password anywhere in the file. The same test as
Rust's (tests/otel/rust/tests/collector.rs) and Node's (bindings/node/test/otel-collector.e2e.js).

Not a test_*.py: `pytest .` needs no collector. It needs one built
(`bash scripts/otel-collector.sh build`; the test command builds it in the background)
and fails without it:
    cd bindings/python/tests && python -m pytest -q -s otel_collector_e2e.py
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import tempfile
import urllib.parse
from typing import Any, Dict, Iterator, List

import pytest
from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

import roomchat
from conftest import Emulator, free_port, start_emulator, stop_emulator

ROOT = pathlib.Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "scripts" / "otel-collector.sh"
# The secrets, with the characters URLs and JSON treat apart (as the redaction tests use).
PRIVATE_KEY = "sk_live_C0ll?ct#9/x@y+&=%"
PUBLIC_KEY = "pk_live_C0ll?ct#p/k@y+&=%"
PROXY_PASSWORD = "Pr0xy?#/p@ss&"
REDIS_PASSWORD = "R3d?s#9/c@ll&"
USERS = "/consumer/api/v2/users"
SERVICE = "roomchat-collector-e2e-python"
HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10]
SPAN_KIND_INTERNAL = 1
SPAN_KIND_CLIENT = 3
STATUS_ERROR = 2


@pytest.fixture
def collector() -> Iterator[Dict[str, str]]:
    """A collector of the test's own: its endpoints and output file (`stop` in it stops it)."""
    folder = tempfile.mkdtemp(prefix="roomchat-otelcol-python-")
    out = subprocess.run(["bash", str(SCRIPT), "start", folder], check=True, capture_output=True, text=True).stdout
    found = dict(line.split("=", 1) for line in out.strip().splitlines())
    stopped = [False]

    def stop() -> None:
        if not stopped[0]:
            stopped[0] = True
            subprocess.run(["bash", str(SCRIPT), "stop", folder], check=True)

    found["stop"] = stop  # type: ignore[assignment]
    try:
        yield found
    finally:
        stop()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def keyed_emu() -> Iterator[Emulator]:
    """An emulator that takes the test's odd-character keys."""
    emu = start_emulator(os.environ["ROOMCHAT_EMULATOR"])
    try:
        emu.config(private_key=PRIVATE_KEY, public_key=PUBLIC_KEY)
        yield emu
    finally:
        stop_emulator(emu)


def attrs(items: List[Dict[str, Any]]) -> Dict[str, Any]:
    """An attribute list of OTLP JSON as a dict (64-bit ints are strings there: made numbers)."""
    out: Dict[str, Any] = {}
    for item in items or []:
        ((kind, value),) = item["value"].items()
        out[item["key"]] = int(value) if kind == "intValue" else value
    return out


def test_spans_and_metrics_reach_a_real_collector_over_otlp_with_no_secret(
    collector: Dict[str, str], keyed_emu: Emulator
) -> None:
    endpoint = collector["ROOMCHAT_OTELCOL_HTTP_ENDPOINT"]
    resource = Resource.create({"service.name": SERVICE})
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=f"{endpoint}/v1/traces")))
    reader = PeriodicExportingMetricReader(
        OTLPMetricExporter(endpoint=f"{endpoint}/v1/metrics"), export_interval_millis=3_600_000
    )
    meter_provider = MeterProvider(resource=resource, metric_readers=[reader])
    emu = keyed_emu
    # A proxy and a shared Redis budget, each with its password: loopback is not proxied,
    # and no Redis listens there (the client falls back and says so).
    client = emu.client(
        private_key=PRIVATE_KEY,
        public_key=PUBLIC_KEY,
        base_backoff=0.001,
        proxy=f"https://me:{urllib.parse.quote(PROXY_PASSWORD, safe='')}@127.0.0.1:9",
        rate_limit=roomchat.RateLimit(
            requests=100,
            window=60.0,
            redis_url=f"redis://:{urllib.parse.quote(REDIS_PASSWORD, safe='')}@127.0.0.1:{free_port()}/0",
            on_redis_error="local_fallback",
            redis_connect_timeout=0.2,
            redis_timeout=0.2,
        ),
        tracer_provider=tracer_provider,
        meter_provider=meter_provider,
    )
    with client:
        with tracer_provider.get_tracer("app").start_as_current_span("handle request") as app_span:
            jon = client.create_user(username="jon")
            token = jon.access_token
            client.validate_access_token(token)
            # The token in its query too: url.full must show it REDACTED.
            client.raw_request(
                "POST",
                "/consumer/api/v1/user/accessToken/validate",
                query={"accessToken": token},
                json={"accessToken": token},
                auth="public",
            )
            # A 429 then a 200: two attempts, the second resent once.
            emu.fault(
                USERS,
                {"kind": "respond", "status": 429, "headers": {"Retry-After": "0"}, "body": '{"message":"slow down"}'},
                method="GET",
            )
            client.list_users(limit=5)
            # A failed call whose answer quotes the keys and the token.
            quoted = json.dumps({"message": f"bad key {PRIVATE_KEY} / {PUBLIC_KEY} / {token}"})
            emu.fault(USERS, {"kind": "respond", "status": 400, "body": quoted}, method="GET")
            with pytest.raises(roomchat.RoomchatError):
                client.list_users(limit=1)
            app_span_id = format(app_span.get_span_context().span_id, "016x")
        # Everything exported before the collector stops (the client alive: its gauge is observed).
        tracer_provider.shutdown()
        meter_provider.shutdown()
    collector["stop"]()  # type: ignore[operator]
    received = pathlib.Path(collector["ROOMCHAT_OTELCOL_OUTPUT"]).read_text()
    batches = [json.loads(line) for line in received.splitlines() if line.strip()]

    def resources(field: str) -> List[Dict[str, Any]]:
        found = [r for b in batches for r in b.get(field, [])]
        for r in found:
            assert attrs(r["resource"]["attributes"])["service.name"] == SERVICE
        return found

    # Spans: the application's -> each call's -> its attempts', one trace.
    spans = [
        dict(s, scope=scope.get("scope", {}).get("name"), attrs=attrs(s.get("attributes", [])),
             events=[e["name"] for e in s.get("events", [])], parentSpanId=s.get("parentSpanId", ""))
        for r in resources("resourceSpans")
        for scope in r["scopeSpans"]
        for s in scope["spans"]
    ]
    (app,) = [s for s in spans if s["name"] == "handle request"]
    assert app["spanId"] == app_span_id
    assert all(s["scope"] == ("app" if s is app else "roomchat") for s in spans), "the scopes"
    assert all(s["traceId"] == app["traceId"] for s in spans), "one trace"
    calls = sorted((s for s in spans if s["name"] == "roomchat list_users"), key=lambda s: int(s["startTimeUnixNano"]))
    assert len(calls) == 2
    for call in calls:
        assert call["parentSpanId"] == app["spanId"]
        assert call["kind"] == SPAN_KIND_INTERNAL
        assert call["attrs"]["roomchat.operation"] == "list_users"
    retried, failed = calls

    def attempts_of(call: Dict[str, Any]) -> List[Dict[str, Any]]:
        return sorted((s for s in spans if s["parentSpanId"] == call["spanId"]), key=lambda s: int(s["startTimeUnixNano"]))

    attempts = attempts_of(retried)
    assert len(attempts) == 2
    url = urllib.parse.urlsplit(emu.base_url)
    for attempt, status in zip(attempts, [429, 200]):
        assert attempt["name"] == f"GET {USERS}"
        assert attempt["kind"] == SPAN_KIND_CLIENT
        a = attempt["attrs"]
        assert (a["http.request.method"], a["url.template"]) == ("GET", USERS)
        assert (a["server.address"], a["server.port"]) == (url.hostname, url.port)
        assert a["network.protocol.version"] == "1.1"
        assert a["http.response.status_code"] == status
    # As HTTP client instrumentations put it: the status as text; roomchat's kind beside it.
    assert attempts[0]["attrs"]["error.type"] == "429"
    assert attempts[0]["attrs"]["roomchat.error.kind"] == "rate_limited"
    assert attempts[0].get("status", {}).get("code") == STATUS_ERROR
    assert "http.request.resend_count" not in attempts[0]["attrs"]
    assert attempts[1]["attrs"]["http.request.resend_count"] == 1
    assert attempts[1].get("status", {}).get("code") != STATUS_ERROR
    assert retried["attrs"]["roomchat.attempts"] == 2
    assert "roomchat.retry" in retried["events"]
    assert failed.get("status", {}).get("code") == STATUS_ERROR
    assert failed["attrs"]["error.type"] == "invalid_request"
    (raw,) = [s for s in spans if s["name"] == "roomchat raw"]
    assert attempts_of(raw)[0]["attrs"]["url.full"].endswith("?publicKey=REDACTED&accessToken=REDACTED")
    assert any("roomchat.budget.degraded" in s["events"] for s in spans), "the Redis budget's failure is an event"

    # Metrics (cumulative: the last batch's): a duration per attempt, in the conventions'
    # buckets; the retry by reason.
    metrics: Dict[str, Dict[str, Any]] = {}
    for r in resources("resourceMetrics"):
        for scope in r["scopeMetrics"]:
            for m in scope["metrics"]:
                metrics[m["name"]] = m

    def points(name: str) -> List[Dict[str, Any]]:
        assert name in metrics, f"the collector received no metric {name}"
        m = metrics[name]
        data = m.get("histogram") or m.get("sum") or m.get("gauge")
        return [dict(p, attrs=attrs(p.get("attributes", []))) for p in data["dataPoints"]]

    assert metrics["http.client.request.duration"]["unit"] == "s"
    durations = points("http.client.request.duration")

    def count(status: int) -> int:
        return sum(
            int(p["count"])
            for p in durations
            if p["attrs"].get("url.template") == USERS
            and p["attrs"].get("http.request.method") == "GET"
            and p["attrs"].get("http.response.status_code") == status
        )

    assert [count(429), count(200), count(400)] == [1, 1, 1]
    for p in durations:
        assert [float(b) for b in p["explicitBounds"]] == HTTP_BUCKETS
        assert "url.full" not in p["attrs"], "low cardinality"
    attempt_spans = sum(1 for s in spans if s["kind"] == SPAN_KIND_CLIENT)
    assert sum(int(p["count"]) for p in durations) == attempt_spans, "a duration per attempt span"
    assert any(
        p["attrs"].get("roomchat.retry.reason") == "429" and int(p["asInt"]) == 1 for p in points("roomchat.client.retries")
    )
    assert sum(int(p["count"]) for p in points("roomchat.client.call.duration")) == 5
    remaining = points("roomchat.rate_limit.remaining")
    assert len(remaining) == 1, "one series per client"
    assert isinstance(remaining[0]["attrs"]["roomchat.client.id"], int)

    # No secret in any form, in the file as written or in its strings as decoded.
    decoded = "\n".join(json.dumps(b, ensure_ascii=False) for b in batches)
    for secret in [PRIVATE_KEY, PUBLIC_KEY, PROXY_PASSWORD, REDIS_PASSWORD, token]:
        for form in [secret, urllib.parse.quote(secret, safe="")]:
            assert form not in received, f"{form} reached the collector"
            assert form not in decoded, f"{form} reached the collector"
    point_count = sum(len(points(name)) for name in metrics)
    names = ", ".join(sorted({s["name"] for s in spans}))
    print(
        f"otel e2e python: the collector received {len(spans)} spans ({names}) and {point_count} metric points "
        f"({len(metrics)} metrics) over OTLP/HTTP; no key, token, proxy or Redis password in its {len(received)} bytes"
    )
