"""Reading Qwen Code's screen: status with evidence, and the last answer.

Qwen Code draws a transcript indented by two spaces, then an input box between two full-width rules,
then a footer::

      > what the user sent                        <- the user's message
      .. Pre-heating the servers... (3s · esc to cancel)   <- busy row while the turn runs
      ✓ Shell touch notes.txt                     <- a tool call ("?" waiting for approval, "-" refused)
      ◆︎ The answer, continued on rows             <- the answer (a diamond and a variation selector)
        indented by two more spaces.
      ✕ [API Error: 400 ...] (Press Ctrl+Y to retry)   <- the turn failed
    ────────────────────────────────
    >   Type your message or @path/to/file        <- the input box ("*" as its glyph in YOLO mode)
    ────────────────────────────────
      ➜ work · scripted                           <- footer ("Enter to steer" while busy)

A prompt (a tool's approval, a question) replaces the input box with a menu (prompts.py reads it).
Everything here works on the rendered text ``capture-pane`` gives (no colours), never raises, and names
the rule that decided in the report's evidence.
"""

from __future__ import annotations

import re

from cao_hookspecs import StatusReport, TerminalStatus
from cao_screen_core.blocks import indented_blocks
from cao_screen_core.input_box import InputBoxScreen
from cao_screen_core.reports import read_safely
from cao_screen_core.reports import report as _report
from cao_screen_core.rows import last_index

from .prompts import read_prompt

__all__ = ["FATAL", "Screen", "detect_status", "extract_last_message", "parse_screen"]

_RULE = re.compile(r"^─{20,}$")
_PROMPT = re.compile(r"^[>*] ")
# The grey hint of an empty box (a plain capture cannot tell it from typed text).
_PLACEHOLDER = re.compile(r"^(?:|Type your message or @path/to/file)$")
# Transcript rows, once their two-space indent is taken off.
_USER = re.compile(r"^> (?P<text>\S.*)$")
# "(3s · esc to cancel)", "(1m 2s · ↓ 12 tokens · esc to cancel)".
_BUSY = re.compile(r"\(\d+[smh](?: \d+[smh])?(?: · [^()]*)? · esc to cancel\)$")
_ANSWER = re.compile("^\u25c6\ufe0e? (?P<text>.*)$")
_TURN_ERROR = re.compile(r"^✕ (?P<text>\[API Error: .*)$")
# A tool call refused at its approval (Escape): the turn stops there and the prompt waits.
_REFUSED_TOOL = re.compile(r"^- \S+ ")
_WAITING_FOOTER = "Enter to steer"
# Screens left by a Qwen Code that refused to start or stopped.
FATAL = (
    # yargs prints the reason first and the whole usage after it, so the reason may have scrolled off:
    # the usage's last row is what stays.
    ("bad command-line option", re.compile(r"^(?:Unknown argument|Invalid values|Not enough arguments)"
                                           r"|^\s+-h, --help\s+Show help\b", re.MULTILINE)),
    ("exited", re.compile(r"^\s*To continue this session, run qwen --resume", re.MULTILINE)),
)


class Screen(InputBoxScreen):
    """A screen split into transcript, input box and footer (any part may be missing)."""

    RULE = _RULE
    PROMPT = _PROMPT
    PLACEHOLDER = _PLACEHOLDER

    def __init__(self, text: str) -> None:
        super().__init__([line.rstrip() for line in text.splitlines()])
        # The transcript without its indent: answers then read as blocks indented by two spaces.
        self.rows = [line[2:] if line.startswith("  ") else line for line in self.transcript]


def parse_screen(text: str) -> Screen:
    """Split a rendered screen into its parts (for tests and tools)."""
    return Screen(text)


def detect_status(screen: str) -> StatusReport:
    """Qwen Code's status from its rendered screen. Never raises."""
    return read_safely(_detect, screen)


def _turn(rows: list[str]) -> tuple[list[str], str]:
    """The rows after the user's last message, and words naming it (two turns read differently)."""
    user = last_index(rows, _USER.match)
    if user is None:
        return rows, ""
    return rows[user + 1:], f" after {rows[user][2:].strip()[:40]!r}"


def _detect(text: str) -> StatusReport:
    screen = Screen(text)
    if not any(line.strip() for line in screen.lines):
        return _report(TerminalStatus.UNKNOWN, "blank screen")
    joined = "\n".join(screen.lines)
    for name, pattern in FATAL:
        if pattern.search(joined):
            return _report(TerminalStatus.ERROR, f"Qwen Code stopped: {name}")
    if not screen.has_box:
        prompt = read_prompt(text)
        if prompt is not None:
            return _report(TerminalStatus.WAITING_USER_ANSWER, f"{prompt.kind.value}: {prompt.question}")
        return _report(TerminalStatus.UNKNOWN, "no input box on screen")
    turn, about = _turn(screen.rows)
    busy = next((row for row in reversed(turn) if _BUSY.search(row)), None)
    if busy is not None:
        return _report(TerminalStatus.PROCESSING, f"busy row: {busy.strip()}")
    if any(_WAITING_FOOTER in row for row in screen.footer_rows):
        return _report(TerminalStatus.PROCESSING, f"footer says {_WAITING_FOOTER!r}")
    pending = screen.pending_input
    if pending:
        # Typed or pasted, Enter not handled yet: whatever the transcript says belongs to the last turn.
        return _report(TerminalStatus.PROCESSING, f"input not submitted yet: {pending.splitlines()[0][:60]}")
    for row in reversed(turn):
        error = _TURN_ERROR.match(row)
        if error:
            return _report(TerminalStatus.ERROR, f"turn{about} ended in an error: {error.group('text')}")
        if _ANSWER.match(row):
            return _report(TerminalStatus.COMPLETED, f"answer{about} above an empty prompt")
        if _REFUSED_TOOL.match(row):
            return _report(TerminalStatus.IDLE, f"tool call{about} refused, prompt is waiting")
    if not about:
        return _report(TerminalStatus.IDLE, "no message sent yet, prompt is waiting")
    # Sent, not answered yet: the busy row is drawn a moment after the message moves up.
    return _report(TerminalStatus.PROCESSING, f"message{about} sent, no answer drawn yet")


def extract_last_message(text: str) -> str:
    """The text of Qwen Code's last answer after the user's last message.

    ``text`` is a screen, optionally with scrollback above it. Rows the CLI wrapped stay separate
    lines. Raises ``ValueError`` when no answer follows the last message (still working, or the turn
    ended in an error or only in tool calls).
    """
    turn, _ = _turn(Screen(text).rows)
    blocks = indented_blocks(turn, _ANSWER)
    if not blocks:
        raise ValueError("no Qwen Code answer after the last message")
    return "\n".join(blocks[-1].text).strip()
