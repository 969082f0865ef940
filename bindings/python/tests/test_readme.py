"""The package README's Quickstart (what PyPI shows) is bindings/python/examples/readme_example.py verbatim, and it runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from conftest import PUBLIC_KEY, REPO, SECRET_KEY, Emulator

EXAMPLE = REPO / "bindings" / "python" / "examples" / "readme_example.py"


def test_readme_shows_the_example_verbatim() -> None:
    assert EXAMPLE.read_text().strip() in (REPO / "bindings" / "python" / "README.md").read_text()


def test_readme_example_runs(emu: Emulator) -> None:
    emu.seed(2)
    env = dict(
        os.environ,
        ROOMCHAT_PRIVATE_KEY=SECRET_KEY,
        ROOMCHAT_BASE_URL=emu.base_url,
        ROOMCHAT_CHAT_URL=emu.chat_url,
        ROOMCHAT_PUBLIC_KEY=PUBLIC_KEY,
    )
    done = subprocess.run([sys.executable, str(EXAMPLE)], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith(f"sign Ann in at {emu.chat_url}/bbNiVFoXm?accessToken=")
    assert lines[1:4] == ["seed-user-1 False", "seed-user-2 False", "ann True"]
    assert lines[4] == "no such user: 400 user not found"
    assert lines[5] == "eve's token signs in eve"
    assert lines[6] == "after invalidation: invalid accessToken"
    assert lines[7] == "4 users"
    assert SECRET_KEY not in done.stdout + done.stderr


OBSERVABILITY = REPO / "bindings" / "python" / "examples" / "observability.py"


def test_readme_shows_the_observability_example_verbatim() -> None:
    assert OBSERVABILITY.read_text().strip() in (REPO / "bindings" / "python" / "README.md").read_text()


def test_readme_observability_example_prints_the_spans(emu: Emulator) -> None:
    emu.seed(2)
    env = dict(os.environ, ROOMCHAT_PRIVATE_KEY=SECRET_KEY, ROOMCHAT_BASE_URL=emu.base_url)
    done = subprocess.run([sys.executable, str(OBSERVABILITY)], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    # The console exporter prints each span as a JSON object, as it ends.
    spans = []
    decoder, text = json.JSONDecoder(), done.stdout.strip()
    while text:
        span, end = decoder.raw_decode(text)
        spans.append(span)
        text = text[end:].strip()
    assert [(s["name"], s["kind"]) for s in spans] == [
        ("GET /consumer/api/v2/users", "SpanKind.CLIENT"),
        ("roomchat list_users", "SpanKind.INTERNAL"),
        ("nightly user report", "SpanKind.INTERNAL"),
    ]
    attempt, call, app = spans
    assert attempt["parent_id"] == call["context"]["span_id"]
    assert call["parent_id"] == app["context"]["span_id"]
    assert app["attributes"]["report.users"] == 2
    assert attempt["attributes"]["http.response.status_code"] == 200
    trace_id, span_id = attempt["context"]["trace_id"][2:], attempt["context"]["span_id"][2:]
    [entry] = emu.journal()
    assert dict(entry["headers"])["traceparent"].startswith(f"00-{trace_id}-{span_id}-")
    assert SECRET_KEY not in done.stdout + done.stderr
