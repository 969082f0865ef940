"""A program of test_otel_signals.py: one call interrupted by a signal (SIGINT, or SIGTERM
whose handler calls ``sys.exit(3)``), with the OpenTelemetry SDK set globally or none.
Prints ``ready`` before the call, ``waiting`` when roomchat's logger says the call waits
for its budget, then one JSON line: how the call ended (the exception the program got),
the spans ended, and anything handed to ``sys.unraisablehook``."""

from __future__ import annotations

import json
import logging
import signal
import sys
from typing import Any, Dict, List

import roomchat

base_url, key, state, signal_name, sdk = sys.argv[1:6]

exporter: Any = None
if sdk == "sdk":
    from opentelemetry import metrics, trace
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    metrics.set_meter_provider(MeterProvider(metric_readers=[InMemoryMetricReader()]))

unraisable: List[str] = []
sys.unraisablehook = lambda u: unraisable.append(repr(u.exc_value))

if signal_name == "term":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(3))


class Waiting(logging.Handler):
    """Tells the test when the call waits for its budget."""

    def emit(self, record: logging.LogRecord) -> None:
        if getattr(record, "roomchat_event", None) == "rate_limit_wait":
            print("waiting", flush=True)


logger = logging.getLogger("roomchat")
logger.setLevel(logging.DEBUG if state == "budget" else logging.ERROR)
logger.addHandler(Waiting())
logger.propagate = False

client = roomchat.Client(
    key,
    base_url=base_url,
    allow_insecure_http=True,
    max_retries=2,
    max_retry_wait=60.0,
    rate_limit=roomchat.RateLimit(requests=1, window=3.0) if state == "budget" else None,
)
if state == "budget":
    client.list_users(limit=5)  # takes the budget's one slot: the next call waits
outcome = "returned"


async def in_a_task() -> None:
    """The call of an AsyncClient, awaited in asyncio.run's task."""
    async with roomchat.AsyncClient(key, base_url=base_url, allow_insecure_http=True) as async_client:
        print("ready", flush=True)
        await async_client.list_users(limit=5)


if state != "async":
    print("ready", flush=True)
try:
    if state == "async":
        import asyncio

        asyncio.run(in_a_task())
    else:
        client.list_users(limit=5)
except KeyboardInterrupt:
    outcome = "KeyboardInterrupt"
except SystemExit as e:
    outcome = f"SystemExit({e.code})"
spans: List[Dict[str, Any]] = []
if exporter is not None:
    for span in exporter.get_finished_spans():
        spans.append({"name": span.name, "attributes": dict(span.attributes or {}), "status": span.status.status_code.name})
print(json.dumps({"outcome": outcome, "spans": spans, "unraisable": unraisable}), flush=True)
