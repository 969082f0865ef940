"""AsyncClient: the same calls as coroutines, never blocking the event loop; a cancelled
task cancels its core call and leaves no thread or connection busy."""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import time
from typing import Any, Coroutine, List, TypeVar

import pytest

import roomchat
from conftest import PUBLIC_KEY, SECRET_KEY, Emulator

T = TypeVar("T")
USERS = "/consumer/api/v2/users"


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


def async_client(emu: Emulator, **settings: Any) -> roomchat.AsyncClient:
    options: dict[str, Any] = dict(
        base_url=emu.base_url,
        chat_url=emu.chat_url,
        public_key=PUBLIC_KEY,
        base_backoff=0.01,
        timeout=10.0,
        rate_limit=roomchat.RateLimit(requests=1_000_000, window=60.0),
        ca_bundle=emu.ca_file,  # the emulator's CA in the run over TLS (None over plain HTTP)
    )
    options.update(settings)
    key = options.pop("private_key", SECRET_KEY)
    return roomchat.AsyncClient(key, **options)


def os_threads() -> int:
    """Every thread of the process, native ones included."""
    return len(os.listdir("/proc/self/task"))


def socket_fds() -> int:
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            count += os.readlink(f"/proc/self/fd/{fd}").startswith("socket:")
        except OSError:
            pass
    return count


def test_every_endpoint(emu: Emulator) -> None:
    emu.seed(450)
    emu.room("bbNiVFoXm")
    conversation = emu.conversation("bbNiVFoXm", [{"messages": "hi", "user": {"username": "jon"}}])

    async def main() -> None:
        async with async_client(emu) as client:
            page = await client.list_users(limit=10, skip=5)
            assert (page.total, page.skip, len(page)) == (450, 5, 10)
            emu.clear_journal()
            names = [u.username async for u in client.users(page_size=200)]
            assert len(names) == 450 and len(set(names)) == 450
            assert len(emu.journal()) == 3  # one request (and one thread hop) per page
            pages = [len(p) async for p in client.user_pages(page_size=200)]
            assert pages == [200, 200, 50]
            ann = await client.create_user("ann", is_moderator=True, chat_room="bbNiVFoXm", unique_user_identifier="a-1")
            assert ann.chat_room == "bbNiVFoXm"
            assert client.sign_in_url("bbNiVFoXm", ann.access_token).startswith(emu.chat_url)
            assert "<iframe" in client.iframe_html("bbNiVFoXm", ann.access_token)
            assert (await client.deactivate_user(unique_user_identifier="a-1")).success
            with pytest.raises(roomchat.UserNotFoundError):
                await client.deactivate_user(user_id=ann.user_id)
            messages = await client.conversation_messages("bbNiVFoXm", conversation, path_form="chatroom")
            assert messages[0].text == "hi"
            assert (await client.list_chat_rooms())[0].room_id == "bbNiVFoXm"
            raw = await client.raw_request("GET", USERS, query={"limit": "1"})
            assert raw.body["limit"] == 1
            assert client.rate_limit_state().used >= 1
            with pytest.raises(roomchat.ValidationError):
                await client.list_users(limit=0)
        assert client.closed
        with pytest.raises(roomchat.ConfigurationError):
            await client.list_users()

    run(main())


def lag_run(emu: Emulator, calls_per_task: int, label: str) -> List[float]:
    """8 tasks x calls_per_task calls while a probe sleeps 1 ms at a time: the probe's lateness
    is the loop's lag."""

    async def main() -> List[float]:
        lags: List[float] = []
        done = asyncio.Event()

        async def probe() -> None:
            while not done.is_set():
                started = time.perf_counter()
                await asyncio.sleep(0.001)
                lags.append(time.perf_counter() - started - 0.001)

        async with async_client(emu, max_workers=8) as client:

            async def task() -> int:
                return sum([len(await client.list_users(limit=50)) for _ in range(calls_per_task)])

            # Warm up: the 8 worker threads and their 8 connections are made before measuring.
            await asyncio.gather(*(client.list_users(limit=50) for _ in range(8)))
            prober = asyncio.create_task(probe())
            started = time.perf_counter()
            counts = await asyncio.gather(*(task() for _ in range(8)))
            elapsed = time.perf_counter() - started
            done.set()
            await prober
        assert counts == [50 * calls_per_task] * 8
        lags.sort()
        p50, p99, worst = lags[len(lags) // 2], lags[int(len(lags) * 0.99)], lags[-1]
        print(
            f"\nevent-loop lag while 8 tasks x {calls_per_task} calls ran ({label}, "
            f"{8 * calls_per_task / elapsed:.0f} calls/s): "
            f"p50 {p50 * 1e3:.2f} ms, p99 {p99 * 1e3:.2f} ms, max {worst * 1e3:.2f} ms over {len(lags)} probes"
        )
        return lags

    return asyncio.run(main())


def test_the_event_loop_never_waits_on_a_call(fast_emu: Emulator) -> None:
    """Every answer takes 100 ms: a loop that waited on a call would be late by about that much
    at nearly every probe, while a free loop is late only by the machine's scheduling noise (up
    to ~20 ms on a loaded 2-core CI machine; a fixed 5 ms bound on instant answers failed there
    with p99 11-13 ms in three runs). The instant-answer run prints the figure under full load."""
    fast_emu.seed(50)
    lag_run(fast_emu, 200, "instant answers")
    fast_emu.fault(USERS, {"kind": "delay", "ms": 100}, times=8 + 8 * 5)
    try:
        lags = lag_run(fast_emu, 5, "100 ms answers")
    finally:
        fast_emu.clear_faults()
    assert lags[len(lags) // 2] < 0.010
    assert lags[int(len(lags) * 0.99)] < 0.050


def test_cancelling_a_task_cancels_the_call_and_frees_everything(emu: Emulator) -> None:
    emu.seed(1)
    baseline_threads = os_threads()
    baseline_sockets = socket_fds()

    async def main() -> None:
        client = async_client(emu, max_workers=8)
        await client.list_users(limit=1)
        emu.fault(USERS, {"kind": "delay", "ms": 5000}, times=8)
        tasks = [asyncio.create_task(client.list_users(limit=1)) for _ in range(8)]
        # Every call is waiting on the wire once the emulator has all 9 requests (across the
        # test network, 8 new TLS connections with a late packet can take more than 0.3 s).
        deadline = time.monotonic() + 10
        while len([e for e in emu.journal() if e["path"] == USERS]) < 9 and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        assert len([e for e in emu.journal() if e["path"] == USERS]) == 9
        cancelled_at = time.perf_counter()
        for task in tasks:
            task.cancel()
        results = await asyncio.gather(*tasks, return_exceptions=True)
        cancel_took = time.perf_counter() - cancelled_at
        assert all(type(r) is asyncio.CancelledError for r in results), results
        # The 8 worker threads are free again: 8 more calls need every one of them at once.
        emu.clear_faults()
        again_at = time.perf_counter()
        counts = await asyncio.gather(*(client.list_users(limit=1) for _ in range(8)))
        again_took = time.perf_counter() - again_at
        assert [len(c) for c in counts] == [1] * 8
        print(f"\ncancelling 8 calls in flight took {cancel_took * 1e3:.0f} ms; 8 calls after it {again_took * 1e3:.0f} ms")
        assert cancel_took < 1.0 and again_took < 2.0  # a stuck thread would wait out the 5 s delay
        await client.aclose()

    run(main())
    deadline = time.monotonic() + 5
    while os_threads() > baseline_threads and time.monotonic() < deadline:
        time.sleep(0.01)
    assert os_threads() == baseline_threads
    assert socket_fds() <= baseline_sockets  # the cancelled calls' connections were closed


def test_cancelling_a_rate_limit_wait(emu: Emulator) -> None:
    async def main() -> None:
        with emu.other_key("sk_live_SECRET_pytest_async_wait") as key:
            client = async_client(emu, private_key=key, rate_limit=roomchat.RateLimit(requests=3, window=30.0))
            for _ in range(3):  # the whole budget (no reserve below 10 requests)
                await client.list_users(limit=1)
            waiting = asyncio.create_task(client.list_users(limit=1))  # waits ~30 s for a slot
            await asyncio.sleep(0.2)
            assert not waiting.done()
            started = time.perf_counter()
            waiting.cancel()
            with pytest.raises(asyncio.CancelledError):
                await waiting
            assert time.perf_counter() - started < 1.0
            await client.aclose()

    run(main())


def test_async_iteration_cancelled_midway(emu: Emulator) -> None:
    emu.seed(10)

    async def main() -> None:
        async with async_client(emu) as client:
            users = client.users(page_size=5)
            first = await users.__anext__()
            assert first.username == "seed-user-1"
            emu.fault(USERS, {"kind": "delay", "ms": 3000})
            for _ in range(4):
                await users.__anext__()
            pending = asyncio.create_task(users.__anext__())  # the second page is slow
            await asyncio.sleep(0.2)
            pending.cancel()
            with pytest.raises(asyncio.CancelledError):
                await pending

    started = time.perf_counter()
    run(main())
    assert time.perf_counter() - started < 2.5


def users_requests(emu: Emulator) -> int:
    return len([e for e in emu.journal() if e["path"] == USERS])


async def until_requests(emu: Emulator, count: int) -> None:
    """Waits (the loop free) until the emulator has had `count` users requests."""
    deadline = time.monotonic() + 10
    while users_requests(emu) < count and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    assert users_requests(emu) == count


def test_a_timed_out_step_cancels_that_step_only(emu: Emulator) -> None:
    """``wait_for`` on one step of ``users()`` / ``user_pages()`` against a slow page:
    the step ends with the timeout, the next one fetches that page again, and the
    iteration goes on to the end, every user once (not StopAsyncIteration, not a
    CancelledError on every later step)."""
    emu.seed(10)

    async def main() -> None:
        async with async_client(emu) as client:
            emu.clear_journal()
            users = client.users(page_size=5)
            names = [(await users.__anext__()).username for _ in range(5)]
            emu.fault(USERS, {"kind": "delay", "ms": 3000})
            step = asyncio.ensure_future(users.__anext__())
            await until_requests(emu, 2)  # the slow page is on the wire
            step.cancel()  # what wait_for's timeout does to the step, without its timing
            with pytest.raises(asyncio.CancelledError):
                await step
            # A real timeout too, on a step whose page never comes in time.
            emu.fault(USERS, {"kind": "delay", "ms": 3000})
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(users.__anext__(), 0.2)
            names += [user.username async for user in users]
            assert names == [f"seed-user-{n}" for n in range(1, 11)]
            assert users_requests(emu) == 4  # page 2 three times: two cancelled, one answered
            with pytest.raises(StopAsyncIteration):
                await users.__anext__()

            emu.clear_journal()
            pages = client.user_pages(page_size=4)
            sizes = [len((await pages.__anext__()).data)]
            emu.fault(USERS, {"kind": "delay", "ms": 3000})
            step = asyncio.ensure_future(pages.__anext__())
            await until_requests(emu, 2)
            step.cancel()
            with pytest.raises(asyncio.CancelledError):
                await step
            rest = [page async for page in pages]
            sizes += [len(page.data) for page in rest]
            assert sizes == [4, 4, 2]
            assert [page.skip for page in rest] == [4, 8]

    started = time.perf_counter()
    run(main())
    assert time.perf_counter() - started < 2.5  # no step waited out a 3 s delay


def test_a_page_that_came_as_its_step_was_cancelled_is_not_lost(emu: Emulator) -> None:
    """The page arrives on the worker thread while the loop is busy, then the step is
    cancelled: the page was taken from the iterator, so the next step yields it
    (re-fetching it only if the cancel came first)."""
    emu.seed(10)

    async def main() -> None:
        async with async_client(emu) as client:
            for listing in ("users", "user_pages"):
                emu.clear_journal()
                iterator: Any = getattr(client, listing)(page_size=5)
                first_page = 5 if listing == "users" else 1  # steps
                got: List[Any] = [await iterator.__anext__() for _ in range(first_page)]
                step = asyncio.ensure_future(iterator.__anext__())
                await asyncio.sleep(0)  # the step submits its page fetch
                deadline = time.monotonic() + 10
                while users_requests(emu) < 2 and time.monotonic() < deadline:
                    time.sleep(0.01)  # the loop kept busy: the answer waits in the dispatcher
                time.sleep(0.3)  # ample for a local answer to reach the worker thread
                step.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await step
                got += [item async for item in iterator]
                if listing == "users":
                    assert [u.username for u in got] == [f"seed-user-{n}" for n in range(1, 11)]
                else:
                    assert [p.skip for p in got] == [0, 5]
                print(f"\n{listing}: {users_requests(emu)} requests (2: the page that came was kept)")

    run(main())


def test_from_env_and_settings(emu: Emulator, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ROOMCHAT_PRIVATE_KEY", SECRET_KEY)
    monkeypatch.setenv("ROOMCHAT_BASE_URL", emu.base_url)

    async def main() -> None:
        settings = dict(rate_limit=roomchat.RateLimit(requests=100000), max_workers=2, ca_bundle=emu.ca_file)
        async with roomchat.AsyncClient.from_env(**settings) as client:
            assert repr(client) == f"AsyncClient(base_url='{emu.base_url}')"
            await client.list_users()

    run(main())
    with pytest.raises(ValueError):
        async_client(emu, max_workers=0)
    with pytest.raises(TypeError):
        async_client(emu, max_workers="8")


def test_two_event_loops_in_two_threads_share_one_client(emu: Emulator) -> None:
    """Each loop's calls complete on that loop's own thread, however the two threads
    interleave: with thread switches forced between nearly any two bytecodes, and both
    loops in debug mode (where completing a future from another thread raises)."""
    emu.seed(3)
    client = async_client(emu, max_workers=4)
    errors: List[Any] = []
    counts: dict[str, int] = {}

    def run_loop(name: str) -> None:
        async def main() -> int:
            loop = asyncio.get_running_loop()
            loop.set_debug(True)
            loop.slow_callback_duration = 10.0  # only errors, not slow steps, are reported
            loop.set_exception_handler(lambda _, context: errors.append((name, context.get("message"), repr(context.get("exception")))))
            calls = 0
            for _ in range(60):
                pages = await asyncio.wait_for(asyncio.gather(*(client.list_users(limit=1) for _ in range(4))), 10)
                calls += len(pages)
            return calls

        try:
            counts[name] = asyncio.run(main())
        except BaseException as e:  # noqa: BLE001 - reported by the test
            errors.append((name, repr(e)))

    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        started = time.perf_counter()
        threads = [threading.Thread(target=run_loop, args=(name,)) for name in ("a", "b")]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        took = time.perf_counter() - started
    finally:
        sys.setswitchinterval(previous)
    print(f"\ntwo event loops x 240 calls through one AsyncClient: {took:.2f} s, errors {errors[:3]}")
    assert errors == []
    assert counts == {"a": 240, "b": 240}
    # A loop used again later (here a third one) still works, and close() ends them all.
    assert len(run(client.list_users(limit=1))) == 1
    client.close()
