"""What Kiro CLI draws, as patterns shared by the two interfaces it has (see ``classic.py``, ``tui.py``).

Each pattern matches one rendered row (``capture-pane`` text, no colours).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from cao_hookspecs import TerminalStatus

__all__ = [
    "BUSY", "CREDITS", "DIALOG", "FATAL", "MCP_LOADING", "Reading", "RULE", "SPINNER", "TURN_ERROR", "reading",
]

# One frame of the braille Dots spinner then its message ("⠋ Thinking...", "⠏ 0 of 1 mcp servers
# initialized..."). The logo's braille art never has one braille cell followed by a space and a word.
SPINNER = re.compile(r"^\s*[\u2801-\u28ff] +\S.*[A-Za-z]")
# Rows the full-screen interface draws only while a turn runs: the composer's ghost text and the
# hint under a running tool.
BUSY = (
    ("composer says Kiro is working", re.compile(r"^\s*›?\s*Kiro is working\b")),
    ("a tool is running (esc to cancel)", re.compile(r"^\s*esc to cancel\s*$")),
    ("starting up", re.compile(r"^\s*›?\s*Initializing\b")),
)
MCP_LOADING = re.compile(r"\d+ of \d+ mcp servers? initialized", re.IGNORECASE)
TURN_ERROR = re.compile(r"Kiro is having trouble responding right now|Amazon Q is having trouble responding right now")
CREDITS = re.compile(r"^\s*▸ Credits:")
RULE = re.compile(r"^\s*─{20,}\s*$")
# Screens of a Kiro that stopped or cannot go on (nothing of the chat drawn after them).
FATAL = (
    ("not logged in", re.compile(r"You are not logged in, please log in with \S+ login")),
    ("the agent file was not loaded", re.compile(r"no agent with name \S+ found")),
    ("bad command-line option", re.compile(r"^error: (?:unexpected argument|invalid value|unrecognized subcommand)")),
)
# The consent Kiro 2 asks for before running with --trust-all-tools (answered by the kernel, see dialogs.py).
DIALOG = re.compile(r"running in trust all tools mode", re.IGNORECASE)


@dataclass(frozen=True)
class Reading:
    """What one screen says: the status, the rule that decided it, and for a finished turn the rows
    of its answer (``answer`` is a ``(first, end)`` slice of ``rows``; ``marker`` the prefix the first
    answer row starts with)."""

    status: TerminalStatus
    evidence: str
    rows: tuple[str, ...] = ()
    answer: tuple[int, int] | None = None
    marker: str = ""


def reading(status: TerminalStatus, evidence: str, rows: list[str] | None = None,
            answer: tuple[int, int] | None = None, marker: str = "") -> Reading:
    """A :class:`Reading` with its evidence cut to a loggable length."""
    return Reading(status=status, evidence=evidence[:200], rows=tuple(rows or ()), answer=answer, marker=marker)
