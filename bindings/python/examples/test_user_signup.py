"""A test of your own code against the emulator, with roomchat's pytest plugin.

Install: pip install "roomchat[testing]" pytest. Run: pytest.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

import roomchat
from roomchat.testing import Emulator


def sign_up(client: roomchat.Client, username: str, room: str) -> str:
    """Your code: makes `username` a moderator of `room` unless the name is taken."""
    if any(user.username == username for user in client.users()):
        raise ValueError(f"{username} is taken")
    return client.create_user(username, is_moderator=True, chat_room=room).user_id


def test_signup_backs_off_after_a_429(roomchat_emulator: Emulator, roomchat_client: roomchat.Client) -> None:
    roomchat_emulator.seed_users(3)
    roomchat_emulator.fail_next(path="/consumer/api/v1/user", status=429, retry_after=1)

    user_id = sign_up(roomchat_client, "ann", room="support")

    posts = [e for e in roomchat_emulator.journal() if e.method == "POST"]
    assert [e.status for e in posts] == [429, 200]
    assert posts[1].received_at - posts[0].received_at >= timedelta(seconds=1)
    assert posts[1].json() == {"username": "ann", "isModerator": True, "chatRoom": "support"}
    assert posts[1].params["auth"] == "REDACTED"
    ann = next(u for u in roomchat_emulator.users() if u.username == "ann")
    assert (ann.user_id, ann.is_moderator, ann.chat_room) == (user_id, True, "support")


def test_a_taken_name_is_refused(roomchat_emulator: Emulator, roomchat_client: roomchat.Client) -> None:
    roomchat_emulator.seed_users(3)  # each test starts from an empty account

    with pytest.raises(ValueError, match="taken"):
        sign_up(roomchat_client, "seed-user-2", room="support")
    assert len(roomchat_emulator.users()) == 3
