"""Reading Kiro CLI's screen: status with evidence, and the last answer.

Kiro CLI has two interfaces: the line-based chat it inherited from Amazon Q (1.x, and 2.x with
``--legacy-ui``; ``classic.py``) and the full-screen one of 2.x (``tui.py``). Rules that hold for both
are applied first, in this order:

1. the trust-all-tools consent dialog -> ``waiting_user_answer`` (the kernel answers it, ``dialogs.py``);
2. a fatal message (not logged in, agent file not loaded, bad option) with no chat drawn after it
   -> ``error``;
3. a busy row anywhere (spinner, ``Kiro is working``, ``esc to cancel``, ``Initializing``)
   -> ``processing``: Kiro erases these when the turn moves on, so one still drawn is running now;

then the status bar of the full-screen interface decides which reader takes the screen. Everything
works on the rendered text ``capture-pane`` gives (no colours), and :func:`detect_status` never raises.
"""

from __future__ import annotations

from cao_agent_file_core.chat_screen import SPINNER, Reading, last_answer, reading
from cao_hookspecs import StatusReport, TerminalStatus
from cao_screen_core.reports import read_safely

from . import classic, tui
from .patterns import BUSY, DIALOG

__all__ = ["detect_status", "extract_last_message", "read_screen"]


def _fatal(rows: list[str], filled: list[int]) -> Reading | None:
    drawn = classic.find_prompts(rows)
    bar = tui.find_status_bar(rows)
    if bar is not None:
        drawn.append(bar)
    return classic.CHAT.stopped(rows, filled, drawn)


def read_screen(text: str) -> Reading:
    """Decide a screen's status (may raise on inputs it cannot read; use :func:`detect_status` where
    that matters)."""
    rows = [row.rstrip() for row in text.split("\n")]
    filled = [i for i, row in enumerate(rows) if row.strip()]
    if not filled:
        return reading(TerminalStatus.UNKNOWN, "blank screen")
    if any(DIALOG.search(rows[i]) for i in filled) and any("Yes, I accept" in rows[i] for i in filled):
        return reading(TerminalStatus.WAITING_USER_ANSWER, "start-up dialog: trust all tools consent")
    fatal = _fatal(rows, filled)
    if fatal is not None:
        return fatal
    for i in reversed(filled):
        if SPINNER.match(rows[i]):
            return reading(TerminalStatus.PROCESSING, f"spinner: {rows[i].strip()}")
        for name, pattern in BUSY:
            if pattern.match(rows[i]):
                return reading(TerminalStatus.PROCESSING, name)
    bar = tui.find_status_bar(rows)
    if bar is not None and bar > max(classic.find_prompts(rows), default=-1):
        return tui.read(rows, bar)
    return classic.read(rows)


def detect_status(screen: str) -> StatusReport:
    """Kiro CLI's status from its rendered screen. Never raises."""
    return read_safely(lambda text: read_screen(text).report, screen)


def extract_last_message(text: str) -> str:
    """The text of Kiro's answer to the last message, from a screen optionally with scrollback above it.

    Line-based chat: the last ``> `` block of the finished turn, its marker removed. Full-screen: the
    last ``• `` block (or, in older 2.x, the indented paragraphs after the message), with the two-space
    indent of its continuation rows removed. The turn summary (``▸ Credits``) is not part of it; rows
    the CLI wrapped stay separate lines. Raises ``ValueError`` when the last turn has not finished with
    an answer.
    """
    return last_answer(read_screen, text, "Kiro")
