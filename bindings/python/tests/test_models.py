"""The result models: immutable, lazy, wire names in to_dict, equality, short reprs, pickling."""

from __future__ import annotations

import pickle

import pytest

import roomchat
from conftest import Emulator


def test_models_are_immutable(emu: Emulator, client: roomchat.Client) -> None:
    emu.seed(1)
    page = client.list_users()
    user = page.data[0]
    for obj, attr in ((user, "username"), (page, "total"), (user, "brand_new")):
        with pytest.raises(AttributeError):
            setattr(obj, attr, "x")
    with pytest.raises(TypeError):
        page.data[0] = user  # type: ignore[index]
    extra = user.extra
    extra["mutated"] = True
    assert "mutated" not in user.extra  # a fresh dict each time


def test_wire_names_and_missing_fields() -> None:
    user = roomchat.User.from_dict({"_id": "u1", "username": "jon", "deactivated": True})
    assert (user.id, user.user_id, user.email, user.is_moderator) == ("u1", None, None, None)
    assert user.extra == {"deactivated": True}
    assert user.to_dict() == {"_id": "u1", "username": "jon", "deactivated": True}
    message = roomchat.Message.from_dict(
        {"_id": "m1", "messages": "hi", "user": {"_id": "u1", "username": "jon", "uniqueUserIdentifier": "c"}, "pinned": 1}
    )
    assert message.text == "hi" and message.created is None and message.extra == {"pinned": 1}
    assert message.user is not None and message.user.unique_user_identifier == "c"
    assert message.to_dict()["messages"] == "hi"
    created = roomchat.CreatedUser.from_dict(
        {"accessToken": "tok.en.sig", "username": "ann", "userId": "u2", "isModerator": True, "x": 1}
    )
    assert created.to_dict() == {"accessToken": "tok.en.sig", "username": "ann", "userId": "u2", "isModerator": True, "x": 1}
    page = roomchat.UserPage.from_dict({"total": 1, "limit": 50, "skip": 0, "data": [user.to_dict()], "next": None})
    assert page.data == (user,) and page.extra == {"next": None}
    assert page.to_dict()["data"][0]["_id"] == "u1"
    with pytest.raises(roomchat.ValidationError):
        roomchat.User.from_dict({"username": 7})
    with pytest.raises(roomchat.ValidationError):
        roomchat.UserPage.from_dict({"data": []})


def test_equality_hash_and_repr(emu: Emulator, client: roomchat.Client) -> None:
    created = client.create_user("ann", is_moderator=True, chat_room="r1")
    page_a, page_b = client.list_users(), client.list_users()
    assert page_a == page_b and page_a.data[0] == page_b.data[0]
    assert hash(page_a.data[0]) == hash(page_b.data[0])
    assert len({page_a.data[0], page_b.data[0]}) == 1
    assert page_a.data[0] != created and page_a != "x"
    shown = repr(created)
    assert created.access_token not in shown and created.access_token not in str(created)
    assert shown == f"CreatedUser(user_id='{created.user_id}', username='ann', is_moderator=True, chat_room='r1')"
    assert repr(page_a) == "UserPage(total=1, limit=50, skip=0, data=<1 users>)"
    assert repr(page_a.data[0]) == f"User(id='{created.user_id}', username='ann')"
    long = roomchat.User.from_dict({"username": "x" * 100})
    assert len(repr(long)) < 80


def test_pickle_round_trip(emu: Emulator, client: roomchat.Client) -> None:
    emu.room("r1")
    conversation = emu.conversation("r1", [{"messages": "hi", "user": {"username": "jon"}}])
    values = [
        client.list_users(),
        client.create_user("jon", unique_user_identifier="u-1"),
        client.deactivate_user(unique_user_identifier="u-1"),
        client.conversation_messages("r1", conversation)[0],
        client.raw_request("GET", "/consumer/api/v1/chatrooms"),
    ]
    for value in values:
        again = pickle.loads(pickle.dumps(value))
        assert again == value and type(again) is type(value)
    with pytest.raises(TypeError):
        pickle.dumps(client)  # a client (and its key) is never pickled


def test_page_data_is_built_once_and_lazily(emu: Emulator, client: roomchat.Client) -> None:
    emu.seed(50)
    page = client.list_users(limit=50)
    assert page.data is page.data  # one tuple, made on first access
    assert all(type(u) is roomchat.User for u in page.data)
    assert page.data[49].username == "seed-user-50"


def test_rate_limit_state_model(client: roomchat.Client) -> None:
    state = client.rate_limit_state()
    assert state == client.rate_limit_state() or state.used != client.rate_limit_state().used
    assert set(state.to_dict()) == {
        "limit", "window", "used", "remaining", "next_free_in", "blocked_for", "backend", "degraded"
    }
    assert (state.backend, state.degraded) == ("local", False)
    assert repr(state).startswith("RateLimitState(limit=")
