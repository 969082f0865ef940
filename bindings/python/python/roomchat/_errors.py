"""The exceptions of roomchat: one base class, one subclass per error kind of the core.

``kind`` and ``code`` are the core's stable snake_case name and number of the kind.
Every attribute comes from the core, which has already removed the private key from
every text; exceptions pickle and unpickle with all their attributes (multiprocessing
sends them between processes).
"""

from __future__ import annotations

import builtins
from typing import Any, ClassVar, Dict, Optional, Tuple, Type

__all__ = [
    "RoomchatError",
    "AuthenticationError",
    "MissingAuthError",
    "InvalidAuthError",
    "InvalidRequestError",
    "UserNotFoundError",
    "PlanUpgradeRequiredError",
    "RateLimitedError",
    "ServerError",
    "UnexpectedStatusError",
    "TimeoutError",
    "ConnectionError",
    "DecodeError",
    "ResponseTooLargeError",
    "ValidationError",
    "ConfigurationError",
    "CancelledError",
    "BudgetUnavailableError",
    "TlsError",
    "NotFoundError",
]


def _rebuild(cls: Type[RoomchatError], text: str, attrs: Dict[str, Any]) -> RoomchatError:
    return cls(text, **attrs)


class RoomchatError(Exception):
    """An error from the client or the service.

    ``str(error)`` is the core's one line (message, request and status); the parts are
    attributes: ``message`` (the service's own text when it sent one), ``status`` (the
    HTTP status, when it answered), ``method`` and ``path`` (the request, with the key
    shown as ``REDACTED``), ``event_id`` (a server failure's id, to quote to support),
    ``retry_after`` (seconds to wait, when known), ``kind`` and ``code``.

    The service's error body may carry its text in ``message``, ``errorMessage`` and
    ``error``; each is an attribute as it came (``service_message``,
    ``service_error_message``, ``service_error``; ``None`` when absent, and
    ``"error": true`` is a flag, not a text). When more than one came and they differ,
    ``message`` shows each once: the first (in that order), then ``": "`` and the others
    joined by ``"; "``, e.g. ``invalid request: "actionButtons[0].type" must be one of
    [link, action]``.
    """

    kind: ClassVar[str] = "unknown"
    code: ClassVar[int] = 0

    message: str
    status: Optional[int]
    method: Optional[str]
    path: Optional[str]
    event_id: Optional[str]
    retry_after: Optional[float]
    service_message: Optional[str]
    service_error: Optional[str]
    service_error_message: Optional[str]

    def __init__(
        self,
        text: str,
        *,
        message: Optional[str] = None,
        status: Optional[int] = None,
        method: Optional[str] = None,
        path: Optional[str] = None,
        event_id: Optional[str] = None,
        retry_after: Optional[float] = None,
        kind: Optional[str] = None,
        code: Optional[int] = None,
        service_message: Optional[str] = None,
        service_error: Optional[str] = None,
        service_error_message: Optional[str] = None,
    ) -> None:
        super().__init__(text)
        self.message = text if message is None else message
        self.status = status
        self.method = method
        self.path = path
        self.event_id = event_id
        self.retry_after = retry_after
        self.service_message = service_message
        self.service_error = service_error
        self.service_error_message = service_error_message
        # A kind this version does not know keeps the core's name and number.
        if kind is not None and kind != type(self).kind:
            self.kind = kind  # type: ignore[misc]
        if code is not None and code != type(self).code:
            self.code = code  # type: ignore[misc]

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else self.message

    def __reduce__(self) -> Tuple[Any, ...]:
        attrs: Dict[str, Any] = {
            "message": self.message,
            "status": self.status,
            "method": self.method,
            "path": self.path,
            "event_id": self.event_id,
            "retry_after": self.retry_after,
            "kind": self.kind,
            "code": self.code,
            "service_message": self.service_message,
            "service_error": self.service_error,
            "service_error_message": self.service_error_message,
        }
        return (_rebuild, (type(self), str(self), attrs))


class AuthenticationError(RoomchatError):
    """The service did not accept the request's key (missing or invalid)."""


class MissingAuthError(AuthenticationError):
    """The service said the key is missing."""

    kind = "missing_auth"
    code = 1


class InvalidAuthError(AuthenticationError):
    """The service rejected the key: wrong, truncated, padded or regenerated."""

    kind = "invalid_auth"
    code = 2


class InvalidRequestError(RoomchatError):
    """The service rejected a parameter or the body (400); the message names what."""

    kind = "invalid_request"
    code = 3


class NotFoundError(RoomchatError):
    """The room, channel, message, conversation, bot or user named does not exist: a JSON
    404, or an answer that says the thing is not found, an invalid chatroom id or not a
    member. Never a bad key. A user is the subclass ``UserNotFoundError``, so
    ``except NotFoundError`` catches every thing that is not there."""

    kind = "not_found"
    code = 18


class UserNotFoundError(NotFoundError):
    """The user named does not exist or is already deactivated (a ``NotFoundError``)."""

    kind = "user_not_found"
    code = 4


class PlanUpgradeRequiredError(RoomchatError):
    """The endpoint is not part of the account's plan."""

    kind = "plan_upgrade_required"
    code = 5


class RateLimitedError(RoomchatError):
    """Over the rate limit (a 429, or the key's budget had no slot in time); see ``retry_after``."""

    kind = "rate_limited"
    code = 6


class ServerError(RoomchatError):
    """The service failed (5xx); ``event_id`` is the id to quote to support."""

    kind = "server_error"
    code = 7


class UnexpectedStatusError(RoomchatError):
    """A status the contract does not describe for this call (3xx, 404, 413, ...)."""

    kind = "unexpected_status"
    code = 8


class TimeoutError(RoomchatError, builtins.TimeoutError):
    """The connect or overall timeout ran out (also a builtin ``TimeoutError``)."""

    kind = "timeout"
    code = 9


class ConnectionError(RoomchatError, builtins.ConnectionError):
    """No connection could be made, or it broke before an answer came (also a builtin ``ConnectionError``)."""

    kind = "connection"
    code = 10


class DecodeError(RoomchatError):
    """The answer could not be decoded: not JSON, cut off, or the wrong shape."""

    kind = "decode"
    code = 11


class ResponseTooLargeError(RoomchatError):
    """The answer was larger than the client's cap (``max_response_bytes``)."""

    kind = "response_too_large"
    code = 12


class ValidationError(RoomchatError, ValueError):
    """An argument is invalid; nothing was sent (also a ``ValueError``)."""

    kind = "validation"
    code = 13


class ConfigurationError(RoomchatError, ValueError):
    """The client is misconfigured (key, URL, timeouts), or closed (also a ``ValueError``)."""

    kind = "configuration"
    code = 14


class CancelledError(RoomchatError):
    """The call was cancelled through its ``CancelToken``.

    In an ``AsyncClient`` call, a cancelled task raises ``asyncio.CancelledError`` instead.
    """

    kind = "cancelled"
    code = 15


class BudgetUnavailableError(RoomchatError):
    """The rate budget shared in Redis cannot be reached and the client fails closed
    (``RateLimit(redis_url=..., on_redis_error="fail_closed")``); nothing was sent."""

    kind = "budget_unavailable"
    code = 16


class TlsError(ConnectionError):
    """The TLS handshake failed: the server's certificate was rejected (unknown issuer,
    expired, a name mismatch: the message says which) or the handshake broke. Never
    retried. A ``ConnectionError`` too, as requests' ``SSLError`` is; trust a private CA
    with ``Client(ca_bundle=...)`` or ``SSL_CERT_FILE``."""

    kind = "tls"
    code = 17


_BY_CODE: Dict[int, Type[RoomchatError]] = {
    cls.code: cls
    for cls in (
        MissingAuthError,
        InvalidAuthError,
        InvalidRequestError,
        UserNotFoundError,
        PlanUpgradeRequiredError,
        RateLimitedError,
        ServerError,
        UnexpectedStatusError,
        TimeoutError,
        ConnectionError,
        DecodeError,
        ResponseTooLargeError,
        ValidationError,
        ConfigurationError,
        CancelledError,
        BudgetUnavailableError,
        TlsError,
        NotFoundError,
    )
}

# Shown (and pickled) as roomchat.ServerError etc.: the names users import.
for _cls in (RoomchatError, AuthenticationError, *_BY_CODE.values()):
    _cls.__module__ = "roomchat"
del _cls
