"""Across the test network (``scripts/testnet.sh``): a namespaced host over TLS with
~25 ms round trips and a real CONNECT proxy (tinyproxy with basic auth). The proxy
option and ``HTTPS_PROXY`` go through it, ``NO_PROXY`` by address and range bypasses
it, a wrong proxy password shows nowhere, a POST whose answer is lost is sent once.
Without the network it skips (the test command runs it through testnet.sh)."""

from __future__ import annotations

import json
import os
import pickle
import ssl
import time
import urllib.request
from typing import Any, Dict, Optional

import pytest

import roomchat

ENV = os.environ
pytestmark = pytest.mark.skipif(
    "ROOMCHAT_NET_BASE_URL" not in ENV, reason="no test network (run through scripts/testnet.sh)"
)
PROXY_VARS = ["HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy"]


def admin(method: str, path: str, body: Optional[Dict[str, Any]] = None) -> Any:
    context = ssl.create_default_context(cafile=ENV["ROOMCHAT_NET_CA_FILE"])
    opener = urllib.request.build_opener(
        urllib.request.ProxyHandler({}), urllib.request.HTTPSHandler(context=context)
    )
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        ENV["ROOMCHAT_NET_ADMIN_URL"] + path, data=data, method=method, headers={"content-type": "application/json"}
    )
    with opener.open(request, timeout=30) as answer:
        text = answer.read()
    return json.loads(text) if text else None


def tunnels() -> int:
    with open(ENV["ROOMCHAT_NET_PROXY_LOG"]) as log:
        return sum(1 for line in log if "CONNECT" in line and "10.77.0.2" in line)


def client(**settings: Any) -> roomchat.Client:
    return roomchat.Client(
        ENV["ROOMCHAT_NET_PRIVATE_KEY"],
        base_url=ENV["ROOMCHAT_NET_BASE_URL"],
        ca_bundle=ENV["ROOMCHAT_NET_CA_FILE"],
        **settings,
    )


def test_across_the_test_network(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in PROXY_VARS:
        monkeypatch.delenv(name, raising=False)
    admin("POST", "/reset")
    admin("POST", "/users/seed", {"count": 4})
    assert client(trust_env=False).list_users().total == 4

    before = tunnels()
    proxied = client(proxy=ENV["ROOMCHAT_NET_PROXY"])
    assert proxied.list_users().total == 4
    assert tunnels() > before, "the call did not go through the proxy"
    assert ENV["ROOMCHAT_NET_PROXY_PASSWORD"] not in repr(proxied)

    wrong = ENV["ROOMCHAT_NET_PROXY"].replace(ENV["ROOMCHAT_NET_PROXY_PASSWORD"], "py-wrong-pw-8")
    with pytest.raises(roomchat.RoomchatError) as caught:
        client(proxy=wrong, max_retries=0).list_users()
    for shown in (str(caught.value), repr(caught.value), pickle.dumps(caught.value).decode("latin-1")):
        assert "py-wrong-pw-8" not in shown and ENV["ROOMCHAT_NET_PRIVATE_KEY"] not in shown, shown

    monkeypatch.setenv("HTTPS_PROXY", ENV["ROOMCHAT_NET_PROXY"])
    before = tunnels()
    client().list_users()
    assert tunnels() > before, "HTTPS_PROXY was not used"
    for no_proxy in ("10.77.0.2", "10.77.0.0/16"):
        monkeypatch.setenv("NO_PROXY", no_proxy)
        before = tunnels()
        client().list_users()
        assert tunnels() == before, f"NO_PROXY={no_proxy} was not honoured"
    monkeypatch.delenv("HTTPS_PROXY")
    monkeypatch.delenv("NO_PROXY")

    admin(
        "POST",
        "/faults",
        {"method": "POST", "path": "/consumer/api/v1/user", "times": 1, "action": {"kind": "delay", "ms": 1500}},
    )
    with pytest.raises(roomchat.TimeoutError):
        client(trust_env=False, timeout=0.8).create_user("py-lost-answer")
    time.sleep(1.0)
    posts = [
        e for e in admin("GET", "/journal")["entries"] if e["method"] == "POST" and e["path"] == "/consumer/api/v1/user"
    ]
    assert len(posts) == 1, "a POST whose answer was lost was sent again"
