"""``client.with_raw_response``: every call's result beside the HTTP answer it came from.

As openai-python does it: ``client.with_raw_response.list_users(limit=10)`` makes the
same call as ``client.list_users(limit=10)`` and returns an :class:`APIResponse` with
``status``, ``headers`` (lower-case names), ``request_id`` (``X-Request-Id``),
``attempts`` and ``parse()``, which gives what the plain call returns. Each method
forwards to a handle of the client whose calls core makes through
``Client::with_response`` (one place for every endpoint): the operations' methods are
generated (``_operations.py``), ``raw_request`` is here (and in ``_async`` for
``AsyncClient``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, cast

from ._native import APIResponse, CancelToken, RawResponse

from ._operations import RawClientOperations

if TYPE_CHECKING:
    from ._native import Client, _Query

# The asyncio client's counterpart, AsyncClientWithRawResponse, lives beside it in _async
# (an import circle otherwise). 0.1.0 defined it here: it is still found here, lazily (an
# arrow from here to _async only), for an old import or a pickle of the class.
__all__ = ["ClientWithRawResponse"]


def __getattr__(name: str) -> Any:
    if name == "AsyncClientWithRawResponse":
        from ._async import AsyncClientWithRawResponse

        return AsyncClientWithRawResponse
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
