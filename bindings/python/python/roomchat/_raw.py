"""``client.with_raw_response``: every call's result beside the HTTP answer it came from.

As openai-python does it: ``client.with_raw_response.list_users(limit=10)`` makes the
same call as ``client.list_users(limit=10)`` and returns an :class:`APIResponse` with
``status``, ``headers`` (lower-case names), ``request_id`` (``X-Request-Id``),
``attempts`` and ``parse()``, which gives what the plain call returns. Each method
forwards to a handle of the client whose calls core makes through
``Client::with_response`` (one place for every endpoint): the operations' methods are
generated (``_operations.py``), ``raw_request`` is here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, cast

from ._native import APIResponse, CancelToken, RawResponse

from ._operations import AsyncRawClientOperations, RawClientOperations

if TYPE_CHECKING:
    from ._async import AsyncClient
    from ._native import Client, _Query

__all__ = ["AsyncClientWithRawResponse", "ClientWithRawResponse"]


class ClientWithRawResponse(RawClientOperations):
    """The methods of a :class:`roomchat.Client`, each returning an :class:`APIResponse`."""

    def __init__(self, client: Client) -> None:
        self._client = client._raw_view()

    def raw_request(
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
            self._client.raw_request(method, path, query=query, json=json, auth=auth),
        )


class AsyncClientWithRawResponse(AsyncRawClientOperations):
    """The methods of a :class:`roomchat.AsyncClient`, each returning an :class:`APIResponse`."""

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
