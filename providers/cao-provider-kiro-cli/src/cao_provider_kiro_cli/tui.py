"""Kiro's full-screen interface (Kiro CLI 2.x without ``--legacy-ui``)::

    ──────────────────────────────────────────────────
      Reply with one word: ZEBRA42                    <- a user message: two spaces, after a rule or a summary
    • ZEBRA42                                         <- the answer (older 2.x: indented, no bullet)
    ▸ Credits: turn 0.12 • session 0.12 | Time: 3s    <- turn summary
    ──────────────────────────────────────────────────
     Trust All Tools active, confirmations are off · /quit to exit
    ──────────────────────────────────────────────────
    cao-developer-0123abcd · auto · ◔ 4%        ~/project · (main)     <- status bar
    ›  ask a question or describe a task ↵                             <- composer

The frame (rules, the trust banner, status bar and composer) is redrawn at the bottom; the transcript
scrolls above it. While a turn runs the composer says ``Kiro is working`` (handled before this module
is asked, with the other busy rows).
"""

from __future__ import annotations

import re

from cao_agent_file_core.chat_screen import CREDITS, Reading, reading
from cao_hookspecs import TerminalStatus
from cao_screen_core.rows import last_index

from .patterns import RULE, TURN_ERROR

__all__ = ["STATUS_BAR", "find_status_bar", "read"]

STATUS_BAR = re.compile(r"^[^\s·]+ · .*[◔◑◕●○◐◓◒◴◵◶◷] ?\d{1,3}%")
PLACEHOLDER = re.compile(r"ask a question,? or describe a task", re.IGNORECASE)
BANNER = re.compile(r"Trust All Tools active|/quit to exit")
WHATS_NEW = re.compile(r"^\s*✨")
USER = re.compile(r"^  \S")
BULLET = re.compile(r"^• ")
# Permission questions of the full-screen interface: the three choices (as upstream CAO matches them)
# or the shell-command scope picker described in Kiro's "Managing tool permissions" page.
PERMISSION = re.compile(r"\bYes\b\s+\bNo\b\s+\bAlways [Aa]llow\b|to navigate.{0,20}to select scope", re.DOTALL)


def find_status_bar(rows: list[str]) -> int | None:
    """Index of the status bar row (the last one), or None when the full-screen interface is not drawn."""
    return last_index(rows, STATUS_BAR.match)


def _frame_top(rows: list[str], bar: int) -> int:
    top = bar
    while top > 0 and (not rows[top - 1].strip() or RULE.match(rows[top - 1]) or BANNER.search(rows[top - 1])):
        top -= 1
    return top


def _composer_text(rows: list[str], bar: int) -> str:
    for row in rows[bar + 1:]:
        if row.strip():
            text = row.strip().lstrip("›").strip()
            return "" if PLACEHOLDER.search(text) else text
    return ""


def _last_user_message(rows: list[str], end: int) -> int | None:
    for i in range(end - 1, -1, -1):
        if not USER.match(rows[i]):
            continue
        before = last_index(rows, str.strip, end=i)
        if before is None or RULE.match(rows[before]) or CREDITS.match(rows[before]) or WHATS_NEW.match(rows[before]):
            return i
    return None


def _answer_start(rows: list[str], user: int, end: int) -> tuple[int, str] | None:
    """Where the answer of the turn starting at ``user`` begins, and its marker ("•" or "" for the
    older unbulleted layout)."""
    i = end - 1
    while i > user and not rows[i].strip():
        i -= 1
    block = i
    while block > user and (not rows[block].strip() or rows[block].startswith("  ") or BULLET.match(rows[block])):
        block -= 1
    for j in range(block + 1, i + 1):
        if BULLET.match(rows[j]):
            return j, "•"
    # Older layout: the user's paragraph, a blank row, then the answer indented like it.
    j = user
    while j < end and rows[j].strip():
        j += 1
    while j < end and not rows[j].strip():
        j += 1
    return (j, "") if j < end else None


def read(rows: list[str], bar: int) -> Reading:
    """The status of a full-screen interface whose status bar is row ``bar`` (busy rows, dialogs and
    fatal errors already ruled out)."""
    top = _frame_top(rows, bar)
    user = _last_user_message(rows, top)
    after = "\n".join(rows[user + 1:] if user is not None else rows[:top])
    if PERMISSION.search(after):
        return reading(TerminalStatus.WAITING_USER_ANSWER, "a tool permission question is shown")
    pending = _composer_text(rows, bar)
    if pending:
        return reading(TerminalStatus.PROCESSING, f"input not submitted yet: {pending[:60]!r}")
    if user is None:
        return reading(TerminalStatus.IDLE, "composer waiting, no message sent yet")
    about = f" to {rows[user].strip()[:40]!r}"
    turn = range(user + 1, top)
    for i in reversed(turn):
        if TURN_ERROR.search(rows[i]):
            return reading(TerminalStatus.ERROR, f"turn{about} ended in an error: {rows[i].strip()}")
    credits = next((i for i in reversed(turn) if CREDITS.match(rows[i])), None)
    end = credits if credits is not None else top
    start = _answer_start(rows, user, end)
    if credits is not None:
        evidence = f"turn summary{about}: {rows[credits].strip()}"
        answer = (start[0], end) if start else None
        return reading(TerminalStatus.COMPLETED, evidence, rows, answer, marker=start[1] if start else "")
    if start is not None and start[1] == "•":
        return reading(TerminalStatus.COMPLETED, f"answer{about}, composer waiting", rows, (start[0], end), "•")
    if not any(rows[i].strip() for i in turn):
        return reading(TerminalStatus.PROCESSING, f"message{about} sent, nothing drawn after it yet")
    return reading(TerminalStatus.PROCESSING, f"turn{about} has no answer yet")
