"""The native dispatcher under AsyncClient: a panic in a job fails only that job's
future and keeps its worker; a completion whose future raises does not lose the
others of its batch; its wake-up pipe never leaks into a program started meanwhile;
a late wake-up after the dispatcher is gone never kills the process with SIGPIPE.

``Dispatcher._submit_test_job`` is the dispatcher's test hook (not API): it queues a
job that panics, one whose result panics on the loop thread, or one that holds the
dispatcher's queue lock for a while."""

from __future__ import annotations

import asyncio
import ctypes
import os
import pathlib
import subprocess
import sys
import textwrap
import threading
import time
from typing import Any, List

import pytest

import roomchat
from roomchat import _native
from conftest import Emulator
from test_async import async_client

USERS = "/consumer/api/v2/users"


class RaisingFuture:
    """A future whose completion raises, as a callback of the batch might."""

    def __init__(self) -> None:
        self.calls = 0

    def done(self) -> bool:
        return False

    def set_result(self, value: Any) -> None:
        self.calls += 1
        raise RuntimeError("this future refuses its result")

    def set_exception(self, error: BaseException) -> None:
        self.calls += 1
        raise RuntimeError("this future refuses its exception")


def test_a_panicking_job_fails_its_future_and_the_worker_goes_on(emu: Emulator) -> None:
    emu.seed(2)

    async def main() -> None:
        async with async_client(emu, max_workers=1) as client:
            await client.list_users(limit=1)
            loop = asyncio.get_running_loop()
            dispatcher = client._dispatcher_for(loop)
            panicked = loop.create_future()
            dispatcher._submit_test_job(panicked, "panic")
            with pytest.raises(roomchat.RoomchatError, match="panicked") as caught:
                await asyncio.wait_for(panicked, 5)
            print(f"\na panicking job: {type(caught.value).__name__}: {caught.value}")
            # The only worker survived: later calls go through it.
            pages = await asyncio.wait_for(asyncio.gather(*(client.list_users(limit=1) for _ in range(3))), 5)
            assert [len(p) for p in pages] == [1, 1, 1]
            assert dispatcher.threads == 1 and dispatcher.pending == 0

    asyncio.run(asyncio.wait_for(main(), 30))  # a lost completion also hangs aclose()


def test_one_failing_completion_never_loses_the_rest_of_its_batch(emu: Emulator) -> None:
    emu.seed(2)

    async def main() -> None:
        async with async_client(emu, max_workers=1) as client:
            await client.list_users(limit=1)
            loop = asyncio.get_running_loop()
            errors: List[Any] = []
            loop.set_exception_handler(lambda _loop, context: errors.append(context))
            dispatcher = client._dispatcher_for(loop)
            native = client._client
            first, last = loop.create_future(), loop.create_future()
            in_result = loop.create_future()
            refusing = RaisingFuture()
            native.list_users(limit=1, _submit=(dispatcher, first, roomchat.CancelToken()))
            native.list_users(limit=1, _submit=(dispatcher, refusing, roomchat.CancelToken()))
            dispatcher._submit_test_job(in_result, "panic_in_result")
            native.list_users(limit=2, _submit=(dispatcher, last, roomchat.CancelToken()))
            # The loop is kept busy meanwhile: the one worker finishes all four, and one
            # drain then completes them as one batch.
            time.sleep(1.0)
            assert len(await asyncio.wait_for(first, 5)) == 1
            assert len(await asyncio.wait_for(last, 5)) == 2
            with pytest.raises(roomchat.RoomchatError, match="panicked"):
                await asyncio.wait_for(in_result, 5)
            assert refusing.calls == 1
            assert dispatcher.pending == 0
            # The refusal was reported to the loop, not swallowed.
            assert any("refuses" in repr(e.get("exception")) for e in errors), errors

    asyncio.run(asyncio.wait_for(main(), 30))  # a lost completion also hangs aclose()


def test_the_wake_pipe_never_leaks_into_a_program_started_meanwhile(tmp_path: pathlib.Path) -> None:
    """A thread makes dispatchers in a loop while another thread starts programs
    (glibc ``system()`` through ctypes, which lets go of the GIL, as any native thread
    could): no started program may hold one of the dispatchers' pipes."""
    libc = ctypes.CDLL(None)
    pipes: set[str] = set()
    stop = threading.Event()

    def make() -> None:
        while not stop.is_set():
            dispatcher = _native.Dispatcher(1)
            pipes.add(os.readlink(f"/proc/self/fd/{dispatcher.fileno()}"))
            del dispatcher

    maker = threading.Thread(target=make)
    maker.start()
    listing = tmp_path / "fds"
    command = f"ls -l /proc/self/fd >> {listing}".encode()
    try:
        for _ in range(150):
            libc.system(command)
    finally:
        stop.set()
        maker.join()
    seen = [line.rsplit(" ", 1)[-1] for line in listing.read_text().splitlines() if "pipe:" in line]
    leaked = [p for p in seen if p in pipes]
    print(f"\n150 programs started while {len(pipes)} dispatchers were made: {len(leaked)} held a dispatcher's pipe")
    assert len(pipes) > 150
    assert leaked == []


SIGPIPE_CHILD = textwrap.dedent(
    """
    import concurrent.futures, os, signal, time
    import roomchat
    from roomchat import _native

    # What an application that restores the default SIGPIPE (as many CLI tools do) gets.
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    client = roomchat.Client(os.environ["KEY"], base_url=os.environ["URL"],
                             rate_limit=roomchat.RateLimit(requests=1_000_000))
    dispatcher = _native.Dispatcher(1)
    client.list_users(limit=1, _submit=(dispatcher, concurrent.futures.Future(), roomchat.CancelToken()))
    del dispatcher  # gone while its call is on the wire (the answer is held back 300 ms)
    time.sleep(1.0)  # the worker finishes the call and wakes a reader that is gone
    print("alive")
    """
)


def test_a_late_wake_up_never_raises_sigpipe(emu: Emulator) -> None:
    emu.seed(1)
    emu.fault(USERS, {"kind": "delay", "ms": 300})
    env = dict(os.environ, KEY=emu.private_key, URL=emu.base_url)
    done = subprocess.run([sys.executable, "-c", SIGPIPE_CHILD], env=env, capture_output=True, text=True, timeout=60)
    print(f"\na wake-up after the dispatcher was dropped: the process exited {done.returncode}")
    assert (done.returncode, done.stdout.strip()) == (0, "alive"), done.stderr
