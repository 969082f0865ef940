"""Type-checked with `mypy --strict` by run-tests.sh: the package's types as a user sees them."""

from __future__ import annotations

import datetime
import logging
from typing import Any, Dict, List, Optional, Tuple

import roomchat


def moderators(client: roomchat.Client) -> List[str]:
    names: List[str] = []
    for user in client.users(page_size=100):
        if user.is_moderator and user.username is not None:
            names.append(user.username)
    return names


def first_page(client: roomchat.Client) -> Dict[str, Any]:
    page: roomchat.UserPage = client.list_users(limit=10, skip=0)
    total: int = page.total
    users: tuple[roomchat.User, ...] = page.data
    return {"total": total, "ids": [u.id for u in users], "wire": page.to_dict()}


def create(client: roomchat.Client, name: str) -> Optional[roomchat.CreatedUser]:
    try:
        return client.create_user(name, email=f"{name}@example.com", meta={"plan": "gold"}, extra={"x": 1})
    except roomchat.RateLimitedError as error:
        wait: Optional[float] = error.retry_after
        logging.getLogger(__name__).warning("rate limited, retry in %s s", wait)
    except roomchat.RoomchatError as error:
        code: int = error.code
        kind: str = error.kind
        logging.getLogger(__name__).error("%s (%d): %s", kind, code, error)
    return None


def messages(client: roomchat.Client, room: str, conversation: str) -> List[str]:
    found: List[roomchat.Message] = client.conversation_messages(room, conversation, path_form="chatroom")
    return [m.text or "" for m in found if m.user is None or m.user.username != "bot"]


def token_lifecycle(client: roomchat.Client, user_id: str, token: str) -> Optional[datetime.datetime]:
    user: roomchat.TokenUser = client.validate_access_token(token)
    issued: Optional[datetime.datetime] = user.iat
    room: Optional[str] = user.chat_room
    client.deactivate_user(user_id=user_id)
    back: roomchat.Reactivated = client.reactivate_user(user_id=user_id)
    done: roomchat.Invalidated = client.invalidate_access_token(token)
    return issued if back.success and done.success and room is None else None


def bots_and_rooms(client: roomchat.Client, room: str, bot_id: str) -> Optional[str]:
    ejected: roomchat.Acknowledged = client.eject_all_users(room)
    answer: roomchat.BotAnswer = client.update_bot(
        bot_id, webhook_url="https://hooks.example/b", trigger="mention", message_history_limit=10, enabled=True
    )
    bot: Optional[roomchat.Bot] = answer.bot
    raw: roomchat.APIResponse[roomchat.BotAnswer] = client.with_raw_response.update_bot(bot_id, name="helper")
    extra: Dict[str, Any] = raw.parse().extra
    limit: Optional[int] = bot.message_history_limit if bot is not None else None
    return bot.webhook_url if ejected.success and bot is not None and limit and not extra else None


async def bots_async(client: roomchat.AsyncClient, room: str, bot_id: str) -> bool:
    ejected: roomchat.Acknowledged = await client.eject_all_users(room)
    answer: roomchat.BotAnswer = await client.update_bot(bot_id, is_allowed_in_all_chat_rooms=False)
    raw: roomchat.APIResponse[roomchat.Acknowledged] = await client.with_raw_response.eject_all_users(room)
    return bool(ejected.success and answer.success and raw.status == 200)


async def still_valid(client: roomchat.AsyncClient, token: str) -> bool:
    try:
        user: roomchat.TokenUser = await client.validate_access_token(token)
    except roomchat.InvalidRequestError:
        return False
    return user.id != ""


async def count(client: roomchat.AsyncClient) -> int:
    n = 0
    async for _ in client.users():
        n += 1
    state: roomchat.RateLimitState = client.rate_limit_state()
    return n + state.used


def by_hand() -> Dict[str, Any]:
    request: Dict[str, Any] = roomchat.wire.build_request("list_users", {"limit": 5}, base_url="https://api.example.com")
    result: Any = roomchat.wire.decode_response("list_users", 200, [("content-type", "application/json")], b'{"total":0,"limit":5,"skip":0,"data":[]}')
    return {"request": request, "result": result}


def make(key: str, url: str) -> roomchat.Client:
    limit = roomchat.RateLimit(requests=600, window=60.0, when_limited="fail")
    token = roomchat.CancelToken()
    client = roomchat.Client(key, base_url=url, rate_limit=limit, timeout=5.0, max_retries=3)
    return client.with_cancel(token)


def per_call(client: roomchat.Client) -> Tuple[int, Optional[str]]:
    quick: roomchat.Client = client.with_options(timeout=2.0, max_retries=0)
    response: roomchat.APIResponse[roomchat.UserPage] = quick.with_raw_response.list_users(limit=5)
    status: int = response.status
    remaining: Optional[str] = response.headers.get("x-ratelimit-remaining")
    page: roomchat.UserPage = response.parse()
    created: roomchat.CreatedUser = client.with_raw_response.create_user("ann").parse()
    return status + page.total + response.attempts + len(created.username), remaining or response.request_id


async def per_call_async(client: roomchat.AsyncClient) -> int:
    quick: roomchat.AsyncClient = client.with_options(max_retry_wait=1.0)
    response = await quick.with_raw_response.list_users()
    page: roomchat.UserPage = response.parse()
    return page.total + response.status
