"""How long a webhook asks us to wait: the ``Retry-After`` header of a 429.

Any non-negative number of seconds (fractional too) or an HTTP date is accepted. Every value comes from
the network, so anything unreadable falls back to a default instead of raising, and no wait is longer
than ``MAX_WAIT``. A service that says more (Discord's JSON body, its bucket headers) builds on
``seconds`` and ``header`` here.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from email.utils import parsedate_to_datetime
from typing import Any

#: Used when a 429 says nothing readable about how long to wait.
DEFAULT_RETRY_AFTER = 1.0
#: No single wait is longer than this, whatever the server says (a bogus value must not stall us).
MAX_WAIT = 60.0


def seconds(value: Any) -> float | None:
    """A wait read from a header or a JSON value, in ``[0, MAX_WAIT]``; None when it is unreadable."""
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


def retry_after_seconds(headers: Mapping[str, str], body: bytes | str | None = None) -> float:
    """Seconds to wait after a 429, in ``[0, MAX_WAIT]``, from its ``Retry-After`` header.

    ``body`` is not read: it is part of the signature so that a service whose 429 says more in its
    body (``Service.retry_after``) can take this function's place.
    """
    wait = seconds(header(headers, "Retry-After"))
    return DEFAULT_RETRY_AFTER if wait is None else wait
