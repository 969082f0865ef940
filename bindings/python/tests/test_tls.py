"""HTTPS against real emulators serving TLS (``--tls``; issue 20): a client that trusts
the emulator's CA (``ca_bundle`` as str or pathlib.Path, ``SSL_CERT_FILE``, ``tls_roots``)
gets real answers; an unknown issuer, an expired certificate and a name mismatch are
each a ``TlsError`` naming the reason, tried once (the emulator's handshake counts),
with the key in no output."""

from __future__ import annotations

import asyncio
import logging
import os
import pathlib
import pickle
import ssl
import subprocess
import sys
import time
import traceback
from typing import Any, Dict, Iterator, List, Optional

import pytest

import roomchat
from conftest import SECRET_KEY, Emulator, emulator_binary, start_emulator, stop_emulator

USERS = "/consumer/api/v2/users"
DEFAULT_MAX_RETRIES = 2  # the core's; the clients below leave max_retries unset


def unverified_admin(ca_file: str) -> ssl.SSLContext:
    """For the admin API of an emulator whose certificate no client can verify (expired):
    the test harness's own calls, never the SDK's."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


def chain_only_admin(ca_file: str) -> ssl.SSLContext:
    """The CA checked, the name not: for an emulator whose certificate names only localhost."""
    context = ssl.create_default_context(cafile=ca_file)
    context.check_hostname = False
    return context


@pytest.fixture(scope="module")
def tls_process() -> Iterator[Emulator]:
    emulator = start_emulator(emulator_binary(), "--tls")
    yield emulator
    stop_emulator(emulator)


@pytest.fixture
def tls_emu(tls_process: Emulator) -> Emulator:
    tls_process.reset()
    return tls_process


@pytest.fixture(scope="module")
def expired_emu() -> Iterator[Emulator]:
    emulator = start_emulator(emulator_binary(), "--tls", "--tls-expired", admin_tls=unverified_admin)
    yield emulator
    stop_emulator(emulator)


@pytest.fixture(scope="module")
def localhost_emu() -> Iterator[Emulator]:
    emulator = start_emulator(emulator_binary(), "--tls", "--tls-name", "localhost", admin_tls=chain_only_admin)
    yield emulator
    stop_emulator(emulator)


@pytest.fixture
def no_env_trust(monkeypatch: pytest.MonkeyPatch) -> None:
    """No roots from the environment: SSL_CERT_FILE (and SSL_CERT_DIR) unset."""
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)


# The key's budget is shared process-wide: the default one, after the calls of earlier
# test files, would make these wait.
UNTHROTTLED = roomchat.RateLimit(requests=1_000_000, window=60.0)


def client_of(emu: Emulator, **settings: Any) -> roomchat.Client:
    """A client of `emu` with the library's defaults (retries, backoff) but for `settings`
    and no client-side throttling; no ca_bundle unless given."""
    options: Dict[str, Any] = dict(base_url=emu.base_url, timeout=10.0, rate_limit=UNTHROTTLED)
    options.update(settings)
    return roomchat.Client(SECRET_KEY, **options)


def failed_handshakes(emu: Emulator, at_least: int = 1) -> Dict[str, Any]:
    """The emulator's connection counts once `at_least` failed handshakes are counted (they
    can lag the client by a moment), then again a little later: a retry would show there."""
    deadline = time.monotonic() + 5.0
    while emu.connections()["tls_failed"] < at_least and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(0.3)
    return emu.connections()


def shown_by(error: BaseException, caplog: pytest.LogCaptureFixture) -> List[str]:
    """Every rendering of `error` and of the log records: where a key could leak."""
    shown = [
        str(error),
        repr(error),
        "".join(traceback.format_exception(type(error), error, error.__traceback__)),
        repr(vars(error)),
        pickle.dumps(error).decode("latin-1"),
        str(pickle.loads(pickle.dumps(error))),
    ]
    for record in caplog.records:
        shown += [record.getMessage(), repr(vars(record))]
    return shown


def test_a_client_given_the_ca_gets_real_answers_over_https(tls_emu: Emulator) -> None:
    assert tls_emu.base_url.startswith("https://127.0.0.1:") and tls_emu.ca_file is not None
    tls_emu.clear_connections()
    with client_of(tls_emu, ca_bundle=tls_emu.ca_file) as client:
        created = client.create_user("tls-jon", unique_user_identifier="crm-tls")
        page = client.list_users()
        assert [u.username for u in page] == ["tls-jon"]
        assert page.data[0].user_id == created.user_id
        done = client.deactivate_user(unique_user_identifier="crm-tls")
        assert done.success
    journal = [(e["method"], e["path"], e["status"]) for e in tls_emu.journal()]
    assert journal == [
        ("POST", "/consumer/api/v1/user", 200),
        ("GET", USERS, 200),
        ("DELETE", "/consumer/api/v2/user/deactivate", 200),
    ]
    counts = tls_emu.connections()
    assert counts["tls_handshakes"] >= 2  # the client's and the admin calls'
    assert counts["tls_failed"] == 0, counts


def test_an_async_client_given_the_ca_gets_real_answers(tls_emu: Emulator, no_env_trust: None) -> None:
    tls_emu.seed(3)

    async def main() -> List[Optional[str]]:
        async with roomchat.AsyncClient(
            SECRET_KEY, base_url=tls_emu.base_url, ca_bundle=tls_emu.ca_file, rate_limit=UNTHROTTLED
        ) as client:
            return [u.username for u in (await client.list_users()).data]

    assert asyncio.run(main()) == ["seed-user-1", "seed-user-2", "seed-user-3"]

    async def untrusted() -> None:
        async with roomchat.AsyncClient(SECRET_KEY, base_url=tls_emu.base_url, rate_limit=UNTHROTTLED) as client:
            await client.list_users()

    with pytest.raises(roomchat.TlsError, match="issuer is unknown"):
        asyncio.run(untrusted())


def test_without_the_ca_an_unknown_issuer_tried_once_and_no_key_shown(
    tls_emu: Emulator, no_env_trust: None, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="roomchat")
    tls_emu.clear_connections()
    started = time.monotonic()
    with pytest.raises(roomchat.RoomchatError) as caught:
        client_of(tls_emu).list_users()  # max_retries at its default
    elapsed = time.monotonic() - started
    error = caught.value
    assert type(error) is roomchat.TlsError, repr(error)
    assert isinstance(error, roomchat.ConnectionError)
    assert (error.kind, error.code) == ("tls", 17)
    assert "issuer is unknown" in str(error), str(error)
    assert (error.method, error.status) == ("GET", None)
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is roomchat.TlsError and str(again) == str(error)

    assert caplog.records, "the roomchat logger recorded nothing: the log check below would prove nothing"
    for text in shown_by(error, caplog):
        assert SECRET_KEY not in text, text

    counts = failed_handshakes(tls_emu)
    assert counts["tls_failed"] == 1, f"retried after a certificate failure: {counts}"
    assert counts["tls_last_failure"], counts
    assert tls_emu.journal() == []  # no request got through
    assert elapsed < 2.0  # no backoff waited out either


def test_the_default_retries_would_show_in_the_counts(tls_emu: Emulator) -> None:
    """The control for the test above: the same defaults retry a broken connection, each
    retry a new TLS connection the emulator counts."""
    tls_emu.fault(USERS, {"kind": "close"}, method="GET", times=10)
    tls_emu.clear_connections()
    with pytest.raises(roomchat.ConnectionError) as caught:
        client_of(tls_emu, ca_bundle=tls_emu.ca_file, base_backoff=0.01).list_users()
    assert type(caught.value) is roomchat.ConnectionError
    assert len(tls_emu.journal()) == 1 + DEFAULT_MAX_RETRIES
    deadline = time.monotonic() + 5.0
    while tls_emu.connections()["tls_handshakes"] < 1 + DEFAULT_MAX_RETRIES and time.monotonic() < deadline:
        time.sleep(0.02)
    assert tls_emu.connections()["tls_handshakes"] >= 1 + DEFAULT_MAX_RETRIES


def test_an_expired_certificate(expired_emu: Emulator, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="roomchat")
    expired_emu.clear_connections()
    with pytest.raises(roomchat.RoomchatError) as caught:
        client_of(expired_emu, ca_bundle=expired_emu.ca_file).list_users()
    error = caught.value
    assert type(error) is roomchat.TlsError, repr(error)
    assert error.kind == "tls" and "expired" in str(error), str(error)
    for text in shown_by(error, caplog):
        assert SECRET_KEY not in text
    assert failed_handshakes(expired_emu)["tls_failed"] == 1


def test_a_name_mismatch(localhost_emu: Emulator) -> None:
    port = localhost_emu.base_url.rsplit(":", 1)[1]
    assert localhost_emu.base_url == f"https://127.0.0.1:{port}"
    localhost_emu.clear_connections()
    with pytest.raises(roomchat.RoomchatError) as caught:
        client_of(localhost_emu, ca_bundle=localhost_emu.ca_file).list_users()
    error = caught.value
    assert type(error) is roomchat.TlsError, repr(error)
    assert error.kind == "tls" and "name mismatch" in str(error), str(error)
    assert SECRET_KEY not in str(error) and SECRET_KEY not in repr(error)
    assert failed_handshakes(localhost_emu)["tls_failed"] == 1
    # The name the certificate does hold, with the same CA: answers.
    localhost_emu.seed(1)
    with client_of(localhost_emu, ca_bundle=localhost_emu.ca_file, base_url=f"https://localhost:{port}") as client:
        assert client.list_users().total == 1


def test_ca_bundle_as_str_and_as_path(tls_emu: Emulator, no_env_trust: None) -> None:
    assert tls_emu.ca_file is not None
    tls_emu.seed(2)
    for form in (str(tls_emu.ca_file), pathlib.Path(tls_emu.ca_file)):
        with client_of(tls_emu, ca_bundle=form) as client:
            assert client.list_users().total == 2, type(form)


def test_a_bundle_of_several_cas(
    tls_emu: Emulator, expired_emu: Emulator, no_env_trust: None, tmp_path: pathlib.Path
) -> None:
    """A bundle file with another CA first: every certificate in it is trusted."""
    assert tls_emu.ca_file is not None and expired_emu.ca_file is not None
    bundle = tmp_path / "bundle.pem"
    bundle.write_text(pathlib.Path(expired_emu.ca_file).read_text() + pathlib.Path(tls_emu.ca_file).read_text())
    tls_emu.seed(1)
    with client_of(tls_emu, ca_bundle=bundle) as client:
        assert client.list_users().total == 1
    # Only the other CA: the emulator's certificate is not trusted.
    with pytest.raises(roomchat.TlsError, match="issuer is unknown"):
        client_of(tls_emu, ca_bundle=expired_emu.ca_file).list_users()


CHILD = """
import os, sys
import roomchat
client = roomchat.Client(
    os.environ["KEY"], base_url=os.environ["URL"], tls_roots=sys.argv[1], trust_env=sys.argv[2] == "trust_env"
)
try:
    print("users", client.list_users().total)
except roomchat.RoomchatError as error:
    print(error.kind, error)
"""


def in_child(emu: Emulator, tls_roots: str, ssl_cert_file: Optional[str], trust_env: bool = True) -> str:
    """What a new process's client (no ca_bundle) says, with SSL_CERT_FILE as given."""
    env = {k: v for k, v in os.environ.items() if k not in ("SSL_CERT_FILE", "SSL_CERT_DIR")}
    env.update(KEY=SECRET_KEY, URL=emu.base_url)
    if ssl_cert_file is not None:
        env["SSL_CERT_FILE"] = ssl_cert_file
    done = subprocess.run(
        [sys.executable, "-c", CHILD, tls_roots, "trust_env" if trust_env else "no_trust_env"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert SECRET_KEY not in done.stdout + done.stderr
    return done.stdout.strip()


@pytest.mark.parametrize("tls_roots", ["webpki", "system"])
def test_ssl_cert_file_trusts_the_ca(tls_emu: Emulator, tls_roots: str) -> None:
    tls_emu.seed(4)
    assert in_child(tls_emu, tls_roots, tls_emu.ca_file) == "users 4"
    # The variable is what made it work: without it, the same process fails.
    without = in_child(tls_emu, tls_roots, None)
    assert without.startswith("tls ") and "issuer is unknown" in without, without


def test_trust_env_false_ignores_ssl_cert_file(tls_emu: Emulator) -> None:
    """As httpx: trust_env=False leaves the environment's CA file out of the bundled roots."""
    tls_emu.seed(2)
    ignored = in_child(tls_emu, "webpki", tls_emu.ca_file, trust_env=False)
    assert ignored.startswith("tls ") and "issuer is unknown" in ignored, ignored
    assert in_child(tls_emu, "webpki", tls_emu.ca_file, trust_env=True) == "users 2"


def test_ssl_cert_file_set_before_the_client_is_made(
    tls_emu: Emulator, no_env_trust: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert tls_emu.ca_file is not None
    tls_emu.seed(1)
    monkeypatch.setenv("SSL_CERT_FILE", tls_emu.ca_file)
    with client_of(tls_emu) as client:
        assert client.list_users().total == 1
