"""Where a traced call's time goes (issue 51, item 8): list_users(limit=50) one call at a
time with the OpenTelemetry SDK set up as otel_cost.py sets it (a BatchSpanProcessor to an
exporter that drops what it gets, a MeterProvider with a periodic reader), a traced client
and one with ``opentelemetry=False`` taking turns call by call, against a release emulator.

Each of roomchat's hooks (``roomchat._telemetry``) and each SDK or API call they make is
timed with ``time.perf_counter_ns`` (the wrappers add about 0.3 µs each, counted in
"roomchat's Python"). Prints the median µs of each step, and per call: the hooks, the SDK's
and API's calls in them, roomchat's own Python around those calls, and the rest of the
traced call's extra time (the native side's part, and what the traced call's work costs
the rest of the call). A developer's profile, not a test; uses the package's private names.

    python otel_steps.py --emulator PATH [--calls 3000]
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any, Callable, Dict, List

import roomchat
from roomchat import _telemetry
from bench import KEY, PAGE, start_emulator

from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics._internal.instrument import _Histogram
from opentelemetry.sdk.metrics.export import MetricExporter, MetricExportResult, PeriodicExportingMetricReader
from opentelemetry.sdk.trace import Span, Tracer, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult


class Drop(SpanExporter):
    def export(self, spans: Any) -> SpanExportResult:
        return SpanExportResult.SUCCESS


class DropMetrics(MetricExporter):
    def export(self, metrics_data: Any, timeout_millis: float = 10_000, **kwargs: Any) -> MetricExportResult:
        return MetricExportResult.SUCCESS

    def force_flush(self, timeout_millis: float = 10_000) -> bool:
        return True

    def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
        pass


#: Nanoseconds of each step, by hook and step, in the order taken.
times: Dict[str, List[int]] = {}
#: The hook running now ("" outside one).
hook = [""]

HOOKS = {
    "capture": (_telemetry, "capture"),
    "start_call": (_telemetry.ClientTelemetry, "start_call"),
    "attempt_start": (_telemetry._Call, "attempt_start"),
    "attempt_end": (_telemetry._Call, "attempt_end"),
    "call_end": (_telemetry._Call, "call_end"),
}
SDK_CALLS = {
    "start_span": (Tracer, "start_span"),
    "span.end": (Span, "end"),
    "span.set_attribute": (Span, "set_attribute"),
    "span.set_attributes": (Span, "set_attributes"),
    "histogram.record": (_Histogram, "record"),
    "propagate.inject": (_telemetry._propagate, "inject"),
    "set_span_in_context": (_telemetry._trace, "set_span_in_context"),
}


def timed(owner: Any, name: str, label: str, is_hook: bool) -> None:
    inner: Callable[..., Any] = getattr(owner, name)

    def step(*args: Any, **kwargs: Any) -> Any:
        outer = hook[0]
        key = label if is_hook else f"{outer}: {label}"
        if is_hook:
            hook[0] = label
        started = time.perf_counter_ns()
        try:
            return inner(*args, **kwargs)
        finally:
            times.setdefault(key, []).append(time.perf_counter_ns() - started)
            hook[0] = outer

    setattr(owner, name, step)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--emulator", required=True)
    parser.add_argument("--calls", type=int, default=3000)
    args = parser.parse_args()

    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(BatchSpanProcessor(Drop()))
    trace.set_tracer_provider(tracer_provider)
    metrics.set_meter_provider(
        MeterProvider(metric_readers=[PeriodicExportingMetricReader(DropMetrics(), export_interval_millis=10_000)])
    )
    # Before the first client: the native side looks `capture` up once.
    timed(*HOOKS["capture"], "capture", True)
    proc, info = start_emulator(args.emulator)
    try:
        limit = roomchat.RateLimit(requests=1_000_000_000, window=60.0)
        traced = roomchat.Client(KEY, base_url=info["base_url"], rate_limit=limit)
        plain = roomchat.Client(KEY, base_url=info["base_url"], rate_limit=limit, opentelemetry=False)
        for client in (traced, plain):
            client.list_users(limit=PAGE)
        for label, (owner, name) in HOOKS.items():
            if label != "capture":
                timed(owner, name, label, True)
        for label, (owner, name) in SDK_CALLS.items():
            timed(owner, name, label, False)
        times.clear()
        calls: Dict[str, List[int]] = {"traced": [], "plain": []}
        for i in range(args.calls):
            order = (("traced", traced), ("plain", plain)) if i % 2 else (("plain", plain), ("traced", traced))
            for name, client in order:
                started = time.perf_counter_ns()
                client.list_users(limit=PAGE)
                calls[name].append(time.perf_counter_ns() - started)
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=10)
        tracer_provider.shutdown()

    n = args.calls
    print(f"\nA traced list_users(limit={PAGE}), one call at a time, {n} calls; median µs")
    print(f"  {'step':<44} {'µs':>8} {'per call':>9}")
    for key, values in times.items():
        print(f"  {key:<44} {statistics.median(values) / 1e3:8.2f} {len(values) / n:9.0f}")
    # Per call: each hook once (capture twice: both clients ask), each SDK call listed once per call.
    hooks = [k for k in HOOKS if k != "capture" and len(times.get(k, [])) == n]
    inside = [k for k in times if ": " in k and len(times[k]) == n]
    hook_sum = [sum(times[h][i] for h in hooks) for i in range(n)]
    sdk_sum = [sum(times[k][i] for k in inside) for i in range(n)]
    traced_ms, plain_ms = statistics.median(calls["traced"]), statistics.median(calls["plain"])
    print(f"\n  traced call {traced_ms / 1e3:.1f}, opentelemetry=False {plain_ms / 1e3:.1f}: "
          f"the traced call's own part {(traced_ms - plain_ms) / 1e3:+.1f}")
    print(f"  its hooks {statistics.median(hook_sum) / 1e3:.1f}: the SDK's and API's calls "
          f"{statistics.median(sdk_sum) / 1e3:.1f}, roomchat's Python around them "
          f"{statistics.median([h - s for h, s in zip(hook_sum, sdk_sum)]) / 1e3:.1f}")
    print(f"  the rest (capture, the native side, the traced work's cost to the rest of the call) "
          f"{(traced_ms - plain_ms - statistics.median(hook_sum)) / 1e3:+.1f}")


if __name__ == "__main__":
    main()
