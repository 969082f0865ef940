"""Every endpoint of the sync client against the emulator, over real HTTP."""

from __future__ import annotations

import roomchat
import pytest

from conftest import PUBLIC_KEY, SECRET_KEY, Emulator


def test_list_users_pages_and_fields(emu: Emulator, client: roomchat.Client) -> None:
    emu.seed(120)
    page = client.list_users(limit=50, skip=100)
    assert (page.total, page.limit, page.skip, len(page)) == (120, 50, 100, 20)
    first = page.data[0]
    assert first.username == "seed-user-101"
    assert first.id is not None and first.id == first.user_id
    assert first.email is None and first.chat_room is None
    assert first.is_moderator is False
    assert "created" in first.extra
    assert [u.username for u in page] == [u.username for u in page.data]
    assert client.list_users().limit == 50  # the default
    entry = emu.journal()[0]
    assert entry["path"] == "/consumer/api/v2/users"
    assert entry["query"] == "auth=REDACTED&limit=50&skip=100"


def test_users_iterates_lazily_one_page_at_a_time(emu: Emulator, client: roomchat.Client) -> None:
    emu.seed(450)
    emu.clear_journal()
    users = client.users(page_size=200)
    assert emu.journal() == []  # nothing is fetched before the first next()
    first = next(users)
    assert first.username == "seed-user-1"
    assert len(emu.journal()) == 1
    rest = list(users)
    assert len(rest) == 449
    assert len({u.id for u in [first, *rest]}) == 450
    assert [e["query"] for e in emu.journal()] == [
        "auth=REDACTED&limit=200&skip=0",
        "auth=REDACTED&limit=200&skip=200",
        "auth=REDACTED&limit=200&skip=400",
    ]


def test_user_pages(emu: Emulator, client: roomchat.Client) -> None:
    emu.seed(30)
    pages = list(client.user_pages(page_size=12))
    assert [len(p) for p in pages] == [12, 12, 6]
    assert pages[-1].skip == 24


def test_an_error_ends_no_iteration(emu: Emulator, client: roomchat.Client) -> None:
    """A step that fails raises; the next step fetches the same page again (the loop
    that caught the error goes on), for ``users()`` and ``user_pages()``."""
    emu.seed(5)
    emu.fault("/consumer/api/v2/users", {"kind": "respond", "status": 400, "body": '{"message":"nope"}'})
    users = client.users(page_size=2)
    with pytest.raises(roomchat.InvalidRequestError):
        next(users)
    assert [u.username for u in users] == [f"seed-user-{n}" for n in range(1, 6)]
    users.resume()  # does nothing now: kept for code written when an error ended the iteration
    assert list(users) == []

    pages = client.user_pages(page_size=2)
    assert next(pages).skip == 0
    emu.fault("/consumer/api/v2/users", {"kind": "respond", "status": 400, "body": '{"message":"nope"}'}, times=2)
    for _ in range(2):
        with pytest.raises(roomchat.InvalidRequestError):
            next(pages)
    assert [p.skip for p in pages] == [2, 4]


def test_create_user_variants(emu: Emulator, client: roomchat.Client) -> None:
    regular = client.create_user("jon")
    assert (regular.username, regular.is_moderator, regular.chat_room) == ("jon", False, None)
    assert len(regular.user_id) == 24 and regular.access_token.count(".") == 2
    everywhere = client.create_user("ann", is_moderator=True)
    assert everywhere.is_moderator and everywhere.chat_room is None
    one_room = client.create_user(
        "bob",
        is_moderator=True,
        chat_room="bbNiVFoXm",
        unique_user_identifier="crm-42",
        email="bob@example.com",
        profile_pic="https://p/b.png",
        external_user_id="ext-1",
        meta={"plan": "gold", "n": [1, 2.5, None, True]},
        extra={"custom": "x"},
    )
    assert one_room.chat_room == "bbNiVFoXm"
    import json

    body = json.loads(emu.journal()[-1]["body"])
    assert body == {
        "username": "bob",
        "isModerator": True,
        "chatRoom": "bbNiVFoXm",
        "uniqueUserIdentifier": "crm-42",
        "email": "bob@example.com",
        "profilePic": "https://p/b.png",
        "externalUserId": "ext-1",
        "meta": {"plan": "gold", "n": [1, 2.5, None, True]},
        "custom": "x",
    }
    listed = {u.username: u for u in client.users()}
    assert listed["bob"].unique_user_identifier == "crm-42"
    assert listed["bob"].email == "bob@example.com"
    assert listed["bob"].extra["externalUserId"] == "ext-1"


def test_create_user_refuses_conflicts_before_sending(emu: Emulator, client: roomchat.Client) -> None:
    with pytest.raises(roomchat.ValidationError):
        client.create_user("x", chat_room="r1")  # a room without is_moderator
    with pytest.raises(roomchat.ValidationError):
        client.create_user("x", email="a@b", extra={"email": "c@d"})
    with pytest.raises(roomchat.ValidationError):
        client.create_user("x", extra={"isModerator": True})
    with pytest.raises(roomchat.ValidationError):
        client.create_user("   ")
    assert emu.journal() == []


def test_deactivate_user(emu: Emulator, client: roomchat.Client) -> None:
    jon = client.create_user("jon", unique_user_identifier="crm-1")
    done = client.deactivate_user(unique_user_identifier="crm-1")
    assert done.success and done.message == "user deactivated"
    with pytest.raises(roomchat.UserNotFoundError) as caught:
        client.deactivate_user(user_id=jon.user_id)
    assert caught.value.status == 400 and caught.value.method == "DELETE"
    emu.clear_journal()
    for bad in ({}, {"user_id": "a", "unique_user_identifier": "b"}):
        with pytest.raises(roomchat.ValidationError):
            client.deactivate_user(**bad)
    assert emu.journal() == []  # nothing was sent


def test_conversation_messages_both_path_forms(emu: Emulator, client: roomchat.Client) -> None:
    emu.room("bbNiVFoXm")
    conversation = emu.conversation(
        "bbNiVFoXm",
        [
            {"messages": "hi", "user": {"username": "jon", "email": "jon@example.com"}},
            {"messages": "hello", "user": {"username": "ann"}},
        ],
    )
    for form in ("room", "chatroom"):
        messages = client.conversation_messages("bbNiVFoXm", conversation, path_form=form)
        assert [m.text for m in messages] == ["hi", "hello"]
        author = messages[0].user
        assert author is not None and author.username == "jon" and author.email == "jon@example.com"
        assert messages[0].conversation == conversation
        assert messages[0].to_dict()["messages"] == "hi"
    paths = [e["path"].split("/")[4] for e in emu.journal()]
    assert paths == ["room", "chatroom"]
    with pytest.raises(roomchat.NotFoundError):
        client.conversation_messages("nope", conversation)
    with pytest.raises(roomchat.ValidationError):
        client.conversation_messages("bbNiVFoXm", conversation, path_form="rooms")


def test_list_chat_rooms(emu: Emulator, client: roomchat.Client) -> None:
    assert client.list_chat_rooms() == []
    emu.room("bbNiVFoXm", "General")
    rooms = client.list_chat_rooms()
    # Typed since issue 29: `Room` records (`room_id`; the wire form is `to_dict()`).
    assert isinstance(rooms[0], roomchat.Room)
    assert rooms[0].room_id == "bbNiVFoXm" and rooms[0].room_password is None
    assert rooms[0].to_dict()["roomId"] == "bbNiVFoXm"


def test_raw_request_with_each_key(emu: Emulator, client: roomchat.Client) -> None:
    jon = client.create_user("jon")
    answer = client.raw_request(
        "GET", "/consumer/api/v1/validate", query={"accessToken": jon.access_token}, auth="public"
    )
    assert answer.status == 200 and answer.body["username"] == "jon"
    assert answer.headers["content-type"].startswith("application/json")
    assert emu.journal()[-1]["query"].startswith("publicKey=REDACTED&")
    users = client.raw_request("GET", "/consumer/api/v2/users", query=[("limit", 1)])
    assert users.body["limit"] == 1
    with pytest.raises(roomchat.MissingAuthError):
        client.raw_request("GET", "/consumer/api/v2/users", auth="none")
    created = client.raw_request("POST", "/consumer/api/v1/user", json={"username": "raw"})
    assert created.body["username"] == "raw"
    for bad in ({"auth": "secret"}, {"query": {"auth": "x"}}):
        with pytest.raises(roomchat.ValidationError):
            client.raw_request("GET", "/consumer/api/v2/users", **bad)


def test_sign_in_url_and_iframe(emu: Emulator, client: roomchat.Client) -> None:
    bob = client.create_user("bob", is_moderator=True, chat_room="bbNiVFoXm")
    url = client.sign_in_url("bbNiVFoXm", bob.access_token)
    assert url == f"{emu.chat_url}/bbNiVFoXm?accessToken={bob.access_token}"
    html = client.iframe_html("bbNiVFoXm", bob.access_token, width="100%", height="600")
    assert html.startswith('<iframe src="') and 'height="600"' in html
    with emu.client(chat_url=None) as no_chat:
        with pytest.raises(roomchat.ConfigurationError):
            no_chat.sign_in_url("bbNiVFoXm", bob.access_token)


def test_rate_limit_state_and_fail_fast(emu: Emulator) -> None:
    with emu.other_key("sk_live_SECRET_pytest_ratelimit_77") as key:
        limit = roomchat.RateLimit(requests=5, window=30.0, when_limited="fail")
        assert limit == roomchat.RateLimit(requests=5, window=30, when_limited="fail")
        with emu.client(private_key=key, rate_limit=limit) as client:
            for _ in range(5):  # the whole budget: no reserve below 10 requests
                client.list_users(limit=1)
            state = client.rate_limit_state()
            assert (state.limit, state.used, state.remaining) == (5, 5, 0)
            assert state.window > 30.0 and state.next_free_in > 0
            with pytest.raises(roomchat.RateLimitedError) as caught:
                client.list_users(limit=1)
            assert caught.value.retry_after is not None and caught.value.retry_after > 0


def test_from_env(emu: Emulator, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ROOMCHAT_PRIVATE_KEY", SECRET_KEY)
    monkeypatch.setenv("ROOMCHAT_BASE_URL", emu.base_url)
    monkeypatch.setenv("ROOMCHAT_CHAT_URL", emu.chat_url)
    monkeypatch.setenv("ROOMCHAT_PUBLIC_KEY", PUBLIC_KEY)
    monkeypatch.setenv("ROOMCHAT_APP_NAME", "pytest-app/1.0")
    # ca_bundle: the emulator's CA in the run over TLS (None over plain HTTP).
    settings = dict(timeout=5.0, rate_limit=roomchat.RateLimit(requests=100000), ca_bundle=emu.ca_file)
    with roomchat.Client.from_env(**settings) as client:
        assert client.base_url == emu.base_url
        client.list_users()
    assert emu.journal()[-1]["user_agent"].endswith(" pytest-app/1.0")
    monkeypatch.delenv("ROOMCHAT_BASE_URL")
    with pytest.raises(roomchat.ConfigurationError, match="ROOMCHAT_BASE_URL"):
        roomchat.Client.from_env()


def test_close_and_context_manager(emu: Emulator) -> None:
    with emu.client() as client:
        client.list_users()
        assert not client.closed
    assert client.closed
    assert repr(client) == "Client(closed)"
    with pytest.raises(roomchat.ConfigurationError, match="closed"):
        client.list_users()
    client.close()  # twice is fine


def test_plain_http_is_refused_naming_pythons_keyword_and_no_other_languages() -> None:
    for make in (roomchat.Client, roomchat.AsyncClient):
        with pytest.raises(roomchat.ConfigurationError) as refused:
            make("sk_1", base_url="http://api.example.com")
        error = refused.value
        for shown in (str(error), error.message):
            assert shown.endswith("use https://, or allow_insecure_http=True if you really mean it"), shown
            assert "plain http://" in shown and '"api.example.com"' in shown
            for other in ("allow_insecure_http(true)", "allowInsecureHttp", "roomchat_client_options_set", "::"):
                assert other not in shown, shown


def test_configuration_errors() -> None:
    for bad in ("", " sk_padded ", "sk\nx"):
        with pytest.raises(roomchat.ConfigurationError):
            roomchat.Client(bad, base_url="https://api.example.com")
    with pytest.raises(roomchat.ConfigurationError):
        roomchat.Client("sk_1", base_url="http://api.example.com")  # the key over plain http
    roomchat.Client("sk_1", base_url="http://api.example.com", allow_insecure_http=True).close()
    with pytest.raises(roomchat.ConfigurationError):
        roomchat.Client("sk_1", base_url="https://api.example.com", timeout=0)
    with pytest.raises(roomchat.ConfigurationError):
        roomchat.Client("sk_1", base_url="https://api.example.com", timeout=-1.0)
    with pytest.raises(roomchat.ConfigurationError):
        roomchat.RateLimit(requests=10, when_limited="sometimes")
    with pytest.raises(roomchat.ConfigurationError):
        roomchat.RateLimit(window=0)


def test_subclassing_client(emu: Emulator) -> None:
    class Mine(roomchat.Client):
        def usernames(self) -> list[str | None]:
            return [u.username for u in self.users()]

    emu.seed(3)
    mine = Mine(
        SECRET_KEY, base_url=emu.base_url, rate_limit=roomchat.RateLimit(requests=100000), ca_bundle=emu.ca_file
    )
    assert mine.usernames() == ["seed-user-1", "seed-user-2", "seed-user-3"]
    assert isinstance(mine, roomchat.Client)
