"""Cron schedules (five fields, as upstream) in a time zone: the local one unless a flow names another."""

from __future__ import annotations

import datetime as dt
from typing import Any

#: Fields of a schedule: minute, hour, day of month, month, day of week.
FIELDS = 5


def check_cron(expr: str) -> str:
    """``expr`` when it is a five-field cron expression; ``ValueError`` naming it otherwise."""
    from croniter import croniter

    if not isinstance(expr, str) or len(expr.split()) != FIELDS or not croniter.is_valid(expr):
        raise ValueError(f"invalid schedule {expr!r}: a cron expression of five fields "
                         f"(minute hour day-of-month month day-of-week), like '0 9 * * 1-5'")
    return expr


def check_timezone(name: str) -> str:
    zone(name)
    return name


def zone(name: str | None) -> Any:
    """The time zone called ``name`` (IANA), or the machine's local one (daylight saving included)."""
    if name is None:
        from dateutil.tz import tzlocal

        return tzlocal()
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"unknown time zone {name!r}: an IANA name like 'Europe/Paris'") from None


def next_after(expr: str, after: float, tz: str | None = None) -> float:
    """The first occurrence of ``expr`` strictly after ``after`` (Unix time)."""
    from croniter import croniter

    start = dt.datetime.fromtimestamp(after, zone(tz))
    return float(croniter(expr, start).get_next(float))


def latest_by(expr: str, at: float, tz: str | None = None) -> float:
    """The last occurrence of ``expr`` at or before ``at``."""
    from croniter import croniter

    start = dt.datetime.fromtimestamp(at + 1e-3, zone(tz))
    return float(croniter(expr, start).get_prev(float))


__all__ = ["check_cron", "check_timezone", "latest_by", "next_after", "zone"]
