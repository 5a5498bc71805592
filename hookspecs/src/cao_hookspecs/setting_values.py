"""A number read from cao's settings (``CAO_*`` variables or kernel settings), refused in one wording.

Kernel and plugins read limits the same way: unset or blank is the default, anything else must be a
number of at least 0, where 0 usually turns the limit off. A bad value is an ``InvalidInput`` (a
``ValueError``) that names the setting, so the user sees which variable to fix.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from .errors import InvalidInput

__all__ = ["non_negative"]


def non_negative(settings: Mapping[str, Any], name: str, default: float, *, what: str, zero: str,
                 whole: bool = False) -> float:
    """``settings[name]`` as a number >= 0 (an ``int`` when ``whole``), or ``default`` when unset or blank.

    :param what: what the number is, for the refusal ("a whole number of messages", "a number of days").
    :param zero: what 0 means ("no limit").
    :param whole: refuse fractions.
    """
    raw = settings.get(name)
    if raw is None or str(raw).strip() == "":
        return default
    try:
        value = float(str(raw).strip())
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0 or (whole and not value.is_integer()):
        raise InvalidInput(f"{name} must be {what} (0: {zero}), not {raw!r}")
    return int(value) if whole else value
