"""Fork safety: fork while other threads are mid-call; the child calls at once without
deadlock, holds none of the parent's sockets, and the parent keeps working. Every
child has a watchdog (SIGALRM) and the parent a deadline, so nothing can hang CI."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import signal
import threading
import time
from typing import Any, Iterator, List, Optional

import pytest

import roomchat
from conftest import SECRET_KEY, Emulator
from test_async import async_client

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # fork() with threads (3.12+)

USERS = "/consumer/api/v2/users"
FORKS = 20
CHILD_WATCHDOG_S = 20
PARENT_DEADLINE_S = 30.0

# The client the children inherit (multiprocessing's fork start method copies globals).
CLIENT: Optional[roomchat.Client] = None


def socket_fds() -> List[int]:
    found = []
    for name in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{name}").startswith("socket:"):
                found.append(int(name))
        except OSError:
            pass
    return found


class Busy:
    """Threads that keep calling through one client (each answer held back 20 ms)."""

    def __init__(self, client: roomchat.Client, threads: int = 4) -> None:
        self.client = client
        self.stop = threading.Event()
        self.calls = 0
        self.errors: List[BaseException] = []
        self.threads = [threading.Thread(target=self.run) for _ in range(threads)]

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                self.client.list_users(limit=1)
                self.calls += 1
            except BaseException as e:  # noqa: BLE001 - reported by the test
                self.errors.append(e)

    def __enter__(self) -> Busy:
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop.set()
        for t in self.threads:
            t.join(10)


@pytest.fixture
def busy(emu: Emulator) -> Iterator[Busy]:
    global CLIENT
    emu.seed(3)
    emu.fault(USERS, {"kind": "delay", "ms": 20}, times=1_000_000)
    client = emu.client()
    # Warm the pool with 4 connections, so that the busy threads never open one while forking.
    warm = [threading.Thread(target=client.list_users) for _ in range(4)]
    for t in warm:
        t.start()
    for t in warm:
        t.join()
    CLIENT = client
    with Busy(client) as b:
        time.sleep(0.1)
        yield b
    CLIENT = None
    assert b.errors == [] and b.calls > 0


def child_body(client: roomchat.Client) -> int:
    """What a forked child does: 0 when all went well."""
    signal.alarm(CHILD_WATCHDOG_S)  # a deadlock kills the child instead of hanging the test
    if socket_fds():
        return 3  # a socket of the parent's survived into the child
    page = client.list_users(limit=1)  # at once, through a fresh connection pool
    if len(page) != 1 or not socket_fds():
        return 4
    # A client made in the child works too (the key's budget lock was free at the fork).
    fresh = roomchat.Client(SECRET_KEY, base_url=client.base_url, rate_limit=roomchat.RateLimit(requests=1_000_000))
    return 0 if len(fresh.list_users(limit=1)) == 1 else 5


def wait_for(pid: int) -> int:
    deadline = time.monotonic() + PARENT_DEADLINE_S
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.005)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    raise AssertionError(f"child {pid} did not finish within {PARENT_DEADLINE_S} s")


def test_os_fork_while_threads_are_mid_call(busy: Busy) -> None:
    codes = []
    started = time.perf_counter()
    for _ in range(FORKS):
        calls_before = busy.calls
        pid = os.fork()
        if pid == 0:  # the child
            code = 1
            try:
                code = child_body(busy.client)
            finally:
                os._exit(code)
        codes.append(wait_for(pid))
        # the parent keeps working meanwhile
        deadline = time.monotonic() + 10
        while busy.calls == calls_before and time.monotonic() < deadline:
            time.sleep(0.001)
        assert busy.calls > calls_before
    print(f"\n{FORKS} forks with 4 threads mid-call: children exited {set(codes)} in {time.perf_counter() - started:.2f} s")
    assert codes == [0] * FORKS


def mp_child(queue: "multiprocessing.Queue[Any]") -> None:
    signal.alarm(CHILD_WATCHDOG_S)
    assert CLIENT is not None
    try:
        queue.put(("page", len(CLIENT.list_users(limit=1)), len(socket_fds())))
        CLIENT.deactivate_user(user_id="000000000000000000000000")
    except roomchat.RoomchatError as e:
        queue.put(("error", e))  # exceptions travel pickled


def mp_pool_call(n: int) -> int:
    signal.alarm(CHILD_WATCHDOG_S)
    assert CLIENT is not None
    return len(CLIENT.list_users(limit=1)) + n


def test_multiprocessing_fork_start_method(busy: Busy) -> None:
    ctx = multiprocessing.get_context("fork")
    queue: "multiprocessing.Queue[Any]" = ctx.Queue()
    processes = [ctx.Process(target=mp_child, args=(queue,)) for _ in range(4)]
    for p in processes:
        p.start()
    results = [queue.get(timeout=PARENT_DEADLINE_S) for _ in range(8)]
    for p in processes:
        p.join(PARENT_DEADLINE_S)
        assert p.exitcode == 0
    pages = [r for r in results if r[0] == "page"]
    errors = [r[1] for r in results if r[0] == "error"]
    assert len(pages) == 4 and all(r[1] == 1 for r in pages)
    assert len(errors) == 4
    for error in errors:
        assert type(error) is roomchat.UserNotFoundError
        assert (error.status, error.method, error.kind, error.code) == (400, "DELETE", "user_not_found", 4)
    with ctx.Pool(2) as pool:
        assert pool.map(mp_pool_call, range(6), chunksize=1) == [1, 2, 3, 4, 5, 6]
    busy.client.list_users(limit=1)  # the parent still works


def test_async_client_in_a_forked_child_never_touches_the_parents_dispatcher(emu: Emulator) -> None:
    """The parent's dispatcher is gone in a child: its worker threads do not exist there,
    and a lock one of them held at the fork stays held for good. A worker holds the queue
    lock through the fork here (through the dispatcher's test hook), so a child that
    touched that dispatcher would hang until its watchdog."""
    emu.seed(2)
    closing = async_client(emu, max_workers=2)
    calling = async_client(emu, max_workers=2)
    held: List[Any] = []

    async def parent_calls() -> None:
        await closing.list_users(limit=1)
        await calling.list_users(limit=1)
        for client in (closing, calling):
            loop = asyncio.get_running_loop()
            dispatcher = client._dispatcher_for(loop)
            held.append(dispatcher)
            dispatcher._submit_test_job(loop.create_future(), "hold_queue", 1.5)
        await asyncio.sleep(0.2)  # both workers now hold their queue locks

    asyncio.run(parent_calls())
    pid = os.fork()
    if pid == 0:  # the child
        code = 1
        try:
            # The default action (pytest-timeout's Python handler could not run while a
            # native call waits on a lock with the GIL held).
            signal.signal(signal.SIGALRM, signal.SIG_DFL)
            signal.alarm(CHILD_WATCHDOG_S)
            started = time.perf_counter()
            closing.close()  # at once, though the parent's dispatcher's lock is held
            if held[0].threads != 0 or held[0].pending != 0:
                code = 3  # the parent's dispatcher shows the parent's threads and calls
            else:

                async def child_calls() -> int:
                    pages = await asyncio.gather(*(calling.list_users(limit=1) for _ in range(4)))
                    await calling.aclose()
                    return sum(len(p) for p in pages)

                code = 0 if asyncio.run(child_calls()) == 4 and time.perf_counter() - started < 5 else 4
        finally:
            os._exit(code)
    code = wait_for(pid)
    print(f"\nAsyncClient close() and calls in a forked child, the parent's queue lock held: child exited {code}")
    assert code == 0
    time.sleep(1.5)  # the parent's workers let go of their locks
    assert len(asyncio.run(calling.list_users(limit=1))) == 1  # the parent goes on
    closing.close()
    calling.close()


@pytest.mark.parametrize("kind", ["users", "user_pages"])
def test_an_iterator_fetching_a_page_in_another_thread_at_the_fork_fails_in_the_child(
    emu: Emulator, kind: str
) -> None:
    """The iterator's lock is held for a whole page fetch. A child forked while another
    thread fetches has a copy of it held by a thread that does not exist there: its next
    step must fail at once (RuntimeError), never wait forever; the parent goes on."""
    emu.seed(5)
    emu.fault(USERS, {"kind": "delay", "ms": 1500}, times=1)
    client = emu.client()
    iterator: Any = client.users(page_size=2) if kind == "users" else client.user_pages(page_size=2)
    first: List[Any] = []
    fetching = threading.Thread(target=lambda: first.append(next(iterator)))
    fetching.start()
    # Fork once the emulator has the page's request (journaled before the delay): the
    # thread is then inside the fetch, holding the iterator's lock.
    deadline = time.monotonic() + 10
    while not any(e["path"] == USERS for e in emu.journal()) and time.monotonic() < deadline:
        time.sleep(0.01)
    pid = os.fork()
    if pid == 0:  # the child
        code = 1
        try:
            signal.signal(signal.SIGALRM, signal.SIG_DFL)
            signal.alarm(CHILD_WATCHDOG_S)  # without the check, next() waits here forever
            try:
                next(iterator)
                code = 3
            except RuntimeError as e:
                code = 0 if "forked" in str(e) else 4
            # A new iterator in the child works.
            fresh = client.users(page_size=2) if kind == "users" else client.user_pages(page_size=2)
            if code == 0 and len(list(fresh)) != (5 if kind == "users" else 3):
                code = 5
        finally:
            os._exit(code)
    code = wait_for(pid)
    fetching.join(10)
    print(f"\n{kind}(): next() in a child forked mid-fetch: child exited {code}")
    assert code == 0
    # The parent's iterator goes on where it was.
    rest = list(iterator)
    if kind == "users":
        assert len(first) == 1 and len(rest) == 4
    else:
        assert len(first[0]) == 2 and [len(p) for p in rest] == [2, 1]
