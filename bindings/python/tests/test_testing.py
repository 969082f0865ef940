"""``roomchat.testing`` (issue 22): every method of ``Emulator`` against a real emulator
process, its life cycle (nothing left behind: process, port, CA file), the pytest
plugin as a user's test suite meets it (a pytest run of its own on a temporary
folder, with pytest-xdist too), and the startup figure.

The emulator is ``$ROOMCHAT_EMULATOR`` (run-tests.sh sets it), as ``Emulator`` finds it.
"""

from __future__ import annotations

import asyncio
import datetime
import gc
import glob
import importlib.metadata
import json
import os
import pathlib
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Iterator, List, Set

import pytest
from packaging.requirements import Requirement

import roomchat
from roomchat.testing import (
    EmulatedUser,
    Emulator,
    EmulatorError,
    EmulatorNotFoundError,
    JournalEntry,
    JournalHeaders,
    find_emulator,
)

HERE = pathlib.Path(__file__).resolve().parent
EXAMPLES = HERE.parent / "examples"


def alive(pid: int) -> bool:
    """Whether process `pid` exists and is not a zombie."""
    try:
        stat = pathlib.Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def wait_gone(pid: int, within: float = 10.0) -> float:
    started = time.monotonic()
    while alive(pid):
        assert time.monotonic() - started < within, f"emulator {pid} still running after {within} s"
        time.sleep(0.01)
    return time.monotonic() - started


def refused(base_url: str) -> bool:
    host, port = base_url.rsplit("//", 1)[1].rsplit(":", 1)
    try:
        socket.create_connection((host, int(port)), timeout=2).close()
    except OSError:
        return True
    return False


def emulator_children() -> Set[int]:
    """Our child processes that run the emulator (a stopped one is reaped: not listed)."""
    found = set()
    for stat_file in glob.glob("/proc/[0-9]*/stat"):
        try:
            stat = pathlib.Path(stat_file).read_text()
        except OSError:
            continue
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == os.getpid() and name.startswith("roomchat-emul") and fields[0] != "Z":
            found.add(int(stat_file.split("/")[2]))
    return found


def ca_files() -> Set[str]:
    return set(glob.glob(os.path.join(tempfile.gettempdir(), "roomchat-emulator-ca-*.pem")))


@pytest.fixture(scope="module")
def kit() -> Iterator[Emulator]:
    with Emulator() as emulator:
        yield emulator


@pytest.fixture
def emu(kit: Emulator) -> Emulator:
    kit.reset()
    return kit


# ---- every method against the emulator ---------------------------------------------------


def test_attributes_name_a_running_emulator_with_keys_of_its_own(emu: Emulator) -> None:
    assert emu.base_url.startswith("http://127.0.0.1:")
    assert emu.chat_url == emu.base_url + "/chat"
    assert emu.admin_url == emu.base_url + "/_emulator"
    assert emu.private_key.startswith("sk_test_") and emu.public_key.startswith("pk_test_")
    assert emu.ca_file is None and emu.running and alive(emu.pid)
    with Emulator() as other:
        assert other.private_key != emu.private_key, "random keys: each emulator has its own budget"
        assert other.base_url != emu.base_url
    with emu.client() as client:
        assert client.list_users().total == 0
    assert repr(emu).startswith(f"<roomchat.testing.Emulator {emu.base_url} pid=")


def test_seed_users_and_users(emu: Emulator) -> None:
    assert emu.seed_users(3) == 3
    assert emu.seed_users(2) == 5
    with emu.client() as client:
        created = client.create_user(
            "ann", is_moderator=True, chat_room="support", unique_user_identifier="crm-1", email="a@b.c"
        )
        client.deactivate_user(user_id=created.user_id)
        assert client.list_users().total == 5
    users = emu.users()
    assert [u.username for u in users] == [f"seed-user-{n}" for n in range(1, 6)] + ["ann"]
    assert all(isinstance(u, EmulatedUser) for u in users)
    ann = users[-1]
    assert (ann.user_id, ann.active, ann.is_moderator, ann.chat_room) == (created.user_id, False, True, "support")
    assert (ann.unique_user_identifier, ann.email, ann.profile_pic) == ("crm-1", "a@b.c", "")
    assert users[0].active and not users[0].is_moderator and users[0].created.endswith("Z")
    with pytest.raises(ValueError):
        emu.seed_users(-1)


def test_create_room_and_add_conversation(emu: Emulator) -> None:
    room = emu.create_room("Support", room_id="support", enableChannels=True)
    assert room["roomId"] == "support" and room["name"] == "Support" and room["enableChannels"] is True
    made_up = emu.create_room()
    assert made_up["roomId"] and made_up["name"] == "General"
    conversation = emu.add_conversation(
        "support",
        [("ann", "hello"), {"messages": "hi ann", "user": {"username": "bob"}, "created": "2024-01-02T03:04:05.000Z"}],
    )
    more = emu.add_conversation("support", [("ann", "still there?")], conversation_id=conversation)
    assert more == conversation
    with emu.client() as client:
        assert [r.room_id for r in client.list_chat_rooms()] == ["support", made_up["roomId"]]
        messages = client.conversation_messages("support", conversation)
    assert [(m.text, m.user.username) for m in messages] == [
        ("hello", "ann"),
        ("hi ann", "bob"),
        ("still there?", "ann"),
    ]
    with pytest.raises(EmulatorError, match="no room nowhere"):
        emu.add_conversation("nowhere", [("ann", "hello")])
    with pytest.raises(EmulatorError, match="already exists"):
        emu.create_room("Again", room_id="support")


def test_create_bot(emu: Emulator) -> None:
    bot = emu.create_bot("helper", trigger="message", messageHistoryLimit=5)
    assert bot["_id"] and bot["webhookURL"] == "https://hooks.example/bot"
    with emu.client() as client:
        answer = client.update_bot(bot["_id"], enabled=False)
    assert answer.bot is not None
    assert (answer.bot.trigger, answer.bot.message_history_limit, answer.bot.enabled) == ("message", 5, False)
    with pytest.raises(EmulatorError, match="exists"):
        emu.create_bot("helper")
    with pytest.raises(EmulatorError, match="400 invalid request"):
        emu.create_bot("other", colour="blue")


def test_fail_next_answers_instead_and_the_journal_shows_it(emu: Emulator) -> None:
    emu.fail_next(path="/consumer/api/v1/user", status=429, retry_after=1)
    with emu.client() as client:
        started = time.monotonic()
        user = client.create_user("ann")
        waited = time.monotonic() - started
    assert waited >= 1.0, "the client waited out Retry-After"
    entries = emu.journal()
    assert all(isinstance(e, JournalEntry) for e in entries)
    assert [(e.method, e.path, e.status) for e in entries] == [
        ("POST", "/consumer/api/v1/user", 429),
        ("POST", "/consumer/api/v1/user", 200),
    ]
    assert entries[1].seq == entries[0].seq + 1
    assert entries[1].json() == {"username": "ann", "isModerator": False}
    assert json.loads(entries[1].body) == entries[1].json()
    assert entries[1].received_at - entries[0].received_at >= datetime.timedelta(seconds=1)
    assert entries[0].params["auth"] == "REDACTED" and entries[0].query == "auth=REDACTED"
    assert entries[0].user_agent is not None and entries[0].user_agent.startswith("roomchat")
    assert not entries[0].truncated
    # The key is nowhere in the entries, whatever field it could have been put in.
    assert emu.private_key not in repr(entries)
    assert [u.user_id for u in emu.users()] == [user.user_id]

    # times, method, a body as a mapping, extra headers; the default body of a 5xx.
    emu.reset()
    emu.fail_next(path="/consumer/api/v2/*", status=503, times=2, method="GET", body={"message": "down", "eventId": "ev9"})
    emu.fail_next(path="*", status=500)
    with emu.client(max_retries=0) as client:
        for _ in range(2):
            with pytest.raises(roomchat.ServerError) as down:
                client.list_users()
            assert (down.value.status, down.value.message, down.value.event_id) == (503, "down", "ev9")
        with pytest.raises(roomchat.ServerError) as boom:
            client.list_chat_rooms()
        assert (boom.value.status, boom.value.message) == (500, "Internal Server Error")
        assert client.list_users().total == 0, "every rule is spent"
    assert [e.status for e in emu.journal()] == [503, 503, 500, 200]

    emu.fail_next(path="/consumer/api/v1/chatrooms", status=400, body="<html>no</html>", content_type="text/html")
    with emu.client(max_retries=0) as client, pytest.raises(roomchat.RoomchatError) as html:
        client.list_chat_rooms()
    assert html.value.status == 400
    for bad in (99, 1000, True):
        with pytest.raises(ValueError):
            emu.fail_next(status=bad)
    with pytest.raises(TypeError):
        emu.fail_next(status=429, retry_after=1.5)  # type: ignore[arg-type]


def test_delay_next_holds_the_answer_back_after_the_effect(emu: Emulator) -> None:
    emu.delay_next(path="/consumer/api/v1/user", seconds=1.5)
    with emu.client(timeout=0.3, max_retries=0) as client:
        with pytest.raises(roomchat.TimeoutError):
            client.create_user("slow")
        # A POST is not retried after a timeout: created once, as the emulator shows.
        assert [u.username for u in emu.users()] == ["slow"]
        assert client.list_users().total == 1, "only the next request was delayed"


def test_drop_connection_next_closes_without_an_answer(emu: Emulator) -> None:
    emu.drop_connection_next(path="/consumer/api/v1/user")
    with emu.client() as client:
        with pytest.raises(roomchat.ConnectionError):
            client.create_user("dropped")
        assert emu.users() == [], "no effect, and the POST was not sent again"
        emu.drop_connection_next(path="/consumer/api/v2/users", method="GET")
        assert client.list_users().total == 0, "a GET is retried"
    assert [(e.method, e.status) for e in emu.journal()] == [("POST", 0), ("GET", 0), ("GET", 200)]


def test_set_rate_limit_answers_429_past_it_and_reset_restores_it(emu: Emulator) -> None:
    emu.set_rate_limit(2, 60)
    with emu.client(max_retries=0) as client:
        client.list_users()
        client.list_users()
        with pytest.raises(roomchat.RateLimitedError) as limited:
            client.list_users()
        assert limited.value.status == 429
    assert [e.status for e in emu.journal()] == [200, 200, 429]
    url = f"{emu.base_url}/consumer/api/v2/users?auth={emu.private_key}"
    with pytest.raises(urllib.error.HTTPError) as plain_429:
        urllib.request.urlopen(url)
    assert plain_429.value.code == 429, "no headers by default"
    assert all(name not in plain_429.value.headers for name in ("Retry-After", "X-RateLimit-Limit"))
    # With headers: the limit and what is left on every answer, Retry-After on a 429.
    emu.set_rate_limit(2, 60, headers=True)  # counters kept: the 2 accepted calls above
    with pytest.raises(urllib.error.HTTPError) as refused_429:
        urllib.request.urlopen(url)
    assert refused_429.value.code == 429 and 0 < int(refused_429.value.headers["Retry-After"]) <= 60
    assert refused_429.value.headers["X-RateLimit-Limit"] == "2"
    old_key = emu.private_key
    emu.reset()
    assert emu.private_key != old_key, "a new key: no client-side hold carries over"
    with emu.client(max_retries=0) as client:
        for _ in range(5):
            client.list_users()  # 600 per minute again
    with pytest.raises(ValueError):
        emu.set_rate_limit(0)


def test_admin_calls_never_count_against_the_rate_limit_nor_show_in_the_journal(emu: Emulator) -> None:
    emu.set_rate_limit(3, 60)
    # Twenty-odd admin calls after the limit is set: none of them may use it up.
    for _ in range(5):
        emu.seed_users(1)
        emu.users()
        emu.journal()
        emu.create_room(name="R")
    with emu.client(max_retries=0) as client:
        for _ in range(3):
            client.list_users(limit=1)
        with pytest.raises(roomchat.RateLimitedError):
            client.list_users(limit=1)
    assert emu.users() and emu.journal()  # still answered at the limit
    assert [e.status for e in emu.journal()] == [200, 200, 200, 429], "only the client's calls"


def test_gate_takes_an_endpoint_out_of_the_plan(emu: Emulator) -> None:
    emu.gate("GET /consumer/api/v1/chatrooms")
    with emu.client() as client:
        with pytest.raises(roomchat.PlanUpgradeRequiredError):
            client.list_chat_rooms()
        client.list_users()
        emu.gate("/consumer/api/v2/*")
        with pytest.raises(roomchat.PlanUpgradeRequiredError):
            client.list_users()
    emu.reset()
    with emu.client() as client:
        client.list_chat_rooms()
    with pytest.raises(ValueError):
        emu.gate("chatrooms")


def test_reset_clears_everything_and_seeds_again(emu: Emulator) -> None:
    emu.seed_users(4)
    emu.create_room("R", room_id="r")
    emu.fail_next(status=500, times=10)
    emu.reset()
    assert emu.users() == [] and emu.journal() == []
    with emu.client() as client:
        assert client.list_chat_rooms() == []
    with Emulator(seed_users=2) as seeded:
        assert len(seeded.users()) == 2
        seeded.seed_users(3)
        seeded.reset()
        assert [u.username for u in seeded.users()] == ["seed-user-1", "seed-user-2"]


def test_client_options_override_and_async_client(emu: Emulator) -> None:
    with emu.client(app_name="my-backend/1.4", max_retries=0) as client:
        client.list_users()
    agent = emu.journal()[-1].user_agent
    assert agent is not None and "my-backend/1.4" in agent

    async def main() -> str:
        async with emu.async_client() as client:
            created = await client.create_user("async-ann")
            page = await client.list_users()
            assert page.total == 1
            return created.user_id

    user_id = asyncio.run(main())
    assert [u.user_id for u in emu.users()] == [user_id]


def test_tls_serves_https_that_the_client_trusts() -> None:
    before = ca_files()
    with Emulator(tls=True) as emu:
        assert emu.base_url.startswith("https://127.0.0.1:")
        assert emu.ca_file is not None and os.path.isfile(emu.ca_file)
        emu.seed_users(2)
        with emu.client() as client:
            assert client.list_users().total == 2
        ca_file = emu.ca_file
    assert not os.path.exists(ca_file) and ca_files() == before


def test_the_admin_api_is_not_part_of_the_client() -> None:
    admin_words = ("emulator", "admin", "fault", "journal", "seed", "gate", "reset")
    for cls in (roomchat.Client, roomchat.AsyncClient):
        names = [n for n in dir(cls) if any(w in n.lower() for w in admin_words)]
        assert names == [], f"{cls.__name__} has {names}"


# ---- finding the executable --------------------------------------------------------------


def test_find_emulator_order_and_the_error_when_missing(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = find_emulator()
    assert real == os.environ["ROOMCHAT_EMULATOR"]
    scripts, on_path = tmp_path / "venv-bin", tmp_path / "on-path"
    scripts.mkdir()
    on_path.mkdir()
    monkeypatch.delenv("ROOMCHAT_EMULATOR")
    monkeypatch.setattr("sysconfig.get_path", lambda name: str(scripts))
    monkeypatch.setattr(sys, "executable", str(scripts / "python"))
    monkeypatch.setenv("PATH", str(on_path))

    with pytest.raises(EmulatorNotFoundError) as missing:
        Emulator()
    assert 'pip install "roomchat[testing]"' in str(missing.value)
    assert "ROOMCHAT_EMULATOR" in str(missing.value)

    (on_path / "roomchat-emulator").symlink_to(real)
    assert find_emulator() == str(on_path / "roomchat-emulator")
    (scripts / "roomchat-emulator").symlink_to(real)
    assert find_emulator() == str(scripts / "roomchat-emulator"), "the environment's own comes first"
    with Emulator() as emu:
        assert emu.users() == []

    monkeypatch.setenv("ROOMCHAT_EMULATOR", str(tmp_path / "nowhere"))
    with pytest.raises(EmulatorNotFoundError, match="nowhere"):
        find_emulator()
    with pytest.raises(EmulatorNotFoundError, match="not an executable"):
        Emulator(binary=tmp_path)


def test_an_emulator_that_cannot_start_says_why(tmp_path: pathlib.Path) -> None:
    before = emulator_children()
    fake = tmp_path / "roomchat-emulator"
    fake.write_text("#!/bin/sh\necho 'roomchat-emulator: cannot start: address in use' >&2\nexit 1\n")
    fake.chmod(0o755)
    with pytest.raises(EmulatorError, match="exited with code 1 before it was ready: .*address in use"):
        Emulator(binary=fake)
    silent = tmp_path / "silent"
    silent.write_text("#!/bin/sh\nexec sleep 30\n")
    silent.chmod(0o755)
    with pytest.raises(EmulatorError, match="no ready line within 0.3 s"):
        Emulator(binary=silent, startup_timeout=0.3)
    assert emulator_children() == before


def test_the_testing_extra_pins_the_emulator_at_this_version() -> None:
    requires = [Requirement(r) for r in importlib.metadata.requires("roomchat") or []]
    pins = [r for r in requires if r.name == "roomchat-emulator"]
    assert len(pins) == 1, requires
    assert str(pins[0].specifier) == f"=={roomchat.__version__}"
    assert pins[0].marker is not None and pins[0].marker.evaluate({"extra": "testing"})
    assert not pins[0].marker.evaluate({"extra": ""}), "only with the testing extra"
    points = importlib.metadata.entry_points()
    if hasattr(points, "select"):
        plugins = list(points.select(group="pytest11", name="roomchat"))
    else:  # Python 3.9: a dict of groups
        plugins = [e for e in points.get("pytest11", []) if e.name == "roomchat"]  # type: ignore[attr-defined]
    assert [e.value for e in plugins] == ["roomchat.testing.pytest_plugin"]


# ---- life cycle: nothing left behind -----------------------------------------------------


def test_stopped_when_the_with_block_raises() -> None:
    with pytest.raises(KeyError):
        with Emulator(tls=True) as emu:
            pid, base_url, ca_file = emu.pid, emu.base_url, emu.ca_file
            raise KeyError("the test crashed")
    assert not alive(pid) and refused(base_url)
    assert ca_file is not None and not os.path.exists(ca_file)
    emu.stop()  # twice is fine


def test_a_forgotten_emulator_is_stopped_when_collected() -> None:
    emu = Emulator()
    pid, base_url = emu.pid, emu.base_url
    del emu
    gc.collect()
    wait_gone(pid)
    assert refused(base_url)


@pytest.mark.parametrize("how", ["exits without stopping it", "is killed"])
def test_a_forgotten_emulator_does_not_outlive_its_test_process(how: str) -> None:
    # os._exit skips atexit and finalizers: only the emulator's own watch stops it.
    script = textwrap.dedent(
        """
        import os, sys, time
        from roomchat.testing import Emulator
        emu = Emulator(tls=True)
        print(emu.pid, emu.base_url, emu.ca_file, flush=True)
        sys.stdin.readline()  # the test has seen the emulator running
        if sys.argv[1] == "exit":
            os._exit(0)
        time.sleep(60)
        """
    )
    child = subprocess.Popen(
        [sys.executable, "-c", script, "exit" if how.startswith("exits") else "sleep"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=HERE,
    )
    assert child.stdout is not None and child.stdin is not None
    pid_text, base_url, ca_file = child.stdout.readline().split()
    pid = int(pid_text)
    # Checked while the child waits: once it exits, its emulator stops within milliseconds.
    assert alive(pid)
    child.stdin.write("\n")
    child.stdin.flush()
    if how == "is killed":
        child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)
    child.stdout.close()
    child.stdin.close()
    took = wait_gone(pid)
    print(f"\nroomchat.testing: the emulator of a test process that {how} stopped {took * 1000:.0f} ms after it")
    assert refused(base_url) and not os.path.exists(ca_file)


def first_answer(binary: str) -> float:
    """Seconds from starting an emulator to the first answer of its REST API."""
    started = time.perf_counter()
    with Emulator(binary=binary) as emu:
        with urllib.request.urlopen(f"{emu.base_url}/consumer/api/v2/users?auth={emu.private_key}") as answer:
            assert answer.status == 200
        took = time.perf_counter() - started
    return took


def test_fifty_start_stop_cycles_leave_nothing_behind() -> None:
    before, running = ca_files(), emulator_children()
    pids: List[int] = []
    for cycle in range(50):
        with Emulator(tls=cycle % 2 == 1) as emu:
            pids.append(emu.pid)
            base_url = emu.base_url
            assert emu.users() == []
        assert not alive(emu.pid), f"cycle {cycle}: the process is still there"
        assert refused(base_url), f"cycle {cycle}: its port still accepts"
    assert len(set(pids)) == 50
    assert emulator_children() == running, "no emulator process of ours besides the ones running before"
    assert ca_files() == before, "no CA file left in the temporary folder"


def test_startup_to_first_answer_figure() -> None:
    """Printed, never asserted on time (goal: under 100 ms)."""
    builds = [("debug", os.environ["ROOMCHAT_EMULATOR"])]
    release = os.environ.get("ROOMCHAT_EMULATOR_RELEASE")
    if release:
        builds.append(("release", release))
    for name, binary in builds:
        first_answer(binary)  # warm the page cache
        times = sorted(first_answer(binary) for _ in range(15))
        print(
            f"\nroomchat.testing: startup to first answer ({name} emulator, 15 runs): "
            f"median {statistics.median(times) * 1000:.1f} ms, min {times[0] * 1000:.1f} ms, "
            f"max {times[-1] * 1000:.1f} ms (goal: under 100 ms)"
        )


# ---- the pytest plugin, as a user's suite meets it ----------------------------------------


def run_pytest(folder: pathlib.Path, *args: str) -> "subprocess.CompletedProcess[str]":
    """pytest in a process of its own on `folder` (the plugin loaded from its entry point)."""
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *args, str(folder)],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=240,
    )


def test_the_fixtures_in_a_users_suite(tmp_path: pathlib.Path) -> None:
    (tmp_path / "test_user.py").write_text(
        textwrap.dedent(
            """
            import json, pathlib
            import roomchat
            from roomchat.testing import Emulator

            seen = []

            def test_first(roomchat_emulator: Emulator, roomchat_client: roomchat.Client) -> None:
                roomchat_emulator.seed_users(2)
                roomchat_emulator.set_rate_limit(1, 60)
                assert roomchat_client.list_users().total == 2
                seen.append((roomchat_emulator.pid, roomchat_emulator.base_url))

            def test_second_starts_afresh(roomchat_emulator: Emulator, roomchat_client: roomchat.Client) -> None:
                assert roomchat_emulator.users() == [] and roomchat_emulator.journal() == []
                roomchat_client.list_users()
                roomchat_client.list_users()  # the rate limit is back to 600 a minute
                seen.append((roomchat_emulator.pid, roomchat_emulator.base_url))
                assert seen[0] == seen[1], "one emulator for the session"
                pathlib.Path("pid").write_text(str(seen[0][0]))

            def test_without_the_fixtures() -> None:
                pass
            """
        )
    )
    result = run_pytest(tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "3 passed" in result.stdout
    wait_gone(int((tmp_path / "pid").read_text()))


def test_the_readme_example_passes_and_a_broken_flow_fails(tmp_path: pathlib.Path) -> None:
    example = (EXAMPLES / "test_user_signup.py").read_text()
    (tmp_path / "test_user_signup.py").write_text(example)
    result = run_pytest(tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 passed" in result.stdout

    # The example's tests can fail: a service that keeps answering 429, and code
    # that forgets to check for a taken name.
    broken = example.replace("status=429, retry_after=1)", "status=429, retry_after=1, times=3)")
    broken = broken.replace("    if any(user.username == username", "    if False and any(user.username == username")
    assert broken.count("times=3") == 1 and broken.count("if False and") == 1
    (tmp_path / "test_user_signup.py").write_text(broken)
    result = run_pytest(tmp_path)
    assert result.returncode == 1 and "2 failed" in result.stdout, result.stdout + result.stderr
    assert "RateLimitedError" in result.stdout and "DID NOT RAISE" in result.stdout, result.stdout


def test_xdist_gives_each_of_four_workers_its_own_emulator(tmp_path: pathlib.Path) -> None:
    (tmp_path / "test_parallel.py").write_text(
        textwrap.dedent(
            """
            import json, os, time
            import pytest
            from roomchat.testing import Emulator

            @pytest.mark.parametrize("n", range(16))
            def test_isolated(roomchat_emulator: Emulator, roomchat_client, n: int) -> None:
                roomchat_emulator.seed_users(n)
                time.sleep(0.05)  # overlap with the other workers
                assert roomchat_client.list_users().total == n
                assert len(roomchat_emulator.journal()) == 1
                with open("seen.jsonl", "a") as seen:
                    seen.write(json.dumps([os.environ["PYTEST_XDIST_WORKER"], roomchat_emulator.pid,
                                           roomchat_emulator.base_url]) + "\\n")
            """
        )
    )
    result = run_pytest(tmp_path, "-n", "4")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "16 passed" in result.stdout
    seen = [json.loads(line) for line in (tmp_path / "seen.jsonl").read_text().splitlines()]
    workers = {worker: (pid, url) for worker, pid, url in seen}
    assert len(seen) == 16 and len(workers) == 4, seen
    assert len({pid for pid, _ in workers.values()}) == 4 and len({url for _, url in workers.values()}) == 4
    # Every worker's emulator is consistent within the worker, and gone after the run.
    assert all(workers[worker] == (pid, url) for worker, pid, url in seen)
    for pid, url in workers.values():
        wait_gone(pid)
        assert refused(url)


def test_the_readme_holds_the_example_verbatim() -> None:
    readme = (HERE.parent / "README.md").read_text()
    example = (EXAMPLES / "test_user_signup.py").read_text()
    assert example.strip() in readme, "bindings/python/README.md must hold examples/test_user_signup.py verbatim"


def test_the_readme_headers_example_passes_as_a_users_test(tmp_path: pathlib.Path) -> None:
    """The README's test of request headers (examples/test_trace_context.py), run as a user's
    suite: the traceparent arrived, and credentials show REDACTED."""
    example = (EXAMPLES / "test_trace_context.py").read_text()
    readme = (HERE.parent / "README.md").read_text()
    assert example.strip() in readme, "bindings/python/README.md must hold examples/test_trace_context.py verbatim"
    (tmp_path / "test_trace_context.py").write_text(example)
    result = run_pytest(tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 passed" in result.stdout


def test_a_private_key_that_percent_encodes_shows_redacted_in_its_encoded_form_too() -> None:
    """A key a URL carries percent-encoded (headers, path, query, body) shows REDACTED, as core's errors hide
    it, and so do params however the query spelled it (`+` for a blank)."""
    key = "sk_test/plus+eq=!*'() x"
    encoded = urllib.parse.quote(key, safe="")
    lower_hex = re.sub(r"%[0-9A-F]{2}", lambda m: m.group(0).lower(), encoded)
    with Emulator(private_key=key) as emu:
        request = urllib.request.Request(
            f"{emu.base_url}/consumer/api/v2/users/{encoded}"
            f"?auth={encoded}&echo={encoded}&form={encoded.replace('%20', '+')}",
            data=f"k={encoded}".encode(),
            headers={"X-Echo": encoded, "X-Lower": lower_hex},
        )
        try:
            urllib.request.urlopen(request).close()
        except urllib.error.HTTPError:
            pass
        (entry,) = emu.journal()
    shown = repr(entry)
    for form in (key, encoded, lower_hex):
        assert form not in shown, shown
    assert entry.headers["x-echo"] == "REDACTED"


def test_journal_headers_are_read_only_in_any_case_with_credentials_and_the_key_redacted(emu: Emulator) -> None:
    request = urllib.request.Request(
        f"{emu.base_url}/consumer/api/v2/users?auth={emu.private_key}",
        headers={
            "X-Trace": "a",
            "Cookie": "session=s3cret",
            "X-Echo": f"k={emu.private_key}",
            "X-Private-Key": "s3cret",
        },
    )
    request.add_header("Proxy-Authorization", "Basic cHc=")
    with urllib.request.urlopen(request) as answer:
        assert answer.status == 200
    with emu.client() as client:
        client.list_users()
    mine, clients = emu.journal()
    headers = mine.headers
    assert isinstance(headers, JournalHeaders)
    assert headers["x-trace"] == headers["X-TRACE"] == headers.get("X-Trace") == "a"
    assert "X-Trace" in headers and "x-missing" not in headers and 1 not in headers  # type: ignore[comparison-overlap]
    assert headers.get("x-missing") is None and headers.get_list("x-missing") == []
    assert headers["cookie"] == headers["proxy-authorization"] == "REDACTED"
    assert headers["x-private-key"] == "REDACTED", "a name ending in key"
    assert headers["x-echo"] == "k=REDACTED", "the private key shows nowhere"
    assert list(headers) == [name.lower() for name in headers]
    assert "s3cret" not in repr(mine) and emu.private_key not in repr(mine)
    with pytest.raises(TypeError):
        headers["x-trace"] = "b"  # type: ignore[index]
    with pytest.raises(KeyError):
        headers["x-missing"]
    # The client's own: its User-Agent, also as the entry's user_agent.
    assert clients.headers["User-Agent"] == clients.user_agent
    # A name that came twice: its values joined, and each by get_list.
    twice = JournalHeaders([("Accept", "a/b"), ("x", "1"), ("accept", "c/d")])
    assert twice["accept"] == "a/b, c/d" and twice.get_list("ACCEPT") == ["a/b", "c/d"]
    assert list(twice) == ["accept", "x"] and len(twice) == 2 and dict(twice) == {"accept": "a/b, c/d", "x": "1"}
