"""The async iterators of the listings that page (``AsyncClient.iter_room_messages()``,
``AsyncClient.room_messages_pages()``, …): written once, over the native iterators
(``roomchat.RecordIterator``, ``roomchat.RecordPageIterator``), which wrap core's.

One thread hop per page, not per record; each step has its own ``CancelToken``, so a
cancelled step (``asyncio.wait_for``) cancels that step only, and the records a
cancelled step fetched all the same are yielded by the next.
"""

from __future__ import annotations

import collections
from typing import TYPE_CHECKING, Any, Deque, Generic, List, Optional, TypeVar

from ._native import CancelToken

if TYPE_CHECKING:
    from ._native import RecordIterator, RecordPageIterator

__all__ = ["AsyncRecordIterator", "AsyncRecordPageIterator"]

_T = TypeVar("_T")


class AsyncRecordIterator(Generic[_T]):
    """Every record of a listing, fetched lazily page by page (``async for``). An error
    never ends it: the step raises, and the next step fetches the same page again."""

    __slots__ = ("_client", "_items", "_buffer")

    def __init__(self, client: Any, items: RecordIterator[_T]) -> None:
        self._client = client
        self._items = items
        self._buffer: Deque[_T] = collections.deque()

    def __aiter__(self) -> AsyncRecordIterator[_T]:
        return self

    async def __anext__(self) -> _T:
        if not self._buffer:
            batch: List[_T] = await self._client._submit(
                self._items._next_batch, CancelToken(), _keep=self._buffer.extend
            )
            self._buffer.extend(batch)
            if not self._buffer:
                raise StopAsyncIteration
        return self._buffer.popleft()

    @property
    def next_skip(self) -> int:
        """The offset of the next record to yield: ``skip=`` of a new iterator that goes
        on where this one stopped. Does no I/O (it may wait for a step in flight)."""
        return self._items.next_skip - len(self._buffer)


class AsyncRecordPageIterator(Generic[_T]):
    """A listing page by page (``async for``). An error never ends it: the step raises,
    and the next step fetches the same page again."""

    __slots__ = ("_client", "_pages", "_kept")

    def __init__(self, client: Any, pages: RecordPageIterator[_T]) -> None:
        self._client = client
        self._pages = pages
        # Pages whose step was cancelled after they came: yielded first.
        self._kept: Deque[_T] = collections.deque()

    def __aiter__(self) -> AsyncRecordPageIterator[_T]:
        return self

    async def __anext__(self) -> _T:
        if not self._kept:
            page: Optional[_T] = await self._client._submit(self._pages._next_page, CancelToken(), _keep=self._keep)
            self._keep(page)
            if not self._kept:
                raise StopAsyncIteration
        return self._kept.popleft()

    def _keep(self, page: Optional[_T]) -> None:
        if page is not None:
            self._kept.append(page)

    @property
    def next_skip(self) -> int:
        """The offset of the next page to yield: ``skip=`` of a new iterator that goes on
        where this one stopped. Does no I/O (it may wait for a step in flight)."""
        kept: Optional[int] = getattr(self._kept[0], "skip", None) if self._kept else None
        return self._pages.next_skip if kept is None else kept
