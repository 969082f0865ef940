"""The operations whose surfaces are generated from ``api/operations.toml`` (eject all
users, update bot): sync, asyncio and ``with_raw_response``, end to end against the
emulator, with their typed records, their declared limits (checked before anything is
sent) and their exact paths."""

from __future__ import annotations

import asyncio
import inspect
import json
import pickle
import threading
from typing import Any, Dict

import pytest

import roomchat
from conftest import PUBLIC_KEY, SECRET_KEY, Emulator

ROOM = "bbNiVFoXm"
EJECT = f"/api/v1/chatRoom/{ROOM}/eject-all"
HOOK = "https://hooks.example/b?token=hook-secret-0123"


def async_client(emu: Emulator) -> roomchat.AsyncClient:
    return roomchat.AsyncClient(
        SECRET_KEY,
        base_url=emu.base_url,
        public_key=PUBLIC_KEY,
        base_backoff=0.01,
        timeout=10.0,
        rate_limit=roomchat.RateLimit(requests=1_000_000, window=60.0),
        ca_bundle=emu.ca_file,
    )


def sent(emu: Emulator) -> Dict[str, Any]:
    """The last request the emulator journaled: method, exact path, body."""
    entry = emu.journal()[-1]
    return {"method": entry["method"], "path": entry["path"], "body": json.loads(entry["body"] or "null")}


# ---- eject all users -----------------------------------------------------------------------


def test_eject_all_users(emu: Emulator, client: roomchat.Client) -> None:
    emu.room(ROOM)
    answer = client.eject_all_users(ROOM)
    assert isinstance(answer, roomchat.Acknowledged)
    assert answer.success is True and answer.message is None and answer.extra == {}
    assert repr(answer) == "Acknowledged(success=True)"
    # As the reference page prints it: no /consumer prefix, chatRoom in camel case.
    assert sent(emu) == {"method": "POST", "path": EJECT, "body": None}
    assert emu.journal()[-1]["status"] == 200


def test_eject_all_users_of_an_unknown_room(emu: Emulator, client: roomchat.Client) -> None:
    with pytest.raises(roomchat.NotFoundError) as raised:
        client.eject_all_users("nope")
    assert raised.value.status == 404
    assert raised.value.message == "invalid chatroom id"
    assert sent(emu)["path"] == "/api/v1/chatRoom/nope/eject-all"
    # An empty id: core's validation, nothing sent.
    with pytest.raises(roomchat.ValidationError):
        client.eject_all_users("")
    assert len(emu.journal()) == 1


# ---- update bot -----------------------------------------------------------------------------


def test_update_bot_changes_fields_and_answers_the_typed_bot(emu: Emulator, client: roomchat.Client) -> None:
    bot_id = emu.bot("helper", webhookURL=HOOK, metadata='{"team": "support"}')["_id"]
    answer = client.update_bot(
        bot_id,
        description="answers questions",
        is_allowed_in_all_chat_rooms=True,
        message_history_limit=20,
        enabled=False,
    )
    assert isinstance(answer, roomchat.BotAnswer)
    assert answer.success is True
    bot = answer.bot
    assert isinstance(bot, roomchat.Bot)
    assert (bot.id, bot.name, bot.description) == (bot_id, "helper", "answers questions")
    assert (bot.is_allowed_in_all_chat_rooms, bot.message_history_limit, bot.enabled) == (True, 20, False)
    assert (bot.trigger, bot.message_visibility) == ("mention", "public")
    assert bot.webhook_url == HOOK and bot.customer == "emulated-customer" and bot.created
    assert bot.extra == {} and answer.extra == {}
    # The exact path, and only the keywords given, by their wire names.
    assert sent(emu) == {
        "method": "PUT",
        "path": f"/consumer/api/v2/bot/{bot_id}",
        "body": {
            "description": "answers questions",
            "isAllowedInAllChatRooms": True,
            "messageHistoryLimit": 20,
            "enabled": False,
        },
    }
    # A useful repr without the webhook URL (it may carry a secret) or the metadata.
    shown = repr(answer)
    assert shown.startswith(f"BotAnswer(success=True, bot=Bot(id='{bot_id}', name='helper', ")
    assert "hook-secret" not in shown and "hooks.example" not in shown and "support" not in shown
    # Records are frozen values: equal by content, hashable, picklable, and their wire form.
    again = client.update_bot(bot_id)
    assert again == answer and hash(again) == hash(answer) and again is not answer
    assert pickle.loads(pickle.dumps(answer)) == answer
    assert roomchat.BotAnswer.from_dict(answer.to_dict()) == answer
    assert answer.to_dict()["bot"]["webhookURL"] == HOOK
    with pytest.raises(AttributeError):
        bot.name = "other"  # type: ignore[misc]


def test_update_bot_keeps_unknown_fields_in_extra(emu: Emulator, client: roomchat.Client) -> None:
    bot_id = emu.bot("helper")["_id"]
    body = {
        "success": True,
        "bot": {"_id": bot_id, "name": "helper", "avatar": {"url": "https://img.example/a.png"}},
        "requestId": "r-1",
    }
    emu.fault(f"/consumer/api/v2/bot/{bot_id}", {"kind": "respond", "status": 200, "body": json.dumps(body)})
    answer = client.update_bot(bot_id, name="helper")
    assert answer.extra == {"requestId": "r-1"}
    assert answer.bot is not None and answer.bot.extra == {"avatar": {"url": "https://img.example/a.png"}}
    assert answer.bot.description is None and answer.bot.enabled is None
    assert answer.to_dict() == body


def test_update_bot_limits_are_checked_before_anything_is_sent(emu: Emulator, client: roomchat.Client) -> None:
    bot_id = emu.bot("helper")["_id"]
    emu.admin("DELETE", "/journal")
    for limit_broken in (
        {"name": "x" * 101},
        {"description": "d" * 1001},
        {"trigger": "always"},
        {"message_history_limit": 101},
        {"message_history_limit": -1},
    ):
        with pytest.raises(roomchat.ValidationError):
            client.update_bot(bot_id, **limit_broken)
    # A wrong type is a TypeError, as for every other method.
    with pytest.raises(TypeError):
        client.update_bot(bot_id, enabled="yes")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        client.update_bot(bot_id, message_history_limit=True)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        client.update_bot(bot_id, "helper")  # type: ignore[misc]
    assert emu.journal() == []


def test_update_bot_answers_the_services_errors(emu: Emulator, client: roomchat.Client) -> None:
    bot_id = emu.bot("helper")["_id"]
    with pytest.raises(roomchat.InvalidRequestError) as refused:
        client.update_bot(bot_id, trigger="message", message_visibility="private")
    assert "trigger on every message" in refused.value.message
    with pytest.raises(roomchat.RoomchatError) as unknown:
        client.update_bot("0" * 24, enabled=True)
    assert unknown.value.status == 401 and "bot not found" in unknown.value.message
    assert sent(emu)["path"] == f"/consumer/api/v2/bot/{'0' * 24}"


def test_generated_methods_keep_the_clients_options(emu: Emulator, client: roomchat.Client) -> None:
    emu.room(ROOM)
    # A retry class of repeatable: sent again after a 503 (the view's max_retries applies).
    emu.fault(EJECT, {"kind": "respond", "status": 503, "body": "{}"}, method="POST")
    assert client.with_options(max_retries=1).eject_all_users(ROOM).success is True
    assert [e["status"] for e in emu.journal()] == [503, 200]
    token = roomchat.CancelToken()
    token.cancel()
    with pytest.raises(roomchat.CancelledError):
        client.with_cancel(token).eject_all_users(ROOM)
    client.close()
    with pytest.raises(roomchat.ConfigurationError):
        client.eject_all_users(ROOM)


def test_generated_methods_release_the_gil(emu: Emulator, client: roomchat.Client) -> None:
    emu.room(ROOM)
    emu.fault(EJECT, {"kind": "delay", "ms": 500}, method="POST")
    ticks = 0
    stop = threading.Event()

    def spin() -> None:  # pure-Python work: it runs only while the call lets go of the GIL
        nonlocal ticks
        while not stop.is_set():
            ticks += 1

    spinner = threading.Thread(target=spin)
    spinner.start()
    try:
        before = ticks
        assert client.eject_all_users(ROOM).success is True
        during = ticks - before
    finally:
        stop.set()
        spinner.join()
    assert during > 10_000, f"only {during} ticks of another thread during a 0.5 s call: the GIL was held"


# ---- with_raw_response ----------------------------------------------------------------------


def test_with_raw_response(emu: Emulator, client: roomchat.Client) -> None:
    emu.room(ROOM)
    bot_id = emu.bot("helper")["_id"]
    response = client.with_raw_response.eject_all_users(ROOM)
    assert isinstance(response, roomchat.APIResponse)
    assert response.status == 200 and response.attempts == 1
    assert response.headers["content-type"].startswith("application/json")
    assert response.parse() == client.eject_all_users(ROOM)
    updated = client.with_raw_response.update_bot(bot_id, name="renamed")
    answer = updated.parse()
    assert isinstance(answer, roomchat.BotAnswer) and answer.bot is not None
    assert answer.bot.name == "renamed"


# ---- asyncio --------------------------------------------------------------------------------


def test_async(emu: Emulator) -> None:
    emu.room(ROOM)
    bot_id = emu.bot("helper")["_id"]

    async def main() -> None:
        async with async_client(emu) as client:
            acknowledged = await client.eject_all_users(ROOM)
            assert isinstance(acknowledged, roomchat.Acknowledged) and acknowledged.success is True
            answer = await client.update_bot(bot_id, description="async", message_history_limit=5)
            assert answer.bot is not None
            assert (answer.bot.description, answer.bot.message_history_limit) == ("async", 5)
            with pytest.raises(roomchat.ValidationError):
                await client.update_bot(bot_id, name="x" * 101)
            with pytest.raises(roomchat.RoomchatError) as unknown:
                await client.eject_all_users("nope")
            assert unknown.value.status == 404
            raw = await client.with_raw_response.update_bot(bot_id, enabled=False)
            assert raw.status == 200
            assert raw.parse().bot is not None and raw.parse().bot.enabled is False  # type: ignore[union-attr]
            raw_eject = await client.with_raw_response.eject_all_users(ROOM)
            assert raw_eject.parse().success is True
            # Several at once, on the dispatcher's threads, the loop free meanwhile.
            results = await asyncio.gather(*(client.eject_all_users(ROOM) for _ in range(4)))
            assert all(r.success for r in results)

    asyncio.run(main())
    paths = [(e["method"], e["path"]) for e in emu.journal()]
    assert paths.count(("POST", EJECT)) == 6
    assert paths.count(("PUT", f"/consumer/api/v2/bot/{bot_id}")) == 2  # the 101-character name was not sent


def test_async_cancel_cancels_the_call(emu: Emulator) -> None:
    emu.room(ROOM)
    emu.fault(EJECT, {"kind": "delay", "ms": 5000}, method="POST")

    async def main() -> None:
        async with async_client(emu) as client:
            task = asyncio.ensure_future(client.eject_all_users(ROOM))
            await asyncio.sleep(0.3)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await asyncio.wait_for(task, 2.0)

    asyncio.run(main())


# ---- the surface --------------------------------------------------------------------------


def test_signatures_are_the_declared_ones() -> None:
    update = inspect.signature(roomchat.Client.update_bot)
    assert list(update.parameters) == [
        "self",
        "bot_id",
        "name",
        "webhook_url",
        "description",
        "trigger",
        "message_visibility",
        "is_allowed_in_all_chat_rooms",
        "message_history_limit",
        "metadata",
        "enabled",
    ]
    assert update.parameters["bot_id"].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
    assert update.parameters["webhook_url"].kind is inspect.Parameter.KEYWORD_ONLY
    assert str(inspect.signature(roomchat.Client.eject_all_users)) == "(self, room_id)"
    for cls in (roomchat.AsyncClient, roomchat.ClientWithRawResponse, roomchat.AsyncClientWithRawResponse):
        assert list(inspect.signature(getattr(cls, "update_bot")).parameters) == list(update.parameters)
    assert "ValidationError" in (roomchat.Client.update_bot.__doc__ or "")
    # Every generated record is exported (__init__.py takes _records.__all__, in the one form type checkers read).
    from roomchat import _records

    assert set(_records.__all__) <= set(roomchat.__all__)
    assert all(getattr(roomchat, name) is getattr(_records, name) for name in _records.__all__)


def test_records_from_dict() -> None:
    answer = roomchat.BotAnswer.from_dict({"success": True, "bot": {"_id": "b1", "enabled": True}, "x": 1})
    assert answer.bot == roomchat.Bot.from_dict({"_id": "b1", "enabled": True})
    assert answer.extra == {"x": 1}
    with pytest.raises(roomchat.ValidationError):
        roomchat.BotAnswer.from_dict({"bot": {"enabled": "yes"}})
    with pytest.raises(roomchat.ValidationError):
        roomchat.Bot.from_dict({"messageHistoryLimit": True})
    with pytest.raises(TypeError):
        roomchat.Bot.from_dict([])  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        roomchat.Bot()
    assert roomchat.Acknowledged.from_dict({"success": True}) != roomchat.Acknowledged.from_dict({"success": False})


# ---- a declared default is sent only when given (issue 37, item 12) -----------------------


def test_create_chat_room_sends_a_declared_default_only_when_given(emu: Emulator, client: roomchat.Client) -> None:
    client.create_chat_room(name="Webinar 42")
    assert sent(emu)["body"] == {"name": "Webinar 42"}
    emu.clear_journal()
    # The caller's own value through `extra` is theirs alone, not "given twice".
    client.create_chat_room(name="Members", extra={"chatRoomPermissionLevel": "members"})
    assert sent(emu)["body"] == {"name": "Members", "chatRoomPermissionLevel": "members"}
    emu.clear_journal()
    client.create_chat_room(name="Provisioned", chat_room_permission_level="provisioned_users")
    assert sent(emu)["body"] == {"name": "Provisioned", "chatRoomPermissionLevel": "provisioned_users"}


def test_secret_fields_are_hidden_from_repr(emu: Emulator, client: roomchat.Client) -> None:
    # `secret = true` in api/operations.toml (issue 37, item 9): an access token, a webhook URL.
    made = client.create_user_v2("crm-secret-1", "sam")
    assert made.access_token and made.access_token not in repr(made)
    updated = client.update_user(unique_user_identifier="crm-secret-1", username="sam2")
    assert updated.access_token and updated.access_token not in repr(updated)
    bot = client.create_bot("secret-bot", HOOK)
    assert bot.bot is not None and bot.bot.webhook_url == HOOK
    assert "hook-secret" not in repr(bot) and "hooks.example" not in repr(bot)
    listed = client.list_bots()
    assert "hook-secret" not in repr(listed)
