"""How long Discord asks us to wait, read from a response's headers and JSON body.

A 429 carries ``retry_after`` (seconds, fractional) in its JSON body and a ``Retry-After`` header;
the body is preferred because it is the more precise of the two. Successful answers carry
``X-RateLimit-Remaining`` and ``X-RateLimit-Reset-After``: when nothing remains, the sender pauses
before its next post instead of running into a 429. Every value comes from the network, so anything
unreadable falls back to a default instead of raising.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Mapping
from email.utils import parsedate_to_datetime
from typing import Any

#: Used when a 429 says nothing readable about how long to wait.
DEFAULT_RETRY_AFTER = 1.0
#: No single wait is longer than this, whatever the server says (a bogus value must not stall us).
MAX_WAIT = 60.0


def _seconds(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str):
        text = value.strip()
        try:
            number = float(text)
        except ValueError:
            number = _http_date_delay(text)
            if number is None:
                return None
    else:
        return None
    if not math.isfinite(number):
        return None
    return min(MAX_WAIT, max(0.0, number))


def _http_date_delay(text: str) -> float | None:
    # Retry-After may also be an HTTP date (RFC 9110).
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when is None or when.tzinfo is None:
        return None
    return when.timestamp() - time.time()


def header(headers: Mapping[str, str], name: str) -> str | None:
    """A header by case-insensitive name (httpx's headers are, a plain dict may not be)."""
    wanted = name.lower()
    for key, value in headers.items():
        if key.lower() == wanted:
            return value
    return None


def retry_after_seconds(headers: Mapping[str, str], body: bytes | str | None) -> float:
    """Seconds to wait after a 429, in ``[0, MAX_WAIT]``."""
    if body:
        try:
            data = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            data = None
        if isinstance(data, dict):
            seconds = _seconds(data.get("retry_after"))
            if seconds is not None:
                return seconds
    seconds = _seconds(header(headers, "Retry-After"))
    return DEFAULT_RETRY_AFTER if seconds is None else seconds


def pause_seconds(headers: Mapping[str, str]) -> float:
    """Seconds to hold the next post after a successful one (0 when the bucket has room left)."""
    remaining = header(headers, "X-RateLimit-Remaining")
    if remaining is None or remaining.strip() not in ("0", "0.0"):
        return 0.0
    seconds = _seconds(header(headers, "X-RateLimit-Reset-After"))
    return 0.0 if seconds is None else seconds
