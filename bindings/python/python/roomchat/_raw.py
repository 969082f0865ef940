"""``client.with_raw_response``: every call's result beside the HTTP answer it came from.

As openai-python does it: ``client.with_raw_response.list_users(limit=10)`` makes the
same call as ``client.list_users(limit=10)`` and returns an :class:`APIResponse` with
``status``, ``headers`` (lower-case names), ``request_id`` (``X-Request-Id``),
``attempts`` and ``parse()``, which gives what the plain call returns. Each method
here forwards to a handle of the client whose calls core makes through
``Client::with_response`` (one place for every endpoint); a new endpoint is one line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, cast

from ._native import (
    APIResponse,
    CancelToken,
    CreatedUser,
    Deactivated,
    Invalidated,
    Message,
    RawResponse,
    Reactivated,
    TokenUser,
    UserPage,
)

from ._operations import AsyncRawClientOperations, RawClientOperations

if TYPE_CHECKING:
    from ._async import AsyncClient
    from ._native import Client, _Query

__all__ = ["AsyncClientWithRawResponse", "ClientWithRawResponse"]


class ClientWithRawResponse(RawClientOperations):
    """The methods of a :class:`roomchat.Client`, each returning an :class:`APIResponse`."""

    def __init__(self, client: Client) -> None:
        self._client = client._raw_view()

    def list_users(self, limit: int = 50, skip: int = 0) -> APIResponse[UserPage]:
        return cast("APIResponse[UserPage]", self._client.list_users(limit, skip))

    def create_user(
        self,
        username: str,
        *,
        is_moderator: bool = False,
        chat_room: Optional[str] = None,
        unique_user_identifier: Optional[str] = None,
        email: Optional[str] = None,
        profile_pic: Optional[str] = None,
        external_user_id: Optional[str] = None,
        meta: Any = None,
        extra: Optional[Mapping[str, Any]] = None,
    ) -> APIResponse[CreatedUser]:
        return cast(
            "APIResponse[CreatedUser]",
            self._client.create_user(
                username,
                is_moderator=is_moderator,
                chat_room=chat_room,
                unique_user_identifier=unique_user_identifier,
                email=email,
                profile_pic=profile_pic,
                external_user_id=external_user_id,
                meta=meta,
                extra=extra,
            ),
        )

    def deactivate_user(
        self, *, user_id: Optional[str] = None, unique_user_identifier: Optional[str] = None
    ) -> APIResponse[Deactivated]:
        return cast(
            "APIResponse[Deactivated]",
            self._client.deactivate_user(user_id=user_id, unique_user_identifier=unique_user_identifier),
        )

    def reactivate_user(
        self, *, user_id: Optional[str] = None, unique_user_identifier: Optional[str] = None
    ) -> APIResponse[Reactivated]:
        return cast(
            "APIResponse[Reactivated]",
            self._client.reactivate_user(user_id=user_id, unique_user_identifier=unique_user_identifier),
        )

    def validate_access_token(self, access_token: str) -> APIResponse[TokenUser]:
        return cast("APIResponse[TokenUser]", self._client.validate_access_token(access_token))

    def invalidate_access_token(self, access_token: str) -> APIResponse[Invalidated]:
        return cast("APIResponse[Invalidated]", self._client.invalidate_access_token(access_token))

    def conversation_messages(
        self, room_id: str, conversation_id: str, *, path_form: str = "room"
    ) -> APIResponse[List[Message]]:
        return cast(
            "APIResponse[List[Message]]",
            self._client.conversation_messages(room_id, conversation_id, path_form=path_form),
        )

    def list_chat_rooms(self) -> APIResponse[List[Dict[str, Any]]]:
        return cast("APIResponse[List[Dict[str, Any]]]", self._client.list_chat_rooms())

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

    async def list_users(self, limit: int = 50, skip: int = 0) -> APIResponse[UserPage]:
        return cast("APIResponse[UserPage]", await self._call("list_users", limit, skip))

    async def create_user(
        self,
        username: str,
        *,
        is_moderator: bool = False,
        chat_room: Optional[str] = None,
        unique_user_identifier: Optional[str] = None,
        email: Optional[str] = None,
        profile_pic: Optional[str] = None,
        external_user_id: Optional[str] = None,
        meta: Any = None,
        extra: Optional[Mapping[str, Any]] = None,
    ) -> APIResponse[CreatedUser]:
        return cast(
            "APIResponse[CreatedUser]",
            await self._call(
                "create_user",
                username,
                is_moderator=is_moderator,
                chat_room=chat_room,
                unique_user_identifier=unique_user_identifier,
                email=email,
                profile_pic=profile_pic,
                external_user_id=external_user_id,
                meta=meta,
                extra=extra,
            ),
        )

    async def deactivate_user(
        self, *, user_id: Optional[str] = None, unique_user_identifier: Optional[str] = None
    ) -> APIResponse[Deactivated]:
        return cast(
            "APIResponse[Deactivated]",
            await self._call("deactivate_user", user_id=user_id, unique_user_identifier=unique_user_identifier),
        )

    async def reactivate_user(
        self, *, user_id: Optional[str] = None, unique_user_identifier: Optional[str] = None
    ) -> APIResponse[Reactivated]:
        return cast(
            "APIResponse[Reactivated]",
            await self._call("reactivate_user", user_id=user_id, unique_user_identifier=unique_user_identifier),
        )

    async def validate_access_token(self, access_token: str) -> APIResponse[TokenUser]:
        return cast("APIResponse[TokenUser]", await self._call("validate_access_token", access_token))

    async def invalidate_access_token(self, access_token: str) -> APIResponse[Invalidated]:
        return cast("APIResponse[Invalidated]", await self._call("invalidate_access_token", access_token))

    async def conversation_messages(
        self, room_id: str, conversation_id: str, *, path_form: str = "room"
    ) -> APIResponse[List[Message]]:
        return cast(
            "APIResponse[List[Message]]",
            await self._call("conversation_messages", room_id, conversation_id, path_form=path_form),
        )

    async def list_chat_rooms(self) -> APIResponse[List[Dict[str, Any]]]:
        return cast("APIResponse[List[Dict[str, Any]]]", await self._call("list_chat_rooms"))

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
