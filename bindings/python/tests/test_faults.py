"""The fault matrix: every fault the emulator offers x every endpoint ends in the
right exception class (or, for a wrong content type, in the normal answer), and a
POST is never sent twice after a fault that may have let it take effect (journal)."""

from __future__ import annotations

import json
from typing import Any, Callable, Dict, List, Optional, Tuple, Type

import pytest

import roomchat
from conftest import OVER_NET, Emulator

# Each attempt's timeout: across the test network (~25 ms round trips, a handshake per
# connection, 1% of chunks 200 ms late) 0.3 s is too short for an answer that comes; the
# delay fault (1.5 s) outlasts either.
ATTEMPT_TIMEOUT = 1.0 if OVER_NET else 0.3

MAX_RETRIES = 1

# endpoint name -> (method, fault path, call)
Call = Callable[[roomchat.Client, Dict[str, str]], object]
ENDPOINTS: Dict[str, Tuple[str, str, Call]] = {
    "list_users": ("GET", "/consumer/api/v2/users", lambda c, s: c.list_users()),
    "deactivate_user": (
        "DELETE",
        "/consumer/api/v2/user/deactivate",
        lambda c, s: c.deactivate_user(unique_user_identifier="victim"),
    ),
    "conversation_messages": (
        "GET",
        "/consumer/api/v2/room/*",
        lambda c, s: c.conversation_messages("bbNiVFoXm", s["conversation"]),
    ),
    "create_user": ("POST", "/consumer/api/v1/user", lambda c, s: c.create_user("matrix-user")),
    "list_chat_rooms": ("GET", "/consumer/api/v1/chatrooms", lambda c, s: c.list_chat_rooms()),
    "raw_request": (
        "GET",
        "/consumer/api/v1/validate",
        lambda c, s: c.raw_request("GET", "/consumer/api/v1/validate", query={"accessToken": s["token"]}, auth="public"),
    ),
    "reactivate_user": (
        "POST",
        "/consumer/api/v2/user/reactivate",
        lambda c, s: c.reactivate_user(unique_user_identifier="dormant"),
    ),
    "validate_access_token": (
        "POST",
        "/consumer/api/v1/user/accessToken/validate",
        lambda c, s: c.validate_access_token(s["token"]),
    ),
    "invalidate_access_token": (
        "POST",
        "/consumer/api/v1/user/accesstoken/invalidate",
        lambda c, s: c.invalidate_access_token(s["token"]),
    ),
}

# POSTs that change something: never sent twice after a fault that may have let them
# take effect. Validate access token is a POST too, but only reads: retried as a GET.
SENT_ONCE = {"create_user", "reactivate_user", "invalidate_access_token"}

# fault name -> (action, expected class, or None: the normal answer)
FAULTS: Dict[str, Tuple[Dict[str, Any], Optional[Type[roomchat.RoomchatError]]]] = {
    "respond_500": ({"kind": "respond", "status": 500, "body": '{"message":"boom","eventId":"ev"}'}, roomchat.ServerError),
    "respond_429": (
        {"kind": "respond", "status": 429, "body": '{"message":"Too many requests"}', "headers": {"Retry-After": "0"}},
        roomchat.RateLimitedError,
    ),
    "respond_401": ({"kind": "respond", "status": 401, "body": '{"message":"invalid auth token"}'}, roomchat.InvalidAuthError),
    "respond_404": ({"kind": "respond", "status": 404, "body": "{}"}, roomchat.NotFoundError),
    "delay": ({"kind": "delay", "ms": 1500}, roomchat.TimeoutError),
    "close": ({"kind": "close"}, roomchat.ConnectionError),
    "truncate": ({"kind": "truncate"}, roomchat.DecodeError),
    "not_json": ({"kind": "not_json"}, roomchat.DecodeError),
    "wrong_content_type": ({"kind": "wrong_content_type"}, None),
    "large_body": ({"kind": "large_body", "bytes": 40_000}, roomchat.ResponseTooLargeError),
}


RETRIED_IF_IDEMPOTENT = {"respond_500", "delay", "close", "truncate", "large_body"}


def setup_state(emu: Emulator) -> Dict[str, str]:
    emu.room("bbNiVFoXm")
    conversation = emu.conversation("bbNiVFoXm", [{"messages": "hi", "user": {"username": "jon"}}])
    with emu.client() as client:
        token = client.create_user("victim", unique_user_identifier="victim").access_token
        client.create_user("dormant", unique_user_identifier="dormant")
        client.deactivate_user(unique_user_identifier="dormant")
    emu.clear_journal()
    return {"conversation": conversation, "token": token}


def matches(entry: Dict[str, Any], method: str, path: str) -> bool:
    if entry["method"] != method:
        return False
    return entry["path"].startswith(path[:-1]) if path.endswith("*") else entry["path"] == path


@pytest.mark.parametrize("endpoint", list(ENDPOINTS))
@pytest.mark.parametrize("fault", list(FAULTS))
def test_fault_matrix(emu: Emulator, fault: str, endpoint: str) -> None:
    state = setup_state(emu)
    method, path, call = ENDPOINTS[endpoint]
    action, expected = FAULTS[fault]
    emu.fault(path, action, method=method, times=10)
    client = emu.client(max_retries=MAX_RETRIES, timeout=ATTEMPT_TIMEOUT, max_response_bytes=20_000)
    if expected is None:
        call(client, state)
    else:
        with pytest.raises(roomchat.RoomchatError) as caught:
            call(client, state)
        assert type(caught.value) is expected, f"{fault} x {endpoint}: {caught.value!r}"
    sent = [e for e in emu.journal() if matches(e, method, path)]
    # Retried: a 429 for every method (the service refused it); a 5xx, a timeout, a broken
    # or cut-off answer only for GET, DELETE and validate (a POST may have taken effect).
    retried = fault == "respond_429" or (fault in RETRIED_IF_IDEMPOTENT and endpoint not in SENT_ONCE)
    assert len(sent) == (1 + MAX_RETRIES if retried else 1), f"{fault} x {endpoint}: sent {len(sent)} times"
    if endpoint == "create_user":
        emu.clear_faults()
        with emu.client() as plain:
            created = [u for u in plain.users() if u.username == "matrix-user"]
        # Only a delayed answer and a wrong content type let the emulator handle the POST: once.
        assert len(created) == (1 if fault in ("delay", "wrong_content_type") else 0)


def test_retry_non_idempotent_sends_a_post_again(emu: Emulator) -> None:
    emu.fault("/consumer/api/v1/user", {"kind": "respond", "status": 503, "body": "{}"}, method="POST", times=1)
    with emu.client(retry_non_idempotent=True) as client:
        client.create_user("again")
    posts = [e for e in emu.journal() if e["method"] == "POST"]
    assert [e["status"] for e in posts] == [503, 200]
    assert json.loads(posts[1]["body"])["username"] == "again"
