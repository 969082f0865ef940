"""The pure layer, for users who bring their own HTTP stack: core's request builders
and response decoders by operation name, with no I/O.

    request = roomchat.wire.build_request("list_users", {"limit": 50},
                                          base_url="https://api.example.com", key=key)
    # send request["method"] to request["url"] (body: request["body"] as JSON, if any)
    result = roomchat.wire.decode_response("list_users", status, headers, body)

Operations and their parameters (the service's names): ``list_users`` (``limit``,
``skip``), ``deactivate_user`` (exactly one of ``userId``, ``uniqueUserIdentifier``),
``conversation_messages`` (``roomId``, ``conversationId``, ``pathForm``:
``"room"``/``"chatroom"``), ``create_user`` (``username``, ``role``:
``"regular"``/``"moderator"``/``"room_moderator"``, ``chatRoom``, ``extra``),
``list_chat_rooms``, ``raw`` (``method``, ``path``, ``query`` pairs, ``body``,
``auth``: ``"private_key"``/``"public_key"``/``"none"``), ``reactivate_user`` (as
``deactivate_user``), ``validate_access_token`` (``accessToken``; the request's
``auth`` is ``"public_key"``), ``invalidate_access_token`` (``accessToken``). Results
are JSON with the service's field names (a validated token's ``iat`` as seconds since
the epoch); an error answer raises its :class:`roomchat.RoomchatError`.
"""

from typing import Tuple

from ._native import OPERATIONS as _OPERATIONS
from ._native import build_request, decode_response

#: Every operation name.
OPERATIONS: Tuple[str, ...] = tuple(_OPERATIONS)

__all__ = ["OPERATIONS", "build_request", "decode_response"]
