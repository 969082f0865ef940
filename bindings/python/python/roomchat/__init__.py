"""roomchat: a client for the hosted chat service's REST API.

Sync (:class:`Client`) and asyncio (:class:`AsyncClient`) clients over the roomchat
Rust core: one keep-alive connection pool per client, one rate-limit budget per
private key in the process, safe retries, the GIL released during every call, and
the private key in no error, repr or log line.

    import roomchat

    with roomchat.Client(key, base_url="https://api.example.com") as client:
        page = client.list_users(limit=50)
        for user in client.users():
            print(user.username)

Errors are subclasses of :class:`RoomchatError` (one per kind of the core); the
attempts, retries and rate-limit waits are logged to ``logging.getLogger("roomchat")``
(DEBUG for each attempt, WARNING for retries and waits). :mod:`roomchat.wire` is the
pure request/response layer for use with another HTTP stack.
"""

from ._errors import (
    AuthenticationError,
    BudgetUnavailableError,
    TlsError,
    CancelledError,
    ConfigurationError,
    ConnectionError,
    DecodeError,
    InvalidAuthError,
    InvalidRequestError,
    MissingAuthError,
    NotFoundError,
    PlanUpgradeRequiredError,
    RateLimitedError,
    ResponseTooLargeError,
    RoomchatError,
    ServerError,
    TimeoutError,
    UnexpectedStatusError,
    UserNotFoundError,
    ValidationError,
)
from ._native import (
    CORE_VERSION,
    APIResponse,
    CancelToken,
    Client,
    CreatedUser,
    Deactivated,
    Invalidated,
    Message,
    MessageAuthor,
    RateLimit,
    RateLimitState,
    RawResponse,
    Reactivated,
    RecordIterator,
    RecordPageIterator,
    TokenUser,
    User,
    UserIterator,
    UserPage,
    UserPageIterator,
    __version__,
)
# The generated records (api/operations.toml), whichever they are. Type checkers read
# exports from a literal `__all__` only, or, exactly in this form, from `from m import
# __all__ as __all__` (mypy, hence stubtest: every public name of `m`); this file's own
# names are added below as a literal.
from ._records import *
from ._records import __all__ as __all__
from ._async import AsyncClient, AsyncClientWithRawResponse
from ._paging import AsyncRecordIterator, AsyncRecordPageIterator
from ._raw import ClientWithRawResponse
from . import wire

import logging as _logging
import os as _os

# The logging HOWTO's convention for libraries: an application that never configured
# logging sees no warning of ours on stderr (Python's last-resort handler).
_logging.getLogger("roomchat").addHandler(_logging.NullHandler())


def _log_from_env() -> None:
    """``ROOMCHAT_LOG=debug|info|warn``: quick debugging without a logging setup. The
    ``roomchat`` logger gets that level and a handler printing ``[roomchat] DEBUG: <line>``
    to stderr (besides wherever the application's own logging sends its records)."""
    levels = {"debug": _logging.DEBUG, "info": _logging.INFO, "warn": _logging.WARNING, "warning": _logging.WARNING}
    level = levels.get(_os.environ.get("ROOMCHAT_LOG", "").strip().lower())
    if level is None:
        return
    logger = _logging.getLogger("roomchat")
    handler = _logging.StreamHandler()
    handler.setFormatter(_logging.Formatter("[roomchat] %(levelname)s: %(message)s"))
    logger.addHandler(handler)
    logger.setLevel(level)


_log_from_env()

__all__ = list(__all__)  # a copy: `+=` must not change `_records.__all__`
__all__ += [
    "APIResponse",
    "AsyncClient",
    "AsyncClientWithRawResponse",
    "AsyncRecordIterator",
    "AsyncRecordPageIterator",
    "AuthenticationError",
    "CORE_VERSION",
    "CancelToken",
    "BudgetUnavailableError",
    "TlsError",
    "CancelledError",
    "Client",
    "ClientWithRawResponse",
    "ConfigurationError",
    "ConnectionError",
    "CreatedUser",
    "Deactivated",
    "DecodeError",
    "InvalidAuthError",
    "InvalidRequestError",
    "Invalidated",
    "Message",
    "MessageAuthor",
    "MissingAuthError",
    "NotFoundError",
    "PlanUpgradeRequiredError",
    "RateLimit",
    "RateLimitState",
    "RateLimitedError",
    "RawResponse",
    "Reactivated",
    "RecordIterator",
    "RecordPageIterator",
    "ResponseTooLargeError",
    "RoomchatError",
    "ServerError",
    "TimeoutError",
    "TokenUser",
    "UnexpectedStatusError",
    "User",
    "UserIterator",
    "UserNotFoundError",
    "UserPage",
    "UserPageIterator",
    "ValidationError",
    "__version__",
    "wire",
]
