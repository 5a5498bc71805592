"""Reading MiniMax Code's screen: status with evidence, and the last answer.

The full-screen interface, bottom rows last (transcribed from upstream CAO's fixtures of 0.1.2)::

    › Explain the result.                       <- a sent message (column 0)
    └ • Thought for 5.9s
    Called cao_mcp_server_….send_message        <- a tool call and its result
    ├ Tool returned successfully
    ● The integration is complete.              <- the answer, continued indented by two spaces
      All focused checks pass.
    └ Completed in 4s · ⚡ 12.1 tok/s            <- the turn ended
    ╭─ v0.1.2 ──────────── ● Ready ─╮           <- the composer (its title only before a first turn)
    │ ›                             │
    ╰───────────────────────────────╯
    Message · Enter send · Shift+Enter newline
    /workspace │ Full access │ ✦ MiniMax-M3 · Thinking On

While the model works an activity row shows (``⠹ Loading 35s · Enter queue · … · Esc stop``); a tool
waiting for approval shows ``Approval needed`` and a numbered menu (``prompts.py``).
"""

from __future__ import annotations

import re

from cao_hookspecs import StatusReport, TerminalStatus
from cao_screen_core.blocks import indented_blocks
from cao_screen_core.reports import read_safely
from cao_screen_core.reports import report as _report
from cao_screen_core.rows import last_index, screen_rows

__all__ = ["APPROVAL", "BUSY", "detect_status", "extract_last_message", "screen_rows"]

_USER = re.compile(r"^› (?P<text>\S.*)$")
#: The activity row of a running turn: a spinner or diamond, Loading or Running, the queue hint.
BUSY = re.compile(r"^\s*[\u2801-\u28ff◇◆]\s+(?:Loading|Running)\b.*(?:Enter queue|Esc stop)")
_COMPOSER = re.compile(r"^│ ›(?P<typed>.*?)│?$")
_DONE = re.compile(r"^└ Completed in \d")
_ANSWER = re.compile(r"^● (?P<text>\S.*)$")
#: The first row of a tool's approval question (prompts.py reads the rest).
APPROVAL = re.compile(r"^Approval needed$")
_FAILED = re.compile(r"^(?:Sign in required|Authentication failed|Not authenticated)|^(?:Fatal|Error): ")


def detect_status(screen: str) -> StatusReport:
    """MiniMax Code's status from its rendered screen. Never raises."""
    return read_safely(_detect, screen)


def _detect(text: str) -> StatusReport:
    rows = screen_rows(text)
    if not rows:
        return _report(TerminalStatus.UNKNOWN, "blank screen")
    user = last_index(rows, _USER.match)
    turn = rows[user + 1:] if user is not None else rows
    about = f" after {rows[user][2:].strip()[:40]!r}" if user is not None else ""
    # The activity row goes when the turn ends, so one in the last turn means it runs.
    busy = next((row for row in turn if BUSY.match(row)), None)
    if busy is not None:
        return _report(TerminalStatus.PROCESSING, f"activity row: {busy.strip()[:80]}")
    approval = last_index(turn, APPROVAL.match)
    if approval is not None and last_index(turn, _DONE.match, approval) is None:
        # Answered, the question gives way to the tool's run; still drawn, it waits for a choice.
        asked = " ".join(row.strip() for row in turn[approval + 1:approval + 3])
        return _report(TerminalStatus.WAITING_USER_ANSWER, f"tool approval{about}: {asked[:80]}")
    failed = next((row for row in reversed(turn) if _FAILED.search(row)), None)
    composer = last_index(rows, _COMPOSER.match)
    if composer is None:
        if failed is not None:
            return _report(TerminalStatus.ERROR, f"the CLI stopped: {failed.strip()[:80]}")
        return _report(TerminalStatus.UNKNOWN, "no composer on screen")
    typed = _COMPOSER.match(rows[composer]).group("typed").strip()  # type: ignore[union-attr]
    if typed:
        # Typed or pasted and not sent: what is above belongs to the previous turn.
        return _report(TerminalStatus.PROCESSING, f"input not sent yet: {typed[:60]}")
    if user is None:
        return _report(TerminalStatus.IDLE, "empty composer, no message sent yet")
    if failed is not None:
        return _report(TerminalStatus.ERROR, f"turn{about} failed: {failed.strip()[:80]}")
    if any(_DONE.match(row) for row in turn):
        return _report(TerminalStatus.COMPLETED, f"turn{about} completed")
    # The message shows above the composer before the activity row is drawn.
    return _report(TerminalStatus.PROCESSING, f"message{about} sent, no answer yet")


def extract_last_message(text: str) -> str:
    """The last answer (``● `` block) of the last message's turn, once it completed.

    Raises ``ValueError`` when the turn has not completed or shows no answer.
    """
    rows = screen_rows(text)
    user = last_index(rows, _USER.match)
    if user is None:
        raise ValueError("no message on screen")
    turn = rows[user + 1:]
    done = last_index(turn, _DONE.match)
    if done is None or any(BUSY.match(row) for row in turn):
        raise ValueError("the last turn has not completed")
    blocks = indented_blocks(turn[:done], _ANSWER)
    if not blocks:
        raise ValueError("no answer ('● ' block) in the last turn")
    return "\n".join(blocks[-1].text).strip()
