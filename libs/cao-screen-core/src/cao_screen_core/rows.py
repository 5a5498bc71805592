"""Finding rows of a rendered screen, bottom first (where an agent CLI draws what is current)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

__all__ = ["bottom_rows", "last_index", "screen_rows"]


def screen_rows(text: str) -> list[str]:
    """The screen's rows, right-stripped, without the blank rows under the last one."""
    rows = [row.rstrip() for row in text.splitlines()]
    while rows and not rows[-1]:
        rows.pop()
    return rows


def last_index(rows: Sequence[str], test: Callable[[str], object], start: int = 0,
               end: int | None = None) -> int | None:
    """The index of the last row of ``rows[start:end]`` that ``test`` finds true, or None.

    ``test`` is any predicate on a row: ``pattern.match``, ``str.strip`` (a row that is not blank).
    """
    stop = len(rows) if end is None else min(end, len(rows))
    for index in range(stop - 1, start - 1, -1):
        if test(rows[index]):
            return index
    return None


def bottom_rows(rows: Sequence[str], count: int) -> list[str]:
    """The bottom ``count`` rows that are not blank (where menus and dialogs are drawn)."""
    return [row for row in rows if row.strip()][-count:]
