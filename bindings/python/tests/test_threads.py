"""Every blocking call releases the GIL: threads sharing one Client overlap their waits,
and an iterator's resume() never waits for a page another thread is fetching."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

import roomchat
from conftest import Emulator

THREADS = 8
CALLS = 20
DELAY_MS = 50
USERS = "/consumer/api/v2/users"


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


RESUME_CHILD = textwrap.dedent(
    """
    import logging, os, threading, time
    import roomchat

    records = []

    class Keep(logging.Handler):
        def emit(self, record):
            records.append(record)

    logger = logging.getLogger("roomchat")
    logger.setLevel(logging.DEBUG)  # the observer takes the GIL to log each attempt
    logger.addHandler(Keep())
    client = roomchat.Client(os.environ["KEY"], base_url=os.environ["URL"],
                             rate_limit=roomchat.RateLimit(requests=1_000_000))
    for name in ("users", "user_pages"):
        iterator = getattr(client, name)(page_size=5)
        fetching = threading.Thread(target=lambda: next(iterator))
        fetching.start()
        time.sleep(0.3)  # the first page is held back 1 s: the thread is mid-fetch
        started = time.perf_counter()
        iterator.resume()
        took = time.perf_counter() - started
        fetching.join()
        print(name, f"{took * 1e3:.3f}", flush=True)
    print("attempts logged", len(records), flush=True)
    """
)


def test_resume_never_waits_for_a_page_being_fetched(emu: Emulator) -> None:
    """Thread A in ``next(it)`` on a slow page, thread B calls ``it.resume()``, the
    ``roomchat`` logger at DEBUG. In a child process with a deadline: a deadlock there
    holds the GIL for good, so no in-process timeout could fire."""
    emu.seed(10)
    emu.fault(USERS, {"kind": "delay", "ms": 1000}, times=2)
    env = dict(os.environ, KEY=emu.private_key, URL=emu.base_url)
    try:
        done = subprocess.run([sys.executable, "-c", RESUME_CHILD], env=env, capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"resume() during a page fetch deadlocked (child output: {e.stdout!r})")
    assert done.returncode == 0, done.stderr
    took = dict(line.split() for line in done.stdout.splitlines() if not line.startswith("attempts"))
    print(f"\nresume() while another thread fetched a 1 s page: users {took['users']} ms, user_pages {took['user_pages']} ms")
    assert "attempts logged 2" in done.stdout
    assert float(took["users"]) < 100 and float(took["user_pages"]) < 100
