"""Across the test network: roomchat against requests, httpx and urllib3, side by side in one run.

Run through ``scripts/testnet.sh run -- <venv python> bindings/python/bench/network.py``: a
namespaced host over TLS 1.3 with ~25 ms round trips. Every client trusts the test CA
(ROOMCHAT_NET_CA_FILE) and has proxies off. Printed, never asserted on time:

* cold start: a new client and its first call (TCP, TLS handshake, GET of one user),
  median of ROOMCHAT_BENCH_N (default 30) per library, the libraries alternating call by call;
  then again (half as many) loaded: one busy-loop process per core beside it
  (scripts/bench/cpu-load.sh), every library under the same load;
* 16 calls at once from a new client (16 threads sharing it; asyncio for the async clients):
  wall time, and the connections and TLS handshakes the emulator saw; the threads idle and loaded;
* the call after the server closed the idle connection (the emulator closes them after 1 s):
  its time, and whether the TLS session was resumed;
* a 200-user page and a 100,000-message conversation, gzip asked or not: bytes on the wire
  (counted by the test network's relay) and the process's CPU per call (roomchat decodes on
  its own thread; process time counts every thread);
* a verdict: roomchat's cold start against the fastest peer's.

Without the test network it prints one "skipped" line and exits 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import socket
import ssl
import statistics
import sys
import threading
import time
import urllib.request
from typing import Any, Callable, Dict, List, Optional

from cpu_load import LABEL as LOADED, cpu_load

ENV = os.environ
CALLS_AT_ONCE = 16
# Every client's call timeout: a call that hangs costs this much of the test command's time.
TIMEOUT = 10.0


def admin(method: str, path: str, body: Optional[Dict[str, Any]] = None) -> Any:
    context = ssl.create_default_context(cafile=ENV["ROOMCHAT_NET_CA_FILE"])
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), urllib.request.HTTPSHandler(context=context))
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        ENV["ROOMCHAT_NET_ADMIN_URL"] + path, data=data, method=method, headers={"content-type": "application/json"}
    )
    with opener.open(request, timeout=30) as answer:
        text = answer.read()
    return json.loads(text) if text else None


def connections_since_reset() -> Dict[str, int]:
    """The emulator's counters since the last DELETE, less this GET's own connection and handshake
    (admin requests are counted too, each on a connection of its own)."""
    time.sleep(0.2)  # let the last connections' handshakes land in the counters
    stats = admin("GET", "/connections")
    # The admin GET's own handshake is never a resumption (urllib opens each one afresh).
    return {
        "accepted": stats["accepted"] - 1,
        "tls_handshakes": stats["tls_handshakes"] - 1,
        "tls_resumed": stats["tls_resumed"],
    }


def relay_bytes() -> int:
    """Bytes the test network's relay has carried from the emulator to clients so far."""
    host, port = ENV["ROOMCHAT_NET_RELAY_STATS"].rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=TIMEOUT) as stats:
        return int(stats.makefile().readline())


def redacted(text: str) -> str:
    """The key travels in the URL (?auth=), which the peers' errors quote: never shown."""
    return text.replace(ENV.get("ROOMCHAT_NET_PRIVATE_KEY") or "\0", "<key>")


def checked_page(page: Any) -> None:
    if not isinstance(page.get("data"), list):
        raise RuntimeError(f"not a page of users: {page!r:.200}")


def main() -> int:
    if "ROOMCHAT_NET_BASE_URL" not in ENV:
        print("python network: no test network (run through scripts/testnet.sh): skipped")
        return 0

    import httpx
    import requests
    import urllib3

    import roomchat

    # requests and urllib3 keep fewer connections than 16 threads open; the extra ones are
    # closed after use, with a warning per connection that says only that.
    logging.getLogger("urllib3").setLevel(logging.ERROR)

    base_url, ca_file, key = ENV["ROOMCHAT_NET_BASE_URL"], ENV["ROOMCHAT_NET_CA_FILE"], ENV["ROOMCHAT_NET_PRIVATE_KEY"]
    n = int(ENV.get("ROOMCHAT_BENCH_N", "30"))
    url = f"{base_url}/consumer/api/v2/users?auth={key}&limit=1"
    admin("POST", "/reset")
    # The default budget (600 a minute) would run out at larger N; a 429 would time the wait.
    admin("PUT", "/config", {"rate_limit": {"requests": 1_000_000_000, "window_ms": 60_000}})
    admin("POST", "/users/seed", {"count": 1})

    # ---- each library: a new client (proxies off, the test CA trusted) and its call ----

    def new_roomchat() -> roomchat.Client:
        return roomchat.Client(key, base_url=base_url, ca_bundle=ca_file, trust_env=False, timeout=TIMEOUT)

    def roomchat_call(client: roomchat.Client) -> None:
        if len(client.list_users(limit=1).data) != 1:
            raise RuntimeError("roomchat: no user on the page")

    def new_requests() -> requests.Session:
        session = requests.Session()
        session.trust_env = False  # no proxies (nor REQUESTS_CA_BUNDLE) from the environment
        session.verify = ca_file
        return session

    def requests_call(session: requests.Session) -> None:
        answer = session.get(url, timeout=TIMEOUT)
        answer.raise_for_status()
        checked_page(answer.json())

    def new_httpx() -> httpx.Client:
        return httpx.Client(verify=ssl.create_default_context(cafile=ca_file), trust_env=False, timeout=TIMEOUT)

    def httpx_call(client: httpx.Client) -> None:
        answer = client.get(url)
        answer.raise_for_status()
        checked_page(answer.json())

    def new_urllib3() -> urllib3.PoolManager:
        # A PoolManager never reads proxies from the environment.
        return urllib3.PoolManager(cert_reqs="CERT_REQUIRED", ca_certs=ca_file, timeout=TIMEOUT, retries=False)

    def urllib3_call(pool: urllib3.PoolManager) -> None:
        answer = pool.request("GET", url)
        if answer.status != 200:
            raise RuntimeError(f"urllib3: status {answer.status}")
        checked_page(answer.json())

    def close(client: Any) -> None:
        (client.clear if isinstance(client, urllib3.PoolManager) else client.close)()

    libraries: Dict[str, tuple[Callable[[], Any], Callable[[Any], None]]] = {
        "roomchat": (new_roomchat, roomchat_call),
        "requests": (new_requests, requests_call),
        "httpx": (new_httpx, httpx_call),
        "urllib3": (new_urllib3, urllib3_call),
    }
    peers = [name for name in libraries if name != "roomchat"]

    # ---- cold start: the client made and its first call timed together, alternating ----
    names = list(libraries)

    def cold_starts(rounds: int) -> Dict[str, float]:
        cold: Dict[str, List[float]] = {name: [] for name in libraries}
        for round_index in range(rounds):
            # The order turns each round, so that no library always follows the same one.
            order = names[round_index % len(names) :] + names[: round_index % len(names)]
            for name in order:
                make, call = libraries[name]
                started = time.perf_counter()
                client = make()
                call(client)
                cold[name].append((time.perf_counter() - started) * 1e3)
                close(client)
        return {name: statistics.median(times) for name, times in cold.items()}

    def print_cold(label: str, rounds: int, ms: Dict[str, float]) -> None:
        figures = ", ".join(f"{name} {ms[name]:.1f} ms" for name in names)
        print(
            f"python network: cold start (new client: TCP + TLS + GET ?limit=1), {label}, median of {rounds} each, "
            f"alternating: {figures}",
            flush=True,
        )

    # Idle, then again (half as many) with one busy-loop process per core beside it.
    medians = cold_starts(n)
    print_cold("idle", n, medians)
    n_loaded = max((n + 1) // 2, 3)
    with cpu_load():
        loaded_medians = cold_starts(n_loaded)
    print_cold(LOADED, n_loaded, loaded_medians)
    ours = medians["roomchat"]

    # ---- 16 at once from a new client: threads sharing it, released together ----
    def report(contender: str, wall: float, stats: Dict[str, int], failures: List[BaseException]) -> None:
        line = (
            f"python network: {CALLS_AT_ONCE} calls at once from a new client, {contender}: {wall:.0f} ms, "
            f"{stats['accepted']} connections accepted, {stats['tls_handshakes']} TLS handshakes"
        )
        if failures:
            line += f"; {len(failures)} of {CALLS_AT_ONCE} calls FAILED ({type(failures[0]).__name__}: {redacted(str(failures[0]))})"
        print(line, flush=True)
        # A peer's failure is its figure; roomchat's fails the run.
        if failures and contender.startswith("roomchat"):
            raise RuntimeError(f"{contender}: {len(failures)} of {CALLS_AT_ONCE} calls failed")

    def at_once_threads(name: str, label: str) -> None:
        make, call = libraries[name]
        client = make()
        go = threading.Event()
        failures: List[BaseException] = []

        def worker() -> None:
            go.wait()
            try:
                call(client)
            except BaseException as error:  # reported below, after the wall time
                failures.append(error)

        threads = [threading.Thread(target=worker) for _ in range(CALLS_AT_ONCE)]
        for thread in threads:
            thread.start()
        admin("DELETE", "/connections")
        started = time.perf_counter()
        go.set()
        for thread in threads:
            thread.join()
        wall = (time.perf_counter() - started) * 1e3
        stats = connections_since_reset()
        close(client)
        report(f"{name} ({CALLS_AT_ONCE} threads), {label}", wall, stats, failures)

    for label in ("idle", LOADED):
        with cpu_load() if label == LOADED else contextlib.nullcontext():
            for name in names:
                at_once_threads(name, label)

    # ---- the same with the asyncio clients: 16 coroutines gathered ----
    async def roomchat_async() -> None:
        async with roomchat.AsyncClient(
            key, base_url=base_url, ca_bundle=ca_file, trust_env=False, timeout=TIMEOUT
        ) as client:

            async def one() -> None:
                if len((await client.list_users(limit=1)).data) != 1:
                    raise RuntimeError("roomchat.AsyncClient: no user on the page")

            await timed_gather("roomchat.AsyncClient", one)

    async def httpx_async() -> None:
        context = ssl.create_default_context(cafile=ca_file)
        async with httpx.AsyncClient(verify=context, trust_env=False, timeout=TIMEOUT) as client:

            async def one() -> None:
                answer = await client.get(url)
                answer.raise_for_status()
                checked_page(answer.json())

            await timed_gather("httpx.AsyncClient", one)

    async def timed_gather(name: str, one: Callable[[], Any]) -> None:
        admin("DELETE", "/connections")
        started = time.perf_counter()
        outcomes = await asyncio.gather(*(one() for _ in range(CALLS_AT_ONCE)), return_exceptions=True)
        wall = (time.perf_counter() - started) * 1e3
        stats = connections_since_reset()
        failures = [outcome for outcome in outcomes if isinstance(outcome, BaseException)]
        report(f"{name} (asyncio.gather)", wall, stats, failures)

    asyncio.run(roomchat_async())
    asyncio.run(httpx_async())

    # ---- after the server closed the idle connection: the next call, and TLS resumption ----
    for name in names:
        make, call = libraries[name]
        client = make()
        call(client)
        time.sleep(1.5)  # the emulator closes connections idle for 1 s
        admin("DELETE", "/connections")
        started = time.perf_counter()
        call(client)
        took = (time.perf_counter() - started) * 1e3
        stats = connections_since_reset()
        close(client)
        print(
            f"python network: the call after the server closed the idle connection, {name}: {took:.1f} ms, "
            f"{stats['tls_handshakes']} handshake(s), {stats['tls_resumed']} resumed",
            flush=True,
        )

    # ---- gzip or not: bytes on the wire and CPU per call, a page and a long conversation ----
    admin("POST", "/users/seed", {"count": 199})
    admin("POST", "/rooms", {"roomId": "bench", "name": "Bench"})
    conversation = admin(
        "POST",
        "/conversations",
        {
            "roomId": "bench",
            "messages": [
                {"messages": f"message number {i} of the bench conversation", "user": {"username": f"user-{i % 50}"}}
                for i in range(100_000)
            ],
        },
    )["conversationId"]
    page_url = f"{base_url}/consumer/api/v2/users?auth={key}&limit=200"
    conversation_url = f"{base_url}/consumer/api/v2/room/bench/conversation/{conversation}/messages?auth={key}"

    def gzip_cases(what: str) -> List[tuple[str, Callable[[], Any], Callable[[Any], int]]]:
        """(label, new client, one call returning the items it decoded) for each contender."""
        raw = page_url if what == "page" else conversation_url

        def ours(gzip: bool) -> tuple[Callable[[], Any], Callable[[Any], int]]:
            def make() -> roomchat.Client:
                return roomchat.Client(
                    key,
                    base_url=base_url,
                    ca_bundle=ca_file,
                    trust_env=False,
                    timeout=TIMEOUT * 6,
                    gzip=gzip,
                    max_response_bytes=1 << 30,  # the conversation is over the default cap of 16 MiB
                )

            def one(client: roomchat.Client) -> int:
                if what == "page":
                    return len(client.list_users(limit=200).data)
                return len(client.conversation_messages("bench", conversation))

            return make, one

        def items(decoded: Any) -> int:
            return len(decoded["data"]) if what == "page" else len(decoded)

        def requests_one(session: requests.Session) -> int:
            answer = session.get(raw, timeout=TIMEOUT * 6)
            answer.raise_for_status()
            return items(answer.json())

        def httpx_one(client: httpx.Client) -> int:
            answer = client.get(raw, timeout=TIMEOUT * 6)
            answer.raise_for_status()
            return items(answer.json())

        def urllib3_one(pool: urllib3.PoolManager) -> int:
            answer = pool.request("GET", raw, headers={"Accept-Encoding": "gzip"}, timeout=TIMEOUT * 6)
            return items(answer.json())

        return [
            ("roomchat gzip", *ours(True)),
            ("roomchat identity", *ours(False)),
            ("requests", new_requests, requests_one),
            ("httpx", new_httpx, httpx_one),
            ("urllib3 (gzip asked)", new_urllib3, urllib3_one),
        ]

    for what, label, expected, calls in [
        ("page", "200-user page", 200, max(n // 3, 3)),
        ("conversation", "100,000-message conversation", 100_000, max(n // 10, 3)),
    ]:
        figures = []
        for contender, make, one in gzip_cases(what):
            client = make()
            if one(client) != expected:  # a warm connection, and a check of what is decoded
                raise RuntimeError(f"{contender}: not {expected} items")
            before_bytes, before_cpu = relay_bytes(), time.process_time()
            for _ in range(calls):
                one(client)
            cpu = (time.process_time() - before_cpu) / calls * 1e3
            wire = (relay_bytes() - before_bytes) / calls / 1024
            close(client)
            figures.append(f"{contender} {wire:.1f} KiB, {cpu:.2f} ms CPU")
        print(f"python network: gzip, {label}, per call (mean of {calls}): " + "; ".join(figures), flush=True)

    # ---- the verdict: roomchat's cold start against the fastest peer's ----
    fastest = min(peers, key=lambda name: medians[name])
    theirs = medians[fastest]
    change = (ours / theirs - 1.0) * 100.0
    print(
        f"python network: verdict: roomchat's cold start {ours:.1f} ms is "
        f"{abs(change):.1f}% {'faster' if change < 0 else 'slower'} than the fastest peer, "
        f"{fastest} {theirs:.1f} ms ({ours - theirs:+.1f} ms); {LOADED}: roomchat "
        f"{loaded_medians['roomchat']:.1f} ms, fastest peer "
        f"{min(loaded_medians[name] for name in peers):.1f} ms"
    )
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception as error:  # a traceback would quote URLs, and the key with them
        print(f"python network: FAILED: {type(error).__name__}: {redacted(str(error))}", file=sys.stderr)
        sys.exit(1)
