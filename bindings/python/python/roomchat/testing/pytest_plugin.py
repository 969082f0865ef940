"""The pytest plugin of ``roomchat.testing`` (registered under ``pytest11``, so pytest
loads it by itself once roomchat is installed).

Fixtures:

- ``roomchat_emulator``: one :class:`~roomchat.testing.Emulator` for the test session
  (for each pytest-xdist worker, its own), reset before each test that uses it, so
  every test starts from an empty account whatever the one before it did.
- ``roomchat_client``: a :class:`roomchat.Client` of it (``Emulator.client()``),
  closed after the test.

A test that never asks for them starts no emulator.
"""

from __future__ import annotations

from typing import Iterator

import pytest

import roomchat

from . import Emulator


@pytest.fixture(scope="session")
def roomchat_emulator() -> Iterator[Emulator]:
    """The session's emulator (reset before each test that uses it)."""
    with Emulator() as emulator:
        yield emulator


@pytest.fixture(autouse=True)
def _roomchat_emulator_reset(request: pytest.FixtureRequest) -> None:
    # Only for the tests that use the emulator: the others must not start one.
    if "roomchat_emulator" in request.fixturenames:
        emulator: Emulator = request.getfixturevalue("roomchat_emulator")
        emulator.reset()


@pytest.fixture
def roomchat_client(roomchat_emulator: Emulator) -> Iterator[roomchat.Client]:
    """A client of the session's emulator, closed after the test."""
    with roomchat_emulator.client() as client:
        yield client
