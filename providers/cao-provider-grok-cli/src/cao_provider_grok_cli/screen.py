"""Reading Grok Build's screen (``--no-alt-screen``): status with evidence, and the last answer.

What Grok draws, bottom rows last (the clock at the right of a message is the time it was shown)::

      ~/project                                                 12K / 256K │ [Dashboard]
         ❯ Run the build and report.                                       1:26 PM  <- the user's message
        ⠸ Waiting for response… 1.5s                     1.5s ⇣2.20k [stop]  <- busy (gone when done)
         ◆ Run ls                                                          <- a tool call
         All done: the build passes.                                       1:26 PM  <- the answer
         Worked for 3.1s                                                   <- the turn is over
      ┃  Bad request (400): invalid_request_error: …                       <- or: the turn failed
      ╭──────────────────────────────────────────────────────────────────────────╮
      │ ❯                                                                        │  <- the input box
      ╰─────────────────────────────────────────────────────────────── grok-4.5 ─╯
      Shift+Tab:mode  │  Ctrl+c:cancel  │  Ctrl+x:shortcuts                       <- Ctrl+c:cancel: busy

Before the input box, where the working folder brings Grok configuration of its own (a ``.grok/`` folder,
an ``.mcp.json``), Grok asks whether to trust it (``prompts.py`` reads the question)::

                          Do you trust the contents of this directory?
                                    /home/me/project
                    Grok Build may run or modify contents in this directory,
                                     posing security risks.
                                 Yes, proceed                 y
                                 No, quit                     n

A scroll bar (``█``) may fill the right-most column. Everything here reads the rendered text
``tmux capture-pane`` gives (no colours), never raises, and names the rule that decided.
"""

from __future__ import annotations

import re

from cao_hookspecs import StatusReport, TerminalStatus
from cao_screen_core.reports import read_safely
from cao_screen_core.reports import report as _report
from cao_screen_core.rows import last_index

__all__ = ["TRUST_QUESTION", "VERSION_ROW", "detect_status", "extract_last_message", "pending_input",
           "screen_rows", "trust_question"]

_SCROLLBAR = re.compile(r"\s*█$")
_CLOCK = re.compile(r"\s{2,}\d{1,2}:\d{2}\s?[AP]M$")
_BOX_TOP = re.compile(r"^\s*╭─+╮$")
_COMPOSER = re.compile(r"^\s*│ ❯(?: (?P<typed>.*?))?\s*│$")
_USER = re.compile(r"^\s{3,}❯ (?P<text>\S.*)$")
# The spinner row and the footer of a running turn; either alone means busy.
_BUSY = re.compile(r"Waiting for response…|\[stop\]$|Ctrl\+c:cancel")
_DONE = re.compile(r"^\s+Worked for \d+(?:\.\d+)?[smh]")
# A turn that failed ends in a bar-marked row, with no ``Worked for`` under it: the API's words after
# its HTTP status (``Bad request (400): …``), or Grok's own for errors it knows (a context too long).
_TURN_ERROR = re.compile(r"^\s*┃\s+(?P<text>\S.*)$")
# Rows inside a turn that are not the answer: tool calls (``◆ Run ls``), thinking, bar-marked notes.
_NOT_ANSWER = re.compile(r"^\s*(?:┃|◆ )")
#: The folder-trust question, and its two options with the key each prints.
TRUST_QUESTION = "Do you trust the contents of this directory?"
_TRUST_OPTION = re.compile(r"^\s*(?P<label>Yes, proceed|No, quit)\s+(?P<key>[yn])$")
VERSION_ROW = re.compile(r"^Grok Build\s+\d+\.\d+")
# What a CLI that stopped leaves: its own fatal messages.
_FATAL = (
    ("bad command-line option", re.compile(r"^error: (?:unexpected|invalid|unrecognized)", re.MULTILINE)),
    ("the CLI crashed", re.compile(r"^(?:Error|panicked at)", re.MULTILINE)),
)


def screen_rows(text: str) -> list[str]:
    """The screen's rows without the scroll bar, clocks and trailing blanks."""
    rows = [_CLOCK.sub("", _SCROLLBAR.sub("", row.rstrip())).rstrip() for row in text.splitlines()]
    while rows and not rows[-1]:
        rows.pop()
    return rows


def trust_question(rows: list[str]) -> tuple[int, list[tuple[str, str]]] | None:
    """The folder-trust question as the last thing on screen (the input box replaces it once answered):
    its row and its options ``(label, key)``; None when no such question shows."""
    at = last_index(rows, lambda row: row.strip() == TRUST_QUESTION)
    if at is None:
        return None
    options = [found.group("label", "key") for row in rows[at + 1:] if (found := _TRUST_OPTION.match(row))]
    tail = [row.strip() for row in rows[at + 1:] if row.strip()]
    if tail and VERSION_ROW.match(tail[-1]):
        tail.pop()  # Grok's version, drawn at the bottom right under the question
    if len(options) != 2 or not tail or not _TRUST_OPTION.match(tail[-1]):
        return None
    return at, options


def _box(rows: list[str]) -> int | None:
    found = last_index(rows, _BOX_TOP.match)
    if found is None or found + 1 >= len(rows) or not _COMPOSER.match(rows[found + 1]):
        return None
    return found


def pending_input(screen: str) -> str:
    """The text typed into the input box and not sent yet ('' when none); never raises."""
    try:
        rows = screen_rows(screen)
        box = _box(rows)
        if box is None:
            return ""
        found = _COMPOSER.match(rows[box + 1])
        return ((found.group("typed") if found else "") or "").strip()
    except Exception:  # noqa: BLE001 (the kernel's contract: never raise)
        return ""


def detect_status(screen: str) -> StatusReport:
    """Grok Build's status from its rendered screen. Never raises."""
    return read_safely(_detect, screen)


def _detect(text: str) -> StatusReport:
    rows = screen_rows(text)
    if not rows:
        return _report(TerminalStatus.UNKNOWN, "blank screen")
    box = _box(rows)
    if box is None:
        tail = "\n".join(rows[-12:])
        if trust_question(rows) is not None:
            # Not answered by cao (dialogs.py says why): a person or a policy answers it.
            return _report(TerminalStatus.WAITING_USER_ANSWER, f"folder-trust question: {TRUST_QUESTION}")
        for name, pattern in _FATAL:
            if pattern.search(tail):
                return _report(TerminalStatus.ERROR, f"the CLI stopped: {name}")
        return _report(TerminalStatus.UNKNOWN, "no input box on screen")
    above, below = rows[:box], rows[box + 3:]
    user = last_index(above, _USER.match)
    turn = above[user + 1:] if user is not None else above
    busy = next((" ".join(row.split()) for row in [*turn, *below] if _BUSY.search(row)), None)
    if busy is not None:
        return _report(TerminalStatus.PROCESSING, f"busy: {busy}")
    typed = pending_input(text)
    if typed:
        return _report(TerminalStatus.PROCESSING, f"input not sent yet: {typed[:60]}")
    if user is None:
        return _report(TerminalStatus.IDLE, "empty input box, no message sent yet")
    # Readings of two turns must differ even when their answers look alike.
    about = f" after {_USER.match(above[user]).group('text').strip()[:40]!r}"
    for row in reversed(turn):
        if _DONE.match(row):
            return _report(TerminalStatus.COMPLETED, f"turn{about} done: {row.strip()}")
        error = _TURN_ERROR.match(row)
        if error:
            return _report(TerminalStatus.ERROR, f"turn{about} failed: {error.group('text')}")
    return _report(TerminalStatus.PROCESSING, f"turn{about} started, nothing shown yet")


def extract_last_message(text: str) -> str:
    """The answer to the user's last message: the rows between it and ``Worked for``, without tool
    rows, unindented. Raises ``ValueError`` when the turn is not over or shows no answer."""
    rows = screen_rows(text)
    box = _box(rows)
    if box is None:
        raise ValueError("no input box on screen: Grok is not waiting for input")
    above = rows[:box]
    if any(_BUSY.search(row) for row in rows):
        raise ValueError("a turn is still running")
    user = last_index(above, _USER.match)
    done = last_index(above, _DONE.match)
    if user is None or done is None or done < user:
        raise ValueError("no finished turn after the last message")
    body = [row for row in above[user + 1:done] if not _NOT_ANSWER.match(row)]
    while body and not body[0].strip():
        body.pop(0)
    while body and not body[-1].strip():
        body.pop()
    if not body:
        raise ValueError("the last turn ended without an answer")
    indent = min(len(row) - len(row.lstrip()) for row in body if row.strip())
    return "\n".join(row[indent:] for row in body).strip()
