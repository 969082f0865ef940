"""Shared set-up: one emulator process for the session, reset before each test.

The emulator binary is ``$ROOMCHAT_EMULATOR`` (run-tests.sh sets it) or the debug
build in the workspace's target directory. It prints one JSON line when ready and
stops when its stdin closes, so a test run that dies never leaves it behind.
"""

from __future__ import annotations

import contextlib
import json
import os
import pathlib
import socket
import subprocess
import threading
import urllib.request
from typing import Any, Dict, Iterator, List, Optional

import pytest

import roomchat

# A key distinctive enough to find anywhere it leaks.
SECRET_KEY = "sk_live_SECRET_pytest_5f4e3d2c1b0a9988"
PUBLIC_KEY = "pk_live_PUBLIC_pytest_0a1b2c3d4e5f"

REPO = pathlib.Path(__file__).resolve().parents[3]


def emulator_binary() -> str:
    explicit = os.environ.get("ROOMCHAT_EMULATOR")
    if explicit:
        return explicit
    target = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    return str(target / "debug" / "roomchat-emulator")


def free_port() -> int:
    """A loopback port nothing listens on (just freed): a connection to it is refused."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port: int = sock.getsockname()[1]
    sock.close()
    return port


class Emulator:
    """The emulator process and its admin API (``/_emulator/``)."""

    def __init__(self, proc: subprocess.Popen[str], info: Dict[str, str]) -> None:
        self.proc = proc
        self.base_url = info["base_url"]
        self.chat_url = info["chat_url"]
        self.admin_url = info["admin_url"]
        self.private_key = info["private_key"]
        self.public_key = info["public_key"]

    def admin(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.admin_url + path, data=data, method=method, headers={"content-type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=30) as answer:
            text = answer.read()
        return json.loads(text) if text else None

    def reset(self) -> None:
        self.admin("POST", "/reset")

    def fault(self, path: str, action: Dict[str, Any], *, method: Optional[str] = None, times: int = 1) -> None:
        rule: Dict[str, Any] = {"path": path, "times": times, "action": action}
        if method is not None:
            rule["method"] = method
        self.admin("POST", "/faults", rule)

    def clear_faults(self) -> None:
        self.admin("DELETE", "/faults")

    def journal(self) -> List[Dict[str, Any]]:
        entries: List[Dict[str, Any]] = self.admin("GET", "/journal")["entries"]
        return entries

    def clear_journal(self) -> None:
        self.admin("DELETE", "/journal")

    def seed(self, count: int) -> int:
        total: int = self.admin("POST", "/users/seed", {"count": count})["total"]
        return total

    def room(self, room_id: str, name: str = "General") -> Dict[str, Any]:
        room: Dict[str, Any] = self.admin("POST", "/rooms", {"roomId": room_id, "name": name})
        return room

    def conversation(self, room_id: str, messages: List[Dict[str, Any]]) -> str:
        conversation: str = self.admin("POST", "/conversations", {"roomId": room_id, "messages": messages})[
            "conversationId"
        ]
        return conversation

    def gate(self, method: str, path: str) -> None:
        self.admin("POST", "/gate", {"method": method, "path": path})

    def config(self, **changes: Any) -> Dict[str, Any]:
        config: Dict[str, Any] = self.admin("PUT", "/config", changes)
        return config

    @contextlib.contextmanager
    def other_key(self, key: str) -> Iterator[str]:
        """The emulator takes `key` instead for a while: a 429 of a test then holds off
        only that key's budget (shared process-wide per key), not every later test's."""
        self.config(private_key=key)
        try:
            yield key
        finally:
            self.config(private_key=SECRET_KEY)

    def client(self, **settings: Any) -> roomchat.Client:
        """A client of this emulator with fast retries and no client-side throttling."""
        options: Dict[str, Any] = dict(
            base_url=self.base_url,
            chat_url=self.chat_url,
            public_key=self.public_key,
            base_backoff=0.01,
            timeout=10.0,
            rate_limit=roomchat.RateLimit(requests=1_000_000, window=60.0),
        )
        options.update(settings)
        key = options.pop("private_key", self.private_key)
        return roomchat.Client(key, **options)


def start_emulator(binary: str) -> Emulator:
    proc = subprocess.Popen(
        [
            binary,
            "--port",
            "0",
            "--private-key",
            SECRET_KEY,
            "--public-key",
            PUBLIC_KEY,
            "--rate-limit",
            "1000000/60s",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdin is not None
    line: List[str] = []
    reader = threading.Thread(target=lambda: line.append(proc.stdout.readline()), daemon=True)  # type: ignore[union-attr]
    reader.start()
    reader.join(30)
    if not line or not line[0].strip():
        proc.kill()
        raise RuntimeError("the emulator printed no ready line within 30 s")
    return Emulator(proc, json.loads(line[0]))


def stop_emulator(emulator: Emulator) -> None:
    assert emulator.proc.stdin is not None
    emulator.proc.stdin.close()
    try:
        emulator.proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        emulator.proc.kill()


@pytest.fixture(scope="session")
def emulator_process() -> Iterator[Emulator]:
    emulator = start_emulator(emulator_binary())
    yield emulator
    stop_emulator(emulator)


@pytest.fixture(scope="session")
def fast_emulator_process(emulator_process: Emulator) -> Iterator[Emulator]:
    """A release build of the emulator when `$ROOMCHAT_EMULATOR_RELEASE` names one (run-tests.sh
    does), for the tests that measure: on 2 shared cores a debug emulator's own CPU use
    competes with what is measured. Otherwise the debug one."""
    release = os.environ.get("ROOMCHAT_EMULATOR_RELEASE")
    if not release:
        yield emulator_process
        return
    emulator = start_emulator(release)
    yield emulator
    stop_emulator(emulator)


@pytest.fixture
def fast_emu(fast_emulator_process: Emulator) -> Emulator:
    fast_emulator_process.reset()
    return fast_emulator_process


@pytest.fixture
def emu(emulator_process: Emulator) -> Emulator:
    """The emulator, reset (users, rooms, faults, journal, gates cleared)."""
    emulator_process.reset()
    return emulator_process


@pytest.fixture
def client(emu: Emulator) -> Iterator[roomchat.Client]:
    with emu.client() as client:
        yield client
