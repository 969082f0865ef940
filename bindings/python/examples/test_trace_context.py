"""A test that your code's trace reaches the service, read from the journal's request headers.

Install: pip install "roomchat[testing]" pytest opentelemetry-sdk. Run: pytest.
"""

from __future__ import annotations

import urllib.error
import urllib.request

import pytest
from opentelemetry.sdk.trace import TracerProvider

from roomchat.testing import Emulator


def test_the_trace_context_reaches_the_service(roomchat_emulator: Emulator) -> None:
    provider = TracerProvider()
    with roomchat_emulator.client(tracer_provider=provider) as client:
        with provider.get_tracer("app").start_as_current_span("sign-up") as span:
            client.list_users()

    [entry] = roomchat_emulator.journal()
    trace_id = format(span.get_span_context().trace_id, "032x")
    assert entry.headers["TraceParent"].split("-")[1] == trace_id  # names in any case
    assert entry.headers["user-agent"].startswith("roomchat")


def test_credentials_in_headers_show_redacted(roomchat_emulator: Emulator) -> None:
    # Your own HTTP code, sending a token to the service's URL.
    request = urllib.request.Request(
        f"{roomchat_emulator.base_url}/consumer/api/v2/users",
        headers={"Authorization": "Bearer tok_123", "X-Api-Key": "key_456"},
    )
    with pytest.raises(urllib.error.HTTPError):  # 401: no key in the query
        urllib.request.urlopen(request)

    [entry] = roomchat_emulator.journal()
    assert entry.headers["Authorization"] == "REDACTED"
    assert entry.headers["x-api-key"] == "REDACTED"
    assert "tok_123" not in repr(entry) and "key_456" not in repr(entry)
