"""Per-call options (``with_options``), the answer beside the result
(``with_raw_response``), ``ROOMCHAT_LOG`` and the User-Agent, against the emulator."""

from __future__ import annotations

import asyncio
import os
import platform
import subprocess
import sys
import textwrap
import time
from typing import Any

import pytest

import roomchat
from conftest import Emulator

USERS = "/consumer/api/v2/users"
OWN_KEY = "sk_live_SECRET_pytest_options_77aa"


def arrivals(emu: Emulator, method: str, path: str) -> int:
    return sum(1 for e in emu.journal() if e["method"] == method and e["path"] == path)


def last_request_id(emu: Emulator) -> str:
    return f"req_{emu.journal()[-1]['seq']}"


# ---- with_options ------------------------------------------------------------------------


def test_a_view_counts_in_the_parents_budget_and_shares_its_connection(emu: Emulator) -> None:
    # A key of its own: the budget is per key and process-wide.
    with emu.other_key(OWN_KEY), emu.client(private_key=OWN_KEY) as client:
        view = client.with_options(timeout=5.0, max_retries=0)
        assert isinstance(view, roomchat.Client) and view is not client
        emu.clear_connections()
        client.list_users()
        view.list_users()
        view.list_chat_rooms()
        assert client.rate_limit_state().used == 3, "the parent sees its view's calls"
        assert view.rate_limit_state().used == 3
        # One connection for both, plus the one the admin request below came on.
        assert emu.connections()["accepted"] == 2
        # Closing the view leaves the parent working, and the other way round.
        view.close()
        assert client.list_users().total == 0


def test_a_view_without_retries_makes_one_attempt_while_the_parent_retries(emu: Emulator) -> None:
    with emu.client() as client:
        once = client.with_options(max_retries=0)
        emu.fault(USERS, {"kind": "respond", "status": 503}, method="GET", times=3)
        with pytest.raises(roomchat.ServerError) as caught:
            once.list_users()
        assert caught.value.status == 503
        assert arrivals(emu, "GET", USERS) == 1, "one attempt, no retry"
        client.list_users()  # the parent's 2 retries: 503, 503, then the answer
        assert arrivals(emu, "GET", USERS) == 4


def test_a_views_timeout_holds_against_a_slow_answer(emu: Emulator) -> None:
    with emu.client(timeout=10.0) as client:
        quick = client.with_options(timeout=0.3, max_retries=0)
        emu.fault(USERS, {"kind": "delay", "ms": 1500}, method="GET")
        started = time.monotonic()
        with pytest.raises(roomchat.TimeoutError):
            quick.list_users()
        took = time.monotonic() - started
        assert 0.28 <= took < 1.2, f"the view's 0.3 s, not the parent's 10 s: {took:.3f} s"
        emu.fault(USERS, {"kind": "delay", "ms": 600}, method="GET")
        client.list_users()  # within the parent's own timeout


def test_views_layer_and_their_iterators_carry_their_options(emu: Emulator) -> None:
    emu.seed(3)
    with emu.client() as client:
        view = client.with_options(timeout=3.0).with_options(max_retries=0)
        emu.fault(USERS, {"kind": "respond", "status": 503}, method="GET")
        with pytest.raises(roomchat.ServerError):
            next(iter(view.users()))
        assert arrivals(emu, "GET", USERS) == 1
        assert [u.username for u in view.users()] == [u.username for u in client.users()]


def test_bad_option_values_raise_typed_errors(emu: Emulator) -> None:
    with emu.client() as client:
        for bad in (dict(timeout=0), dict(timeout=-1.0), dict(timeout=float("nan")), dict(connect_timeout=0.0),
                    dict(max_retry_wait=2e9)):
            with pytest.raises(roomchat.ConfigurationError):
                client.with_options(**bad)
        with pytest.raises(roomchat.ValidationError):
            client.with_options(max_retries=-1)
        with pytest.raises(roomchat.ValidationError):
            client.with_options(max_retries=101)
        with pytest.raises(TypeError):
            client.with_options(timeout="5")  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            client.with_options(max_retries=1.5)  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            client.with_options(5.0)  # type: ignore[misc]
        assert emu.journal() == [], "nothing was sent"
        client.close()
        with pytest.raises(roomchat.ConfigurationError):
            client.with_options(timeout=1.0)


# ---- with_raw_response -------------------------------------------------------------------


def test_the_answer_comes_beside_the_result(emu: Emulator) -> None:
    emu.seed(2)
    with emu.client() as client:
        response = client.with_raw_response.list_users(limit=10)
        assert isinstance(response, roomchat.APIResponse)
        assert (response.status, response.attempts) == (200, 1)
        assert response.request_id == last_request_id(emu)
        assert response.headers["date"].endswith(" GMT")
        assert response.headers["content-type"].startswith("application/json")
        assert all(name == name.lower() for name in response.headers)
        page = response.parse()
        assert isinstance(page, roomchat.UserPage) and page.total == 2
        assert response.parse() is page
        assert repr(response) == f"<APIResponse [200] request_id='{response.request_id}' attempts=1>"


def test_the_answer_after_a_retry_names_the_attempts(emu: Emulator) -> None:
    with emu.client() as client:
        emu.fault(USERS, {"kind": "respond", "status": 503}, method="GET")
        response = client.with_raw_response.list_users()
        assert response.attempts == 2
        assert response.request_id == last_request_id(emu)


def test_every_endpoint_gives_its_answer(emu: Emulator) -> None:
    emu.room("bbNiVFoXm")
    conversation = emu.conversation("bbNiVFoXm", [{"messages": "hi", "user": {"username": "jon"}}])
    with emu.client() as client:
        raw = client.with_raw_response

        def check(response: roomchat.APIResponse[Any]) -> Any:
            assert response.status == 200
            assert response.request_id == last_request_id(emu)
            return response.parse()

        created = check(raw.create_user("jon", unique_user_identifier="crm-py-1"))
        assert isinstance(created, roomchat.CreatedUser) and created.username == "jon"
        messages = check(raw.conversation_messages("bbNiVFoXm", conversation))
        assert messages[0].text == "hi"
        assert isinstance(check(raw.list_chat_rooms()), list)
        assert check(raw.raw_request("GET", "/consumer/api/v1/chatrooms")).status == 200
        assert isinstance(check(raw.deactivate_user(unique_user_identifier="crm-py-1")), roomchat.Deactivated)
        assert isinstance(check(raw.reactivate_user(unique_user_identifier="crm-py-1")), roomchat.Reactivated)
        assert check(raw.validate_access_token(created.access_token)).username == "jon"
        assert isinstance(check(raw.invalidate_access_token(created.access_token)), roomchat.Invalidated)
        # Failures raise as the plain calls do.
        with pytest.raises(roomchat.UserNotFoundError):
            raw.deactivate_user(user_id="0" * 24)
        with pytest.raises(roomchat.ValidationError):
            raw.deactivate_user()
        # Through a view with options too.
        assert client.with_options(max_retries=0).with_raw_response.list_users().status == 200


def test_the_rate_limit_headers_when_the_service_sends_them(emu: Emulator) -> None:
    emu.config(rate_limit_headers=True)
    try:
        with emu.client() as client:
            headers = client.with_raw_response.list_chat_rooms().headers
            assert int(headers["x-ratelimit-limit"]) == 1_000_000
            assert int(headers["x-ratelimit-remaining"]) < 1_000_000
    finally:
        emu.config(rate_limit_headers=False)


def test_async_views_and_raw_responses(emu: Emulator) -> None:
    async def main() -> None:
        async with roomchat.AsyncClient(
            emu.private_key, base_url=emu.base_url, public_key=emu.public_key, base_backoff=0.01, ca_bundle=emu.ca_file
        ) as client:
            once = client.with_options(max_retries=0, timeout=5.0)
            emu.fault(USERS, {"kind": "respond", "status": 503}, method="GET")
            with pytest.raises(roomchat.ServerError):
                await once.list_users()
            assert arrivals(emu, "GET", USERS) == 1
            response = await client.with_raw_response.list_users(limit=5)
            assert (response.status, response.attempts) == (200, 1)
            assert response.request_id == last_request_id(emu)
            assert response.parse().limit == 5
            created = await once.with_raw_response.create_user("ann")
            assert created.parse().username == "ann"
            token = await client.with_raw_response.validate_access_token(created.parse().access_token)
            assert token.request_id == last_request_id(emu) and token.parse().username == "ann"
            await once.aclose()  # a view: its client still works
            assert (await client.list_users()).total == 1
            with pytest.raises(roomchat.ConfigurationError):
                client.with_options(timeout=0)

    asyncio.run(main())


# ---- ROOMCHAT_LOG and the User-Agent ----------------------------------------------------


def run_logged(emu: Emulator, setting: str) -> str:
    """stderr of a fresh interpreter that imports roomchat with ROOMCHAT_LOG=`setting` and
    makes one call answered after a retry."""
    script = textwrap.dedent(
        f"""
        import roomchat
        client = roomchat.Client({emu.private_key!r}, base_url={emu.base_url!r}, base_backoff=0.01,
                                 ca_bundle={emu.ca_file!r})
        client.list_users(limit=5)
        """
    )
    emu.fault(USERS, {"kind": "respond", "status": 503}, method="GET")
    env = dict(os.environ, ROOMCHAT_LOG=setting)
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stderr


def test_roomchat_log_prints_to_stderr_without_the_key(emu: Emulator) -> None:
    debug = run_logged(emu, "debug")
    lines = [line for line in debug.splitlines() if line.startswith("[roomchat]")]
    assert len(lines) == 3, debug
    assert lines[0].startswith(f"[roomchat] DEBUG: GET {USERS}?auth=REDACTED&limit=5 -> 503 (attempt 1, ")
    assert lines[1].startswith(f"[roomchat] WARNING: retrying GET {USERS}?auth=REDACTED&limit=5 in ")
    assert lines[2].startswith(f"[roomchat] DEBUG: GET {USERS}?auth=REDACTED&limit=5 -> 200 (attempt 2, ")
    assert emu.private_key not in debug
    for setting in ("warn", "INFO"):
        lines = [line for line in run_logged(emu, setting).splitlines() if line.startswith("[roomchat]")]
        assert len(lines) == 1 and lines[0].startswith("[roomchat] WARNING: retrying GET"), lines
    for setting in ("", "verbose"):
        assert "[roomchat]" not in run_logged(emu, setting)


def test_the_library_logger_has_a_null_handler_and_prints_nothing_by_default(emu: Emulator) -> None:
    import logging

    handlers = logging.getLogger("roomchat").handlers
    assert any(isinstance(h, logging.NullHandler) for h in handlers)
    env = {k: v for k, v in os.environ.items() if k != "ROOMCHAT_LOG"}
    script = textwrap.dedent(
        f"""
        import roomchat
        client = roomchat.Client({emu.private_key!r}, base_url={emu.base_url!r}, base_backoff=0.01,
                                 ca_bundle={emu.ca_file!r})
        client.list_users()
        """
    )
    emu.fault(USERS, {"kind": "respond", "status": 503}, method="GET")
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert arrivals(emu, "GET", USERS) == 2, "the retry a WARNING would have reported did happen"


def test_the_user_agent_names_python_the_core_the_platform_and_the_app(emu: Emulator) -> None:
    with emu.client(app_name="my-backend/1.4") as client:
        client.list_chat_rooms()
    runtime = f"{platform.python_implementation()} {sys.version_info.major}.{sys.version_info.minor}"
    system = f"linux {platform.machine()}"  # core's names: std::env::consts::OS and ARCH
    assert emu.journal()[-1]["user_agent"] == (
        f"roomchat-python/{roomchat.__version__} (core {roomchat.CORE_VERSION}; {runtime}; {system}) my-backend/1.4"
    )
