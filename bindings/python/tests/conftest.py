"""Shared set-up: one emulator process for the session, reset before each test.

The emulator binary is ``$ROOMCHAT_EMULATOR`` (run-tests.sh sets it) or the debug
build in the workspace's target directory. It prints one JSON line when ready and
stops when its stdin closes, so a test run that dies never leaves it behind.

With ``ROOMCHAT_TEST_TLS=1`` the session's emulator serves HTTPS (``--tls``, a CA it
generates): every client ``Emulator.client`` makes trusts that CA (``ca_bundle``), and
the admin API is called over https with it, so the same tests run over TLS.

With ``ROOMCHAT_TEST_NET=1``, inside ``scripts/testnet.sh run -- …``, the session's emulator
is the test network's: over TLS on a namespaced host behind the ~25 ms relay (its keys and
rate limit set to the session's through the admin API), so the same tests cross a network.
"""

from __future__ import annotations

import contextlib
import json
import os
import pathlib
import socket
import ssl
import subprocess
import threading
import urllib.request
from typing import Any, Callable, Dict, Iterator, List, Optional

import pytest

import roomchat

# A key distinctive enough to find anywhere it leaks.
SECRET_KEY = "sk_live_SECRET_pytest_5f4e3d2c1b0a9988"
PUBLIC_KEY = "pk_live_PUBLIC_pytest_0a1b2c3d4e5f"

REPO = pathlib.Path(__file__).resolve().parents[3]

# Across the test network (scripts/testnet.sh): its emulator is the session's, over TLS.
OVER_NET = os.environ.get("ROOMCHAT_TEST_NET") == "1"
# The second pass of run-tests.sh: the session's emulator over HTTPS.
OVER_TLS = os.environ.get("ROOMCHAT_TEST_TLS") == "1" or OVER_NET


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


def trusting(ca_file: str) -> ssl.SSLContext:
    """An SSL context that trusts `ca_file` (and checks names as usual)."""
    return ssl.create_default_context(cafile=ca_file)


class Emulator:
    """The emulator process and its admin API (``/_emulator/``)."""

    def __init__(
        self,
        proc: Optional[subprocess.Popen[str]],
        info: Dict[str, Any],
        admin_tls: Optional[Callable[[str], ssl.SSLContext]] = None,
    ) -> None:
        self.proc = proc
        self.base_url: str = info["base_url"]
        self.chat_url: str = info["chat_url"]
        self.admin_url: str = info["admin_url"]
        self.private_key: str = info["private_key"]
        self.public_key: str = info["public_key"]
        # The generated CA's PEM file over TLS, None over plain HTTP.
        self.ca_file: Optional[str] = info.get("ca_file")
        # No proxy for the admin API whatever the environment says (a test may set
        # proxy variables), and the emulator's CA trusted when it serves HTTPS.
        handlers: List[urllib.request.BaseHandler] = [urllib.request.ProxyHandler({})]
        if self.ca_file is not None:
            context = (admin_tls or trusting)(self.ca_file)
            handlers.append(urllib.request.HTTPSHandler(context=context))
        self._admin = urllib.request.build_opener(*handlers)
        # TLS handshakes the emulator completed before its counts were last zeroed.
        self.handshakes_before_reset = 0

    @property
    def over_tls(self) -> bool:
        return self.base_url.startswith("https://")

    def admin(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.admin_url + path, data=data, method=method, headers={"content-type": "application/json"}
        )
        with self._admin.open(request, timeout=30) as answer:
            text = answer.read()
        return json.loads(text) if text else None

    def reset(self) -> None:
        """Users, rooms, faults, journal, gates and connection counts cleared."""
        if self.over_tls:
            self.handshakes_before_reset += self.connections()["tls_handshakes"]
        self.admin("POST", "/reset")

    def connections(self) -> Dict[str, Any]:
        """``GET /_emulator/connections``: accepted, tls_handshakes, tls_resumed, tls_failed, tls_last_failure."""
        counts: Dict[str, Any] = self.admin("GET", "/connections")
        return counts

    def clear_connections(self) -> None:
        self.admin("DELETE", "/connections")

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

    def bot(self, name: str = "helper", **fields: Any) -> Dict[str, Any]:
        """A bot (``POST /_emulator/bots``): `fields` by their wire names; a webhook URL
        unless given. Returns its record, ``_id`` included."""
        spec: Dict[str, Any] = {"name": name, "webhookURL": "https://hooks.example/b", **fields}
        bot: Dict[str, Any] = self.admin("POST", "/bots", spec)
        return bot

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
        if self.ca_file is not None:
            options["ca_bundle"] = self.ca_file
        options.update(settings)
        key = options.pop("private_key", self.private_key)
        return roomchat.Client(key, **options)


def start_emulator(
    binary: str, *flags: str, admin_tls: Optional[Callable[[str], ssl.SSLContext]] = None
) -> Emulator:
    """The emulator started with `flags` besides the usual ones (e.g. ``--tls``). Over TLS its
    admin API is called with the context `admin_tls` makes of the CA file (default `trusting`:
    an emulator whose certificate cannot be verified, e.g. an expired one, needs another)."""
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
            *flags,
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
    return Emulator(proc, json.loads(line[0]), admin_tls)


def network_emulator() -> Emulator:
    """The test network's emulator (scripts/testnet.sh), set to the session's keys and rate limit."""
    env = os.environ
    if "ROOMCHAT_NET_BASE_URL" not in env:
        raise RuntimeError("ROOMCHAT_TEST_NET=1 outside the test network: run through scripts/testnet.sh")
    base_url = env["ROOMCHAT_NET_BASE_URL"]
    emulator = Emulator(
        None,
        {
            "base_url": base_url,
            "chat_url": base_url + "/chat",
            "admin_url": env["ROOMCHAT_NET_ADMIN_URL"],
            "private_key": SECRET_KEY,
            "public_key": PUBLIC_KEY,
            "ca_file": env["ROOMCHAT_NET_CA_FILE"],
        },
    )
    emulator.config(
        private_key=SECRET_KEY,
        public_key=PUBLIC_KEY,
        rate_limit={"requests": 1_000_000, "window_ms": 60_000},
    )
    return emulator


def stop_emulator(emulator: Emulator) -> None:
    if emulator.proc is None:  # the test network's: testnet.sh stops it
        return
    assert emulator.proc.stdin is not None
    emulator.proc.stdin.close()
    try:
        emulator.proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        emulator.proc.kill()


def session_flags() -> List[str]:
    return ["--tls"] if OVER_TLS else []


def check_session_emulator(emulator: Emulator) -> Emulator:
    """Over TLS, an emulator that did not come up on https with a CA fails the run (never a
    silent pass over plain HTTP)."""
    if OVER_TLS and not (emulator.over_tls and emulator.ca_file and emulator.admin_url.startswith("https://")):
        stop_emulator(emulator)
        raise RuntimeError(f"ROOMCHAT_TEST_TLS=1 but the emulator serves {emulator.base_url} (CA {emulator.ca_file})")
    return emulator


# The session's emulators, for the summary line of a run over TLS.
_SESSION_EMULATORS: List[Emulator] = []


@pytest.fixture(scope="session")
def emulator_process() -> Iterator[Emulator]:
    if OVER_NET:
        emulator = check_session_emulator(network_emulator())
    else:
        emulator = check_session_emulator(start_emulator(emulator_binary(), *session_flags()))
    _SESSION_EMULATORS.append(emulator)
    yield emulator
    finish_session_emulator(emulator)


def finish_session_emulator(emulator: Emulator) -> None:
    if emulator.over_tls:
        emulator.handshakes_before_reset += emulator.connections()["tls_handshakes"]
    stop_emulator(emulator)


def pytest_report_header() -> str:
    if OVER_NET:
        return "roomchat emulator: the test network's, over TLS (ROOMCHAT_TEST_NET=1)"
    return "roomchat emulator: " + ("over TLS (--tls, ROOMCHAT_TEST_TLS=1)" if OVER_TLS else "plain HTTP")


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not OVER_TLS:
        return
    for emulator in _SESSION_EMULATORS:
        terminalreporter.write_line(
            f"roomchat: this run was over TLS{' across the test network' if OVER_NET else ''}: "
            f"emulator {emulator.base_url} (CA {emulator.ca_file}), "
            f"{emulator.handshakes_before_reset} TLS handshakes completed"
        )


@pytest.fixture(scope="session")
def fast_emulator_process(emulator_process: Emulator) -> Iterator[Emulator]:
    """A release build of the emulator when `$ROOMCHAT_EMULATOR_RELEASE` names one (run-tests.sh
    does), for the tests that measure: on 2 shared cores a debug emulator's own CPU use
    competes with what is measured. Otherwise the debug one."""
    release = os.environ.get("ROOMCHAT_EMULATOR_RELEASE")
    if not release or OVER_NET:
        yield emulator_process
        return
    emulator = check_session_emulator(start_emulator(release, *session_flags()))
    _SESSION_EMULATORS.append(emulator)
    yield emulator
    finish_session_emulator(emulator)


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
