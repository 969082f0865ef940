"""Every blocking call releases the GIL: threads sharing one Client overlap their waits."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import roomchat
from conftest import Emulator

THREADS = 8
CALLS = 20
DELAY_MS = 50


def test_threads_share_one_client_and_overlap(emu: Emulator) -> None:
    emu.seed(10)
    emu.fault("/consumer/api/v2/users", {"kind": "delay", "ms": DELAY_MS}, times=THREADS * CALLS + 10)
    client = emu.client()
    client.list_users(limit=10)  # one connection made up front

    serial_started = time.perf_counter()
    for _ in range(10):
        client.list_users(limit=10)
    serial_per_call = (time.perf_counter() - serial_started) / 10
    serial = serial_per_call * THREADS * CALLS

    ticks = 0
    stop = threading.Event()

    def spin() -> None:  # pure-Python work: it can run only while the calls let go of the GIL
        nonlocal ticks
        while not stop.is_set():
            ticks += 1

    spinner = threading.Thread(target=spin)
    spinner.start()

    def worker() -> int:
        return sum(len(client.list_users(limit=10)) for _ in range(CALLS))

    started = time.perf_counter()
    with ThreadPoolExecutor(THREADS) as pool:
        counts = list(pool.map(lambda _: worker(), range(THREADS)))
    parallel = time.perf_counter() - started
    stop.set()
    spinner.join()

    assert counts == [10 * CALLS] * THREADS
    speedup = serial / parallel
    print(
        f"\nGIL release: {THREADS} threads x {CALLS} calls with {DELAY_MS} ms answers: "
        f"{parallel:.2f} s, against {serial:.2f} s one after another: {speedup:.1f}x faster "
        f"(a pure-Python thread ran {ticks} loop steps meanwhile)"
    )
    assert speedup > THREADS / 2  # ideal: 8x; held GIL: 1x
    assert ticks > 1000
