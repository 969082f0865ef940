"""Trust and proxy options (issue 20): bad values refused when the client is made,
with a clear error; no proxy password in any output; ``trust_env=False`` ignores the
environment's proxies; loopback is never proxied."""

from __future__ import annotations

import pathlib
import pickle
import socket
import threading
from typing import Iterator, List

import pytest

import roomchat
from conftest import Emulator

REMOTE = dict(base_url="https://api.example.com")
PROXY_SECRET = "py-proxy-pw-71"
PROXY_VARS = ["HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"]


def test_ca_bundle_and_tls_roots_are_checked(tmp_path: pathlib.Path) -> None:
    with pytest.raises(roomchat.ConfigurationError, match="ca_bundle"):
        roomchat.Client("sk_live_py_net", ca_bundle=str(tmp_path / "missing.pem"), **REMOTE)
    garbage = tmp_path / "garbage.pem"
    garbage.write_text("not a certificate")
    with pytest.raises(roomchat.ConfigurationError, match="holds no certificate"):
        roomchat.Client("sk_live_py_net", ca_bundle=garbage, **REMOTE)
    with pytest.raises(TypeError, match="ca_bundle"):
        roomchat.Client("sk_live_py_net", ca_bundle=42, **REMOTE)  # type: ignore[arg-type]
    with pytest.raises(roomchat.ConfigurationError, match="tls_roots"):
        roomchat.Client("sk_live_py_net", tls_roots="native", **REMOTE)  # type: ignore[arg-type]
    roomchat.Client("sk_live_py_net", tls_roots="system", **REMOTE)
    roomchat.Client("sk_live_py_net", tls_roots="webpki", **REMOTE)


def test_a_socks_proxy_is_refused_without_its_password(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(roomchat.ConfigurationError) as caught:
        roomchat.Client("sk_live_py_net", proxy=f"socks5://me:{PROXY_SECRET}@127.0.0.1:1080", **REMOTE)
    error = caught.value
    assert "SOCKS" in str(error)
    for shown in (str(error), repr(error), pickle.dumps(error).decode("latin-1")):
        assert PROXY_SECRET not in shown, shown
    for name in PROXY_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ALL_PROXY", f"socks5://me:{PROXY_SECRET}@127.0.0.1:1080")
    with pytest.raises(roomchat.ConfigurationError, match="ALL_PROXY") as caught:
        roomchat.Client("sk_live_py_net", **REMOTE)
    assert PROXY_SECRET not in str(caught.value)
    # trust_env=False ignores the environment's proxies, as httpx's does.
    roomchat.Client("sk_live_py_net", trust_env=False, **REMOTE)
    explicit = roomchat.Client("sk_live_py_net", proxy=f"http://me:{PROXY_SECRET}@127.0.0.1:3128", **REMOTE)
    assert PROXY_SECRET not in repr(explicit)


@pytest.fixture
def fake_proxy() -> Iterator[List[int]]:
    """A listening socket posing as a proxy; yields its port and counts connections."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    listener.settimeout(0.05)
    seen = [listener.getsockname()[1], 0]
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            seen[1] += 1
            conn.close()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield seen
    stop.set()
    thread.join()
    listener.close()


def test_loopback_is_never_proxied(emu: Emulator, fake_proxy: List[int], monkeypatch: pytest.MonkeyPatch) -> None:
    emu.seed(2)  # before the variables: the admin API's urllib reads them too
    for name in PROXY_VARS:
        monkeypatch.setenv(name, f"http://me:{PROXY_SECRET}@127.0.0.1:{fake_proxy[0]}")
    assert emu.client(max_retries=0).list_users().total == 2
    assert fake_proxy[1] == 0, "a loopback call went to the proxy"


def test_gzip_is_an_option(emu: Emulator) -> None:
    emu.seed(3)
    for gzip in (True, False):
        assert emu.client(gzip=gzip).list_users().total == 3
    with pytest.raises(TypeError, match="gzip"):
        emu.client(gzip="yes")
