"""Activity: what a plugin's own work does, told to everyone who watches the kernel.

Terminals, messages and delegations are the kernel's own; a plugin's work (a scheduled flow firing, a
workflow's run and its steps, an approval waited for) is not, yet a person watching the team wants to
see it beside them. ``KernelAPI.report_activity`` stamps such a record and passes it to every
``cao_after_activity`` observer; cao-server's event stream sends it on as an ``activity`` event.

``kind`` names what happened, dotted and lower case, led by its area (``flow.run``, ``workflow.step``);
``data`` is a JSON object of at most ``MAX_ACTIVITY_BYTES`` encoded. By convention it names the run
(``run_id``), its state and a one-line ``summary``; ``session_name`` ties it to a session (the event
stream's session filter uses it).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import attrs

#: What a kind looks like: dotted words of lower-case letters, digits and underscores.
ACTIVITY_KIND = re.compile(r"[a-z][a-z0-9_]{0,31}(\.[a-z][a-z0-9_]{0,31}){1,3}")
#: The largest ``data`` accepted, as compact JSON.
MAX_ACTIVITY_BYTES = 16 * 1024


def activity_data(data: Mapping[str, Any] | None) -> dict[str, Any]:
    """``data`` checked and copied as JSON would carry it.

    :raises ValueError: naming the problem, when it is not a JSON object, holds what JSON cannot, or is
        larger than ``MAX_ACTIVITY_BYTES``.
    """
    if data is None:
        return {}
    if not isinstance(data, Mapping):
        raise ValueError(f"activity data must be a JSON object, got {type(data).__name__}")
    try:
        text = json.dumps(dict(data), separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"activity data must be plain JSON: {exc}") from None
    if len(text.encode()) > MAX_ACTIVITY_BYTES:
        raise ValueError(f"activity data is {len(text.encode())} bytes as JSON; the limit is "
                         f"{MAX_ACTIVITY_BYTES}")
    copied: dict[str, Any] = json.loads(text)
    return copied


def activity_kind(kind: object) -> str:
    """``kind`` when it is a valid activity kind; ``ValueError`` naming it otherwise."""
    if not isinstance(kind, str) or not ACTIVITY_KIND.fullmatch(kind):
        raise ValueError(f"invalid activity kind {kind!r}: dotted lower-case words led by an area, "
                         f"like 'workflow.step'")
    return kind


@attrs.frozen(kw_only=True)
class Activity:
    """One thing a plugin's work did: ``kind`` (``ACTIVITY_KIND``), ``data`` (a JSON object) and when
    the kernel was told (``at``, Unix time)."""

    kind: str
    data: Mapping[str, Any] = attrs.field(factory=dict)
    at: float


__all__ = ["ACTIVITY_KIND", "MAX_ACTIVITY_BYTES", "Activity", "activity_data", "activity_kind"]
