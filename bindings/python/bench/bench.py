"""roomchat.Client.list_users(limit=50) against calling the API by hand.

One release emulator, one run; contenders interleaved round by round (so a noisy
neighbour hits all of them alike); every call reads every username of the page.
Single-threaded, then 8 threads (roomchat: one shared Client; the others: one
session/handle per thread, urllib3 one shared pool). Prints µs per call, calls/s
and the ratios (median of the per-round ratios). Both idle and loaded: the same rounds again
(half the calls) with one busy-loop process per core beside them (scripts/bench/cpu-load.sh),
as on a production server, every contender under the same load. Then OpenTelemetry's cost
(otel_cost.py, in a process of its own): no SDK against no instrumentation, and with the SDK
against requests with its instrumentation. Figures, not a test.

    python bench.py [--calls 2000] [--rounds 5] [--threads 8] [--emulator PATH]
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import json
import os
import pathlib
import statistics
import subprocess
import sys
import threading
import time
from typing import Any, Callable, Dict, List, Optional

import httpx
import pycurl
import requests
import urllib3

import roomchat
from cpu_load import LABEL as LOADED, cpu_load

KEY = "sk_bench_python_0123456789"
PAGE = 50


def start_emulator(path: str) -> tuple[subprocess.Popen[str], Dict[str, str]]:
    proc = subprocess.Popen(
        [path, "--port", "0", "--private-key", KEY, "--rate-limit", "1000000000/60s", "--seed-users", str(PAGE)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    return proc, json.loads(proc.stdout.readline())


# ---- contenders: each makes a callable that does one call and returns the usernames read ----

Factory = Callable[[Dict[str, str]], Callable[[], int]]


def make_roomchat_shared(client: roomchat.Client) -> Factory:
    def factory(info: Dict[str, str]) -> Callable[[], int]:
        def call() -> int:
            return len([u.username for u in client.list_users(limit=PAGE).data])

        return call

    return factory


def users_url(info: Dict[str, str]) -> str:
    return f"{info['base_url']}/consumer/api/v2/users?auth={KEY}&limit={PAGE}&skip=0"


def make_requests(info: Dict[str, str]) -> Callable[[], int]:
    session, url = requests.Session(), users_url(info)

    def call() -> int:
        return len([u["username"] for u in session.get(url, timeout=30).json()["data"]])

    return call


def make_httpx(info: Dict[str, str]) -> Callable[[], int]:
    client, url = httpx.Client(timeout=30), users_url(info)

    def call() -> int:
        return len([u["username"] for u in client.get(url).json()["data"]])

    return call


URLLIB3_POOL: Optional[urllib3.PoolManager] = None


def make_urllib3(info: Dict[str, str]) -> Callable[[], int]:
    global URLLIB3_POOL
    if URLLIB3_POOL is None:
        URLLIB3_POOL = urllib3.PoolManager(maxsize=16)
    pool, url = URLLIB3_POOL, users_url(info)

    def call() -> int:
        return len([u["username"] for u in json.loads(pool.request("GET", url, timeout=30).data)["data"]])

    return call


def make_pycurl(info: Dict[str, str]) -> Callable[[], int]:
    handle = pycurl.Curl()
    handle.setopt(pycurl.URL, users_url(info))
    handle.setopt(pycurl.TIMEOUT, 30)

    def call() -> int:
        buffer = io.BytesIO()
        handle.setopt(pycurl.WRITEDATA, buffer)
        handle.perform()
        return len([u["username"] for u in json.loads(buffer.getvalue())["data"]])

    return call


# ---- measuring ----


def single(factory: Factory, info: Dict[str, str], calls: int) -> float:
    call = factory(info)
    call()
    started = time.perf_counter()
    for _ in range(calls):
        assert call() == PAGE
    return (time.perf_counter() - started) / calls


def threaded(factory: Factory, info: Dict[str, str], calls: int, threads: int) -> float:
    """Seconds per call with `threads` threads making `calls` calls in all."""
    per_thread = max(1, calls // threads)
    fns = [factory(info) for _ in range(threads)]
    for fn in fns:
        fn()
    barrier = threading.Barrier(threads + 1)

    def work(fn: Callable[[], int]) -> None:
        barrier.wait()
        for _ in range(per_thread):
            assert fn() == PAGE

    pool = [threading.Thread(target=work, args=(fn,)) for fn in fns]
    for t in pool:
        t.start()
    barrier.wait()
    started = time.perf_counter()
    for t in pool:
        t.join()
    return (time.perf_counter() - started) / (per_thread * threads)


def report(title: str, times: Dict[str, List[float]]) -> None:
    print(f"\n{title}")
    print(f"  {'':<30} {'µs/call':>9} {'calls/s':>9} {'roomchat is':>14}")
    mine = times["roomchat.Client"]
    for name, values in times.items():
        median = statistics.median(values)
        ratio = statistics.median([o / m for o, m in zip(values, mine)])
        faster = "" if name == "roomchat.Client" else f"{ratio:.2f}x faster"
        print(f"  {name:<30} {median * 1e6:9.1f} {1 / median:9.0f} {faster:>14}")


def main() -> None:
    here = pathlib.Path(__file__).resolve()
    target = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", here.parents[3] / "target"))
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=2000, help="calls per contender per round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--emulator", default=str(target / "release" / "roomchat-emulator"))
    args = parser.parse_args()

    proc, info = start_emulator(args.emulator)
    try:
        client = roomchat.Client(
            KEY, base_url=info["base_url"], rate_limit=roomchat.RateLimit(requests=1_000_000_000, window=60.0)
        )
        contenders: Dict[str, Factory] = {
            "roomchat.Client": make_roomchat_shared(client),
            "requests.Session": make_requests,
            "httpx.Client": make_httpx,
            "urllib3 + json.loads": make_urllib3,
            "pycurl (reused handle) + json": make_pycurl,
        }
        print(
            f"list_users(limit={PAGE}) reading every username; {args.rounds} interleaved rounds of "
            f"{args.calls} calls per contender; Python {sys.version.split()[0]}, roomchat {roomchat.__version__}"
        )

        def rounds(label: str, calls: int) -> None:
            single_times: Dict[str, List[float]] = {name: [] for name in contenders}
            threaded_times: Dict[str, List[float]] = {name: [] for name in contenders}
            for _ in range(args.rounds):
                for name, factory in contenders.items():
                    single_times[name].append(single(factory, info, calls))
                for name, factory in contenders.items():
                    threaded_times[name].append(threaded(factory, info, calls, args.threads))
            report(f"single thread, {label} ({calls} calls per round)", single_times)
            report(
                f"{args.threads} threads (per call: wall time / calls), {label} ({calls} calls per round)",
                threaded_times,
            )

        rounds("idle", args.calls)
        with cpu_load():
            rounds(LOADED, max(args.calls // 2, 50))

        # Where roomchat's own time goes: the same page decoded by core without I/O (wire
        # layer, JSON out), and reading the 50 usernames of a page (models, attribute access).
        body = json.dumps(client.list_users(limit=PAGE).to_dict()).encode()
        n = max(200, args.calls)
        started = time.perf_counter()
        for _ in range(n):
            roomchat.wire.decode_response("list_users", 200, [], body)
        decode = (time.perf_counter() - started) / n
        pages = [client.list_users(limit=PAGE) for _ in range(min(n, 500))]
        started = time.perf_counter()
        for page in pages:
            [u.username for u in page.data]
        read = (time.perf_counter() - started) / len(pages)
        started = time.perf_counter()
        for _ in range(n):
            client.list_users(limit=PAGE)
        call = (time.perf_counter() - started) / n
        print(
            f"\nroomchat per call: {call * 1e6:.1f} µs for list_users alone; reading 50 usernames "
            f"{read * 1e6:.1f} µs; decoding the page without I/O through roomchat.wire (core decode + "
            f"JSON to Python) {decode * 1e6:.1f} µs"
        )
        # OpenTelemetry's cost (issue 45), in a process of its own: it sets the global providers.
        if importlib.util.find_spec("opentelemetry.sdk") is not None:
            sys.stdout.flush()
            subprocess.run(
                [sys.executable, str(here.parent / "otel_cost.py"), "--base-url", info["base_url"],
                 "--calls", str(args.calls), "--rounds", str(args.rounds)],
                check=True,
            )
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=10)


if __name__ == "__main__":
    main()
