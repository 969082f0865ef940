"""Core's events in the `roomchat` logger: one DEBUG line per attempt, a WARNING per
retry or rate-limit wait, nothing above DEBUG, never the key."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import time

import pytest

import roomchat
from conftest import SECRET_KEY, Emulator

USERS = "/consumer/api/v2/users"


def records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "roomchat"]


def test_one_debug_line_per_attempt(emu: Emulator, client: roomchat.Client, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="roomchat")
    client.list_users(limit=5)
    (record,) = records(caplog)
    assert record.levelno == logging.DEBUG
    message = record.getMessage()
    assert message.startswith("GET /consumer/api/v2/users?auth=REDACTED&limit=5 -> 200 (attempt 1, ")
    assert message.endswith(" ms)")
    assert record.roomchat_status == 200 and record.roomchat_attempt == 1  # type: ignore[attr-defined]
    assert record.roomchat_event == "attempt" and record.roomchat_elapsed > 0  # type: ignore[attr-defined]
    assert record.pathname == __file__  # attributed to the caller's line


def test_a_warning_on_each_retry(emu: Emulator, client: roomchat.Client, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="roomchat")
    emu.fault(USERS, {"kind": "respond", "status": 503, "body": '{"message":"busy"}'}, times=2)
    client.list_users()
    levels = [(r.levelname, r.getMessage().split(" ")[0]) for r in records(caplog)]
    assert levels == [
        ("DEBUG", "GET"),
        ("WARNING", "retrying"),
        ("DEBUG", "GET"),
        ("WARNING", "retrying"),
        ("DEBUG", "GET"),
    ]
    assert "after server_error (HTTP 503) (attempt 1 failed)" in records(caplog)[1].getMessage()
    for record in records(caplog):
        assert SECRET_KEY not in record.getMessage() and SECRET_KEY not in repr(vars(record))


def test_warning_level_keeps_retries_and_drops_attempts(
    emu: Emulator, client: roomchat.Client, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="roomchat")
    emu.fault(USERS, {"kind": "respond", "status": 500, "body": "{}"}, times=1)
    client.list_users()
    assert [r.levelname for r in records(caplog)] == ["WARNING"]


def test_rate_limit_wait_is_a_warning(emu: Emulator, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="roomchat")
    with emu.other_key("sk_live_SECRET_pytest_logging_wait") as key:
        client = emu.client(private_key=key, rate_limit=roomchat.RateLimit(requests=3, window=0.5, max_wait=5.0))
        for _ in range(4):  # 3 per window (no reserve below 10 requests): the fourth waits
            client.list_users(limit=1)
    waits = [r for r in records(caplog) if r.roomchat_event == "rate_limit_wait"]  # type: ignore[attr-defined]
    assert len(waits) == 1 and waits[0].levelno == logging.WARNING
    assert waits[0].getMessage().startswith("waiting ")
    assert "for the rate-limit budget of this key before GET /consumer/api/v2/users?auth=REDACTED" in waits[0].getMessage()


def test_nothing_above_debug_and_level_changes_seen_at_once(
    emu: Emulator, client: roomchat.Client, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="roomchat")
    client.list_users()
    assert records(caplog) == []
    caplog.set_level(logging.DEBUG, logger="roomchat")
    client.list_users()
    assert len(records(caplog)) == 1
    caplog.set_level(logging.ERROR, logger="roomchat")
    client.list_users()
    assert len(records(caplog)) == 1


def test_disabled_logging_costs_nothing_measurable(emu: Emulator, client: roomchat.Client) -> None:
    """Prints the cost per call of the level check (logging off), against a call."""
    logger = logging.getLogger("roomchat")
    logger.setLevel(logging.WARNING)
    n = 300
    client.list_users(limit=1)
    started = time.perf_counter()
    for _ in range(n):
        client.list_users(limit=1)
    per_call = (time.perf_counter() - started) / n
    started = time.perf_counter()
    for _ in range(100_000):
        logger.isEnabledFor(logging.DEBUG)
        logger.isEnabledFor(logging.WARNING)
    check = (time.perf_counter() - started) / 100_000
    print(f"\nlogging off: the per-call level check costs {check * 1e6:.2f} us, {check / per_call:.2%} of a call ({per_call * 1e6:.0f} us)")
    assert check < per_call / 20


UNCONFIGURED_CHILD = """
import logging, os, sys
import roomchat
if sys.argv[1] == "configured":
    logging.basicConfig()  # the control: an application that asked for log lines gets them
client = roomchat.Client(os.environ["KEY"], base_url=os.environ["URL"], base_backoff=0.01,
                         rate_limit=roomchat.RateLimit(requests=1_000_000))
client.list_users(limit=1)  # answered 503 once: a retry, logged as a WARNING
"""


def test_a_library_warning_prints_nothing_where_logging_was_never_configured(emu: Emulator) -> None:
    env = dict(os.environ, KEY=emu.private_key, URL=emu.base_url)
    stderr = {}
    for mode in ("unconfigured", "configured"):
        emu.fault(USERS, {"kind": "respond", "status": 503, "body": '{"message":"busy"}'})
        done = subprocess.run(
            [sys.executable, "-c", UNCONFIGURED_CHILD, mode], env=env, capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, done.stderr
        stderr[mode] = done.stderr
    print(f"\na retry's WARNING on stderr: unconfigured {stderr['unconfigured']!r}; configured {stderr['configured'][:60]!r}")
    assert stderr["unconfigured"] == ""
    assert "retrying" in stderr["configured"]
    assert any(isinstance(h, logging.NullHandler) for h in logging.getLogger("roomchat").handlers)
