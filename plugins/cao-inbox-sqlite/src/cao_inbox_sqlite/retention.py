"""How long a finished message keeps its text.

Delivered, dead and uncertain messages keep their body ``CAO_INBOX_KEEP_DAYS`` days (default 7) after
their last change. When the kernel's store opens, older ones have their body emptied; nothing else
changes. The row stays because it still does work: its idempotency key stops a late retry from queuing
the message a second time, and its id, parties, state, times and error still answer ``list_messages``.
Only the text goes, which is most of the file and the part that may be sensitive. 0 keeps it for ever.
Pending and delivering messages are never touched, however old.

SQLite reuses the freed pages for new messages, so the file stops growing rather than shrinking.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Mapping
from typing import Any

from cao_hookspecs import MessageState
from cao_hookspecs.setting_values import non_negative

__all__ = ["DEFAULT_KEEP_DAYS", "FINISHED", "forget_old_bodies", "keep_days"]

DEFAULT_KEEP_DAYS = 7.0
FINISHED = (MessageState.DELIVERED.value, MessageState.DEAD.value, MessageState.UNCERTAIN.value)


def keep_days(settings: Mapping[str, Any]) -> float:
    """The ``CAO_INBOX_KEEP_DAYS`` setting; raises ``ValueError`` naming it when it is not a number >= 0."""
    return non_negative(settings, "CAO_INBOX_KEEP_DAYS", DEFAULT_KEEP_DAYS, what="a number of days",
                        zero="keep the text for ever")


def forget_old_bodies(conn: sqlite3.Connection, days: float, now: float | None = None) -> int:
    """Empty the body of finished messages last changed more than ``days`` ago (0: none); how many.

    The caller holds a write transaction.
    """
    if days <= 0:
        return 0
    cutoff = (time.time() if now is None else now) - days * 86400
    marks = ", ".join("?" for _ in FINISHED)
    cursor = conn.execute(
        f"UPDATE messages SET body = '' WHERE state IN ({marks}) AND updated_at < ? AND body != ''",
        (*FINISHED, cutoff),
    )
    return cursor.rowcount
