"""Fitting text into a chat service's length limits.

Lengths are counted in UTF-16 code units, which is never less than the number of characters, so a
text that fits here fits a service however it counts (Discord and Slack count differently). A cut
never splits a character, and ends with an ellipsis so the reader sees something is missing.
"""

from __future__ import annotations

ELLIPSIS = "…"


def units(text: str) -> int:
    """Length in UTF-16 code units."""
    return len(text.encode("utf-16-le")) // 2


def fit(text: str, limit: int, *, empty: str = "") -> str:
    """``text`` cut to ``limit`` units, ending with an ellipsis when something was cut; ``empty`` when
    there is nothing but whitespace (chat services refuse blank texts)."""
    if not text.strip():
        return empty
    if units(text) <= limit:
        return text
    if limit <= 0:
        return ""
    budget = limit - units(ELLIPSIS)
    kept: list[str] = []
    used = 0
    for ch in text:
        size = 2 if ord(ch) > 0xFFFF else 1
        if used + size > budget:
            break
        kept.append(ch)
        used += size
    return "".join(kept).rstrip() + ELLIPSIS
