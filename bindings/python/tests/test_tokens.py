"""Reactivate user, validate and invalidate access token, against the emulator: the
lifecycle, the typed record, errors, no second POST after a 5xx, the public key."""

from __future__ import annotations

import asyncio
import datetime
import json
import logging
import pickle
import urllib.error
import urllib.request
from typing import Any, Dict, List

import pytest

import roomchat
from conftest import PUBLIC_KEY, SECRET_KEY, Emulator

REACTIVATE = "/consumer/api/v2/user/reactivate"
VALIDATE = "/consumer/api/v1/user/accessToken/validate"
INVALIDATE = "/consumer/api/v1/user/accesstoken/invalidate"


def sent(emu: Emulator, path: str) -> List[Dict[str, Any]]:
    return [e for e in emu.journal() if e["method"] == "POST" and e["path"] == path]


def sign_in_status(emu: Emulator, room: str, token: str) -> int:
    """The status a browser gets for the sign-in page (the admin opener trusts the CA)."""
    try:
        with emu._admin.open(f"{emu.chat_url}/{room}?accessToken={token}", timeout=30) as page:
            status: int = page.status
            return status
    except urllib.error.HTTPError as error:
        return error.code


def test_the_lifecycle(emu: Emulator, client: roomchat.Client) -> None:
    emu.room("r1")
    before = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(seconds=2)
    bob = client.create_user(
        "bob", is_moderator=True, chat_room="r1", unique_user_identifier="crm-7", external_user_id="ext-7"
    )

    user = client.validate_access_token(bob.access_token)
    assert isinstance(user, roomchat.TokenUser)
    assert (user.id, user.username, user.is_moderator, user.chat_room) == (bob.user_id, "bob", True, "r1")
    assert user.external_user_id == "ext-7"
    assert user.iat is not None and user.iat.tzinfo is datetime.timezone.utc
    assert before <= user.iat <= datetime.datetime.now(datetime.timezone.utc)
    assert user.created is not None and user.updated == user.created
    assert user.extra["createdUsingApi"] is True and user.extra["__v"] == 0
    request = sent(emu, VALIDATE)[-1]
    assert request["query"] == "publicKey=REDACTED"
    assert json.loads(request["body"]) == {"accessToken": bob.access_token}
    assert sign_in_status(emu, "r1", bob.access_token) == 200

    client.deactivate_user(user_id=bob.user_id)
    with pytest.raises(roomchat.InvalidRequestError) as caught:
        client.validate_access_token(bob.access_token)
    assert (caught.value.status, caught.value.message) == (400, "invalid accessToken")
    assert caught.value.path == f"{VALIDATE}?publicKey=REDACTED"
    assert sign_in_status(emu, "r1", bob.access_token) == 401

    back = client.reactivate_user(unique_user_identifier="crm-7")
    assert isinstance(back, roomchat.Reactivated)
    assert (back.success, back.message) == (True, "user reactivated")
    assert json.loads(sent(emu, REACTIVATE)[-1]["body"]) == {"uniqueUserIdentifier": "crm-7"}
    assert client.list_users().total == 1
    assert client.validate_access_token(bob.access_token).id == bob.user_id
    assert sign_in_status(emu, "r1", bob.access_token) == 200
    client.deactivate_user(user_id=bob.user_id)
    client.reactivate_user(user_id=bob.user_id)
    assert json.loads(sent(emu, REACTIVATE)[-1]["body"]) == {"userId": bob.user_id}

    done = client.invalidate_access_token(bob.access_token)
    assert isinstance(done, roomchat.Invalidated) and done.success
    assert sent(emu, INVALIDATE)[-1]["query"].startswith("auth=REDACTED")
    with pytest.raises(roomchat.InvalidRequestError, match="invalid accessToken"):
        client.validate_access_token(bob.access_token)
    with pytest.raises(roomchat.InvalidRequestError):
        client.invalidate_access_token(bob.access_token)
    assert sign_in_status(emu, "r1", bob.access_token) == 401
    assert client.list_users().total == 1, "the user is still active"


def test_reactivating_an_unknown_or_active_user_raises_user_not_found(client: roomchat.Client) -> None:
    jon = client.create_user("jon")
    for kwargs in ({"user_id": "0" * 24}, {"unique_user_identifier": "crm-404"}, {"user_id": jon.user_id}):
        with pytest.raises(roomchat.UserNotFoundError) as caught:
            client.reactivate_user(**kwargs)
        assert (caught.value.status, caught.value.method) == (400, "POST")
        assert caught.value.path == f"{REACTIVATE}?auth=REDACTED"


def test_bad_arguments_send_nothing(emu: Emulator, client: roomchat.Client) -> None:
    with pytest.raises(roomchat.ValidationError):
        client.reactivate_user()
    with pytest.raises(roomchat.ValidationError):
        client.reactivate_user(user_id="a", unique_user_identifier="b")
    with pytest.raises(roomchat.ValidationError):
        client.reactivate_user(user_id="")
    with pytest.raises(TypeError):
        client.reactivate_user(user_id=7)  # type: ignore[arg-type]
    with pytest.raises(roomchat.ValidationError):
        client.validate_access_token("")
    with pytest.raises(roomchat.ValidationError):
        client.invalidate_access_token("")
    with pytest.raises(TypeError):
        client.validate_access_token(b"token")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        client.invalidate_access_token(None)  # type: ignore[arg-type]
    assert emu.journal() == []


def test_validate_needs_the_public_key(emu: Emulator, client: roomchat.Client) -> None:
    token = client.create_user("jon").access_token
    emu.clear_journal()
    with emu.client(public_key=None) as keyless:
        with pytest.raises(roomchat.ConfigurationError, match="public key"):
            keyless.validate_access_token(token)
    assert emu.journal() == []
    with emu.client(public_key="pk_wrong_but_plausible") as wrong:
        with pytest.raises(roomchat.InvalidAuthError) as caught:
            wrong.validate_access_token(token)
    assert "pk_wrong" not in str(caught.value) and "pk_wrong" not in repr(caught.value)


@pytest.mark.parametrize("path", [REACTIVATE, INVALIDATE])
@pytest.mark.parametrize("fault", [{"kind": "respond", "status": 503, "body": '{"message":"busy","eventId":"ev-py"}'}, {"kind": "close"}])
def test_reactivate_and_invalidate_are_sent_once_after_a_5xx_or_a_lost_answer(
    emu: Emulator, client: roomchat.Client, path: str, fault: Dict[str, Any]
) -> None:
    jon = client.create_user("jon")
    client.deactivate_user(user_id=jon.user_id)
    emu.clear_journal()
    emu.fault(path, fault, method="POST", times=5)
    expected = roomchat.ServerError if fault["kind"] == "respond" else roomchat.ConnectionError
    with pytest.raises(expected) as caught:
        if path == REACTIVATE:
            client.reactivate_user(user_id=jon.user_id)
        else:
            client.invalidate_access_token(jon.access_token)
    if expected is roomchat.ServerError:
        assert caught.value.event_id == "ev-py"
    assert len(sent(emu, path)) == 1


def test_validate_is_retried_as_a_read(emu: Emulator, client: roomchat.Client) -> None:
    token = client.create_user("jon").access_token
    emu.clear_journal()
    emu.fault(VALIDATE, {"kind": "respond", "status": 503, "body": "{}"}, method="POST", times=1)
    assert client.validate_access_token(token).username == "jon"
    assert [e["status"] for e in sent(emu, VALIDATE)] == [503, 200]


def test_models_round_trip_and_never_show_a_secret(
    emu: Emulator, client: roomchat.Client, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="roomchat")
    jon = client.create_user("jon", external_user_id="ext-1")
    user = client.validate_access_token(jon.access_token)
    wire = user.to_dict()
    assert wire["_id"] == jon.user_id and isinstance(wire["iat"], int)
    assert roomchat.TokenUser.from_dict(wire) == user
    assert pickle.loads(pickle.dumps(user)) == user
    assert hash(roomchat.TokenUser.from_dict(wire)) == hash(user)
    assert repr(user) == f"TokenUser(id='{jon.user_id}', username='jon')"
    assert roomchat.TokenUser.from_dict({"_id": "u1", "iat": 1705332104.5}).iat == datetime.datetime(
        2024, 1, 15, 15, 21, 44, 500000, tzinfo=datetime.timezone.utc
    )
    with pytest.raises(roomchat.ValidationError):
        roomchat.TokenUser.from_dict({"username": "no id"})
    client.deactivate_user(user_id=jon.user_id)
    back = client.reactivate_user(user_id=jon.user_id)
    assert repr(back) == "Reactivated(success=True, message='user reactivated')"
    assert pickle.loads(pickle.dumps(back)) == back
    done = client.invalidate_access_token(jon.access_token)
    assert done.to_dict() == {"success": True} and repr(done) == "Invalidated(success=True, message=None)"
    assert roomchat.Invalidated.from_dict({"success": True}) == done
    failures: List[roomchat.RoomchatError] = []
    for call in (
        lambda: client.validate_access_token(jon.access_token),
        lambda: client.invalidate_access_token(jon.access_token),
        lambda: client.reactivate_user(user_id=jon.user_id),
    ):
        with pytest.raises(roomchat.RoomchatError) as caught:
            call()
        failures.append(caught.value)
    shown = " ".join([repr(user), str(user.to_dict()), caplog.text] + [f"{e!s} {e!r} {e.path}" for e in failures])
    assert SECRET_KEY not in shown and PUBLIC_KEY not in shown
    assert "POST /consumer/api/v1/user/accessToken/validate?publicKey=REDACTED" in caplog.text


def test_the_lifecycle_with_asyncio(emu: Emulator) -> None:
    async def main() -> List[str]:
        steps: List[str] = []
        async with roomchat.AsyncClient(
            SECRET_KEY, base_url=emu.base_url, public_key=PUBLIC_KEY, ca_bundle=emu.ca_file
        ) as client:
            eve = await client.create_user("eve", unique_user_identifier="crm-eve")
            steps.append((await client.validate_access_token(eve.access_token)).id)
            await client.deactivate_user(user_id=eve.user_id)
            try:
                await client.validate_access_token(eve.access_token)
            except roomchat.InvalidRequestError as error:
                steps.append(error.message)
            steps.append(str((await client.reactivate_user(unique_user_identifier="crm-eve")).message))
            steps.append(str((await client.invalidate_access_token(eve.access_token)).success))
            try:
                await client.validate_access_token(eve.access_token)
            except roomchat.InvalidRequestError as error:
                steps.append(error.message)
            try:
                await client.reactivate_user(user_id=eve.user_id)
            except roomchat.UserNotFoundError as error:
                steps.append(error.message)
            steps[0] = "validated" if steps[0] == eve.user_id else steps[0]
        return steps

    assert asyncio.run(main()) == [
        "validated",
        "invalid accessToken",
        "user reactivated",
        "True",
        "invalid accessToken",
        "user not found",
    ]
