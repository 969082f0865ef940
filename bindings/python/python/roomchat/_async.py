"""``roomchat.AsyncClient``: the client's calls as coroutines.

Core's calls block, so each one runs on a native worker thread of the client's
dispatcher (up to ``max_workers`` threads, made on demand, gone after 10 s idle). Each
event loop that uses the client has its own dispatcher, so loops running at once in
several threads may share one client: a call's future is completed on its own loop's
thread. A forked child makes its own and never touches the parent's (their threads do
not exist there, and a lock one of them held at the fork stays held). The worker never takes the
GIL: it queues the core result and wakes the loop through a pipe the loop watches
(``loop.add_reader``); the loop thread turns results into Python objects and completes
the futures. So the event loop never queues for the GIL behind worker threads.
(With an OpenTelemetry SDK set up, core's hooks of an observed call take the GIL on the
worker for an instant before and after each attempt, to make its spans: never while the
request is on the wire.)

Cancelling the task that awaits a call cancels the core call itself through a
``CancelToken``: a rate-limit wait or a backoff ends at once, a request on the wire
within 50 ms, and the task waits for the thread to be free before it finishes with
``asyncio.CancelledError``. No thread or connection is left busy.
"""

from __future__ import annotations

import asyncio
import collections
import os
import threading
from types import TracebackType
from typing import (
    TYPE_CHECKING,
    Any,
    AsyncIterator,
    Callable,
    Deque,
    Dict,
    List,
    Literal,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    Type,
    Union,
    cast,
)

from . import _native
from ._errors import ConfigurationError
from ._native import CancelToken, RateLimit, RateLimitState, RawResponse, User, UserPage
from ._operations import AsyncClientOperations, AsyncRawClientOperations

if TYPE_CHECKING:
    from ._native import APIResponse, _Query

__all__ = ["AsyncClient", "AsyncClientWithRawResponse"]

#: Threads per AsyncClient unless told otherwise: calls in flight at once.
DEFAULT_MAX_WORKERS = 16


class AsyncClient(AsyncClientOperations):
    """A client of the chat service's REST API for asyncio.

    The same settings and methods as :class:`roomchat.Client`, the calls as coroutines
    (``users()`` and ``user_pages()`` as async iterators; ``sign_in_url``,
    ``iframe_html`` and ``rate_limit_state`` stay plain methods: they do no I/O), and
    ``max_workers``: how many calls may be in flight at once in each event loop that
    uses the client (default 16)::

        async with roomchat.AsyncClient(key, base_url=url) as client:
            page = await client.list_users(limit=50)
            async for user in client.users():
                ...
    """

    def __init__(
        self,
        private_key: str,
        *,
        base_url: str,
        chat_url: Optional[str] = None,
        public_key: Optional[str] = None,
        timeout: float = 30.0,
        connect_timeout: float = 10.0,
        max_retries: int = 2,
        retry_non_idempotent: bool = False,
        rate_limit: Optional[RateLimit] = None,
        app_name: Optional[str] = None,
        allow_insecure_http: bool = False,
        max_retry_wait: float = 60.0,
        base_backoff: float = 0.25,
        max_response_bytes: int = 16777216,
        ca_bundle: Union[str, os.PathLike[str], None] = None,
        tls_roots: Literal["webpki", "system"] = "webpki",
        proxy: Optional[str] = None,
        trust_env: bool = True,
        gzip: bool = True,
        max_workers: int = DEFAULT_MAX_WORKERS,
        propagate_trace_context: bool = True,
        opentelemetry: bool = True,
        tracer_provider: Any = None,
        meter_provider: Any = None,
    ) -> None:
        client = _native.Client(
            private_key,
            base_url=base_url,
            chat_url=chat_url,
            public_key=public_key,
            timeout=timeout,
            connect_timeout=connect_timeout,
            max_retries=max_retries,
            retry_non_idempotent=retry_non_idempotent,
            rate_limit=rate_limit,
            app_name=app_name,
            allow_insecure_http=allow_insecure_http,
            max_retry_wait=max_retry_wait,
            base_backoff=base_backoff,
            max_response_bytes=max_response_bytes,
            ca_bundle=ca_bundle,
            tls_roots=tls_roots,
            proxy=proxy,
            trust_env=trust_env,
            gzip=gzip,
            propagate_trace_context=propagate_trace_context,
            opentelemetry=opentelemetry,
            tracer_provider=tracer_provider,
            meter_provider=meter_provider,
        )
        self._setup(client, max_workers)

    def _setup(self, client: _native.Client, max_workers: int) -> None:
        if isinstance(max_workers, bool) or not isinstance(max_workers, int):
            raise TypeError(f"max_workers must be an int, not {type(max_workers).__name__}")
        if max_workers < 1:
            raise ConfigurationError("max_workers must be at least 1")
        self._client = client
        self._max_workers = max_workers
        # The client whose dispatchers this one uses: itself, or the client a view
        # (``with_options``) was made from.
        self._root: AsyncClient = self
        # The dispatcher of each event loop that used the client in process `_pid`;
        # read and changed under `_lock` only.
        self._dispatchers: Dict[asyncio.AbstractEventLoop, _native.Dispatcher] = {}
        self._pid = os.getpid()
        self._lock = threading.Lock()

    @classmethod
    def from_env(
        cls,
        *,
        timeout: float = 30.0,
        connect_timeout: float = 10.0,
        max_retries: int = 2,
        retry_non_idempotent: bool = False,
        rate_limit: Optional[RateLimit] = None,
        allow_insecure_http: bool = False,
        max_retry_wait: float = 60.0,
        base_backoff: float = 0.25,
        max_response_bytes: int = 16777216,
        ca_bundle: Union[str, os.PathLike[str], None] = None,
        tls_roots: Literal["webpki", "system"] = "webpki",
        proxy: Optional[str] = None,
        trust_env: bool = True,
        gzip: bool = True,
        max_workers: int = DEFAULT_MAX_WORKERS,
        propagate_trace_context: bool = True,
        opentelemetry: bool = True,
        tracer_provider: Any = None,
        meter_provider: Any = None,
    ) -> AsyncClient:
        """A client from the ``ROOMCHAT_*`` environment variables (see ``Client.from_env``)."""
        native = _native.Client.from_env(
            timeout=timeout,
            connect_timeout=connect_timeout,
            max_retries=max_retries,
            retry_non_idempotent=retry_non_idempotent,
            rate_limit=rate_limit,
            allow_insecure_http=allow_insecure_http,
            max_retry_wait=max_retry_wait,
            base_backoff=base_backoff,
            max_response_bytes=max_response_bytes,
            ca_bundle=ca_bundle,
            tls_roots=tls_roots,
            proxy=proxy,
            trust_env=trust_env,
            gzip=gzip,
            propagate_trace_context=propagate_trace_context,
            opentelemetry=opentelemetry,
            tracer_provider=tracer_provider,
            meter_provider=meter_provider,
        )
        self = cls.__new__(cls)
        self._setup(native, max_workers)
        return self

    # ---- the dispatcher ---------------------------------------------------------------

    def _own_dispatchers(self) -> Dict[asyncio.AbstractEventLoop, _native.Dispatcher]:
        """The dispatchers made in this process (call with `_lock` held). In a forked
        child the parent's are forgotten, never closed: their threads do not exist here."""
        if self._pid != os.getpid():
            self._dispatchers, self._pid = {}, os.getpid()
        return self._dispatchers

    def _dispatcher_for(self, loop: asyncio.AbstractEventLoop) -> _native.Dispatcher:
        if self._client.closed:
            raise ConfigurationError("the client is closed")
        root = self._root
        with root._lock:
            dispatchers = root._own_dispatchers()
            dispatcher = dispatchers.get(loop)
            if dispatcher is not None:
                return dispatcher
            if root._client.closed:
                raise ConfigurationError("the client is closed")
            for ended in [old for old in dispatchers if old.is_closed()]:
                dispatchers.pop(ended).close()  # its threads leave now
            dispatcher = _native.Dispatcher(self._max_workers)
            loop.add_reader(dispatcher.fileno(), dispatcher.drain)
            dispatchers[loop] = dispatcher
            return dispatcher

    async def _submit(
        self,
        method: Callable[..., Any],
        token: CancelToken,
        /,
        *args: Any,
        _keep: Optional[Callable[[Any], None]] = None,
        **kwargs: Any,
    ) -> Any:
        """Runs `method` on a worker thread. `_keep` (an iterator's step) gets the result
        of a call whose task was cancelled but that finished all the same: a page taken
        from the iterator, which the next step must yield. `method` and `token` are
        positional-only: a method's own keywords pass through whatever their names."""
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        method(*args, _submit=(self._dispatcher_for(loop), future, token), **kwargs)
        try:
            return await asyncio.shield(future)
        except asyncio.CancelledError:
            token.cancel()
            if _keep is not None:
                _keep_when_done(future, _keep)
            if not future.done():
                try:
                    await asyncio.shield(future)  # the call gives its thread back within ~50 ms
                except BaseException:  # its own CancelledError, or this task cancelled again
                    pass
            raise

    async def _call(self, name: str, /, *args: Any, **kwargs: Any) -> Any:
        return await self._submit(getattr(self._client, name), CancelToken(), *args, **kwargs)

    # ---- views --------------------------------------------------------------------------

    def with_options(
        self,
        *,
        timeout: Optional[float] = None,
        connect_timeout: Optional[float] = None,
        max_retries: Optional[int] = None,
        max_retry_wait: Optional[float] = None,
    ) -> AsyncClient:
        """A view of this client whose calls use the settings given here and the client's
        elsewhere (see ``Client.with_options``): it shares the client's connections,
        rate-limit budget, worker threads and logging. Closing the view closes only it."""
        native = self._client.with_options(
            timeout=timeout, connect_timeout=connect_timeout, max_retries=max_retries, max_retry_wait=max_retry_wait
        )
        view = AsyncClient.__new__(AsyncClient)
        view._setup(native, self._max_workers)
        view._root = self._root
        return view

    @property
    def with_raw_response(self) -> AsyncClientWithRawResponse:
        """The same client whose coroutines return an ``APIResponse`` (status, headers,
        request id, attempts, and ``parse()`` for the result) instead of the result alone."""
        return AsyncClientWithRawResponse(self)

    # ---- life ---------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        """The REST base URL."""
        return self._client.base_url

    @property
    def closed(self) -> bool:
        """Whether the client was closed."""
        return self._client.closed

    def close(self) -> None:
        """Closes the client without waiting: calls in flight still finish."""
        self._client.close()
        if self._root is not self:
            return  # a view: the threads are its client's
        with self._lock:
            dispatchers = list(self._own_dispatchers().values())
        for dispatcher in dispatchers:
            dispatcher.close()

    async def aclose(self) -> None:
        """Closes the client and waits until the calls this event loop has in flight
        have finished and its threads have ended (other loops' calls still finish)."""
        self._client.close()
        if self._root is not self:
            return  # a view: the threads are its client's
        loop = asyncio.get_running_loop()
        with self._lock:
            dispatchers, self._dispatchers = self._own_dispatchers(), {}
        for dispatcher in dispatchers.values():
            dispatcher.close()
        mine = dispatchers.get(loop)
        if mine is not None:
            while mine.pending or mine.threads:
                await asyncio.sleep(0.002)
            loop.remove_reader(mine.fileno())

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return "AsyncClient(closed)" if self.closed else f"AsyncClient(base_url={self.base_url!r})"

    # ---- endpoints ----------------------------------------------------------------------

    def users(self, page_size: int = 200) -> AsyncIterator[User]:
        """Every user, fetched lazily ``page_size`` at a time; a user id is never yielded
        twice. A step that fails or is cancelled (``asyncio.wait_for``) raises, and the
        next step fetches the same page again: an error never ends the iteration."""
        return _AsyncUsers(self, self._client.users(page_size), page_size)

    def user_pages(self, page_size: int = 200) -> AsyncIterator[UserPage]:
        """The users listing page by page, ``page_size`` at a time. A step that fails or
        is cancelled raises, and the next step fetches the same page again."""
        return _AsyncPages(self, self._client.user_pages(page_size))

    async def raw_request(
        self,
        method: str,
        path: str,
        *,
        query: Union[Mapping[str, Union[str, int]], Sequence[Tuple[str, Union[str, int]]], None] = None,
        json: Any = None,
        auth: str = "private",
    ) -> RawResponse:
        """A request to an endpoint the contract names without a shape (see ``Client.raw_request``)."""
        response: RawResponse = await self._call("raw_request", method, path, query=query, json=json, auth=auth)
        return response

    def rate_limit_state(self) -> RateLimitState:
        """Where this key's shared rate-limit budget stands."""
        return self._client.rate_limit_state()

    def sign_in_url(self, room_id: str, access_token: str) -> str:
        """The browser address that signs the holder of ``access_token`` in to ``room_id``."""
        return self._client.sign_in_url(room_id, access_token)

    def iframe_html(self, room_id: str, access_token: str, *, width: str = "100%", height: str = "600") -> str:
        """An ``<iframe>`` showing ``room_id`` signed in as the holder of ``access_token``."""
        return self._client.iframe_html(room_id, access_token, width=width, height=height)


def _keep_when_done(future: asyncio.Future[Any], keep: Callable[[Any], None]) -> None:
    """Hands `future`'s result to `keep` once it has one (at once if it has)."""

    def hand_over(done: asyncio.Future[Any]) -> None:
        if not done.cancelled() and done.exception() is None:
            keep(done.result())

    if future.done():
        hand_over(future)
    else:
        future.add_done_callback(hand_over)


class _AsyncUsers:
    """``AsyncClient.users()``: one thread hop per page, not per user. Each step has its
    own ``CancelToken``: a cancelled step cancels that step only."""

    def __init__(self, client: AsyncClient, users: _native.UserIterator, page_size: int) -> None:
        self._client = client
        self._users = users
        self._page_size = page_size
        self._buffer: Deque[User] = collections.deque()

    def __aiter__(self) -> _AsyncUsers:
        return self

    async def __anext__(self) -> User:
        if not self._buffer:
            batch: List[User] = await self._client._submit(
                self._users._next_batch, CancelToken(), self._page_size, _keep=self._buffer.extend
            )
            self._buffer.extend(batch)
            if not self._buffer:
                raise StopAsyncIteration
        return self._buffer.popleft()


class _AsyncPages:
    """``AsyncClient.user_pages()``, a ``CancelToken`` per step as ``_AsyncUsers``."""

    def __init__(self, client: AsyncClient, pages: _native.UserPageIterator) -> None:
        self._client = client
        self._pages = pages
        # Pages whose step was cancelled after they came: yielded first.
        self._kept: Deque[UserPage] = collections.deque()

    def __aiter__(self) -> _AsyncPages:
        return self

    async def __anext__(self) -> UserPage:
        if not self._kept:
            page: Optional[UserPage] = await self._client._submit(
                self._pages._next_page, CancelToken(), _keep=self._keep
            )
            self._keep(page)
            if not self._kept:
                raise StopAsyncIteration
        return self._kept.popleft()

    def _keep(self, page: Optional[UserPage]) -> None:
        if page is not None:
            self._kept.append(page)


class AsyncClientWithRawResponse(AsyncRawClientOperations):
    """The methods of a :class:`roomchat.AsyncClient`, each returning an :class:`APIResponse`
    (``client.with_raw_response``; the sync client's is ``roomchat._raw``'s)."""

    def __init__(self, client: AsyncClient) -> None:
        self._async = client
        self._client = client._client._raw_view()

    async def _call(self, name: str, /, *args: Any, **kwargs: Any) -> Any:
        return await self._async._submit(getattr(self._client, name), CancelToken(), *args, **kwargs)

    async def raw_request(
        self,
        method: str,
        path: str,
        *,
        query: Optional[_Query] = None,
        json: Any = None,
        auth: str = "private",
    ) -> APIResponse[RawResponse]:
        return cast(
            "APIResponse[RawResponse]",
            await self._call("raw_request", method, path, query=query, json=json, auth=auth),
        )


# Where 0.1.0 defined it (its repr, and a pickle of the class, name that module; it is
# still found there: _raw's __getattr__).
AsyncClientWithRawResponse.__module__ = "roomchat._raw"
