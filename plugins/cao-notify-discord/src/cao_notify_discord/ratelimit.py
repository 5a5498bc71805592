"""How long Discord asks us to wait, read from a response's headers and JSON body.

A 429 carries ``retry_after`` (seconds, fractional) in its JSON body and a ``Retry-After`` header;
the body is preferred because it is the more precise of the two. Successful answers carry
``X-RateLimit-Remaining`` and ``X-RateLimit-Reset-After``: when nothing remains, the sender pauses
before its next post instead of running into a 429. Every value comes from the network, so anything
unreadable falls back to a default instead of raising (``cao_notify_core.ratelimit``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from cao_notify_core import ratelimit
from cao_notify_core.ratelimit import header, seconds


def retry_after_seconds(headers: Mapping[str, str], body: bytes | str | None) -> float:
    """Seconds to wait after a 429, in ``[0, MAX_WAIT]``."""
    if body:
        try:
            data = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            data = None
        if isinstance(data, dict):
            wait = seconds(data.get("retry_after"))
            if wait is not None:
                return wait
    return ratelimit.retry_after_seconds(headers)


def pause_seconds(headers: Mapping[str, str]) -> float:
    """Seconds to hold the next post after a successful one (0 when the bucket has room left)."""
    remaining = header(headers, "X-RateLimit-Remaining")
    if remaining is None or remaining.strip() not in ("0", "0.0"):
        return 0.0
    wait = seconds(header(headers, "X-RateLimit-Reset-After"))
    return 0.0 if wait is None else wait
