"""Issue 51, item 1: a signal whose handler raises (Ctrl-C's KeyboardInterrupt, a SIGTERM
handler's SystemExit) during a call reaches the program, as it does without
OpenTelemetry, when its handler runs in the telemetry's hooks: never handed to
``sys.unraisablehook``. The call is cancelled (nothing more is sent) and its span ends as
cancelled. A real program (otel_signal_child.py) in a subprocess, its call held by the
emulator in each state (an answer delayed: the request on the wire, of a Client and of an
AsyncClient; a 429 with Retry-After: the retry wait; a budget of one request: the budget
wait), the signal sent
once the journal or roomchat's logger shows the call is there."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from typing import Any, Dict, List

import pytest

pytest.importorskip("opentelemetry.sdk")

from conftest import Emulator  # noqa: E402

USERS = "/consumer/api/v2/users"
CHILD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "otel_signal_child.py")


def users_requests(emu: Emulator) -> List[Dict[str, Any]]:
    return [e for e in emu.journal() if e["path"].startswith(USERS)]


def run(emu: Emulator, state: str, signal_name: str, sdk: str, key: str) -> Dict[str, Any]:
    child = subprocess.Popen(
        [sys.executable, CHILD, emu.base_url, key, state, signal_name, sdk],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    try:
        assert child.stdout.readline().strip() == "ready"
        if state == "budget":
            # roomchat's logger told the wait (before it began).
            assert child.stdout.readline().strip() == "waiting"
        else:
            wanted = 1
            while len(users_requests(emu)) < wanted:  # the request reached the emulator
                pass
        child.send_signal(signal.SIGINT if signal_name == "int" else signal.SIGTERM)
        out, _ = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    result: Dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return result


@pytest.mark.parametrize("sdk", ["sdk", "none"])
@pytest.mark.parametrize("signal_name", ["int", "term"])
@pytest.mark.parametrize("state", ["wire", "retry", "budget", "async"])
def test_a_signal_during_a_call_reaches_the_program(emu: Emulator, state: str, signal_name: str, sdk: str) -> None:
    key = f"sk_live_pytest_signal_{state}_{signal_name}_{sdk}"
    with emu.other_key(key):
        if state in ("wire", "async"):
            emu.fault(USERS, {"kind": "delay", "ms": 2000}, method="GET")
        elif state == "retry":
            emu.fault(
                USERS,
                {"kind": "respond", "status": 429, "body": '{"message":"slow down"}', "headers": {"Retry-After": "2"}},
                method="GET",
            )
        before = len(users_requests(emu))
        result = run(emu, state, signal_name, sdk, key)
        sent = len(users_requests(emu)) - before
    expected = "KeyboardInterrupt" if signal_name == "int" else "SystemExit(3)"
    assert result["outcome"] == expected, result
    assert result["unraisable"] == [], result
    if sdk == "sdk":
        # Nothing was sent after the signal: the retry and the call that waited never went.
        assert sent == 1, result
        calls = [s for s in result["spans"] if s["name"] == "roomchat list_users"]
        interrupted = calls[-1]
        assert interrupted["attributes"]["error.type"] == "cancelled", result
        assert interrupted["status"] == "ERROR"
        # An attempt span per request sent, each ended; none for the attempt never sent.
        attempts = [s for s in result["spans"] if s["name"] == "GET /consumer/api/v2/users"]
        assert len(attempts) == 1, result
        if state == "wire":  # the answer came: the attempt's own outcome
            assert attempts[0]["status"] == "UNSET" and "error.type" not in attempts[0]["attributes"]
        if state == "retry":
            assert attempts[0]["attributes"]["error.type"] == "429"
        if state == "async":  # the task cancelled: the request given up on the wire
            assert attempts[0]["attributes"]["error.type"] == "cancelled"
