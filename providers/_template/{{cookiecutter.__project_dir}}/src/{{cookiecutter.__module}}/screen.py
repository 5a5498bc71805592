"""Reading {{ cookiecutter.display_name }}'s screen: status with evidence, and the last answer.

TODO: this detector reads the screens of the stand-in program ``tests/programs/example_cli.py``.
Record the real CLI (``scripts/record_screens.py``), look at its screens, and rewrite the patterns
below for what it draws. The layout the stand-in draws, bottom rows last::

    > what the user sent              <- a sent message: the prompt with text after it
    · Working… (ctrl+c to interrupt)  <- busy row while the model works (erased when it answers)
    ⚙ run_command: ls                 <- a tool call, then the question before it runs,
    Allow run_command? [y] Yes · …    <- waiting for a key (prompts.py reads its options)
    ● The answer, continued on lines  <- the answer
      indented by two spaces.
    ✗ Error: 529 overloaded_error: …  <- the turn failed
                                      <- blank row
    >                                 <- the empty prompt: the CLI waits for input

Everything here works on the rendered text ``tmux capture-pane`` gives (no colours), never raises,
and names the rule that decided in the report's evidence (it shows in ``cao`` and in bug reports).
"""

from __future__ import annotations

import re

from cao_hookspecs import StatusReport, TerminalStatus
from cao_screen_core.blocks import indented_blocks
from cao_screen_core.reports import read_safely
from cao_screen_core.reports import report as _report
from cao_screen_core.rows import last_index

from .dialogs import STARTUP_DIALOGS

__all__ = ["QUESTION", "detect_status", "extract_last_message", "pending_input", "screen_rows"]

# TODO: the rows the real CLI draws. Keep every pattern anchored to what makes the row unmistakable.
_PROMPT = re.compile(r"^>(?: (?P<typed>.*))?$")
_USER = re.compile(r"^> (?P<text>\S.*)$")
_BUSY = re.compile(r"Working… \(ctrl\+c to interrupt\)\s*$")
_ANSWER = re.compile(r"^● (?P<text>.*)$")
#: A question waiting for a key, with its options: ``Allow run_command? [y] Yes · [n] No`` (prompts.py
#: reads the same row into a prompt).
QUESTION = re.compile(r"^(?P<question>[^\s\[].*?\?) (?P<options>\[\w\] [^\[\]]+(?: · \[\w\] [^\[\]]+)+)$")
_TURN_ERROR = re.compile(r"^✗ Error: (?P<text>.+)$")

# Start-up dialogs by their patterns in dialogs.py (the kernel answers them with its keys).
DIALOGS = tuple((dialog.name, re.compile(dialog.pattern)) for dialog in STARTUP_DIALOGS)
# Screens left by a CLI that refused to start or stopped: reported as errors with their name.
FATAL = (
    ("folder not trusted", re.compile(r"^Not trusted; exiting\.$", re.MULTILINE)),
    ("bad command-line option", re.compile(r"^example-cli: error: ", re.MULTILINE)),
)


def screen_rows(text: str) -> list[str]:
    """The screen's rows, right-stripped, without the blank rows under the last one."""
    rows = [row.rstrip() for row in text.splitlines()]
    while rows and not rows[-1]:
        rows.pop()
    return rows


def _last_user_message(rows: list[str]) -> int | None:
    return last_index(rows, _USER.match)


def pending_input(screen: str) -> str:
    """The text typed at the prompt and not sent yet, '' when none. Never raises: the kernel asks after
    typing a message, and presses Enter again when the message still sits there (``ProviderSpec.
    pending_input``; a CLI busy starting can take an Enter as a newline)."""
    try:
        rows = screen_rows(screen)
        found = _PROMPT.match(rows[-1]) if rows else None
        return ((found.group("typed") if found else "") or "").strip()
    except Exception:  # noqa: BLE001 (the contract: never raise)
        return ""


def detect_status(screen: str) -> StatusReport:
    """{{ cookiecutter.display_name }}'s status from its rendered screen. Never raises."""
    return read_safely(_detect, screen)


def _detect(text: str) -> StatusReport:
    rows = screen_rows(text)
    if not rows:
        return _report(TerminalStatus.UNKNOWN, "blank screen")
    # The busy row is erased when the answer comes, so wherever it shows, a turn is running.
    busy = next((row for row in rows if _BUSY.search(row)), None)
    if busy is not None:
        return _report(TerminalStatus.PROCESSING, f"busy row: {busy.strip()}")
    bottom = rows[-1]
    for name, pattern in DIALOGS:
        if pattern.match(bottom):
            return _report(TerminalStatus.WAITING_USER_ANSWER, f"start-up dialog: {name}")
    if QUESTION.match(bottom):
        return _report(TerminalStatus.WAITING_USER_ANSWER, f"question waiting for a key: {bottom.strip()}")
    prompt = _PROMPT.match(bottom)
    if prompt is None:
        tail = "\n".join(rows[-10:])
        for name, pattern in FATAL:
            if pattern.search(tail):
                return _report(TerminalStatus.ERROR, f"the CLI stopped: {name}")
        return _report(TerminalStatus.UNKNOWN, "no prompt at the bottom of the screen")
    typed = (prompt.group("typed") or "").strip()
    if typed:
        # Typed or pasted and not answered yet: whatever is above belongs to the previous turn.
        return _report(TerminalStatus.PROCESSING, f"input not answered yet: {typed[:60]}")
    user = _last_user_message(rows[:-1])
    turn = rows[user + 1:-1] if user is not None else rows[:-1]
    # Readings of two turns must differ even when their answers look alike.
    about = f" after {rows[user][2:].strip()[:40]!r}" if user is not None else ""
    for row in reversed(turn):
        error = _TURN_ERROR.match(row)
        if error:
            return _report(TerminalStatus.ERROR, f"turn{about} ended in an error: {error.group('text')}")
    if any(_ANSWER.match(row) for row in turn):
        return _report(TerminalStatus.COMPLETED, f"answer{about} above an empty prompt")
    if user is None:
        return _report(TerminalStatus.IDLE, "empty prompt, no message sent yet")
    return _report(TerminalStatus.IDLE, f"turn{about} ended without an answer")


def extract_last_message(text: str) -> str:
    """The text of the last answer to the user's last message.

    ``text`` is a screen, optionally with scrollback above it. Raises ``ValueError`` when the turn
    has not finished (no empty prompt at the bottom, or a busy row shows) or ended without an answer.
    """
    rows = screen_rows(text)
    if not rows or rows[-1] != ">":
        raise ValueError("the prompt is not back: the turn has not finished")
    if any(_BUSY.search(row) for row in rows):
        raise ValueError("a turn is still running")
    user = _last_user_message(rows[:-1])
    turn = rows[user + 1:-1] if user is not None else rows[:-1]
    blocks = indented_blocks(turn, _ANSWER)
    if not blocks:
        raise ValueError("no answer ('● ' block) after the last message")
    return "\n".join(blocks[-1].text).strip()
