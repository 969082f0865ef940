"""Every error kind: its class, its attributes, pickling, and the key in none of
str/repr/traceback/pickle/log records."""

from __future__ import annotations

import builtins
import json
import logging
import pickle
import traceback
from typing import Callable, Dict, List, Tuple

import pytest

import roomchat
from conftest import SECRET_KEY, Emulator, free_port

WRONG_KEY = "sk_live_SECRET_wrongkey_0123456789"
PADDED_KEY = " sk_live_SECRET_padded_0123456789 "
USERS = "/consumer/api/v2/users"


def cases(emu: Emulator) -> Dict[str, Callable[[], object]]:
    """One call per error kind that ends in that kind, by its core name."""
    client = emu.client(max_retries=0)
    return {
        "missing_auth": lambda: client.raw_request("GET", USERS, auth="none"),
        "invalid_auth": lambda: emu.client(private_key=WRONG_KEY).list_users(),
        "invalid_request": lambda: (
            emu.fault(USERS, {"kind": "respond", "status": 400, "body": f'{{"message":"bad {SECRET_KEY}"}}'}),
            client.list_users(),
        ),
        "user_not_found": lambda: client.deactivate_user(user_id="000000000000000000000000"),
        "not_found": lambda: client.get_chat_room("nope"),
        "plan_upgrade_required": lambda: (emu.gate("GET", "/consumer/api/v1/chatrooms"), client.list_chat_rooms()),
        "rate_limited": lambda: (
            # Retry-After 0: a 429 holds off every client of the key (process-wide) until it clears.
            emu.fault(USERS, {"kind": "respond", "status": 429, "body": "{}", "headers": {"Retry-After": "0"}}),
            client.list_users(),
        ),
        "server_error": lambda: (
            emu.fault(USERS, {"kind": "respond", "status": 500, "body": '{"message":"boom","eventId":"ev-42"}'}),
            client.list_users(),
        ),
        # (A JSON 404, the emulator's answer to an unknown path, is `not_found` since issue 29.)
        "unexpected_status": lambda: (
            emu.fault(USERS, {"kind": "respond", "status": 418, "body": "{}"}),
            client.list_users(),
        ),
        "timeout": lambda: (
            emu.fault(USERS, {"kind": "delay", "ms": 1500}),
            emu.client(max_retries=0, timeout=0.2).list_users(),
        ),
        "connection": lambda: emu.client(base_url=f"http://127.0.0.1:{free_port()}", max_retries=0).list_users(),
        "decode": lambda: (emu.fault(USERS, {"kind": "not_json"}), client.list_users()),
        "response_too_large": lambda: (
            emu.fault(USERS, {"kind": "large_body", "bytes": 50_000}),
            emu.client(max_response_bytes=10_000, max_retries=0).list_users(),
        ),
        "validation": lambda: client.list_users(limit=201),
        "configuration": lambda: roomchat.Client(PADDED_KEY, base_url=emu.base_url),
        "cancelled": lambda: cancelled_call(client),
        # A shared budget whose Redis is not there, failing closed; the URL's password
        # is the key's text, so the key check below covers the password too.
        "budget_unavailable": lambda: emu.client(
            max_retries=0,
            rate_limit=roomchat.RateLimit(
                requests=100,
                window=60.0,
                redis_url=f"redis://:{SECRET_KEY}@127.0.0.1:{free_port()}/0",
                on_redis_error="fail_closed",
                redis_connect_timeout=0.2,
            ),
        ).list_users(),
        # https:// to the emulator's plain-HTTP port: the TLS handshake breaks.
        "tls": lambda: emu.client(base_url=emu.base_url.replace("http://", "https://"), max_retries=0).list_users(),
    }


def cancelled_call(client: roomchat.Client) -> object:
    token = roomchat.CancelToken()
    token.cancel()
    assert token.cancelled
    return client.with_cancel(token).list_users()


EXPECTED: List[Tuple[str, int, type]] = [
    ("missing_auth", 1, roomchat.MissingAuthError),
    ("invalid_auth", 2, roomchat.InvalidAuthError),
    ("invalid_request", 3, roomchat.InvalidRequestError),
    ("user_not_found", 4, roomchat.UserNotFoundError),
    ("plan_upgrade_required", 5, roomchat.PlanUpgradeRequiredError),
    ("rate_limited", 6, roomchat.RateLimitedError),
    ("server_error", 7, roomchat.ServerError),
    ("unexpected_status", 8, roomchat.UnexpectedStatusError),
    ("timeout", 9, roomchat.TimeoutError),
    ("connection", 10, roomchat.ConnectionError),
    ("decode", 11, roomchat.DecodeError),
    ("response_too_large", 12, roomchat.ResponseTooLargeError),
    ("validation", 13, roomchat.ValidationError),
    ("configuration", 14, roomchat.ConfigurationError),
    ("cancelled", 15, roomchat.CancelledError),
    ("budget_unavailable", 16, roomchat.BudgetUnavailableError),
    ("tls", 17, roomchat.TlsError),
    ("not_found", 18, roomchat.NotFoundError),
]


def test_kinds_match_the_core() -> None:
    from roomchat import _native

    assert [(code, name) for name, code, _ in EXPECTED] == _native.ERROR_KINDS
    for name, code, cls in EXPECTED:
        assert (cls.kind, cls.code) == (name, code)


def test_hierarchy() -> None:
    assert issubclass(roomchat.MissingAuthError, roomchat.AuthenticationError)
    assert issubclass(roomchat.InvalidAuthError, roomchat.AuthenticationError)
    assert issubclass(roomchat.AuthenticationError, roomchat.RoomchatError)
    assert issubclass(roomchat.TimeoutError, builtins.TimeoutError)
    assert issubclass(roomchat.ConnectionError, builtins.ConnectionError)
    assert issubclass(roomchat.ValidationError, ValueError)
    assert issubclass(roomchat.ConfigurationError, ValueError)
    assert issubclass(roomchat.UserNotFoundError, roomchat.NotFoundError)
    assert not issubclass(roomchat.NotFoundError, roomchat.UserNotFoundError)
    for _, _, cls in EXPECTED:
        assert issubclass(cls, roomchat.RoomchatError) and issubclass(cls, Exception)
        assert cls.__module__ == "roomchat"


@pytest.mark.parametrize("name,code,cls", EXPECTED, ids=[e[0] for e in EXPECTED])
def test_each_kind_its_class_pickles_and_hides_the_key(
    emu: Emulator, caplog: pytest.LogCaptureFixture, name: str, code: int, cls: type
) -> None:
    caplog.set_level(logging.DEBUG, logger="roomchat")
    with pytest.raises(roomchat.RoomchatError) as caught:
        cases(emu)[name]()
    error = caught.value
    assert type(error) is cls, f"{name}: {type(error).__name__}: {error}"
    assert (error.kind, error.code) == (name, code)

    again = pickle.loads(pickle.dumps(error))
    assert type(again) is cls
    assert str(again) == str(error) and again.args == error.args
    for attr in (
        "message", "status", "method", "path", "event_id", "retry_after", "kind", "code",
        "service_message", "service_error", "service_error_message",
    ):
        assert getattr(again, attr) == getattr(error, attr), attr

    shown = [
        str(error),
        repr(error),
        "".join(traceback.format_exception(type(error), error, error.__traceback__)),
        repr(vars(error)),
        repr(pickle.dumps(error)),
        pickle.dumps(error).decode("latin-1"),
    ]
    for record in caplog.records:
        shown += [record.getMessage(), repr(vars(record))]
    for secret in (SECRET_KEY, WRONG_KEY, PADDED_KEY.strip()):
        for text in shown:
            assert secret not in text


def test_attributes_of_a_server_error(emu: Emulator) -> None:
    emu.fault(USERS, {"kind": "respond", "status": 503, "body": '{"message":"down","eventId":"ev-7"}'}, times=3)
    with emu.client(max_retries=0) as client, pytest.raises(roomchat.ServerError) as caught:
        client.list_users(limit=5)
    error = caught.value
    assert (error.status, error.event_id, error.method, error.message) == (503, "ev-7", "GET", "down")
    assert error.path == "/consumer/api/v2/users?auth=REDACTED&limit=5"
    assert str(error) == "down (GET /consumer/api/v2/users?auth=REDACTED&limit=5, HTTP 503) [eventId ev-7]"


def test_the_services_detail_is_in_the_message_and_each_text_an_attribute(emu: Emulator) -> None:
    detail = '"actionButtons[0].type" must be one of [link, action]'
    body = json.dumps({"message": "invalid request", "error": detail, "success": False})
    emu.fault(USERS, {"kind": "respond", "status": 400, "body": body})
    with emu.client(max_retries=0) as client, pytest.raises(roomchat.InvalidRequestError) as caught:
        client.list_users(limit=5)
    error = caught.value
    assert error.message == f"invalid request: {detail}"
    assert (error.service_message, error.service_error, error.service_error_message) == ("invalid request", detail, None)
    assert str(error).startswith(f"invalid request: {detail} (GET ")
    again = pickle.loads(pickle.dumps(error))
    assert (again.service_message, again.service_error) == ("invalid request", detail)


def test_retry_after_in_seconds(emu: Emulator) -> None:
    with emu.other_key("sk_live_SECRET_pytest_retry_after") as key:
        emu.fault(USERS, {"kind": "respond", "status": 429, "body": "{}", "headers": {"Retry-After": "7"}})
        client = emu.client(private_key=key, max_retries=0)
        with pytest.raises(roomchat.RateLimitedError) as caught:
            client.list_users()
        assert caught.value.retry_after == 7.0
        state = client.rate_limit_state()
        assert state.blocked_for is not None and 6.0 < state.blocked_for <= 7.0


def test_errors_can_be_made_by_hand() -> None:
    error = roomchat.ServerError("it broke", status=500, event_id="e1")
    assert (str(error), error.message, error.kind, error.code, error.status) == ("it broke", "it broke", "server_error", 7, 500)
    again = pickle.loads(pickle.dumps(error))
    assert (type(again), again.event_id) == (roomchat.ServerError, "e1")
    with pytest.raises(ValueError):
        raise roomchat.ValidationError("bad")
