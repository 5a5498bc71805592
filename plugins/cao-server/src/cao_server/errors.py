"""Errors only the HTTP layer raises, and the lookup the client uses to raise the server's error again.

The server answers every error as ``{"detail": "<one line>", "error": "<class name>"}``; the client
finds the class by that name among these and the contract's errors (``cao_hookspecs.errors``).
"""

from __future__ import annotations

from cao_hookspecs.errors import (
    ERRORS_BY_NAME,
    AgentFailed,
    CaoError,
    Conflict,
    InvalidInput,
    NotFound,
    NotSupported,
    TerminalLimit,
    Timeout,
)


class ServerNotRunning(CaoError):
    """Nothing answers at the server's address."""

    http_status = 503


class Unauthorized(CaoError):
    """The request lacks the API token (or carries a wrong one) where the server requires it."""

    http_status = 401


class Forbidden(CaoError):
    """The server refused the request for where it came from (a cross-origin browser request)."""

    http_status = 403


class TooLarge(InvalidInput):
    """A request body or a message over the server's size limit."""

    http_status = 413


class BadParameter(InvalidInput):
    """A parameter is missing, of the wrong type, or malformed (upstream answers these with 422)."""

    http_status = 422


class ServerError(CaoError):
    """The server failed unexpectedly (a 500): a bug on the server side, never bad input."""


HTTP_ERRORS: dict[str, type[CaoError]] = {
    cls.__name__: cls
    for cls in (ServerNotRunning, Unauthorized, Forbidden, TooLarge, BadParameter, ServerError)
}


def error_class(name: object, status: int) -> type[CaoError]:
    """The class to raise for an error response: by the ``error`` name when known, else by status."""
    if isinstance(name, str):
        found = ERRORS_BY_NAME.get(name) or HTTP_ERRORS.get(name)
        if found is not None:
            return found
    by_status = {
        400: InvalidInput,
        401: Unauthorized,
        403: Forbidden,
        404: NotFound,
        409: Conflict,
        413: TooLarge,
        422: BadParameter,
        429: TerminalLimit,
        501: NotSupported,
        502: AgentFailed,
        504: Timeout,
    }
    return by_status.get(status) or (ServerError if status >= 500 else CaoError)


__all__ = [
    "BadParameter",
    "Forbidden",
    "HTTP_ERRORS",
    "NotSupported",
    "ServerError",
    "ServerNotRunning",
    "TooLarge",
    "Unauthorized",
    "error_class",
]
