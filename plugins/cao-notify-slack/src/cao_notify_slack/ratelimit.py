"""How long Slack asks us to wait: the ``Retry-After`` header of a 429.

Slack sends whole seconds, but any non-negative number (or an HTTP date) is accepted. The value comes
from the network, so anything unreadable falls back to a default instead of raising.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from email.utils import parsedate_to_datetime

#: Used when a 429 says nothing readable about how long to wait.
DEFAULT_RETRY_AFTER = 1.0
#: No single wait is longer than this, whatever the server says (a bogus value must not stall us).
MAX_WAIT = 60.0


def header(headers: Mapping[str, str], name: str) -> str | None:
    """A header by case-insensitive name (httpx's headers are, a plain dict may not be)."""
    wanted = name.lower()
    for key, value in headers.items():
        if key.lower() == wanted:
            return value
    return None


def _http_date_delay(text: str) -> float | None:
    # Retry-After may also be an HTTP date (RFC 9110).
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when is None or when.tzinfo is None:
        return None
    return when.timestamp() - time.time()


def retry_after_seconds(headers: Mapping[str, str]) -> float:
    """Seconds to wait after a 429, in ``[0, MAX_WAIT]``."""
    value = header(headers, "Retry-After")
    if value is None:
        return DEFAULT_RETRY_AFTER
    text = value.strip()
    try:
        seconds: float | None = float(text)
    except ValueError:
        seconds = _http_date_delay(text)
    if seconds is None or not math.isfinite(seconds):
        return DEFAULT_RETRY_AFTER
    return min(MAX_WAIT, max(0.0, seconds))
