"""Reading Antigravity CLI's screen: status with evidence, and the last answer.

The layout, bottom rows last (transcribed from upstream CAO's fixtures of agy 1.0.10)::

    ──────────────────────────                   <- a short rule opens each turn
    > Reply with exactly one word: PONG          <- the message (continued indented, up to a blank row)
                                                 
    ▸ Thought for 2s, 608 tokens                 <- collapsed thinking, and its title row
      Prioritizing Tool Usage
    ● Read(…) (ctrl+o to expand)                 <- a tool call
      PONG                                       <- the answer, indented by two spaces
    ─────────────────────────────────────────    <- the input box: two full-width rules
    >                                            <- the prompt (typed text follows the '>')
    ─────────────────────────────────────────
    ? for shortcuts          Gemini 3.5 Flash    <- footer: 'esc to cancel' while a turn runs

A spinner row (``⣻  Generating...``) shows in the turn while the model works.
"""

from __future__ import annotations

import re

from cao_hookspecs import StatusReport, TerminalStatus
from cao_screen_core.reports import read_safely
from cao_screen_core.reports import report as _report
from cao_screen_core.rows import last_index, screen_rows

from .dialogs import DIALOGS

__all__ = ["PERMISSION", "detect_status", "extract_last_message", "screen_rows"]

_RULE = re.compile(r"^\s*─{20,}\s*$")
_PROMPT = re.compile(r"^>(?: (?P<typed>.*))?$")
_QUERY = re.compile(r"^> (?P<text>\S.*)$")
_READY = re.compile(r"^\s*\? for shortcuts\b")
_CANCEL = re.compile(r"^\s*esc to cancel\b")
_SPINNER = re.compile(r"^\s*[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏⣾⣽⣻⢿⡿⣟⣯⣷]\s+\S.*(?:\.\.\.|…)")
#: A tool waiting for approval (prompts.py reads its options).
PERMISSION = re.compile(r"^\s*(?P<question>Do you want to (?:allow|run|proceed)\b[^?]*\?)\s*\[y/n\]\s*$")
_ERROR = re.compile(r"^\s*(?:Error:|ERROR:|panic:|Traceback \(most recent call last\):)")
_THOUGHT = re.compile(r"^\s*▸ ")
_TOOL = re.compile(r"^\s*● ")
_TIP = re.compile(r"^\s*(?:└\s*)?Tip:")


def input_box(rows: list[str]) -> tuple[int, int] | None:
    """``(top rule, bottom rule)`` of the input box above the footer row, or None when not drawn."""
    if len(rows) < 4 or not _RULE.match(rows[-2]):
        return None
    top = last_index(rows, _RULE.match, end=len(rows) - 2)
    if top is None or not _PROMPT.match(rows[top + 1]):
        return None
    return top, len(rows) - 2


def _turn(rows: list[str], end: int) -> tuple[int | None, list[str]]:
    """The last message's row and the rows of its turn after the message, up to ``end``."""
    query = last_index(rows, _QUERY.match, end=end)
    if query is None:
        return None, []
    start = query + 1
    while start < end and rows[start].strip():  # the message's own continuation rows
        start += 1
    return query, rows[start:end]


def detect_status(screen: str) -> StatusReport:
    """Antigravity CLI's status from its rendered screen. Never raises."""
    return read_safely(_detect, screen)


def _detect(text: str) -> StatusReport:
    rows = screen_rows(text)
    if not rows:
        return _report(TerminalStatus.UNKNOWN, "blank screen")
    for name, pattern in DIALOGS:
        if any(pattern.match(row) for row in rows[-12:]):
            return _report(TerminalStatus.WAITING_USER_ANSWER, f"start-up dialog: {name}")
    if PERMISSION.match(rows[-1]):
        return _report(TerminalStatus.WAITING_USER_ANSWER, f"tool approval: {rows[-1].strip()}")
    box = input_box(rows)
    end = box[0] if box else len(rows)
    query, turn = _turn(rows, end)
    about = f" after {rows[query][2:].strip()[:40]!r}" if query is not None else ""
    if box is None:
        error = next((row for row in reversed(rows[-10:]) if _ERROR.match(row)), None)
        if error is not None:
            return _report(TerminalStatus.ERROR, f"the CLI stopped: {error.strip()[:80]}")
        return _report(TerminalStatus.UNKNOWN, "no input box and footer at the bottom of the screen")
    if _CANCEL.match(rows[-1]):
        return _report(TerminalStatus.PROCESSING, f"footer 'esc to cancel'{about}")
    spinner = next((row for row in turn if _SPINNER.match(row)), None)
    if spinner is not None:
        return _report(TerminalStatus.PROCESSING, f"spinner{about}: {spinner.strip()[:60]}")
    typed = (_PROMPT.match(rows[box[0] + 1]).group("typed") or "").strip()  # type: ignore[union-attr]
    if typed:
        return _report(TerminalStatus.PROCESSING, f"input not sent yet: {typed[:60]}")
    if not _READY.match(rows[-1]):
        return _report(TerminalStatus.UNKNOWN, f"input box without a known footer: {rows[-1].strip()[:60]}")
    if query is None:
        return _report(TerminalStatus.IDLE, "empty prompt, no message sent yet")
    error = next((row for row in reversed(turn) if _ERROR.match(row)), None)
    if error is not None:
        return _report(TerminalStatus.ERROR, f"turn{about} ended in an error: {error.strip()[:80]}")
    if _answer_rows(turn):
        return _report(TerminalStatus.COMPLETED, f"answer{about} above the empty prompt")
    return _report(TerminalStatus.IDLE, f"turn{about} ended without an answer")


def _answer_rows(turn: list[str]) -> list[str]:
    """The turn's rows without thinking (the ``▸`` row and the title row under it), tool calls,
    spinners and tips; dedented, blank runs made one, blank ends dropped."""
    kept: list[str] = []
    skip_title = False
    for row in turn:
        if skip_title and row.strip():
            skip_title = False
            continue
        if _THOUGHT.match(row):
            skip_title = True
            continue
        if _TOOL.match(row) or _SPINNER.match(row) or _TIP.match(row) or _RULE.match(row):
            continue
        line = row[2:] if row.startswith("  ") else row
        if line.strip() or (kept and kept[-1].strip()):
            kept.append(line)
    while kept and not kept[-1].strip():
        kept.pop()
    return kept


def extract_last_message(text: str) -> str:
    """The answer to the last message, once the turn ended (the footer says ``? for shortcuts``).

    Raises ``ValueError`` while a turn runs, before any message, or when the turn shows no answer.
    """
    rows = screen_rows(text)
    box = input_box(rows)
    if box is None or not _READY.match(rows[-1]):
        raise ValueError("the input box and its ready footer are not at the bottom: no finished turn")
    query, turn = _turn(rows, box[0])
    if query is None:
        raise ValueError("no message ('> ' row) on screen")
    if any(_SPINNER.match(row) for row in turn):
        raise ValueError("a turn is still running")
    if (_PROMPT.match(rows[box[0] + 1]).group("typed") or "").strip():  # type: ignore[union-attr]
        raise ValueError("text typed at the prompt: a new turn is starting")
    answer = _answer_rows(turn)
    if not answer:
        raise ValueError("no answer after the last message")
    return "\n".join(answer).strip()
