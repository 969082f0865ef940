"""A span processor or instrument that raises a ``BaseException`` that is not an
``Exception`` (``SystemExit``, ``KeyboardInterrupt``) at one point of a traced call
(issue 51, items 1 and 2): the caller gets it once; every other part still runs, so
the spans that were started end once and the call leaves ``roomchat.client.active_calls``
(which otherwise counts it in flight forever); the next call is unaffected."""

from __future__ import annotations

import asyncio
import urllib.parse
from typing import Any, Callable, List

import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry.sdk.trace import SpanProcessor  # noqa: E402

import roomchat  # noqa: E402

from conftest import Emulator  # noqa: E402
from test_opentelemetry import Sdk, named, otel, points  # noqa: E402,F401
from test_opentelemetry_edges import ATTEMPT, CALL, _MeterProvider  # noqa: E402

POINTS = [("on_start", CALL), ("on_start", ATTEMPT), ("on_end", CALL), ("on_end", ATTEMPT)]


class _Raising(SpanProcessor):
    def __init__(self, point: str, name: str, error: type) -> None:
        self.point, self.name, self.error, self.armed = point, name, error, True

    def _maybe(self, point: str, span: Any) -> None:
        named = (
            span.name == self.name
            or (self.name == "any call" and span.name.startswith("roomchat "))
            or (self.name == "any attempt" and span.name.startswith("GET "))
        )
        if self.armed and point == self.point and named:
            self.armed = False
            raise self.error("from a span processor")

    def on_start(self, span: Any, parent_context: Any = None) -> None:
        self._maybe("on_start", span)

    def on_end(self, span: Any) -> None:
        self._maybe("on_end", span)


def _skips(emu: Emulator, listing: str) -> List[int]:
    """The `skip=` of every request of the listing (a path's end) the emulator got, in order."""
    skips = []
    for entry in emu.journal():
        if entry["method"] == "GET" and entry["path"].endswith(listing):
            skips.append(int(urllib.parse.parse_qs(entry["query"]).get("skip", ["0"])[0]))
    return skips


def _messages_room(emu: Emulator, client: roomchat.Client, count: int) -> str:
    made = client.create_chat_room(name="Interrupted")
    assert made.room_id is not None
    emu.admin("POST", "/messages", {"roomId": made.room_id, "count": count, "text": "message"})
    return made.room_id


def _active(otel: Sdk) -> int:
    """The calls in flight the gauge reports (none reported: none counted yet)."""
    metrics = otel.metrics()
    if "roomchat.client.active_calls" not in metrics:
        return 0
    return sum(p.value for p in points(metrics, "roomchat.client.active_calls"))


@pytest.mark.parametrize("error", [SystemExit, KeyboardInterrupt])
@pytest.mark.parametrize("point,name", POINTS)
def test_a_processor_raising_a_base_exception_costs_only_its_part(
    emu: Emulator, otel: Sdk, point: str, name: str, error: type
) -> None:
    emu.seed(2)
    otel.tracer_provider.add_span_processor(_Raising(point, name, error))
    with emu.client(**otel.providers()) as client:
        with pytest.raises(error, match="from a span processor"):
            client.list_users(limit=5)
        assert _active(otel) == 0, "the interrupted call is still counted in flight"
        spans = otel.spans()
        # Every span the SDK gave roomchat ended once (the one whose start raised was
        # never given to it); none twice.
        ids = [s.context.span_id for s in spans]
        assert len(ids) == len(set(ids))
        if (point, name) == ("on_start", CALL):
            started = set()  # interrupted before its first attempt: none sent
        elif point == "on_start":
            started = {CALL}
        else:
            started = {CALL, ATTEMPT}
        assert {s.name for s in spans} == started
        # The next call is the program's own: nothing raised, traced whole.
        before = len(spans)
        assert client.list_users(limit=5).total == 2
        assert [s.name for s in otel.spans()[before:]] == [ATTEMPT, CALL]
        assert _active(otel) == 0


@pytest.mark.parametrize("instrument", ["http.client.request.duration", "roomchat.client.call.duration"])
def test_an_instrument_raising_system_exit_costs_only_its_part(emu: Emulator, otel: Sdk, instrument: str, monkeypatch: Any
) -> None:
    emu.seed(2)
    provider = _MeterProvider(otel.meter_provider, instrument)
    with emu.client(tracer_provider=otel.tracer_provider, meter_provider=provider) as client:
        import test_opentelemetry_edges as edges

        def exits(self: Any, *args: Any, **kwargs: Any) -> None:
            raise SystemExit(self.name)

        monkeypatch.setattr(edges._RaisingInstrument, "record", exits)
        with pytest.raises(SystemExit, match=instrument):
            client.list_users(limit=5)
        assert [s.name for s in otel.spans()] == [ATTEMPT, CALL]
        assert _active(otel) == 0


@pytest.mark.parametrize("error", [SystemExit, KeyboardInterrupt])
def test_an_iterator_interrupted_in_a_page_fetch_loses_no_record(emu: Emulator, otel: Sdk, error: type) -> None:
    """The exception ends `next()`; a program that catches it (a REPL's Ctrl-C) and
    goes on gets every record once, the one `next()` was fetching too."""
    emu.seed(5)
    processor = _Raising("on_end", ATTEMPT, error)
    with emu.client(**otel.providers()) as client:
        users = client.users(page_size=2)
        names = [next(users).id, next(users).id]
        otel.tracer_provider.add_span_processor(processor)  # armed for page 2's attempt
        with pytest.raises(error, match="from a span processor"):
            next(users)
        assert not processor.armed
        names += [u.id for u in users]
    assert sorted(names) == sorted(set(names)) and len(names) == 5, names


def test_a_record_iterator_interrupted_in_a_page_fetch_loses_no_record(emu: Emulator, otel: Sdk) -> None:
    with emu.client(**otel.providers()) as client:
        made = client.create_chat_room(name="Interrupted")
        assert made.room_id is not None
        emu.admin("POST", "/messages", {"roomId": made.room_id, "count": 5, "text": "message"})
        processor = _Raising("on_end", "any call", KeyboardInterrupt)
        messages = client.iter_room_messages(made.room_id, page_size=2)
        texts = [next(messages).message, next(messages).message]
        otel.tracer_provider.add_span_processor(processor)  # armed for page 2's call
        with pytest.raises(KeyboardInterrupt, match="from a span processor"):
            next(messages)
        assert not processor.armed
        assert messages.next_skip == 2  # the record fetched is the next step's
        texts += [m.message for m in messages]
    assert texts == [f"message {n}" for n in range(1, 6)]
    assert messages.next_skip == 5


def test_an_async_create_interrupted_before_it_is_sent_is_not_sent(emu: Emulator, otel: Sdk) -> None:
    """`AsyncClient`: what the call span's `on_start` raises (on a worker thread) cancels
    the call with the token made for it, as `Client` cancels its own: the caller, who
    gets the exception, was told nothing was created, and nothing was."""

    async def main() -> None:
        async with roomchat.AsyncClient(
            emu.private_key,
            base_url=emu.base_url,
            ca_bundle=emu.ca_file,
            rate_limit=roomchat.RateLimit(requests=1_000_000, window=60.0),
            **otel.providers(),
        ) as client:
            otel.tracer_provider.add_span_processor(_Raising("on_start", "any call", SystemExit))
            with pytest.raises(SystemExit, match="from a span processor"):
                await client.create_chat_room(name="Interrupted")
            assert [e for e in emu.journal() if e["method"] == "POST"] == []
            made = await client.create_chat_room(name="Next")
            assert made.room_id is not None
            assert len([e for e in emu.journal() if e["method"] == "POST"]) == 1
            assert _active(otel) == 0

    asyncio.run(main())


# The page and batch steps (issue 51, item 1): the exception ends the step; the page it
# fetched is the next step's, fetched once, and `next_skip` counts it as not yet yielded.
PAGE_POINTS = [("on_end", ATTEMPT), ("on_end", CALL)]


@pytest.mark.parametrize("error", [SystemExit, KeyboardInterrupt])
@pytest.mark.parametrize("point,name", PAGE_POINTS)
def test_a_page_iterator_interrupted_in_a_fetch_loses_no_page(
    emu: Emulator, otel: Sdk, point: str, name: str, error: type
) -> None:
    emu.seed(6)
    processor = _Raising(point, name, error)
    with emu.client(**otel.providers()) as client:
        pages = client.user_pages(page_size=2)
        ids = [u.id for u in next(pages).data]
        otel.tracer_provider.add_span_processor(processor)  # armed for page 2's fetch
        with pytest.raises(error, match="from a span processor"):
            next(pages)
        assert not processor.armed
        rest = list(pages)
        assert [p.skip for p in rest] == [2, 4]
        ids += [u.id for page in rest for u in page.data]
    assert sorted(ids) == sorted(set(ids)) and len(ids) == 6, ids
    skips = _skips(emu, "/consumer/api/v2/users")
    assert sorted(skips) == sorted(set(skips)), f"a page fetched twice: {skips}"


@pytest.mark.parametrize("point,name", PAGE_POINTS)
def test_a_users_batch_interrupted_in_a_fetch_loses_no_user(emu: Emulator, otel: Sdk, point: str, name: str) -> None:
    emu.seed(6)
    processor = _Raising(point, name, KeyboardInterrupt)
    with emu.client(**otel.providers()) as client:
        users = client.users(page_size=2)
        ids = [u.id for u in users._next_batch(2)]
        otel.tracer_provider.add_span_processor(processor)  # armed for page 2's fetch
        with pytest.raises(KeyboardInterrupt, match="from a span processor"):
            users._next_batch(2)
        assert not processor.armed
        batch = users._next_batch(2)
        assert len(batch) == 2  # the batch the interrupted step fetched
        ids += [u.id for u in batch] + [u.id for u in users]
    assert sorted(ids) == sorted(set(ids)) and len(ids) == 6, ids
    skips = _skips(emu, "/consumer/api/v2/users")
    assert sorted(skips) == sorted(set(skips)), f"a page fetched twice: {skips}"


@pytest.mark.parametrize("point,name", [("on_end", "any attempt"), ("on_end", "any call")])
def test_a_record_page_iterator_interrupted_in_a_fetch_loses_no_page(
    emu: Emulator, otel: Sdk, point: str, name: str
) -> None:
    with emu.client(**otel.providers()) as client:
        room_id = _messages_room(emu, client, 5)
        pages = client.room_messages_pages(room_id, page_size=2)
        texts = [m.message for m in next(pages).messages]
        assert pages.next_skip == 2
        processor = _Raising(point, name, KeyboardInterrupt)
        otel.tracer_provider.add_span_processor(processor)  # armed for page 2's fetch
        with pytest.raises(KeyboardInterrupt, match="from a span processor"):
            next(pages)
        assert not processor.armed
        assert pages.next_skip == 2  # the page fetched is the next step's
        page = next(pages)
        assert page.skip == 2 and pages.next_skip == 4
        texts += [m.message for m in page.messages] + [m.message for p in pages for m in p.messages]
    assert texts == [f"message {n}" for n in range(1, 6)]
    assert pages.next_skip == 5
    skips = _skips(emu, "/messages")
    assert sorted(skips) == sorted(set(skips)), f"a page fetched twice: {skips}"


def test_a_record_batch_interrupted_in_a_fetch_loses_no_record(emu: Emulator, otel: Sdk) -> None:
    with emu.client(**otel.providers()) as client:
        room_id = _messages_room(emu, client, 5)
        messages = client.iter_room_messages(room_id, page_size=2)
        texts = [m.message for m in messages._next_batch()]
        processor = _Raising("on_end", "any call", KeyboardInterrupt)
        otel.tracer_provider.add_span_processor(processor)  # armed for page 2's call
        with pytest.raises(KeyboardInterrupt, match="from a span processor"):
            messages._next_batch()
        assert not processor.armed
        assert messages.next_skip == 2  # the records fetched are the next step's
        texts += [m.message for m in messages._next_batch()]
        assert messages.next_skip == 4
        texts += [m.message for m in messages]
    assert texts == [f"message {n}" for n in range(1, 6)]
    assert messages.next_skip == 5
    skips = _skips(emu, "/messages")
    assert sorted(skips) == sorted(set(skips)), f"a page fetched twice: {skips}"


def _user_ids(user: Any) -> List[str]:
    return [user.id]


def _page_user_ids(page: Any) -> List[str]:
    return [u.id for u in page.data]


def _text(message: Any) -> List[str]:
    return [message.message]


def _page_texts(page: Any) -> List[str]:
    return [m.message for m in page.messages]


# An AsyncClient step's page arrives on a worker; the attempt span's on_end, then the
# call span's, run there after it came. (listing, records a step fetches and the first steps take, what
# a yielded element holds)
ASYNC_LISTINGS: List[Any] = [
    ("users", 2, _user_ids),
    ("user_pages", 1, _page_user_ids),
    ("iter_room_messages", 2, _text),
    ("room_messages_pages", 1, _page_texts),
]


@pytest.mark.parametrize("point", ["any attempt", "any call"])
@pytest.mark.parametrize("listing,first,held", ASYNC_LISTINGS)
def test_an_async_iterator_interrupted_once_its_page_came_loses_no_page(
    emu: Emulator, otel: Sdk, listing: str, first: int, held: Callable[[Any], List[str]], point: str
) -> None:
    emu.seed(6)
    with emu.client() as setup:
        room_id = _messages_room(emu, setup, 6)
        users = [u.id for u in setup.list_users(limit=10).data]
    expected = [f"message {n}" for n in range(1, 7)] if "messages" in listing else users
    emu.clear_journal()

    async def main() -> List[str]:
        async with roomchat.AsyncClient(
            emu.private_key,
            base_url=emu.base_url,
            ca_bundle=emu.ca_file,
            rate_limit=roomchat.RateLimit(requests=1_000_000, window=60.0),
            **otel.providers(),
        ) as client:
            method = getattr(client, listing)
            steps = method(room_id, page_size=2) if "messages" in listing else method(page_size=2)
            got: List[str] = []
            for _ in range(first):
                got += held(await steps.__anext__())
            processor = _Raising("on_end", point, KeyboardInterrupt)
            otel.tracer_provider.add_span_processor(processor)  # armed for page 2's fetch
            with pytest.raises(KeyboardInterrupt, match="from a span processor"):
                await steps.__anext__()
            assert not processor.armed
            if "messages" in listing:
                assert steps.next_skip == 2  # the page fetched is the next step's
            async for element in steps:
                got += held(element)
            if "messages" in listing:
                assert steps.next_skip == 6
            return got

    got = asyncio.run(main())
    assert got == expected, got
    listed = "/messages" if "messages" in listing else "/consumer/api/v2/users"
    skips = _skips(emu, listed)
    assert sorted(skips) == sorted(set(skips)), f"a page fetched twice: {skips}"
