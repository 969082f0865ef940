"""What OpenTelemetry costs a roomchat call (issue 45), printed by bench.py in a process
of its own (the global providers can be set once per process): list_users(limit=50)
reading every username, one call at a time and 16 threads in flight, idle and on a
loaded CPU, contenders interleaved round by round as in bench.py.

1. With opentelemetry-api installed and no SDK: the default client (the global providers
   are the API's no-op ones: no call is observed) against ``opentelemetry=False`` (no
   instrumentation at all). The issue's budget: at most 1 % per call.
2. With the SDK set up globally (a BatchSpanProcessor to an exporter that drops what it
   gets, and a MeterProvider with a periodic reader): roomchat's spans and metrics against
   requests with opentelemetry-instrumentation-requests doing the same. The issue's goal:
   roomchat at least 4x faster.

Figures, not a test.

    python otel_cost.py --base-url URL [--calls 300] [--rounds 3] [--threads 16]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from typing import Any, Callable, Dict, List, Sequence

import requests

import roomchat
from bench import KEY, PAGE, Factory, make_roomchat_shared, single, threaded, users_url
from cpu_load import LABEL as LOADED, cpu_load


def client(base_url: str, **options: Any) -> roomchat.Client:
    return roomchat.Client(
        KEY, base_url=base_url, rate_limit=roomchat.RateLimit(requests=1_000_000_000, window=60.0), **options
    )


def make_requests(info: Dict[str, str]) -> Callable[[], int]:
    session, url = requests.Session(), users_url(info)

    def call() -> int:
        return len([u["username"] for u in session.get(url, timeout=30).json()["data"]])

    return call


def measure(
    contenders: Dict[str, Factory], info: Dict[str, str], calls: int, rounds: int, threads: int
) -> Dict[str, Dict[str, List[float]]]:
    """Seconds per call of each contender in each round: `single`, and `threads` in flight."""
    times: Dict[str, Dict[str, List[float]]] = {"single": {n: [] for n in contenders}, "threads": {n: [] for n in contenders}}
    for _ in range(rounds):
        for name, factory in contenders.items():
            times["single"][name].append(single(factory, info, calls))
        for name, factory in contenders.items():
            times["threads"][name].append(threaded(factory, info, calls, threads))
    return times


def table(title: str, rows: Sequence[str], idle: Dict[str, List[float]], loaded: Dict[str, List[float]], base: str, compare: Callable[[List[float], List[float]], str]) -> None:
    """The contenders' µs per call idle and loaded side by side, each compared with `base`."""
    print(f"\n{title}")
    print(f"  {'':<44} {'idle µs':>9} {'':>16} {'loaded µs':>10} {'':>16}")
    for name in rows:
        cells = []
        for times in (idle, loaded):
            median = statistics.median(times[name]) * 1e6
            cells.append(f"{median:9.1f} {'' if name == base else compare(times[name], times[base]):>16}")
        print(f"  {name:<44} {cells[0]} {cells[1]}")


def overhead(values: List[float], base: List[float]) -> str:
    return f"{(statistics.median([v / b for v, b in zip(values, base)]) - 1) * 100:+.1f} %"


def faster(values: List[float], base: List[float]) -> str:
    return f"roomchat {statistics.median([v / b for v, b in zip(values, base)]):.2f}x"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=16)
    args = parser.parse_args()
    info = {"base_url": args.base_url}
    loaded_calls = max(args.calls // 2, 50)

    # 1. The API installed, no SDK: the default client, and one with OpenTelemetry off.
    import opentelemetry.trace  # noqa: F401  (installed: the default client's case)

    off = "roomchat, opentelemetry=False"
    api_only = "roomchat, opentelemetry-api, no SDK"
    contenders = {
        off: make_roomchat_shared(client(args.base_url, opentelemetry=False)),
        api_only: make_roomchat_shared(client(args.base_url)),
    }
    idle = measure(contenders, info, args.calls, args.rounds, args.threads)
    with cpu_load():
        loaded = measure(contenders, info, loaded_calls, args.rounds, args.threads)
    print(f"\nOpenTelemetry's cost; {args.rounds} interleaved rounds of {args.calls} calls idle, {loaded_calls} {LOADED}")
    for mode, label in (("single", "one call at a time"), ("threads", f"{args.threads} threads in flight")):
        table(f"no SDK configured, {label} (vs no instrumentation)", [off, api_only], idle[mode], loaded[mode], off, overhead)

    # 2. The SDK set up globally, as `opentelemetry-instrument` or an application does.
    from opentelemetry import metrics, trace
    from opentelemetry.instrumentation.requests import RequestsInstrumentor
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import MetricExporter, MetricExportResult, PeriodicExportingMetricReader
    from opentelemetry.sdk.trace import TracerProvider
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

    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(BatchSpanProcessor(Drop()))
    trace.set_tracer_provider(tracer_provider)
    metrics.set_meter_provider(
        MeterProvider(metric_readers=[PeriodicExportingMetricReader(DropMetrics(), export_interval_millis=10_000)])
    )
    RequestsInstrumentor().instrument()
    traced = "roomchat, SDK (BatchSpanProcessor)"
    instrumented = "requests + its instrumentation, SDK"
    contenders = {
        traced: make_roomchat_shared(client(args.base_url)),
        instrumented: make_requests,
    }
    idle = measure(contenders, info, args.calls, args.rounds, args.threads)
    with cpu_load():
        loaded = measure(contenders, info, loaded_calls, args.rounds, args.threads)
    for mode, label in (("single", "one call at a time"), ("threads", f"{args.threads} threads in flight")):
        table(f"with the SDK, {label}", [traced, instrumented], idle[mode], loaded[mode], traced, faster)
    tracer_provider.shutdown()
    sys.stdout.flush()


if __name__ == "__main__":
    main()
