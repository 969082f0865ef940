"""Bad arguments give TypeError or ValidationError (ConfigurationError for settings),
never a crash or a PanicException, and nothing is sent."""

from __future__ import annotations

from typing import Any, Callable, List, Tuple, Type

import pytest

import roomchat
from conftest import Emulator

loop: List[Any] = []
loop.append(loop)  # refers to itself

# (description, call on a client, expected exception)
CASES: List[Tuple[str, Callable[[roomchat.Client], object], Type[BaseException]]] = [
    ("negative limit", lambda c: c.list_users(limit=-1), roomchat.ValidationError),
    ("limit too large", lambda c: c.list_users(limit=201), roomchat.ValidationError),
    ("huge limit", lambda c: c.list_users(limit=2**80), roomchat.ValidationError),
    ("limit as str", lambda c: c.list_users(limit="5"), TypeError),
    ("limit as bool", lambda c: c.list_users(limit=True), TypeError),
    ("limit as float", lambda c: c.list_users(limit=1.5), TypeError),
    ("negative skip", lambda c: c.list_users(skip=-5), roomchat.ValidationError),
    ("page size 0", lambda c: c.users(page_size=0), roomchat.ValidationError),
    ("page size as str", lambda c: c.user_pages(page_size="x"), TypeError),
    ("username None", lambda c: c.create_user(None), TypeError),
    ("username int", lambda c: c.create_user(5), TypeError),
    ("username surrogate", lambda c: c.create_user("\udcff"), roomchat.ValidationError),
    ("username empty", lambda c: c.create_user(""), roomchat.ValidationError),
    ("email int", lambda c: c.create_user("ok", email=3), TypeError),
    ("is_moderator str", lambda c: c.create_user("ok", is_moderator="yes"), TypeError),
    ("meta object", lambda c: c.create_user("ok", meta=object()), TypeError),
    ("meta NaN", lambda c: c.create_user("ok", meta={"a": float("nan")}), roomchat.ValidationError),
    ("meta refers to itself", lambda c: c.create_user("ok", meta=loop), roomchat.ValidationError),
    ("meta huge int", lambda c: c.create_user("ok", meta=2**70), roomchat.ValidationError),
    ("meta surrogate key", lambda c: c.create_user("ok", meta={"\ud800": 1}), roomchat.ValidationError),
    ("extra int key", lambda c: c.create_user("ok", extra={1: "x"}), TypeError),
    ("extra list", lambda c: c.create_user("ok", extra=["x"]), TypeError),
    ("user_id int", lambda c: c.deactivate_user(user_id=5), TypeError),
    ("user_id empty", lambda c: c.deactivate_user(user_id=""), roomchat.ValidationError),
    ("no id", lambda c: c.deactivate_user(), roomchat.ValidationError),
    ("room None", lambda c: c.conversation_messages(None, "c"), TypeError),
    ("room empty", lambda c: c.conversation_messages("", "c"), roomchat.ValidationError),
    ("room surrogate", lambda c: c.conversation_messages("r\ud800", "c"), roomchat.ValidationError),
    ("path_form int", lambda c: c.conversation_messages("r", "c", path_form=1), TypeError),
    ("query str", lambda c: c.raw_request("GET", "/consumer/api/v1/x", query="a=b"), TypeError),
    ("query None value", lambda c: c.raw_request("GET", "/consumer/api/v1/x", query={"a": None}), TypeError),
    ("query triple", lambda c: c.raw_request("GET", "/consumer/api/v1/x", query=[("a", "b", "c")]), TypeError),
    ("json set", lambda c: c.raw_request("POST", "/consumer/api/v1/x", json={1, 2}), TypeError),
    ("method BREW", lambda c: c.raw_request("BREW", "/consumer/api/v1/x"), roomchat.ValidationError),
    ("path without slash", lambda c: c.raw_request("GET", "consumer"), roomchat.ValidationError),
    ("path with dot-dot", lambda c: c.raw_request("GET", "/consumer/../x"), roomchat.ValidationError),
    ("method None", lambda c: c.raw_request(None, "/x"), TypeError),
    ("sign-in room None", lambda c: c.sign_in_url(None, "t"), TypeError),
    ("sign-in token empty", lambda c: c.sign_in_url("r", ""), roomchat.ValidationError),
    ("iframe width int", lambda c: c.iframe_html("r", "t", width=100), TypeError),
    ("with_cancel str", lambda c: c.with_cancel("token"), TypeError),
]


@pytest.mark.parametrize("call,expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_call_arguments(
    emu: Emulator, client: roomchat.Client, call: Callable[[roomchat.Client], object], expected: Type[BaseException]
) -> None:
    with pytest.raises(expected):
        call(client)
    assert emu.journal() == []  # nothing was sent


SETTINGS: List[Tuple[str, Callable[[], object], Type[BaseException]]] = [
    ("key None", lambda: roomchat.Client(None, base_url="https://a.example"), TypeError),
    ("key bytes", lambda: roomchat.Client(b"sk", base_url="https://a.example"), TypeError),
    ("key surrogate", lambda: roomchat.Client("sk\udc80", base_url="https://a.example"), roomchat.ValidationError),
    ("no base_url", lambda: roomchat.Client("sk"), TypeError),
    ("base_url None", lambda: roomchat.Client("sk", base_url=None), TypeError),
    ("base_url not a URL", lambda: roomchat.Client("sk", base_url="ftp://x"), roomchat.ConfigurationError),
    ("timeout str", lambda: roomchat.Client("sk", base_url="https://a.example", timeout="1"), TypeError),
    ("timeout inf", lambda: roomchat.Client("sk", base_url="https://a.example", timeout=float("inf")), roomchat.ConfigurationError),
    ("timeout NaN", lambda: roomchat.Client("sk", base_url="https://a.example", timeout=float("nan")), roomchat.ConfigurationError),
    ("max_retries negative", lambda: roomchat.Client("sk", base_url="https://a.example", max_retries=-1), ValueError),
    ("rate_limit str", lambda: roomchat.Client("sk", base_url="https://a.example", rate_limit="600"), TypeError),
    ("flag as int", lambda: roomchat.Client("sk", base_url="https://a.example", allow_insecure_http=1), TypeError),
    ("unknown setting", lambda: roomchat.Client("sk", base_url="https://a.example", retries=3), TypeError),
    ("positional base_url", lambda: roomchat.Client("sk", "https://a.example"), TypeError),
    ("rate 0 requests", lambda: roomchat.RateLimit(requests=0), ValueError),
    ("rate window str", lambda: roomchat.RateLimit(window="60"), TypeError),
    ("wire op int", lambda: roomchat.wire.build_request(5, {}), TypeError),
    ("wire params list", lambda: roomchat.wire.build_request("list_users", [1]), roomchat.ValidationError),
    ("wire negative limit", lambda: roomchat.wire.build_request("list_users", {"limit": -1}), roomchat.ValidationError),
    ("wire unknown param", lambda: roomchat.wire.build_request("list_users", {"limitt": 1}), roomchat.ValidationError),
    ("wire status 1000", lambda: roomchat.wire.decode_response("list_users", 1000, [], b""), roomchat.ValidationError),
    ("wire header int", lambda: roomchat.wire.decode_response("list_users", 200, [("a", 1)], b""), TypeError),
    ("from_dict list", lambda: roomchat.User.from_dict([1]), roomchat.ValidationError),
]


@pytest.mark.parametrize("call,expected", [c[1:] for c in SETTINGS], ids=[c[0] for c in SETTINGS])
def test_bad_settings_and_pure_calls(call: Callable[[], object], expected: Type[BaseException]) -> None:
    with pytest.raises(expected):
        call()


URL = "https://a.example"

# (the argument, a call giving it a number of seconds): every seconds argument there is.
DURATIONS: List[Tuple[str, Callable[[float], object]]] = [
    ("timeout", lambda s: roomchat.Client("sk", base_url=URL, timeout=s)),
    ("connect_timeout", lambda s: roomchat.Client("sk", base_url=URL, connect_timeout=s)),
    ("max_retry_wait", lambda s: roomchat.Client("sk", base_url=URL, max_retry_wait=s)),
    ("base_backoff", lambda s: roomchat.Client("sk", base_url=URL, base_backoff=s)),
    ("timeout", lambda s: roomchat.AsyncClient("sk", base_url=URL, timeout=s)),
    ("window", lambda s: roomchat.RateLimit(window=s)),
    ("max_wait", lambda s: roomchat.RateLimit(max_wait=s)),
    ("redis_connect_timeout", lambda s: roomchat.RateLimit(redis_url="redis://h:1", redis_connect_timeout=s)),
    ("redis_timeout", lambda s: roomchat.RateLimit(redis_url="redis://h:1", redis_timeout=s)),
    ("redis_breaker_cooldown", lambda s: roomchat.RateLimit(redis_url="redis://h:1", redis_breaker_cooldown=s)),
]


@pytest.mark.parametrize("seconds", [1e19, 2e19, 1e300, 1e9 + 1, 2**70])
@pytest.mark.parametrize("name,call", DURATIONS, ids=[f"{i}-{d[0]}" for i, d in enumerate(DURATIONS)])
def test_seconds_above_the_core_limit_are_a_configuration_error(
    name: str, call: Callable[[float], object], seconds: float
) -> None:
    """Above core's MAX_DURATION (10^9 s) every seconds argument is refused where it is
    given, with its name, as core would refuse it: never a panic, never a late failure."""
    with pytest.raises(roomchat.ConfigurationError, match=f"^{name} must be at most 1000000000 s") as caught:
        call(seconds)
    assert "PanicException" not in repr(caught.value)


@pytest.mark.parametrize("name,call", DURATIONS, ids=[f"{i}-{d[0]}" for i, d in enumerate(DURATIONS)])
def test_seconds_at_the_core_limit_are_taken(name: str, call: Callable[[float], object]) -> None:
    call(1e9)
    call(10**9)


def test_the_largest_response_cap_is_taken(emu: Emulator) -> None:
    emu.seed(3)
    with emu.client(max_response_bytes=2**64 - 1) as client:
        assert len(client.list_users(limit=3)) == 3
        assert len(client.raw_request("GET", "/consumer/api/v2/users", query={"limit": "2"}).body["data"]) == 2
    with pytest.raises(roomchat.ValidationError):
        roomchat.Client("sk", base_url=URL, max_response_bytes=2**64)
