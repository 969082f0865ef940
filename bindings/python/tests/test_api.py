"""The whole documented API (issue 29), end to end: one test per operation against ONE
emulator started for this file (``roomchat.testing.Emulator``, reset before each test),
asserting the typed answer and the state change seen through another operation; the
not-found errors; the listings' iterators (sync and async); the webinar story.

Not run over TLS or the test network (run-tests.sh's second pass names its files): the
transport is the same for every operation and is covered there by the older ones."""

from __future__ import annotations

import asyncio
import json
import os
import pathlib
import subprocess
import sys
from typing import Any, Dict, Iterator, List

import pytest

import roomchat
from roomchat.testing import Emulator

HOOK = "https://hooks.example/bot"


@pytest.fixture(scope="module")
def emulator() -> Iterator[Emulator]:
    with Emulator(rate_limit=(1_000_000, 60.0)) as emu:
        yield emu


@pytest.fixture
def emu(emulator: Emulator) -> Emulator:
    emulator.reset()
    return emulator


@pytest.fixture
def client(emu: Emulator) -> Iterator[roomchat.Client]:
    with emu.client(base_backoff=0.01) as c:
        yield c


def last(emu: Emulator) -> Dict[str, Any]:
    """The last request the emulator journaled: method, exact path, query, JSON body."""
    entry = emu.journal()[-1]
    return {"method": entry.method, "path": entry.path, "query": entry.query, "body": entry.json()}


def room(client: roomchat.Client, name: str = "Webinar", **settings: Any) -> str:
    made = client.create_chat_room(name=name, **settings)
    assert made.room_id is not None
    return made.room_id


def user(client: roomchat.Client, uid: str, name: str, room_id: str = "", role: str = "user") -> str:
    """A user made by create user v2 (a member of `room_id` with `role` when given); its token."""
    details = {"roleName": role, "roomId": room_id} if room_id else None
    made = client.create_user_v2(uid, name, membership_details=details)
    assert made.access_token is not None
    return made.access_token


# ---- rooms ---------------------------------------------------------------------------------


def test_create_chat_room(emu: Emulator, client: roomchat.Client) -> None:
    made = client.create_chat_room(
        name="Webinar",
        description="Q3 launch",
        enable_channels=True,
        password_protected=False,
        metadata="m",
        extra={"mainColor": "#123456"},
    )
    assert isinstance(made, roomchat.RoomAnswer) and made.success is True and made.room_id
    assert made.url is not None and made.url.endswith(made.room_id)
    body = last(emu)["body"]
    # Switches are booleans for the caller and "on"/"off" on the wire; extra fields as given.
    assert body["enableChannels"] == "on" and body["passwordProtected"] == "off"
    assert body["mainColor"] == "#123456"
    listed = client.get_chat_room(made.room_id)
    assert (listed.name, listed.description, listed.enable_channels) == ("Webinar", "Q3 launch", True)


def test_create_chat_room_password_rule(client: roomchat.Client) -> None:
    with pytest.raises(roomchat.InvalidRequestError, match="roomPassword"):
        client.create_chat_room(name="Locked", password_protected=True)
    assert client.list_chat_rooms() == []


def test_create_chat_room_extra_twice_is_refused(emu: Emulator, client: roomchat.Client) -> None:
    with pytest.raises(roomchat.ValidationError, match="twice"):
        client.create_chat_room(name="A", extra={"name": "B"})
    assert emu.journal() == []


def test_list_chat_rooms(client: roomchat.Client) -> None:
    assert client.list_chat_rooms() == []
    first, second = room(client, "One"), room(client, "Two", enable_channels=True)
    rooms = client.list_chat_rooms()
    assert all(isinstance(r, roomchat.Room) for r in rooms)
    assert [(r.room_id, r.name, r.enable_channels) for r in rooms] == [(first, "One", False), (second, "Two", True)]


def test_get_chat_room(client: roomchat.Client) -> None:
    room_id = room(client, metadata="cohort-7")
    got = client.get_chat_room(room_id)
    assert isinstance(got, roomchat.Room)
    assert (got.room_id, got.metadata, got.password_protected, got.room_password) == (room_id, "cohort-7", False, None)
    with pytest.raises(roomchat.NotFoundError) as raised:
        client.get_chat_room("nope")
    assert raised.value.status == 404 and raised.value.kind == "not_found"


def test_update_chat_room(emu: Emulator, client: roomchat.Client) -> None:
    room_id = room(client)
    answer = client.update_chat_room(room_id, name="Webinar (live)", password_protected=True, room_password="s3cret")
    assert answer.success is True and answer.room_id == room_id
    assert last(emu)["body"]["passwordProtected"] == "on"
    got = client.get_chat_room(room_id)
    assert (got.name, got.password_protected) == ("Webinar (live)", True)
    with pytest.raises(roomchat.NotFoundError):
        client.update_chat_room("nope", name="x")


def test_delete_chat_room(client: roomchat.Client, emu: Emulator) -> None:
    room_id = room(client)
    emu.seed_messages(room_id, 3)
    answer = client.delete_chat_room(room_id)
    assert answer.success is True and answer.room_id == room_id
    assert client.list_chat_rooms() == []
    with pytest.raises(roomchat.NotFoundError):
        client.room_messages(room_id)
    with pytest.raises(roomchat.NotFoundError, match="invalid chatroom id"):
        client.delete_chat_room(room_id)


def test_turn_chat_off_and_on(emu: Emulator, client: roomchat.Client) -> None:
    room_id = room(client)
    token = user(client, "crm-1", "ann", room_id)
    # The chat-off state is a typed attribute, not only extra["chatOff"] (issue 37).
    assert client.get_chat_room(room_id).chat_off is False
    assert client.turn_chat_off(room_id).success is True
    assert last(emu)["path"] == f"/consumer/api/v1/chatRoom/{room_id}/off"
    off = client.get_chat_room(room_id)
    assert off.chat_off is True and "chatOff" not in off.extra and "chat_off=True" in repr(off)
    with pytest.raises(roomchat.InvalidRequestError):
        client.send_room_message(room_id, "hello?", user_access_token=token)
    assert client.turn_chat_on(room_id).success is True
    assert last(emu)["path"] == f"/consumer/api/v1/chatRoom/{room_id}/on"
    assert [r.chat_off for r in client.list_chat_rooms() if r.room_id == room_id] == [False]
    client.send_room_message(room_id, "hello", user_access_token=token)
    assert client.room_messages(room_id).total_records == 1
    with pytest.raises(roomchat.NotFoundError):
        client.turn_chat_on("nope")


def test_set_chat_off_message(emu: Emulator, client: roomchat.Client) -> None:
    room_id = room(client)
    answer = client.set_chat_off_message(room_id, "Back at 10:00")
    assert isinstance(answer, roomchat.Acknowledged) and answer.success is True
    assert last(emu)["body"] == {"message": "Back at 10:00"}
    assert client.get_chat_room(room_id).extra.get("chatOffMessage") == "Back at 10:00"
    with pytest.raises(roomchat.NotFoundError):
        client.set_chat_off_message("nope", "x")


def test_eject_all_users(emu: Emulator, client: roomchat.Client) -> None:
    room_id = room(client)
    assert client.eject_all_users(room_id).success is True
    assert last(emu)["path"] == f"/api/v1/chatRoom/{room_id}/eject-all"
    with pytest.raises(roomchat.NotFoundError):
        client.eject_all_users("nope")


# ---- room messages -------------------------------------------------------------------------


def test_room_messages(emu: Emulator, client: roomchat.Client) -> None:
    room_id = room(client)
    emu.seed_messages(room_id, 5, attachment_every=2)
    page = client.room_messages(room_id, limit=2, skip=1)
    assert isinstance(page, roomchat.MessagePage)
    assert (page.total_records, page.count, page.limit, page.skip) == (5, 2, 2, 1)
    assert page.messages is not None and [m.message for m in page.messages] == ["message 2", "message 3"]
    first = page.messages[0]
    assert isinstance(first, roomchat.ChatMessage) and first.chat_room == room_id
    assert first.file is not None and first.file.file_name == "file-2.png" and first.file.size == 1024
    assert isinstance(first.user, roomchat.ChatMessageAuthor) and first.user.username == "seed-author"
    # roomchat.MessageAuthor stays the conversation messages' author (published first).
    assert roomchat.MessageAuthor is roomchat._native.MessageAuthor
    only = client.room_messages(room_id, only_attachments=True)
    assert only.messages is not None and [m.message for m in only.messages] == ["message 2", "message 4"]
    assert emu.journal()[-1].params["onlyAttachments"] == "true"
    with pytest.raises(roomchat.NotFoundError):
        client.room_messages("nope")


def test_delete_room_messages(emu: Emulator, client: roomchat.Client) -> None:
    room_id = room(client, enable_channels=True)
    channel = client.create_channel(room_id, "qa")
    assert channel.id is not None
    emu.seed_messages(room_id, 3)
    emu.seed_messages(room_id, 2, channel_id=channel.id)
    answer = client.delete_room_messages(room_id, do_not_delete_channel_messages=True)
    assert answer.success is True and answer.room_id == room_id
    assert client.room_messages(room_id).total_records == 0
    assert client.channel_messages(room_id, channel.id).total_records == 2
    client.delete_room_messages(room_id)
    assert client.channel_messages(room_id, channel.id).total_records == 0
    with pytest.raises(roomchat.NotFoundError):
        client.delete_room_messages("nope")


def test_send_room_message(emu: Emulator, client: roomchat.Client) -> None:
    room_id = room(client)
    token = user(client, "crm-1", "ann", room_id)
    assert client.send_room_message(room_id, "Welcome!", system_message=True).success is True
    client.send_room_message(room_id, "Hi all", user_access_token=token)
    client.send_room_message(room_id, "Guest here", user={"username": "visitor"})
    messages = client.room_messages(room_id).messages
    assert messages is not None
    assert [(m.message, m.user.username if m.user else None) for m in messages][1:] == [
        ("Hi all", "ann"),
        ("Guest here", "visitor"),
    ]
    assert messages[0].message == "Welcome!"
    # Exactly one author: none, or two, is refused before anything is sent.
    sent = len(emu.journal())
    with pytest.raises(roomchat.ValidationError):
        client.send_room_message(room_id, "who?")
    with pytest.raises(roomchat.ValidationError):
        client.send_room_message(room_id, "who?", system_message=True, user_access_token=token)
    assert len(emu.journal()) == sent
    with pytest.raises(roomchat.NotFoundError):
        client.send_room_message("nope", "x", system_message=True)


# ---- channels ------------------------------------------------------------------------------


def test_create_channel(emu: Emulator, client: roomchat.Client) -> None:
    room_id = room(client, enable_channels=True)
    channel = client.create_channel(room_id, "announcements", enabled=True, notify_all_users=True, metadata="m")
    assert isinstance(channel, roomchat.Channel)
    assert (channel.channel_name, channel.enabled, channel.notify_all_users, channel.room_id) == (
        "announcements",
        True,
        True,
        room_id,
    )
    assert last(emu)["body"] == {"channelName": "announcements", "enabled": True, "notifyAllUsers": True, "metadata": "m"}
    assert channel.id is not None
    client.send_channel_message(room_id, channel.id, "first", system_message=True)
    assert client.channel_messages(room_id, channel.id).total_records == 1
    with pytest.raises(roomchat.NotFoundError):
        client.create_channel("nope", "x")


def test_update_channel(client: roomchat.Client) -> None:
    room_id = room(client, enable_channels=True)
    channel = client.create_channel(room_id, "qa")
    assert channel.id is not None
    updated = client.update_channel(room_id, channel.id, channel_name="Q&A", enabled=False)
    assert (updated.id, updated.channel_name, updated.enabled) == (channel.id, "Q&A", False)
    with pytest.raises(roomchat.NotFoundError, match="channel not found"):
        client.update_channel(room_id, "0" * 24, channel_name="x")


def test_send_channel_message(emu: Emulator, client: roomchat.Client) -> None:
    room_id = room(client, enable_channels=True)
    channel = client.create_channel(room_id, "qa")
    assert channel.id is not None
    token = user(client, "crm-1", "ann", room_id)
    assert client.send_channel_message(room_id, channel.id, "a question", user_access_token=token).success
    assert last(emu)["path"] == f"/consumer/api/v1/chatroom/{room_id}/channel/{channel.id}/message"
    page = client.channel_messages(room_id, channel.id)
    assert page.messages is not None
    assert [(m.message, m.channel, m.user.username if m.user else None) for m in page.messages] == [
        ("a question", channel.id, "ann")
    ]
    assert client.room_messages(room_id).total_records == 0
    with pytest.raises(roomchat.NotFoundError):
        client.send_channel_message(room_id, "0" * 24, "x", system_message=True)


def test_channel_messages(emu: Emulator, client: roomchat.Client) -> None:
    room_id = room(client, enable_channels=True)
    channel = client.create_channel(room_id, "qa")
    assert channel.id is not None
    emu.seed_messages(room_id, 4, channel_id=channel.id, text="q")
    page = client.channel_messages(room_id, channel.id, limit=3, skip=2)
    assert (page.total_records, page.count) == (4, 2)
    assert page.messages is not None and [m.message for m in page.messages] == ["q 3", "q 4"]
    assert page.messages[0].channel == channel.id
    assert last(emu)["path"] == f"/consumer/api/v1/chatRoom/{room_id}/channel/{channel.id}/messages"
    with pytest.raises(roomchat.NotFoundError):
        client.channel_messages(room_id, "0" * 24)


def test_delete_channel_message(emu: Emulator, client: roomchat.Client) -> None:
    room_id = room(client, enable_channels=True)
    channel = client.create_channel(room_id, "qa")
    assert channel.id is not None
    ids = emu.add_messages(room_id, ["keep", "drop"], channel_id=channel.id)
    answer = client.delete_channel_message(room_id, channel.id, ids[1])
    assert answer.success is True and answer.message == "channel message deleted"
    assert last(emu)["path"] == f"/consumer/api/v2/chatroom/{room_id}/channel/{channel.id}/message/{ids[1]}"
    page = client.channel_messages(room_id, channel.id)
    assert page.messages is not None and [m.message for m in page.messages] == ["keep"]
    with pytest.raises(roomchat.NotFoundError):
        client.delete_channel_message(room_id, channel.id, ids[1])


# ---- conversations -------------------------------------------------------------------------


def test_list_conversations(emu: Emulator, client: roomchat.Client) -> None:
    room_id = room(client, enable_one_to_one_chat=True)
    user(client, "crm-1", "ann", room_id)
    conversation = emu.add_conversation_between(
        room_id, {"uniqueUserIdentifier": "crm-1"}, {"username": "bob"}, [("ann", "hi bob")]
    )
    listed = client.list_conversations(room_id)
    assert all(isinstance(c, roomchat.Conversation) for c in listed)
    assert [(c.conversation_id, c.room_id) for c in listed] == [(conversation, room_id)]
    assert listed[0].member_one is not None and listed[0].member_one.username == "ann"
    assert listed[0].member_two is not None and listed[0].member_two.username == "bob"
    assert client.list_conversations(room_id, path_form="chatroom") == listed
    assert last(emu)["path"] == f"/consumer/api/v2/chatroom/{room_id}/conversations"
    messages = client.conversation_messages(room_id, conversation)
    assert [m.text for m in messages] == ["hi bob"]
    with pytest.raises(roomchat.NotFoundError):
        client.list_conversations("nope")


# ---- users ---------------------------------------------------------------------------------


def test_create_user_v2(emu: Emulator, client: roomchat.Client) -> None:
    room_id = room(client)
    made = client.create_user_v2(
        "crm-42", "ann", first_name="Ann", email="ann@example.com", membership_details={"roleName": "moderator", "roomId": room_id}
    )
    assert isinstance(made, roomchat.ProvisionedUser) and made.access_token
    assert last(emu)["body"]["membershipDetails"] == {"roleName": "moderator", "roomId": room_id}
    members = client.list_members(room_id).data
    assert members is not None and [(m.role_name, m.user.username if m.user else None) for m in members] == [
        ("moderator", "ann")
    ]
    assert client.get_user("crm-42").first_name == "Ann"
    with pytest.raises(roomchat.NotFoundError):
        client.create_user_v2("crm-43", "bob", membership_details={"roleName": "user", "roomId": "nope"})


def test_update_user(client: roomchat.Client) -> None:
    user(client, "crm-1", "ann")
    updated = client.update_user(unique_user_identifier="crm-1", username="ann-marie", email="am@example.com")
    assert isinstance(updated, roomchat.UpdatedUser) and updated.username == "ann-marie"
    assert client.get_user("crm-1").username == "ann-marie"
    with pytest.raises(roomchat.UserNotFoundError):
        client.update_user(unique_user_identifier="nobody", username="x")
    with pytest.raises(roomchat.ValidationError):
        client.update_user(username="x")


def test_get_user(client: roomchat.Client) -> None:
    user(client, "crm-1", "ann")
    profile = client.get_user("crm-1")
    assert isinstance(profile, roomchat.UserProfile)
    assert profile.username == "ann" and profile.created is not None
    with pytest.raises(roomchat.UserNotFoundError):
        client.get_user("nobody")
    # An unknown user is a thing not found: `except NotFoundError` catches it too (issue 37).
    with pytest.raises(roomchat.NotFoundError) as raised:
        client.get_user("nobody")
    assert type(raised.value) is roomchat.UserNotFoundError and raised.value.kind == "user_not_found"


def test_user_rooms(client: roomchat.Client) -> None:
    first, second = room(client, "One"), room(client, "Two")
    user(client, "crm-1", "ann", first)
    client.set_member(second, "crm-1", "guest")
    rooms = client.user_rooms("crm-1")
    assert all(isinstance(r, roomchat.RoomName) for r in rooms)
    assert sorted((r.room_id, r.name) for r in rooms) == sorted([(first, "One"), (second, "Two")])
    with pytest.raises(roomchat.UserNotFoundError):
        client.user_rooms("nobody")


def test_remove_user(emu: Emulator, client: roomchat.Client) -> None:
    room_id = room(client)
    user(client, "crm-1", "ann", room_id)
    answer = client.remove_user(unique_user_identifier="crm-1")
    assert answer.success is True and answer.message == "user removed"
    assert client.list_members(room_id).total == 0
    with pytest.raises(roomchat.UserNotFoundError):
        client.get_user("crm-1")
    with pytest.raises(roomchat.UserNotFoundError):
        client.remove_user(unique_user_identifier="crm-1")


# ---- members -------------------------------------------------------------------------------


def test_list_members(emu: Emulator, client: roomchat.Client) -> None:
    room_id = room(client)
    for n in range(3):
        user(client, f"crm-{n}", f"user-{n}", room_id, "moderator" if n == 0 else "user")
    page = client.list_members(room_id, limit=2, skip=1)
    assert isinstance(page, roomchat.MemberPage) and (page.total, page.limit, page.skip) == (3, 2, 1)
    assert page.data is not None and [m.user.username if m.user else None for m in page.data] == ["user-1", "user-2"]
    assert page.data[0].chat_room is not None and page.data[0].chat_room.room_id == room_id
    with pytest.raises(roomchat.ValidationError):
        client.list_members(room_id, limit=201)
    with pytest.raises(roomchat.NotFoundError):
        client.list_members("nope")


def test_set_member(emu: Emulator, client: roomchat.Client) -> None:
    room_id = room(client)
    user(client, "crm-1", "host")
    member = client.set_member(room_id, "crm-1", "moderator")
    assert isinstance(member, roomchat.Member) and member.role_name == "moderator"
    assert last(emu)["body"] == {"uniqueUserIdentifier": "crm-1", "roleName": "moderator"}
    client.set_member(room_id, "crm-1", "admin")  # an upsert: the role changes
    data = client.list_members(room_id).data
    assert data is not None and [m.role_name for m in data] == ["admin"]
    with pytest.raises(roomchat.UserNotFoundError):
        client.set_member(room_id, "nobody", "user")
    with pytest.raises(roomchat.NotFoundError):
        client.set_member("nope", "crm-1", "user")
    with pytest.raises(roomchat.ValidationError):
        client.set_member(room_id, "crm-1", "owner")  # type: ignore[arg-type]


def test_remove_member(emu: Emulator, client: roomchat.Client) -> None:
    room_id = room(client)
    user(client, "crm-1", "ann", room_id)
    answer = client.remove_member(room_id, "crm-1")
    assert answer.success is True and answer.message == "user removed as member"
    assert last(emu)["method"] == "DELETE" and last(emu)["body"] == {"uniqueUserIdentifier": "crm-1"}
    assert client.list_members(room_id).total == 0
    with pytest.raises(roomchat.NotFoundError, match="not a member"):
        client.remove_member(room_id, "crm-1")


# ---- bots ----------------------------------------------------------------------------------


def test_create_bot(emu: Emulator, client: roomchat.Client) -> None:
    answer = client.create_bot("helper", HOOK, trigger="mention", message_visibility="private")
    assert isinstance(answer, roomchat.BotAnswer) and answer.success is True
    assert answer.bot is not None and answer.bot.name == "helper" and answer.bot.webhook_url == HOOK
    assert last(emu)["body"]["webhookURL"] == HOOK
    bots = client.list_bots().bots
    assert bots is not None and [b.id for b in bots] == [answer.bot.id]
    with pytest.raises(roomchat.InvalidRequestError, match="private"):
        client.create_bot("loud", HOOK, trigger="message", message_visibility="private")
    with pytest.raises(roomchat.InvalidRequestError):
        client.create_bot("helper", HOOK)  # the name is taken


def test_list_bots(client: roomchat.Client) -> None:
    assert client.list_bots().bots == []
    client.create_bot("one", HOOK)
    client.create_bot("two", HOOK, enabled=False)
    listed = client.list_bots()
    assert isinstance(listed, roomchat.BotList) and listed.success is True
    assert listed.bots is not None and [(b.name, b.enabled) for b in listed.bots] == [("one", True), ("two", False)]


def test_update_bot(client: roomchat.Client) -> None:
    made = client.create_bot("helper", HOOK).bot
    assert made is not None and made.id is not None
    updated = client.update_bot(made.id, description="answers questions", message_history_limit=5)
    assert updated.bot is not None and updated.bot.description == "answers questions"
    assert updated.bot.message_history_limit == 5
    with pytest.raises(roomchat.NotFoundError):
        client.update_bot("0" * 24, description="x")


def test_enable_and_disable_bot(client: roomchat.Client) -> None:
    made = client.create_bot("helper", HOOK).bot
    assert made is not None and made.id is not None
    disabled = client.disable_bot(made.id)
    assert disabled.bot is not None and disabled.bot.enabled is False
    bots = client.list_bots().bots
    assert bots is not None and bots[0].enabled is False
    enabled = client.enable_bot(made.id)
    assert enabled.bot is not None and enabled.bot.enabled is True
    # Unknown bot: a 401 that is no authentication failure.
    with pytest.raises(roomchat.NotFoundError) as raised:
        client.enable_bot("0" * 24)
    assert raised.value.status == 401
    with pytest.raises(roomchat.NotFoundError):
        client.disable_bot("0" * 24)


def test_enable_and_disable_bot_in_room(emu: Emulator, client: roomchat.Client) -> None:
    room_id = room(client)
    made = client.create_bot("helper", HOOK).bot
    assert made is not None and made.id is not None
    on = client.enable_bot_in_room(made.id, room_id)
    assert isinstance(on, roomchat.BotRoomAnswer) and on.bot_status is not None and on.bot_status.status == "ENABLED"
    assert last(emu)["path"] == f"/consumer/api/v2/bot/{made.id}/chatroom/{room_id}/enable"
    off = client.disable_bot_in_room(made.id, room_id)
    assert off.success is True and off.message == "Bot successfully disabled in the chat room"
    with pytest.raises(roomchat.NotFoundError):
        client.enable_bot_in_room(made.id, "nope")
    with pytest.raises(roomchat.NotFoundError):
        client.enable_bot_in_room("0" * 24, room_id)


def test_send_bot_message(emu: Emulator, client: roomchat.Client) -> None:
    room_id = room(client)
    made = client.create_bot("helper", HOOK).bot
    assert made is not None and made.id is not None
    client.enable_bot_in_room(made.id, room_id)
    buttons = [{"type": "link", "displayText": "Docs", "id": "docs", "url": "https://docs.example"}]
    answer = client.send_bot_message(made.id, room_id, "See the docs", action_buttons=buttons)
    assert answer.success is True and answer.message == "message sent"
    assert last(emu)["body"] == {"message": "See the docs", "actionButtons": buttons}
    messages = client.room_messages(room_id).messages
    assert messages is not None and messages[-1].message == "See the docs"
    assert messages[-1].action_buttons is not None and messages[-1].action_buttons[0].display_text == "Docs"
    # A button's `type` and `id` by the wire's (and Node's) names; the old names warn (issue 37).
    button = messages[-1].action_buttons[0]
    assert (button.type, button.id, button.url) == ("link", "docs", "https://docs.example")
    with pytest.warns(DeprecationWarning, match=r"ActionButton.button_type is deprecated: use .type"):
        assert button.button_type == "link"
    with pytest.warns(DeprecationWarning, match=r"ActionButton.button_id is deprecated: use .id"):
        assert button.button_id == "docs"
    assert "id='docs'" in repr(button)
    with pytest.raises(roomchat.InvalidRequestError):
        client.send_bot_message(made.id, room_id, "bad", action_buttons=[{"type": "link", "displayText": "x", "id": "x"}])
    with pytest.raises(roomchat.NotFoundError):
        client.send_bot_message("0" * 24, room_id, "x")


# ---- the iterators -------------------------------------------------------------------------


def test_iter_room_messages_exports_every_message_once(emu: Emulator, client: roomchat.Client) -> None:
    room_id = room(client)
    emu.seed_messages(room_id, 1001)
    exported = client.iter_room_messages(room_id, page_size=200)
    texts = [m.message for m in exported]
    assert texts == [f"message {n}" for n in range(1, 1002)]
    assert exported.next_skip == 1001
    assert (emu.journal()[-1].params["limit"], emu.journal()[-1].params["skip"]) == ("200", "1000")
    pages = client.room_messages_pages(room_id, page_size=400, skip=1)
    assert [(p.skip, p.count) for p in pages] == [(1, 400), (401, 400), (801, 200)]


def test_iterators_go_on_after_an_error_and_resume_from_next_skip(emu: Emulator, client: roomchat.Client) -> None:
    room_id = room(client, enable_channels=True)
    channel = client.create_channel(room_id, "qa")
    assert channel.id is not None
    emu.seed_messages(room_id, 5, channel_id=channel.id)
    messages = client.iter_channel_messages(room_id, channel.id, page_size=2)
    assert [next(messages).message for _ in range(2)] == ["message 1", "message 2"]
    emu.fail_next(path=f"/consumer/api/v1/chatRoom/{room_id}/channel/{channel.id}/messages", status=400)
    with pytest.raises(roomchat.InvalidRequestError):
        next(messages)  # the page from skip 2 failed: raised, and the iteration goes on
    assert messages.next_skip == 2
    # A new iterator from next_skip yields what the stopped one had not yet.
    resumed = client.iter_channel_messages(room_id, channel.id, skip=messages.next_skip)
    assert [m.message for m in resumed] == ["message 3", "message 4", "message 5"]
    # The failed one fetches the same page again.
    assert [m.message for m in messages] == ["message 3", "message 4", "message 5"]
    skips = [e.params["skip"] for e in emu.journal() if e.path.endswith("/messages")]
    assert skips == ["0", "2", "2", "2", "4"]  # the resumed one took the rest in one page


def test_iter_list_members_and_pages(emu: Emulator, client: roomchat.Client) -> None:
    room_id = room(client)
    emu.seed_users(5)
    for n in range(1, 6):
        emu.add_member(room_id, unique_user_identifier=None, user_id=emu.users()[n - 1].user_id)
    members = list(client.iter_list_members(room_id, page_size=2))
    assert all(isinstance(m, roomchat.Member) for m in members) and len(members) == 5
    assert [p.skip for p in client.list_members_pages(room_id, page_size=2)] == [0, 2, 4]
    with pytest.raises(roomchat.ValidationError):
        client.iter_list_members(room_id, page_size=201)
    with pytest.raises(roomchat.NotFoundError):
        next(client.iter_list_members("nope"))


def test_async_iterators_and_operations(emu: Emulator) -> None:
    async def main() -> None:
        async with emu.async_client() as client:
            made = await client.create_chat_room(name="Async", enable_channels=True)
            assert made.room_id is not None
            room_id = made.room_id
            emu.seed_messages(room_id, 450)
            exported: List[str] = []
            messages = client.iter_room_messages(room_id, page_size=200)
            async for message in messages:
                assert message.message is not None
                exported.append(message.message)
            assert exported == [f"message {n}" for n in range(1, 451)] and messages.next_skip == 450
            counts = [p.count async for p in client.room_messages_pages(room_id, page_size=200)]
            assert counts == [200, 200, 50]
            channel = await client.create_channel(room_id, "qa")
            assert channel.id is not None
            await client.send_channel_message(room_id, channel.id, "async hi", system_message=True)
            assert [m.message async for m in client.iter_channel_messages(room_id, channel.id)] == ["async hi"]
            assert [m async for m in client.iter_list_members(room_id)] == []
            raw = await client.with_raw_response.get_chat_room(room_id)
            assert raw.status == 200 and raw.parse().name == "Async"
            with pytest.raises(roomchat.NotFoundError):
                await client.delete_chat_room("nope")

    asyncio.run(main())


# ---- the webinar story ---------------------------------------------------------------------


def test_webinar_story(emu: Emulator, client: roomchat.Client) -> None:
    """A backend provisions a room for a webinar, makes the host its moderator, posts as
    the system and as a user, reads the history page by page, exports it, deletes the room."""
    room_id = room(client, "Q3 launch webinar")
    host = user(client, "host-1", "Hana")
    client.set_member(room_id, "host-1", "moderator")
    client.send_room_message(room_id, "The webinar starts in 5 minutes.", system_message=True)
    client.send_room_message(room_id, "Welcome, everyone!", user_access_token=host)
    emu.seed_messages(room_id, 300, text="question")
    first = client.room_messages(room_id, limit=100)
    assert first.total_records == 302 and first.messages is not None
    assert [m.message for m in first.messages[:2]] == ["The webinar starts in 5 minutes.", "Welcome, everyone!"]
    transcript = [json.dumps(m.to_dict()) for m in client.iter_room_messages(room_id)]
    assert len(transcript) == 302 and json.loads(transcript[1])["user"]["username"] == "Hana"
    client.delete_chat_room(room_id)
    with pytest.raises(roomchat.NotFoundError):
        client.get_chat_room(room_id)
    assert client.user_rooms("host-1") == []


def test_with_raw_response_of_a_new_operation(client: roomchat.Client) -> None:
    room_id = room(client)
    raw = client.with_raw_response.get_chat_room(room_id)
    assert raw.status == 200 and raw.parse().room_id == room_id
    rooms = client.with_raw_response.list_chat_rooms().parse()
    assert [r.room_id for r in rooms] == [room_id]


def test_readme_webinar_example_runs(emu: Emulator) -> None:
    """The README's webinar story (examples/webinar.py, shown there verbatim) runs, sync and async."""
    example = pathlib.Path(__file__).resolve().parents[1] / "examples" / "webinar.py"
    assert example.read_text().strip() in (example.parents[1] / "README.md").read_text()
    env = dict(
        os.environ,
        ROOMCHAT_PRIVATE_KEY=emu.private_key,
        ROOMCHAT_PUBLIC_KEY=emu.public_key,
        ROOMCHAT_BASE_URL=emu.base_url,
    )
    done = subprocess.run([sys.executable, str(example)], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "system: The webinar starts in 5 minutes.",
        "Hana: Welcome, everyone!",
        "exported 2 messages",
        "deleted: not_found",
        "async: Slides are up.",
    ]
    with emu.client() as client:
        assert client.list_chat_rooms() == []
