"""Reading pi's screen: status with evidence, and the last answer (the fallback of signals.py).

pi draws its transcript, then its input box between two full-width rules, then a footer::

    fd not found. Offline mode enabled, skipping download.   <- start-up notices (before the TUI)
     Warning: tmux extended-keys is off. ...

     what the user sent                       <- the user's message (on a grey background)

     The answer, its paragraphs apart         <- the answer (Markdown, indented by one column)
     by one blank row.

     $ ls                                     <- a tool call, with its output
     ⠼ Working...                             <- busy row while the turn runs ("Retrying (1/3) in 2s...")
     Error: 400 model scripted is not served here   <- the turn failed
    ──────────────────────────────
    text typed, not sent yet                  <- the input box (no prompt glyph)
    ──────────────────────────────
    ~/project                                 <- footer: the folder, the context use and the model
    ↑4.6k ↓55 1.3%/128k (auto)        scripted

Without colours nothing marks the user's message: pi sets it apart by its background only. Blocks of
the transcript are kept apart by two blank rows or more (one blank row parts paragraphs of one block),
so the status comes from the last block, and the answer is the last block when it is neither a tool
call nor an error. That cannot tell an answer from a message just typed; the bridge's ``agent_start``
and ``agent_end`` signals (signals.py) tell the kernel first, and carry the answer itself.
"""

from __future__ import annotations

import re

from cao_hookspecs import StatusReport, TerminalStatus
from cao_screen_core.reports import read_safely
from cao_screen_core.reports import report as _report
from cao_screen_core.rows import last_index

__all__ = ["FATAL", "Screen", "detect_status", "extract_last_message", "parse_screen", "pending_input"]

_RULE = re.compile(r"^─{20,}$")
_BUSY = re.compile(r"^ \S Working\.\.\.|^ \S Retrying \(\d+/\d+\)")
_ERROR = re.compile(r"^ Error: (?P<text>.+)$")
# A tool call's first row: a bash command, or a tool's name and its arguments.
_TOOL = re.compile(r"^ (?:\$ |(?:read|edit|write|grep|find|ls|mcp__\S+) )")
# Printed before the TUI starts, or drawn above the first message: never an answer.
_NOTICE = re.compile(r"^(?:\S+ not found\. Offline mode enabled|\s?Warning: )")
# Screens left by a pi that refused to start (its message at the left edge, no input box).
FATAL = (("the CLI stopped", re.compile(r"^Error: (?P<text>.+)$", re.MULTILINE)),)


class Screen:
    """A screen split into transcript blocks, input box and footer (the box may be missing)."""

    def __init__(self, text: str) -> None:
        self.lines = [line.rstrip() for line in text.splitlines()]
        bottom = last_index(self.lines, _RULE.match)
        top = last_index(self.lines, _RULE.match, end=bottom) if bottom is not None else None
        self.has_box = top is not None and bottom is not None and len(self.lines) - bottom <= 4
        self.box = self.lines[top + 1:bottom] if self.has_box else []
        transcript = self.lines[:top] if self.has_box else self.lines
        self.busy = next((row.strip() for row in transcript if _BUSY.match(row)), None)
        self.blocks = [block for block in _blocks(transcript) if not _NOTICE.match(block[0])]

    @property
    def pending_input(self) -> str:
        """Text typed into the box and not submitted yet ('' when empty)."""
        return "\n".join(row.strip() for row in self.box).strip()


def _blocks(rows: list[str]) -> list[list[str]]:
    """The transcript's blocks: rows parted by two blank rows or more, their inner blank rows kept."""
    blocks: list[list[str]] = []
    current: list[str] = []
    blanks = 0
    for row in rows:
        if not row.strip():
            blanks += 1
            continue
        if current and blanks >= 2:
            blocks.append(current)
            current = []
        elif current:
            current += [""] * blanks
        current.append(row)
        blanks = 0
    if current:
        blocks.append(current)
    return blocks


def parse_screen(text: str) -> Screen:
    """Split a rendered screen into its parts (for tests and tools)."""
    return Screen(text)


def pending_input(screen: str) -> str:
    """The text typed at the prompt and not sent yet, '' when none. Never raises."""
    try:
        return Screen(screen).pending_input
    except Exception:  # noqa: BLE001 (the contract: never raise)
        return ""


def detect_status(screen: str) -> StatusReport:
    """pi's status from its rendered screen. Never raises."""
    return read_safely(_detect, screen)


def _detect(text: str) -> StatusReport:
    screen = Screen(text)
    if not any(line.strip() for line in screen.lines):
        return _report(TerminalStatus.UNKNOWN, "blank screen")
    if not screen.has_box:
        for name, pattern in FATAL:
            found = pattern.search("\n".join(screen.lines[-15:]))
            if found:
                return _report(TerminalStatus.ERROR, f"{name}: {found.group('text')}")
        return _report(TerminalStatus.UNKNOWN, "no input box at the bottom of the screen")
    if screen.busy is not None:
        return _report(TerminalStatus.PROCESSING, f"busy row: {screen.busy}")
    typed = screen.pending_input
    if typed:
        return _report(TerminalStatus.PROCESSING, f"input not answered yet: {typed[:60]}")
    if not screen.blocks:
        return _report(TerminalStatus.IDLE, "empty input box, no message on screen")
    last = screen.blocks[-1]
    error = _ERROR.match(last[0])
    if error:
        return _report(TerminalStatus.ERROR, f"turn ended in an error: {error.group('text')}")
    if _TOOL.match(last[0]):
        return _report(TerminalStatus.IDLE, f"turn stopped after a tool call: {last[0].strip()[:60]}")
    # Readings of two turns must differ: name the answer's first and last rows.
    return _report(TerminalStatus.COMPLETED,
                   f"answer {last[0].strip()[:40]!r}..{last[-1].strip()[-40:]!r} above the input box")


def extract_last_message(text: str) -> str:
    """The text of the last answer on screen.

    ``text`` is a screen, optionally with scrollback above it. Raises ``ValueError`` when no input
    box is drawn, a turn is running, or the last block is not an answer (a tool call, an error, none).
    """
    screen = Screen(text)
    if not screen.has_box:
        raise ValueError("pi's input box is not drawn: the turn has not finished")
    if screen.busy is not None:
        raise ValueError(f"a turn is still running ({screen.busy})")
    if not screen.blocks:
        raise ValueError("no message on screen")
    last = screen.blocks[-1]
    if _ERROR.match(last[0]) or _TOOL.match(last[0]):
        raise ValueError(f"the last block is not an answer: {last[0].strip()[:60]}")
    return "\n".join(row[1:] if row.startswith(" ") else row for row in last).strip()
