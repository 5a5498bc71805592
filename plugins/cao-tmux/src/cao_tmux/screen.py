"""Pure text helpers: tidying captured screens and preparing pasted text."""

from __future__ import annotations

import re

_PASTE_MARKER = re.compile("\x1b\\[20[01]~")


def tidy_capture(text: str) -> str:
    """Strip trailing whitespace from every row and drop trailing empty rows."""
    rows = [row.rstrip() for row in text.split("\n")]
    while rows and not rows[-1]:
        rows.pop()
    return "\n".join(rows)


def dead_screen(text: str, height: int | None) -> str:
    """The last screen of a dead pane from a capture that began one row early (``-S -1``).

    tmux writes a "Pane is dead (...)" row at the bottom when it collects the exit status, scrolling
    the screen up one row first: that row is dropped and the scrolled-out row (the capture's first)
    kept. Without the banner (tmux never collected the status) the extra first row is history we did
    not ask for, dropped when the capture is taller than the pane's ``height``. With ``height`` None
    (scrollback was requested) only the banner is removed.
    """
    rows = text.split("\n")
    if rows and rows[-1] == "":
        rows.pop()  # capture-pane ends every row with a newline
    for index in range(len(rows) - 1, -1, -1):
        if rows[index].strip():
            if rows[index].startswith("Pane is dead"):
                del rows[index]
                return "\n".join(rows)
            break
    if height is not None and len(rows) > height:
        del rows[0]
    return "\n".join(rows)


def paste_payload(text: str) -> bytes:
    """The bytes to load into a paste buffer for ``text``.

    Bracketed-paste markers inside the text are removed: tmux adds the real ones itself (``-p``), and
    an embedded end marker would end the paste early and turn the rest into typed keys. Removal
    repeats because deleting one marker can join the pieces of another.
    """
    while True:
        cleaned = _PASTE_MARKER.sub("", text)
        if cleaned == text:
            return cleaned.encode("utf-8", "surrogatepass")
        text = cleaned
