"""What OpenTelemetry costs a roomchat call (issue 45), printed by bench.py in a process
of its own (the global providers can be set once per process): list_users(limit=50)
reading every username, one call at a time and 16 threads in flight, idle and on a
loaded CPU, contenders interleaved round by round as in bench.py.

1. With opentelemetry-api installed and no SDK: the default client (the global providers
   are the API's no-op ones: no call is observed) against ``opentelemetry=False`` (no
   instrumentation at all). The issue's budget: at most 1 % per call.
2. With the SDK set up globally (a BatchSpanProcessor to an exporter that drops what it
   gets, and a MeterProvider with a periodic reader): roomchat's spans and metrics against
   requests with opentelemetry-instrumentation-requests doing the same. The goal (issue 51,
   item 8): roomchat at least 3x faster, one call at a time.
3. roomchat's own part of that: the traced client against one with
   ``opentelemetry=False``, taking turns call by call, one call at a time, idle and loaded
   (what the spans, metrics and trace context cost each call).

Figures, not a test.

    python otel_cost.py --base-url URL [--calls 300] [--rounds 3] [--threads 16]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from typing import Any, Callable, Dict, List, Sequence, Tuple

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


def paired(a: Callable[[], int], b: Callable[[], int], calls: int, threads: int) -> Tuple[List[float], List[float]]:
    """Each call's time of `a` and of `b`, the two taking turns call by call (in each of
    `threads` threads), so that a noisy neighbour hits both alike: what a difference of
    1 % needs on a shared machine."""
    times_a: List[float] = []
    times_b: List[float] = []
    lock = threading.Lock()

    def work(n: int) -> None:
        mine_a, mine_b = [], []
        for i in range(n):
            for fn, mine in ((a, mine_a), (b, mine_b)) if i % 2 else ((b, mine_b), (a, mine_a)):
                started = time.perf_counter()
                assert fn() == PAGE
                mine.append(time.perf_counter() - started)
        with lock:
            times_a.extend(mine_a)
            times_b.extend(mine_b)

    a()
    b()
    pool = [threading.Thread(target=work, args=(max(1, calls // threads),)) for _ in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    return times_a, times_b


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
    plain = make_roomchat_shared(client(args.base_url, opentelemetry=False))(info)
    default = make_roomchat_shared(client(args.base_url))(info)
    calls = 4 * args.calls * args.rounds
    print(f"\nOpenTelemetry's cost (figures, not a test; the machine's other load shows in them)")
    print(f"\nno SDK configured vs no instrumentation: median µs per call, the two clients taking turns call by call")
    print(f"  {'':<44} {'idle':>9} {'loaded':>9}")
    for threads, label in ((1, "one call at a time"), (args.threads, f"{args.threads} threads in flight")):
        idle_pair = paired(plain, default, calls, threads)
        with cpu_load():
            loaded_pair = paired(plain, default, calls // 2, threads)
        medians = [[statistics.median(t) * 1e6 for t in pair] for pair in (idle_pair, loaded_pair)]
        print(f"  {label + ': ' + off:<44} {medians[0][0]:9.1f} {medians[1][0]:9.1f}")
        print(f"  {label + ': ' + api_only:<44} {medians[0][1]:9.1f} {medians[1][1]:9.1f}")
        print(
            f"  {'    overhead':<44} {(medians[0][1] / medians[0][0] - 1) * 100:+8.1f}% "
            f"{(medians[1][1] / medians[1][0] - 1) * 100:+8.1f}%"
        )

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
    print(f"\nwith the SDK; {args.rounds} interleaved rounds of {args.calls} calls idle, {loaded_calls} {LOADED}")
    idle = measure(contenders, info, args.calls, args.rounds, args.threads)
    with cpu_load():
        loaded = measure(contenders, info, loaded_calls, args.rounds, args.threads)
    for mode, label in (("single", "one call at a time"), ("threads", f"{args.threads} threads in flight")):
        table(f"with the SDK, {label}", [traced, instrumented], idle[mode], loaded[mode], traced, faster)

    # 3. roomchat's own part: the same calls traced and not, taking turns call by call.
    untraced = make_roomchat_shared(client(args.base_url, opentelemetry=False))(info)
    traced_call = make_roomchat_shared(client(args.base_url))(info)
    calls = 2 * args.calls * args.rounds
    idle_pair = paired(untraced, traced_call, calls, 1)
    with cpu_load():
        loaded_pair = paired(untraced, traced_call, calls // 2, 1)
    medians = [[statistics.median(t) * 1e6 for t in pair] for pair in (idle_pair, loaded_pair)]
    print("\nroomchat's own part with the SDK, one call at a time: median µs per call, taking turns call by call")
    print(f"  {'':<44} {'idle':>9} {'loaded':>9}")
    print(f"  {off:<44} {medians[0][0]:9.1f} {medians[1][0]:9.1f}")
    print(f"  {traced:<44} {medians[0][1]:9.1f} {medians[1][1]:9.1f}")
    print(
        f"  {'    its spans, metrics and trace context':<44} {medians[0][1] - medians[0][0]:+9.1f} "
        f"{medians[1][1] - medians[1][0]:+9.1f}"
    )
    tracer_provider.shutdown()
    sys.stdout.flush()


if __name__ == "__main__":
    main()
