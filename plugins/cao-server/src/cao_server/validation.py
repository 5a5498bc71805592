"""Checks the server makes before a request reaches the kernel: ids, names, keys and sizes.

The rules are upstream's, shared with the kernel through ``cao_hookspecs.names``; the server
applies them itself because it may serve any ``KernelAPI``, and because upstream answers a malformed
terminal id with 422 where the kernel's ``InvalidInput`` means 400.
"""

from __future__ import annotations

from cao_hookspecs import names
from cao_hookspecs.names import KEY_RE, MAX_INPUT_BYTES, PROFILE_NAME_RE, SESSION_NAME_RE, TERMINAL_ID_RE

from .errors import BadParameter, TooLarge

# A 1 MiB message may grow several times once JSON-escaped; anything past this is refused unread.
MAX_BODY_BYTES = 8 * 1024 * 1024


def terminal_id(value: str, *, what: str = "terminal id") -> str:
    """An 8-hex terminal id; a malformed one is a 422, as upstream's typed path parameter."""
    return names.terminal_id(value, what=what, error=BadParameter)


session_name = names.session_name
profile_name = names.profile_name
key = names.key


def session_filter(value: str) -> str:
    """A session named in a filter (``?session=``), checked and with the prefix the kernel adds to every
    name: ``team`` and ``cao-team`` are the same session."""
    return names.with_prefix(session_name(value))


def text_size(value: str, *, what: str, limit: int = MAX_INPUT_BYTES) -> str:
    size = len(value.encode("utf-8"))
    if size > limit:
        raise TooLarge(f"{what} is {size} bytes; the limit is {limit}")
    return value


__all__ = [
    "KEY_RE",
    "MAX_BODY_BYTES",
    "MAX_INPUT_BYTES",
    "PROFILE_NAME_RE",
    "SESSION_NAME_RE",
    "TERMINAL_ID_RE",
    "key",
    "profile_name",
    "session_filter",
    "session_name",
    "terminal_id",
    "text_size",
]
