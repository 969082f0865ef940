"""The shared conformance vectors (tests/conformance/) through roomchat.wire."""

from __future__ import annotations

import json
import pathlib
from typing import Any, Dict, List

import pytest

import roomchat
from conftest import REPO

VECTORS = REPO / "tests" / "conformance"


def load(name: str) -> List[Dict[str, Any]]:
    vectors: List[Dict[str, Any]] = json.loads((VECTORS / name).read_text())
    return vectors


REQUESTS = load("requests.json")
RESPONSES = load("responses.json")


@pytest.mark.parametrize("vector", REQUESTS, ids=[v["name"] for v in REQUESTS])
def test_request_vector(vector: Dict[str, Any]) -> None:
    if "expect_error" in vector:
        with pytest.raises(roomchat.RoomchatError) as caught:
            roomchat.wire.build_request(vector["operation"], vector["params"])
        assert caught.value.kind == vector["expect_error"]
        return
    request = roomchat.wire.build_request(
        vector["operation"], vector["params"], base_url="https://api.example.com", key="REDACTED"
    )
    expect = vector["expect"]
    assert request["method"] == expect["method"]
    assert request["path"] == expect["path"]
    assert request["query"] == expect["query"]
    assert request["body"] == expect["body"]
    if "url" in expect:
        assert request["url"] == expect["url"]


@pytest.mark.parametrize("vector", RESPONSES, ids=[v["name"] for v in RESPONSES])
def test_response_vector(vector: Dict[str, Any]) -> None:
    args = (vector["operation"], vector["status"], [tuple(h) for h in vector["headers"]], vector["body"].encode())
    expect = vector["expect"]
    if "ok" in expect:
        assert roomchat.wire.decode_response(*args) == expect["ok"]
        return
    want = expect["error"]
    with pytest.raises(roomchat.RoomchatError) as caught:
        roomchat.wire.decode_response(*args)
    error = caught.value
    assert error.kind == want["kind"]
    assert type(error).kind == want["kind"]  # the kind's own class
    assert error.status == want.get("status")
    if "message" in want:
        assert error.message == want["message"]
    assert error.event_id == want.get("event_id")
    service = want.get("service", {})
    assert (error.service_message, error.service_error, error.service_error_message) == (
        service.get("message"),
        service.get("error"),
        service.get("errorMessage"),
    )
    expected_retry = want.get("retry_after_ms")
    if expected_retry is None:
        assert error.retry_after is None
    else:
        assert error.retry_after is not None and round(error.retry_after * 1000) == expected_retry


def test_vectors_were_found() -> None:
    assert len(REQUESTS) >= 20 and len(RESPONSES) >= 20


def test_wire_module_extras() -> None:
    # Every declared operation (api/operations.toml, in its order), then core's escape hatch.
    assert len(roomchat.wire.OPERATIONS) == 42 and roomchat.wire.OPERATIONS[-1] == "raw"
    assert roomchat.wire.OPERATIONS[:10] == (
        "list_users",
        "deactivate_user",
        "conversation_messages",
        "create_user",
        "list_chat_rooms",
        "reactivate_user",
        "validate_access_token",
        "invalidate_access_token",
        "eject_all_users",
        "update_bot",
    )
    assert {"create_chat_room", "room_messages", "send_bot_message"} <= set(roomchat.wire.OPERATIONS)
    assert roomchat.wire.build_request("validate_access_token", {"accessToken": "t"})["auth"] == "public_key"
    with pytest.raises(roomchat.ValidationError, match="unknown operation"):
        roomchat.wire.build_request("drop_tables", {})
    assert roomchat.wire.build_request("list_chat_rooms")["path"] == "/consumer/api/v1/chatrooms"
    # headers as a dict, body as str
    decoded = roomchat.wire.decode_response("list_chat_rooms", 200, {"Content-Type": "application/json"}, "[]")
    assert decoded == []
    with pytest.raises(TypeError):
        roomchat.wire.decode_response("list_chat_rooms", 200, [], 7)  # type: ignore[arg-type]
