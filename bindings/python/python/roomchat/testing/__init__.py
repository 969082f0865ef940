"""``roomchat.testing``: the roomchat emulator in your own tests.

The emulator is a local, stateful stand-in for the chat service (users, rooms,
messages, the rate limit, plan gating), with fault injection and a request journal.
:class:`Emulator` starts one on a free loopback port and stops it again::

    from roomchat.testing import Emulator

    with Emulator() as emu:
        emu.seed_users(3)
        emu.fail_next(path="/consumer/api/v1/user", status=429, retry_after=1)
        with emu.client() as client:
            client.create_user("ann")          # a 429, then (after 1 s) created
        assert [e.status for e in emu.journal()] == [429, 200]

The executable comes from the ``roomchat-emulator`` package:
``pip install "roomchat[testing]"`` installs it. The pytest plugin (loaded by
itself once roomchat is installed) gives the fixtures ``roomchat_emulator`` (one
emulator per test session, reset before each test that uses it) and
``roomchat_client`` (a client of it).

The admin API the methods call is the emulator's own surface (``/_emulator/``):
its requests are never journaled, never rate-limited and never faulted, and no
``roomchat.Client`` method reaches it.
"""

from __future__ import annotations

import datetime
import http
import json
import os
import re
import select
import shutil
import signal
import ssl
import subprocess
import sys
import sysconfig
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import weakref
from dataclasses import dataclass, field
from types import TracebackType
from typing import IO, Any, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple, Type, Union

import roomchat

__all__ = [
    "EmulatedUser",
    "Emulator",
    "EmulatorError",
    "EmulatorNotFoundError",
    "JournalEntry",
    "JournalHeaders",
    "find_emulator",
]

#: The environment variable naming the emulator executable to run (it wins over
#: the installed one).
ENV_EMULATOR = "ROOMCHAT_EMULATOR"

_EXECUTABLE = "roomchat-emulator"
_INSTALL_HINT = 'install it with: pip install "roomchat[testing]"'
# How much of the emulator's stderr is kept for error messages.
_STDERR_TAIL = 8192


class EmulatorError(RuntimeError):
    """The emulator could not start, exited, or refused an admin request."""


class EmulatorNotFoundError(EmulatorError):
    """No emulator executable: ``pip install "roomchat[testing]"``, or set ``ROOMCHAT_EMULATOR``."""


class JournalHeaders(Mapping[str, str]):
    """The headers of a request, read-only, looked up in any case as in requests and
    httpx: ``headers["TraceParent"]`` is ``headers["traceparent"]``.

    The names are in lower case, in the order they came. A name that came more than
    once gives its values joined by ``", "`` (:meth:`get_list` gives them one by one).
    The values of ``Authorization``, ``Proxy-Authorization``, ``Cookie``, ``Set-Cookie``
    and of any header whose name holds ``token``, ``secret``, ``passw``, ``credential``,
    ``session``, ``signature``, ``jwt``, ``bearer`` or ``auth``, or ends in ``key`` or
    ``keys`` (any case, ``-`` and ``_`` aside: ``x-private-key``) show as ``REDACTED``,
    and the private key nowhere.
    """

    __slots__ = ("_pairs", "_joined")

    def __init__(self, pairs: Iterable[Tuple[str, str]] = ()) -> None:
        self._pairs: Tuple[Tuple[str, str], ...] = tuple((name.lower(), value) for name, value in pairs)
        joined: Dict[str, str] = {}
        for name, value in self._pairs:
            joined[name] = f"{joined[name]}, {value}" if name in joined else value
        self._joined = joined

    def __getitem__(self, name: str) -> str:
        if not isinstance(name, str):
            raise KeyError(name)
        return self._joined[name.lower()]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._joined

    def __iter__(self) -> Iterator[str]:
        return iter(self._joined)

    def __len__(self) -> int:
        return len(self._joined)

    def get_list(self, name: str) -> List[str]:
        """Each value of `name` (any case), in the order they came; ``[]`` when absent."""
        wanted = name.lower()
        return [value for key, value in self._pairs if key == wanted]

    def __repr__(self) -> str:
        return f"JournalHeaders({list(self._pairs)!r})"


@dataclass(frozen=True)
class JournalEntry:
    """One request the emulator received (REST API and sign-in pages; never the admin API).

    ``query`` is the raw query string and ``params`` its decoded pairs (a repeated
    name keeps its last value); the private key (``auth``) and the public key
    (``publicKey``) show as ``REDACTED`` there, and the private key nowhere else.
    ``status`` is what was answered (0 when the connection was dropped without an
    answer). ``headers`` are the request's headers (:class:`JournalHeaders`: read-only,
    any case; credentials shown as ``REDACTED``), at most 8 KiB of them.
    ``truncated`` says the emulator kept only the start of a long field.
    """

    seq: int
    method: str
    path: str
    query: str
    params: Dict[str, str]
    body: str
    status: int
    received_at: datetime.datetime
    user_agent: Optional[str]
    truncated: bool
    headers: JournalHeaders = field(default_factory=JournalHeaders)

    def json(self) -> Any:
        """The body parsed as JSON (``None`` for an empty body)."""
        return json.loads(self.body) if self.body else None


@dataclass(frozen=True)
class EmulatedUser:
    """A user as the emulator holds it, deactivated ones included (``active`` False)."""

    user_id: str
    username: str
    is_moderator: bool
    active: bool
    created: str
    chat_room: Optional[str] = None
    unique_user_identifier: Optional[str] = None
    email: Optional[str] = None
    profile_pic: Optional[str] = None
    external_user_id: Optional[str] = None
    meta: Any = field(default=None)


def find_emulator(binary: Union[str, "os.PathLike[str]", None] = None) -> str:
    """The emulator executable to run: `binary` if given, else ``$ROOMCHAT_EMULATOR``,
    else the ``roomchat-emulator`` installed beside this Python (its ``bin/``), else
    the one on ``PATH``. Raises :class:`EmulatorNotFoundError` when there is none."""
    for what, explicit in (("binary", binary), (ENV_EMULATOR, os.environ.get(ENV_EMULATOR) or None)):
        if explicit is None:
            continue
        path = os.fspath(explicit)
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            raise EmulatorNotFoundError(f"{what} names {path!r}, which is not an executable file")
        return path
    looked = []
    for folder in (sysconfig.get_path("scripts"), os.path.dirname(sys.executable)):
        candidate = os.path.join(folder, _EXECUTABLE)
        looked.append(folder)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    on_path = shutil.which(_EXECUTABLE)
    if on_path is not None:
        return on_path
    raise EmulatorNotFoundError(
        f"the {_EXECUTABLE} executable was not found (looked in {', '.join(dict.fromkeys(looked))} "
        f"and on PATH): {_INSTALL_HINT}, or set {ENV_EMULATOR} to its path"
    )


def _drain(stream: IO[bytes], tail: bytearray) -> None:
    """Reads the emulator's stderr until it exits, keeping the last few KiB."""
    with stream:
        for line in iter(stream.readline, b""):
            tail += line
            del tail[:-_STDERR_TAIL]


def _stop_process(proc: "subprocess.Popen[bytes]", ca_file: Optional[str]) -> None:
    """Stops the emulator: the end of its stdin (a clean stop), then SIGTERM, then
    SIGKILL; whatever it took, its CA file goes too. Safe to call twice."""
    if proc.stdin is not None and not proc.stdin.closed:
        try:
            proc.stdin.close()
        except OSError:
            pass
    for escalate in (None, signal.SIGTERM, signal.SIGKILL):
        if escalate is not None and proc.poll() is None:
            try:
                proc.send_signal(escalate)
            except OSError:
                pass
        try:
            proc.wait(timeout=5)
            break
        except subprocess.TimeoutExpired:
            continue
    # (stderr is closed by the thread that reads it, at its end.)
    if proc.stdout is not None and not proc.stdout.closed:
        proc.stdout.close()
    # A clean stop removed it; a killed emulator could not.
    if ca_file is not None:
        try:
            os.unlink(ca_file)
        except FileNotFoundError:
            pass


class Emulator:
    """A roomchat emulator process on a free loopback port, and its admin API.

    Started when made; stopped by :meth:`stop` or at the end of a ``with`` block,
    whatever ended it. Nothing outlives the test process: the emulator also stops
    when its stdin closes or its parent process dies, and an emulator never stopped
    is stopped when the object is collected or the interpreter exits.

    Options: ``binary`` (else :func:`find_emulator`), the account's ``private_key``
    and ``public_key`` (random test keys by default), its ``rate_limit`` as
    ``(requests, window_seconds)`` (600 per 60 s, as the service) and whether 429s
    and answers carry rate-limit headers (``rate_limit_headers``, off as the service
    documents none), ``seed_users`` (users made at start and at each reset), ``tls``
    (serve HTTPS with a CA of its own: ``ca_file``, which :meth:`client` trusts), and
    ``startup_timeout`` in seconds.
    """

    base_url: str
    """The REST base URL, e.g. ``http://127.0.0.1:41234``."""
    chat_url: str
    """Where sign-in pages are served (``{base_url}/chat``)."""
    admin_url: str
    """The admin API's base URL (``{base_url}/_emulator``)."""
    private_key: str
    public_key: str
    ca_file: Optional[str]
    """The PEM of the CA that signed its certificate, with ``tls=True``; else None."""
    pid: int

    def __init__(
        self,
        *,
        binary: Union[str, "os.PathLike[str]", None] = None,
        private_key: Optional[str] = None,
        public_key: Optional[str] = None,
        rate_limit: Tuple[int, float] = (600, 60.0),
        rate_limit_headers: bool = False,
        seed_users: int = 0,
        tls: bool = False,
        startup_timeout: float = 10.0,
    ) -> None:
        executable = find_emulator(binary)
        # Keys made up here are renewed at each reset; keys given are kept.
        self._renew_keys = (private_key is None, public_key is None)
        made = _test_keys()
        self.private_key = private_key if private_key is not None else made[0]
        self.public_key = public_key if public_key is not None else made[1]
        requests, window = rate_limit
        self._config: Dict[str, Any] = {
            "private_key": self.private_key,
            "public_key": self.public_key,
            "rate_limit": {"requests": int(requests), "window_ms": _millis(window, "rate_limit window")},
            "rate_limit_headers": bool(rate_limit_headers),
        }
        self._seed_users = _count(seed_users, "seed_users")
        args = [
            executable,
            "--port",
            "0",
            "--private-key",
            self.private_key,
            "--public-key",
            self.public_key,
            "--rate-limit",
            f"{int(requests)}/{self._config['rate_limit']['window_ms']}ms",
            "--seed-users",
            str(self._seed_users),
        ]
        if rate_limit_headers:
            args.append("--rate-limit-headers")
        if tls:
            args.append("--tls")
        self._proc: subprocess.Popen[bytes] = subprocess.Popen(
            args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        self.pid = self._proc.pid
        self._stderr = bytearray()
        # Not a bound method: the thread must not keep this object alive.
        self._stderr_reader = threading.Thread(
            target=_drain, args=(self._proc.stderr, self._stderr), name=f"roomchat-emulator-{self.pid}", daemon=True
        )
        self._stderr_reader.start()
        self.ca_file = None
        # From here on the process is stopped whatever happens to this object.
        self._finalizer = weakref.finalize(self, _stop_process, self._proc, None)
        try:
            ready = self._read_ready_line(startup_timeout)
        except BaseException:
            self.stop()
            raise
        self.base_url = ready["base_url"]
        self.chat_url = ready["chat_url"]
        self.admin_url = ready["admin_url"]
        self.ca_file = ready.get("ca_file")
        if self.ca_file is not None:
            self._finalizer.detach()
            self._finalizer = weakref.finalize(self, _stop_process, self._proc, self.ca_file)
        handlers: List[urllib.request.BaseHandler] = [urllib.request.ProxyHandler({})]
        if self.ca_file is not None:
            handlers.append(urllib.request.HTTPSHandler(context=ssl.create_default_context(cafile=self.ca_file)))
        self._admin = urllib.request.build_opener(*handlers)

    # ---- the process ------------------------------------------------------------------

    def _why(self) -> str:
        """What the emulator said on stderr, for an error message."""
        self._stderr_reader.join(timeout=1)
        text = self._stderr.decode("utf-8", "replace").strip()
        return f": {text}" if text else ""

    def _read_ready_line(self, timeout: float) -> Dict[str, Any]:
        stdout: Optional[IO[bytes]] = self._proc.stdout
        assert stdout is not None
        fd = stdout.fileno()
        deadline = time.monotonic() + timeout
        line = b""
        while not line.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0:
                raise EmulatorError(f"the emulator printed no ready line within {timeout} s{self._why()}")
            readable, _, _ = select.select([fd], [], [], left)
            if not readable:
                continue
            chunk = os.read(fd, 4096)
            if not chunk:
                code = self._proc.wait(timeout=5)
                raise EmulatorError(f"the emulator exited with code {code} before it was ready{self._why()}")
            line += chunk
        ready: Dict[str, Any] = json.loads(line)
        return ready

    @property
    def running(self) -> bool:
        """Whether the emulator process is still running."""
        return self._proc.poll() is None

    def stop(self) -> None:
        """Stops the emulator and frees its port (and its CA file). Safe to call twice."""
        self._finalizer()
        self._stderr_reader.join(timeout=5)

    def __enter__(self) -> Emulator:
        return self

    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        traceback: Optional[TracebackType],
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"<roomchat.testing.Emulator {getattr(self, 'base_url', '?')} pid={self.pid} {state}>"

    # ---- the admin API ----------------------------------------------------------------

    def _call(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.admin_url + path, data=data, method=method, headers={"content-type": "application/json"}
        )
        try:
            with self._admin.open(request, timeout=30) as answer:
                text = answer.read()
        except urllib.error.HTTPError as error:
            detail = error.read().decode("utf-8", "replace")
            try:
                detail = json.loads(detail).get("message", detail)
            except (ValueError, AttributeError):
                pass
            raise EmulatorError(f"{method} /_emulator{path}: {error.code} {detail}") from None
        except (urllib.error.URLError, OSError) as error:
            if not self.running:
                raise EmulatorError(
                    f"the emulator is not running (exit code {self._proc.returncode}){self._why()}"
                ) from None
            raise EmulatorError(f"{method} /_emulator{path}: {error}") from None
        return json.loads(text) if text else None

    def reset(self) -> None:
        """Back to the state it started in: users (the ``seed_users`` it started with
        made again), rooms, conversations, faults, the journal, plan gates and the
        rate-limit counters cleared; the rate limit as it was at start.

        Keys made up at start are renewed (``private_key`` and ``public_key`` change;
        keys given to the constructor are kept): a roomchat client's rate-limit budget
        is per key and process-wide, and a 429 holds it for a while, so a new key keeps
        one test's holds out of the next. Make clients after the reset (``client()``,
        the ``roomchat_client`` fixture)."""
        self._call("POST", "/reset")
        made = _test_keys()
        if self._renew_keys[0]:
            self.private_key = self._config["private_key"] = made[0]
        if self._renew_keys[1]:
            self.public_key = self._config["public_key"] = made[1]
        self._call("PUT", "/config", self._config)
        if self._seed_users:
            self.seed_users(self._seed_users)

    def seed_users(self, n: int) -> int:
        """Adds `n` users named ``seed-user-<k>``; returns the number of active users."""
        total: int = self._call("POST", "/users/seed", {"count": _count(n, "n")})["total"]
        return total

    def create_room(self, name: str = "General", *, room_id: Optional[str] = None, **fields: Any) -> Dict[str, Any]:
        """Creates a chat room and returns it as the service lists it. `room_id` is made up
        when not given; other fields (``enableChannels=True``, …) are stored as given."""
        spec: Dict[str, Any] = {"name": name, **fields}
        if room_id is not None:
            spec["roomId"] = room_id
        room: Dict[str, Any] = self._call("POST", "/rooms", spec)
        return room

    def create_bot(self, name: str = "helper", *, webhook_url: str = "https://hooks.example/bot", **fields: Any) -> Dict[str, Any]:
        """Creates a bot and returns its record (``_id`` included). Other fields go by their
        wire names (``trigger="message"``, ``messageVisibility="public"``, …) and are checked
        as the service checks them."""
        spec: Dict[str, Any] = {"name": name, "webhookURL": webhook_url, **fields}
        bot: Dict[str, Any] = self._call("POST", "/bots", spec)
        return bot

    def add_conversation(
        self,
        room_id: str,
        messages: Sequence[Union[Tuple[str, str], Mapping[str, Any]]],
        *,
        conversation_id: Optional[str] = None,
    ) -> str:
        """Adds messages to a conversation of `room_id` (a new one unless `conversation_id`
        names one); returns the conversation's id. Each message is ``(username, text)``
        or the emulator's form ``{"messages": text, "user": {"username": ...}, "created": ...}``."""
        items = []
        for message in messages:
            if isinstance(message, tuple):
                username, text = message
                items.append({"messages": text, "user": {"username": username}})
            else:
                items.append(dict(message))
        spec: Dict[str, Any] = {"roomId": room_id, "messages": items}
        if conversation_id is not None:
            spec["conversationId"] = conversation_id
        conversation: str = self._call("POST", "/conversations", spec)["conversationId"]
        return conversation

    def add_conversation_between(
        self,
        room_id: str,
        member_one: Mapping[str, Any],
        member_two: Mapping[str, Any],
        messages: Sequence[Union[Tuple[str, str], Mapping[str, Any]]] = (),
    ) -> str:
        """Adds a one-to-one conversation of `room_id` between two members, each an existing
        user (``{"userId": ...}`` or ``{"uniqueUserIdentifier": ...}``) or any object with a
        ``username``, holding `messages` (as :meth:`add_conversation`); returns its id.
        ``list_conversations`` lists it with those two members."""
        items = [
            {"messages": m[1], "user": {"username": m[0]}} if isinstance(m, tuple) else dict(m) for m in messages
        ]
        spec: Dict[str, Any] = {
            "roomId": room_id,
            "memberOne": dict(member_one),
            "memberTwo": dict(member_two),
            "messages": items,
        }
        conversation: str = self._call("POST", "/conversations", spec)["conversationId"]
        return conversation

    def add_messages(
        self,
        room_id: str,
        messages: Sequence[Union[str, Mapping[str, Any]]],
        *,
        channel_id: Optional[str] = None,
        author: Optional[Mapping[str, Any]] = None,
    ) -> List[str]:
        """Adds `messages` to room `room_id` (or to its channel `channel_id`) after those it
        holds (rooms and channels list oldest first); returns their ids. A message is its
        text, or the emulator's form ``{"message": text, "file"?: {...}, "actionButtons"?:
        [...], "created"?: ISO 8601}``. `author` (else a throw-away user ``seed-author``):
        ``{"system": True}``, an existing user (``{"userId": ...}`` or
        ``{"uniqueUserIdentifier": ...}``), a bot (``{"botId": ...}``) or ``{"user":
        {"username": ...}}``; a dict message's own author keys win."""
        items = []
        for message in messages:
            item: Dict[str, Any] = dict(author or {})
            item.update({"message": message} if isinstance(message, str) else dict(message))
            items.append(item)
        spec: Dict[str, Any] = {"roomId": room_id, "messages": items}
        if channel_id is not None:
            spec["channelId"] = channel_id
        ids: List[str] = self._call("POST", "/messages", spec)["ids"]
        return ids

    def seed_messages(
        self,
        room_id: str,
        count: int,
        *,
        channel_id: Optional[str] = None,
        text: str = "message",
        attachment_every: Optional[int] = None,
        author: Optional[Mapping[str, Any]] = None,
    ) -> int:
        """Adds `count` messages (``"<text> <n>"``, `n` counting from 1 over all the room's or
        channel's messages) in bulk to room `room_id` or its channel `channel_id`; every
        `attachment_every`-th carries a file. `author` as in :meth:`add_messages`. Returns
        how many messages the room (or channel) holds now. A million takes about a second."""
        spec: Dict[str, Any] = {"roomId": room_id, "count": _count(count, "count"), "text": text, **(author or {})}
        if channel_id is not None:
            spec["channelId"] = channel_id
        if attachment_every is not None:
            spec["attachmentEvery"] = _count(attachment_every, "attachment_every")
        total: int = self._call("POST", "/messages", spec)["total"]
        return total

    def add_channel(self, room_id: str, channel_name: str = "general", **fields: Any) -> Dict[str, Any]:
        """Adds a channel to room `room_id` and returns it as create channel answers it
        (``_id`` included). Other fields by their wire names (``enabled=True``,
        ``notifyAllUsers=False``, ``metadata="..."``), checked as the service checks them."""
        spec: Dict[str, Any] = {"roomId": room_id, "channelName": channel_name, **fields}
        channel: Dict[str, Any] = self._call("POST", "/channels", spec)
        return channel

    def add_member(
        self,
        room_id: str,
        *,
        unique_user_identifier: Optional[str] = None,
        user_id: Optional[str] = None,
        role_name: str = "user",
    ) -> Dict[str, Any]:
        """Makes an existing user (by exactly one of `unique_user_identifier`, `user_id`) a
        member of room `room_id` with `role_name` (``admin``, ``moderator``, ``guest`` or
        ``user``), or changes their role; returns the member record as ``list_members``
        lists it."""
        if (unique_user_identifier is None) == (user_id is None):
            raise TypeError("give exactly one of unique_user_identifier, user_id")
        spec: Dict[str, Any] = {"roomId": room_id, "roleName": role_name}
        if user_id is not None:
            spec["userId"] = user_id
        else:
            spec["uniqueUserIdentifier"] = unique_user_identifier
        member: Dict[str, Any] = self._call("POST", "/members", spec)
        return member

    def _fault(self, path: str, method: Optional[str], times: int, action: Dict[str, Any]) -> None:
        rule: Dict[str, Any] = {"path": path, "times": _count(times, "times"), "action": action}
        if method is not None:
            rule["method"] = method
        self._call("POST", "/faults", rule)

    def fail_next(
        self,
        path: str = "*",
        *,
        status: int = 500,
        body: Union[str, Mapping[str, Any], None] = None,
        retry_after: Union[int, str, None] = None,
        times: int = 1,
        method: Optional[str] = None,
        headers: Optional[Mapping[str, str]] = None,
        content_type: Optional[str] = None,
    ) -> None:
        """The next `times` requests to `path` (exact, or a prefix ending in ``*``; ``*``
        is every request) with `method` (any when None) are answered `status` with
        `body` (text, or a mapping sent as JSON; by default the service's own body for
        429, else ``{"message": <reason>}``) and a ``Retry-After`` of `retry_after`
        (whole seconds or an HTTP date), without taking effect.

        A 429 without ``Retry-After`` makes a roomchat client hold its key for one
        window of its rate limit (process-wide): give one to keep tests fast."""
        if not isinstance(status, int) or isinstance(status, bool) or not 100 <= status <= 999:
            raise ValueError(f"status must be an HTTP status (100 to 999), not {status!r}")
        if body is None:
            text = json.dumps({"message": "Too many requests" if status == 429 else _reason(status)})
        elif isinstance(body, str):
            text = body
        else:
            text = json.dumps(dict(body))
        sent = dict(headers or {})
        if retry_after is not None:
            if isinstance(retry_after, bool) or not isinstance(retry_after, (int, str)):
                raise TypeError("retry_after must be whole seconds (int) or an HTTP date (str)")
            if isinstance(retry_after, int) and retry_after < 0:
                raise ValueError("retry_after must not be negative")
            sent["Retry-After"] = str(retry_after)
        action: Dict[str, Any] = {"kind": "respond", "status": status, "body": text, "headers": sent}
        if content_type is not None:
            action["content_type"] = content_type
        self._fault(path, method, times, action)

    def delay_next(self, path: str = "*", *, seconds: float, times: int = 1, method: Optional[str] = None) -> None:
        """The next `times` matching requests take effect as usual, and their answers are
        held back `seconds` (a client timeout shorter than that sees a timeout)."""
        self._fault(path, method, times, {"kind": "delay", "ms": _millis(seconds, "seconds", zero=True)})

    def drop_connection_next(self, path: str = "*", *, times: int = 1, method: Optional[str] = None) -> None:
        """The next `times` matching requests get no answer: the connection is closed
        before a byte is written (and the request takes no effect)."""
        self._fault(path, method, times, {"kind": "close"})

    def set_rate_limit(self, requests: int, window: float = 60.0, *, headers: Optional[bool] = None) -> None:
        """The account's rate limit: `requests` per `window` seconds (counted per key, over a
        sliding window; 429 past it). `headers` turns the ``X-RateLimit-*`` headers (and
        ``Retry-After`` on 429) on or off. Until the next :meth:`reset`."""
        if isinstance(requests, bool) or not isinstance(requests, int) or requests < 1:
            raise ValueError(f"requests must be a whole number of at least 1, not {requests!r}")
        change: Dict[str, Any] = {"rate_limit": {"requests": requests, "window_ms": _millis(window, "window")}}
        if headers is not None:
            change["rate_limit_headers"] = bool(headers)
        self._call("PUT", "/config", change)

    def gate(self, endpoint: str) -> None:
        """Takes an endpoint out of the account's plan: it answers 400 "not available on
        your current plan" (``roomchat.PlanUpgradeRequiredError``) until the next reset.
        `endpoint` is ``"GET /consumer/api/v1/chatrooms"``, or a path alone for every
        method; a path ending in ``*`` is a prefix."""
        method, _, path = endpoint.strip().rpartition(" ")
        if not path.startswith("/"):
            raise ValueError(f"endpoint must be a path, or a method and a path: {endpoint!r}")
        self._call("POST", "/gate", {"method": method.strip().upper() or "*", "path": path})

    def journal(self) -> List[JournalEntry]:
        """The requests received since the last reset, oldest first (at most the latest 10,000)."""
        entries = self._call("GET", "/journal")["entries"]
        return [self._entry(raw) for raw in entries]

    def _entry(self, raw: Mapping[str, Any]) -> JournalEntry:
        # The emulator shows `auth` and `publicKey` as REDACTED already; the key is
        # also taken out of any other field it might have been put in.
        # The key as sent and percent-encoded (as a client puts it in a URL), in either hex case.
        encoded = urllib.parse.quote(self.private_key, safe="") if self.private_key else ""
        forms = dict.fromkeys(
            [self.private_key, encoded, re.sub(r"%[0-9A-F]{2}", lambda m: m.group(0).lower(), encoded)]
            if self.private_key
            else []
        )

        def scrub(text: str) -> str:
            for form in forms:
                text = text.replace(form, "REDACTED")
            return text

        query = scrub(raw["query"])
        return JournalEntry(
            seq=raw["seq"],
            method=raw["method"],
            path=scrub(raw["path"]),
            query=query,
            # Decoded, a query may spell the key in a form not scrubbed above (`+` for a blank).
            params={scrub(n): scrub(v) for n, v in urllib.parse.parse_qsl(query, keep_blank_values=True)},
            body=scrub(raw["body"]),
            status=raw["status"],
            received_at=datetime.datetime.fromtimestamp(raw["received_at_ms"] / 1000.0, tz=datetime.timezone.utc),
            user_agent=None if raw["user_agent"] is None else scrub(raw["user_agent"]),
            truncated=raw["truncated"],
            headers=JournalHeaders((name, scrub(value)) for name, value in raw["headers"]),
        )

    def users(self) -> List[EmulatedUser]:
        """Every user the emulator holds, deactivated ones too, in creation order."""
        return [
            EmulatedUser(
                user_id=u["userId"],
                username=u["username"],
                is_moderator=u["isModerator"],
                active=u["active"],
                created=u["created"],
                chat_room=u.get("chatRoom"),
                unique_user_identifier=u.get("uniqueUserIdentifier"),
                email=u.get("email"),
                profile_pic=u.get("profilePic"),
                external_user_id=u.get("externalUserId"),
                meta=u.get("meta"),
            )
            for u in self._call("GET", "/users")["users"]
        ]

    # ---- clients ----------------------------------------------------------------------

    def _client_options(self, options: Dict[str, Any]) -> Dict[str, Any]:
        settings: Dict[str, Any] = {
            "base_url": self.base_url,
            "chat_url": self.chat_url,
            "public_key": self.public_key,
            # No throttling of our own, and a 429 without Retry-After holds the key for a
            # second, not a minute: the budget is per key and process-wide, so a hold
            # would outlast the test that caused it.
            "rate_limit": roomchat.RateLimit(requests=1_000_000, window=1.0),
        }
        if self.ca_file is not None:
            settings["ca_bundle"] = self.ca_file
        settings.update(options)
        return settings

    def client(self, **options: Any) -> roomchat.Client:
        """A :class:`roomchat.Client` of this emulator: its URLs and keys (and CA with
        ``tls=True``), no client-side throttling (``rate_limit`` 1,000,000 per second:
        the emulator's limit answers 429 as the service would), the library's defaults
        otherwise; any ``roomchat.Client`` option overrides these."""
        settings = self._client_options(options)
        key = settings.pop("private_key", self.private_key)
        return roomchat.Client(key, **settings)

    def async_client(self, **options: Any) -> roomchat.AsyncClient:
        """A :class:`roomchat.AsyncClient` of this emulator, set up as :meth:`client`."""
        settings = self._client_options(options)
        key = settings.pop("private_key", self.private_key)
        return roomchat.AsyncClient(key, **settings)


def _test_keys() -> Tuple[str, str]:
    """A private and a public key of its own, unlike any other emulator's."""
    token = os.urandom(8).hex()
    return f"sk_test_emulator_{token}", f"pk_test_emulator_{token}"


def _count(value: int, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{name} must be a whole number of at least 0, not {value!r}")
    return value


def _millis(seconds: float, name: str, zero: bool = False) -> int:
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not seconds >= 0:
        raise ValueError(f"{name} must be a number of seconds, not {seconds!r}")
    ms = round(seconds * 1000)
    if ms < (0 if zero else 1):
        raise ValueError(f"{name} must be at least 1 ms, not {seconds!r} s")
    return ms


def _reason(status: int) -> str:
    try:
        return http.HTTPStatus(status).phrase
    except ValueError:
        return f"HTTP {status}"
