"""The rate budget shared through a real redis-server (``RateLimit(redis_url=...)``):
4 processes of 4 threads (``multiprocessing``, fork) against the emulator's own limit
set short, with no 429 and the busiest window near the budget; Redis dying under
``local_fallback`` and ``fail_closed``; the options checked; the password shown nowhere.
Without a redis-server: ``rate_limit_state()`` against a Redis that never answers, and
every password form of the URL against Redis servers that are not there."""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
import pickle
import shutil
import socket
import subprocess
import threading
import time
import traceback
from typing import Any, Dict, Iterator, List

import pytest

import roomchat
from conftest import Emulator, free_port

PASSWORD = "py-redis-test-password-5"


class RedisServer:
    def __init__(self) -> None:
        binary = os.environ.get("REDIS_SERVER") or shutil.which("redis-server")
        if binary is None:
            if os.environ.get("ROOMCHAT_REQUIRE_REDIS"):
                pytest.fail("redis-server is not installed (Debian's redis-server), and the run requires it")
            pytest.skip("redis-server is not installed")
        self.port = free_port()
        self.url = f"redis://:{PASSWORD}@127.0.0.1:{self.port}/0"
        self.proc = subprocess.Popen(
            [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
            + ["--requirepass", PASSWORD],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.02)
        self.kill()
        raise RuntimeError("redis-server did not come up")

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait()


@pytest.fixture
def redis() -> Iterator[RedisServer]:
    server = RedisServer()
    yield server
    server.kill()


def shared(redis: RedisServer, requests: int, window: float, **options: Any) -> roomchat.RateLimit:
    settings: Dict[str, Any] = dict(redis_connect_timeout=0.2, redis_timeout=0.2, redis_breaker_cooldown=0.3)
    settings.update(options)
    return roomchat.RateLimit(requests=requests, window=window, redis_url=redis.url, **settings)


def busiest(arrivals_ms: List[float], window_ms: float) -> int:
    """The most arrivals in any `window_ms` (sorted input)."""
    best, end = 0, 0
    for start in range(len(arrivals_ms)):
        while end < len(arrivals_ms) and arrivals_ms[end] < arrivals_ms[start] + window_ms:
            end += 1
        best = max(best, end - start)
    return best


def hammer(options: Dict[str, Any], rate_limit: roomchat.RateLimit, until: float, results: Any) -> None:
    """One process: 4 threads calling until `until` (time.time()); puts its failures."""
    try:
        key = options.pop("private_key")
        client = roomchat.Client(key, rate_limit=rate_limit, max_retries=0, **options)
        failures: List[str] = []

        def loop() -> None:
            while time.time() < until:
                try:
                    client.list_users(limit=1)
                except roomchat.RoomchatError as error:
                    failures.append(f"{type(error).__name__}: {error}")

        threads = [threading.Thread(target=loop) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        results.put(failures)
    except BaseException:
        results.put([traceback.format_exc()])


def test_four_processes_of_four_threads_share_one_budget(emu: Emulator, redis: RedisServer) -> None:
    window = 3.0
    before = emu.admin("GET", "/config")["rate_limit"]
    emu.config(rate_limit={"requests": 60, "window_ms": 3000})
    try:
        emu.seed(2)
        emu.clear_journal()
        options = dict(
            private_key=emu.private_key, base_url=emu.base_url, public_key=emu.public_key, timeout=10.0
        )
        # Redis's default timeouts (0.5 s): 16 threads on a loaded machine must not trip them.
        rate_limit = roomchat.RateLimit(
            requests=60, window=window, redis_url=redis.url, on_redis_error="fail_closed", redis_key_prefix="py-proc"
        )
        context = multiprocessing.get_context("fork")
        results = context.Queue()
        run_for = 8.0
        until = time.time() + run_for
        processes = [
            context.Process(target=hammer, args=(dict(options), rate_limit, until, results)) for _ in range(4)
        ]
        for p in processes:
            p.start()
        failures = [results.get(timeout=60) for _ in processes]
        for p in processes:
            p.join(timeout=30)
        journal = emu.journal()
    finally:
        emu.config(rate_limit=before)
    answered_429 = sum(1 for e in journal if e["status"] == 429)
    arrivals = sorted(e["received_at_ms"] for e in journal)
    most = busiest(arrivals, window * 1000)
    print(
        f"\nredis budget from Python: 4 processes x 4 threads for {run_for:.0f} s: {len(journal)} calls, "
        f"{answered_429} answered 429, busiest {window:.0f} s window {most} of the service's 60 "
        f"({most * 100 / 60:.1f}%)"
    )
    assert [p.exitcode for p in processes] == [0, 0, 0, 0]
    assert failures == [[], [], [], []]
    assert answered_429 == 0
    assert most <= 60
    assert most >= 57, f"the busiest window used {most} of 60: under 95%"


def test_the_state_names_the_backend_and_counts_every_client_of_the_key(emu: Emulator, redis: RedisServer) -> None:
    emu.seed(3)
    rate_limit = shared(redis, 100, 60.0, on_redis_error="fail_closed", redis_key_prefix="py-state")
    first, second = emu.client(rate_limit=rate_limit), emu.client(rate_limit=rate_limit)
    for _ in range(3):
        first.list_users(limit=1)
    second.list_users(limit=1)
    state = first.rate_limit_state()
    assert (state.backend, state.degraded, state.used, state.limit) == ("redis", False, 4, 98)
    assert state.to_dict()["backend"] == "redis"
    local = emu.client(rate_limit=roomchat.RateLimit(requests=100, window=60.0)).rate_limit_state()
    assert (local.backend, local.degraded) == ("local", False)


def test_redis_dying_local_fallback_goes_on_and_fail_closed_raises_at_once(
    emu: Emulator, redis: RedisServer
) -> None:
    emu.seed(3)
    fallback = emu.client(
        max_retries=0, rate_limit=shared(redis, 100, 60.0, on_redis_error="local_fallback", redis_key_prefix="py-fb")
    )
    closed = emu.client(
        max_retries=0, rate_limit=shared(redis, 100, 60.0, on_redis_error="fail_closed", redis_key_prefix="py-fc")
    )
    fallback.list_users(limit=1)
    closed.list_users(limit=1)
    redis.kill()
    started = time.monotonic()
    assert len(fallback.list_users(limit=1).data) == 1
    state = fallback.rate_limit_state()
    assert (state.backend, state.degraded) == ("redis", True)
    with pytest.raises(roomchat.BudgetUnavailableError) as caught:
        closed.list_users(limit=1)
    took = time.monotonic() - started
    assert took < 2.0, f"{took:.2f} s with Redis dead"
    error = caught.value
    assert (error.kind, error.code) == ("budget_unavailable", 16)
    assert "REDACTED" in str(error)
    shown = [
        str(error),
        repr(error),
        "".join(traceback.format_exception(error)),
        repr(pickle.loads(pickle.dumps(error)).args),
        repr(fallback),
        repr(closed.rate_limit_state()),
    ]
    for text in shown:
        assert PASSWORD not in text, text
        assert emu.private_key not in text, text


def test_redis_options_are_checked() -> None:
    with pytest.raises(roomchat.ConfigurationError, match="redis_url"):
        roomchat.RateLimit(requests=10, window=1.0, on_redis_error="fail_closed")
    with pytest.raises(roomchat.ConfigurationError, match="on_redis_error"):
        roomchat.RateLimit(redis_url="redis://127.0.0.1:1", on_redis_error="sometimes")
    with pytest.raises(roomchat.ConfigurationError):
        roomchat.Client(
            "sk_test_options",
            base_url="http://127.0.0.1:1",
            rate_limit=roomchat.RateLimit(redis_url="redis://127.0.0.1:1", redis_key_prefix="a{b}"),
        )
    with pytest.raises(TypeError):
        roomchat.RateLimit(redis_url=5)  # type: ignore[arg-type]
    limit = roomchat.RateLimit(redis_url=f"redis://:{PASSWORD}@10.0.0.5:6379/0", expected_processes=8)
    assert limit.redis_url == "redis://REDACTED@10.0.0.5:6379/0"
    assert limit.on_redis_error == "local_fallback"
    assert PASSWORD not in repr(limit)
    assert limit == roomchat.RateLimit(redis_url=f"redis://:{PASSWORD}@10.0.0.5:6379/0", expected_processes=8)
    assert limit != roomchat.RateLimit()
    assert roomchat.RateLimit().redis_url is None


@pytest.mark.parametrize("special", ["?", "#", "/"])
def test_a_password_holding_a_question_mark_hash_or_slash_is_never_shown(special: str) -> None:
    # Issue 37, item 8: the user information ends at the URL's last `@`, whatever the
    # password holds, in each form of URL; a `pass=` after a second `?` is hidden too.
    secret = f"S3cr{special}t9{PASSWORD}"
    urls = {
        f"redis://:{secret}@10.0.0.5:6379/0": f"redis://REDACTED@10.0.0.5:6379/0",
        f"redis+cluster://u:{secret}@10.0.0.5:7000,10.0.0.6:7000": "redis+cluster://REDACTED@10.0.0.5:7000,10.0.0.6:7000",
        f"redis+sentinel://:{secret}@10.0.0.5/mymaster": "redis+sentinel://REDACTED@10.0.0.5/mymaster",
        f"rediss+cluster://h/x?=y?pass={PASSWORD}": "rediss+cluster://h/x?=y?pass=REDACTED",
    }
    for url, shown in urls.items():
        limit = roomchat.RateLimit(redis_url=url)
        assert limit.redis_url == shown
        assert PASSWORD not in repr(limit) and special + "t9" not in repr(limit)
    # The configuration error of each form, without the password.
    for url in [
        f"redis://:{secret}@127.0.0.1:notaport/0",
        f"redis+cluster://:{secret}@h:1/2",
        f"redis+sentinel://:{secret}@s1",
    ]:
        with pytest.raises(roomchat.ConfigurationError) as raised:
            roomchat.Client(
                "sk_test_redis_special",
                base_url="http://127.0.0.1:1",
                rate_limit=roomchat.RateLimit(redis_url=url),
            )
        assert PASSWORD not in str(raised.value) and PASSWORD not in repr(raised.value)
        assert "REDACTED" in str(raised.value)



# ---- without a redis-server: a silent one and unreachable ones ------------------------------


class SilentRedis:
    """A listening socket on loopback that never accepts and never answers: a Redis
    that has hung (connections are made by the kernel; every command waits)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.url = f"redis://127.0.0.1:{self.sock.getsockname()[1]}/0"

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def silent_redis() -> Iterator[SilentRedis]:
    server = SilentRedis()
    yield server
    server.close()


def silent_limit(server: SilentRedis, prefix: str) -> roomchat.RateLimit:
    return roomchat.RateLimit(
        requests=1000,
        window=60.0,
        redis_url=server.url,
        on_redis_error="local_fallback",
        redis_key_prefix=prefix,
        redis_connect_timeout=1.0,
        redis_timeout=1.0,
    )


def test_rate_limit_state_does_no_io_while_calls_wait_on_a_silent_redis(emu: Emulator, silent_redis: SilentRedis) -> None:
    """``rate_limit_state()`` answers from what the process knows: quickly, without the
    GIL, while 3 threads' calls wait on a Redis that never answers."""
    emu.seed(1)
    client = emu.client(rate_limit=silent_limit(silent_redis, "py-silent-sync"), max_retries=0)
    stuck = [threading.Thread(target=client.list_users, kwargs=dict(limit=1)) for _ in range(3)]
    for t in stuck:
        t.start()
    time.sleep(0.3)  # every call is now waiting on Redis
    took = []
    for _ in range(5):
        started = time.perf_counter()
        state = client.rate_limit_state()
        took.append(time.perf_counter() - started)
    for t in stuck:
        t.join(60)
    print(
        f"\nrate_limit_state() with 3 calls waiting on a silent Redis: worst {max(took) * 1e3:.2f} ms "
        f"of 5 (backend {state.backend}, degraded {state.degraded})"
    )
    assert state.backend == "redis"
    assert max(took) < 0.1


def test_async_rate_limit_state_never_blocks_the_loop_on_a_silent_redis(emu: Emulator, silent_redis: SilentRedis) -> None:
    emu.seed(1)

    async def main() -> tuple[float, float]:
        client = roomchat.AsyncClient(
            emu.private_key, base_url=emu.base_url, max_retries=0, rate_limit=silent_limit(silent_redis, "py-silent-async")
        )
        calls = [asyncio.create_task(client.list_users(limit=1)) for _ in range(3)]
        await asyncio.sleep(0.3)  # every call is now waiting on Redis
        lags: List[float] = []
        done = asyncio.Event()

        async def probe() -> None:  # its lateness is the loop's lag
            while not done.is_set():
                started = time.perf_counter()
                await asyncio.sleep(0.001)
                lags.append(time.perf_counter() - started - 0.001)

        prober = asyncio.create_task(probe())
        slowest = 0.0
        for _ in range(20):
            started = time.perf_counter()
            client.rate_limit_state()
            slowest = max(slowest, time.perf_counter() - started)
            await asyncio.sleep(0.005)
        done.set()
        await prober
        await asyncio.gather(*calls, return_exceptions=True)
        await client.aclose()
        return slowest, max(lags)

    slowest, lag = asyncio.run(main())
    print(
        f"\nAsyncClient.rate_limit_state() with 3 calls waiting on a silent Redis: worst {slowest * 1e3:.2f} ms "
        f"on the loop; the loop's worst lag {lag * 1e3:.2f} ms"
    )
    assert slowest < 0.1 and lag < 0.1


SECRET = "py-SECRET-in-the-redis-url-7f3a"


def password_forms() -> List[str]:
    """Every way the redis crate takes a password, each pointing at a Redis that is not there."""
    port = free_port()
    sock = f"/tmp/roomchat-py-no-redis-{port}.sock"
    return [
        f"redis://:{SECRET}@127.0.0.1:{port}/0",
        f"redis://user:{SECRET}@127.0.0.1:{port}/0",
        f"redis+unix://{sock}?pass={SECRET}",
        f"redis+unix://{sock}?password={SECRET}",
    ]


@pytest.mark.parametrize("form", range(4), ids=["userinfo-password", "userinfo-user-password", "unix-pass", "unix-password"])
def test_a_redis_password_is_shown_nowhere(emu: Emulator, form: int, caplog: pytest.LogCaptureFixture) -> None:
    """In every output of the package: the URL and repr of the limit, its pickle, the
    client and its state, the error of a fail_closed call (text, repr, traceback,
    pickle) and the records of the ``roomchat`` logger."""
    url = password_forms()[form]
    caplog.set_level(logging.DEBUG, logger="roomchat")
    limit = roomchat.RateLimit(
        redis_url=url, on_redis_error="fail_closed", redis_connect_timeout=0.2, redis_timeout=0.2
    )
    shown: List[Any] = [limit.redis_url, repr(limit)]
    try:
        shown.append(pickle.dumps(limit))
    except TypeError:
        pass  # not picklable: nothing to show
    client = emu.client(rate_limit=limit, max_retries=0)
    with pytest.raises(roomchat.BudgetUnavailableError) as caught:
        client.list_users(limit=1)
    error = caught.value
    shown += [
        repr(client),
        repr(client.rate_limit_state()),
        str(error),
        repr(error),
        repr(vars(error)),
        "".join(traceback.format_exception(error)),
        pickle.dumps(error),
        repr(pickle.loads(pickle.dumps(error)).args),
    ]
    records = [r for r in caplog.records if r.name == "roomchat"]
    shown += [r.getMessage() for r in records] + [repr(vars(r)) for r in records]
    print(f"\n{url.replace(SECRET, '<password>')}: shown as {limit.redis_url!r}; error: {error}")
    assert limit.redis_url is not None and ("127.0.0.1" in limit.redis_url or "/tmp/" in limit.redis_url)
    for text in shown:
        if isinstance(text, bytes):
            assert SECRET.encode() not in text
        else:
            assert SECRET not in text, text
