"""Reading Oh My Pi's screen: status with evidence, and the last answer.

Oh My Pi 18 draws its transcript, then a status line over its composer at the bottom::

     Summarise the repository.            <- the user's message (a grey bubble: one padding row
                                             above and below, then a blank row)
     The repository has 3 packages.       <- the answer, one space in; paragraphs apart by one row
                                          <- one blank row
     π > ⬢ Scripted Model > 🗑 project ▶───12%───…   <- the status line (π: waiting for input)
    ╰─ text typed and not sent             <- the composer

While a turn runs, the status line starts with a spinner and the seconds (`` ⠇ 3s > ⬢ …``) and a
``⎋ Working…`` row sits above it. A tool call is a box (``╭─`` … ``╰─``). A failed turn ends in a box
between two rules (`` ✘ 400 …`` and ``Dismissed when you send your next message.``). A tool waiting
for approval replaces the status line and composer with a box (``╭─ Allow tool: bash ─`` … ``❯ Approve``
/ ``Deny``; prompts.py reads it).

In plain text the user's bubble and the answer differ only by the rows around them: an answer is the
block that ends one blank row above the status line; a user message (a turn that ended without
text) ends two blank rows above it. Everything here works on the rendered text ``tmux capture-pane``
gives, never raises, and names the rule that decided in the report's evidence.
"""

from __future__ import annotations

import re

from cao_hookspecs import StatusReport, TerminalStatus
from cao_screen_core.reports import read_safely
from cao_screen_core.reports import report as _report
from cao_screen_core.rows import last_index

from .dialogs import STARTUP_DIALOGS

__all__ = ["APPROVAL", "detect_status", "extract_last_message", "pending_input", "screen_rows"]

#: The status line: ``π`` when waiting for input, a spinner and the time while a turn runs.
_STATUS = re.compile(r"^ (?:(?P<idle>π)|(?P<spinner>[\u2800-\u28ff]) (?P<time>[^>]*?)) > ")
_COMPOSER = re.compile(r"^╰─(?: (?P<typed>.*))?$")
_WORKING = re.compile(r"^\s*⎋ Working…")
#: A tool waiting for approval: the top of its box (prompts.py reads the rest).
APPROVAL = re.compile(r"^╭─ Allow tool: (?P<tool>\S+) ─")
_RULE = re.compile(r"^─{8,}$")
_FAILED = re.compile(r"^ ✘ (?P<text>.+)$")
_BOX = re.compile(r"^[╭╰│├]")

DIALOGS = tuple((dialog.name, re.compile(dialog.pattern, re.MULTILINE)) for dialog in STARTUP_DIALOGS)
# Screens left by a CLI that refused to start or stopped: reported as errors with their name.
FATAL = (
    ("bad settings", re.compile(r"^error: Failed to parse config.*$", re.MULTILINE)),
    ("bad command-line option", re.compile(r"^Error: unknown flag: .*$", re.MULTILINE)),
    ("stopped with an error", re.compile(r"^error: .*$", re.MULTILINE)),
)


def screen_rows(text: str) -> list[str]:
    """The screen's rows, right-stripped, without the blank rows under the last one."""
    rows = [row.rstrip() for row in text.splitlines()]
    while rows and not rows[-1]:
        rows.pop()
    return rows


def _status_row(rows: list[str]) -> int | None:
    """The status line's index, when it sits right above the composer at the bottom."""
    found = last_index(rows, _STATUS.match)
    if found is None or found < len(rows) - 4 or not any(_COMPOSER.match(row) for row in rows[found + 1:]):
        return None
    return found


def pending_input(screen: str) -> str:
    """The text typed in the composer and not sent yet, '' when none. Never raises."""
    try:
        rows = screen_rows(screen)
        status = _status_row(rows)
        if status is None:
            return ""
        parts = []
        for row in rows[status + 1:]:
            found = _COMPOSER.match(row)
            parts.append((found.group("typed") or "") if found else row.lstrip("│ "))
        return "\n".join(part.strip() for part in parts if part.strip())
    except Exception:  # noqa: BLE001 (the contract: never raise)
        return ""


def _blocks(rows: list[str]) -> list[tuple[list[str], int]]:
    """The transcript's blocks, bottom first: each block's rows and the count of blank rows under it.
    Text rows apart by one blank row belong to one block (an answer's paragraphs); two or more blank
    rows, or the edge of a tool's box, part blocks."""
    blocks: list[tuple[list[str], int]] = []
    index = len(rows) - 1
    while index >= 0:
        gap = 0
        while index >= 0 and not rows[index].strip():
            gap += 1
            index -= 1
        if index < 0:
            break
        boxed = bool(_BOX.match(rows[index]))
        block: list[str] = []
        while index >= 0:
            row = rows[index]
            if row.strip():
                if bool(_BOX.match(row)) != boxed:
                    break
                block.insert(0, row)
            elif not boxed and index > 0 and rows[index - 1].strip() and not _BOX.match(rows[index - 1]):
                block.insert(0, "")  # one blank row inside an answer
            else:
                break
            index -= 1
        blocks.append((block, gap))
    return blocks


def _name(block: list[str]) -> str:
    """A block as evidence: its first row with words (a box's first row inside its border)."""
    row = next((row for row in block if row.strip(" ╭╰│├─┤╮╯")), "")
    return row.strip(" ╭╰│├─┤╮╯")[:40]


def _failure(block: list[str]) -> str | None:
    if len(block) < 3 or not (_RULE.match(block[0]) and _RULE.match(block[-1])):
        return None
    return next((found.group("text") for found in map(_FAILED.match, block) if found), None)


def _is_answer(block: list[str], gap: int) -> bool:
    return gap == 1 and not _BOX.match(block[0]) and not _RULE.match(block[-1])


def _answer_text(block: list[str]) -> str:
    return "\n".join(row[1:] if row.startswith(" ") else row for row in block).strip()


def detect_status(screen: str) -> StatusReport:
    """Oh My Pi's status from its rendered screen. Never raises."""
    return read_safely(_detect, screen)


def _detect(text: str) -> StatusReport:
    rows = screen_rows(text)
    if not rows:
        return _report(TerminalStatus.UNKNOWN, "blank screen")
    tail = rows[-16:]
    approval = next((row for row in tail if APPROVAL.match(row)), None)
    if approval is not None and rows[-1].startswith("╰"):
        return _report(TerminalStatus.WAITING_USER_ANSWER,
                       f"tool waiting for approval: {approval.strip(' ╭─')}")
    whole = "\n".join(rows)
    for name, pattern in DIALOGS:
        if pattern.search(whole):
            return _report(TerminalStatus.WAITING_USER_ANSWER, f"start-up dialog: {name}")
    status = _status_row(rows)
    if status is None:
        for name, pattern in FATAL:
            found = pattern.search("\n".join(rows[-12:]))
            if found:
                return _report(TerminalStatus.ERROR, f"the CLI stopped: {name}: {found.group(0).strip()}")
        return _report(TerminalStatus.UNKNOWN, "no status line above the composer")
    line = _STATUS.match(rows[status])
    if line is not None and line.group("spinner"):
        return _report(TerminalStatus.PROCESSING, f"spinner on the status line: {line.group('time').strip()}")
    working = next((row for row in rows[:status] if _WORKING.match(row)), None)
    if working is not None:
        return _report(TerminalStatus.PROCESSING, f"busy row: {working.strip()}")
    typed = pending_input(text)
    if typed:
        return _report(TerminalStatus.PROCESSING, f"input not answered yet: {typed[:60]}")
    blocks = _blocks(rows[:status])
    if not blocks:
        return _report(TerminalStatus.IDLE, "empty prompt, no message sent yet")
    last, gap = blocks[0]
    before = f" after {_name(blocks[1][0])!r}" if len(blocks) > 1 else ""
    failure = _failure(last)
    if failure is not None:
        return _report(TerminalStatus.ERROR, f"turn ended in an error: {failure}")
    if _is_answer(last, gap):
        answer = " ".join(_answer_text(last).split())
        return _report(TerminalStatus.COMPLETED, f"answer {answer[:40]!r}{before} above the prompt")
    return _report(TerminalStatus.IDLE, f"turn ended without an answer: {last[0].strip()[:40]!r}")


def extract_last_message(text: str) -> str:
    """The text of the last answer, the block one blank row above the status line.

    ``text`` is a screen, optionally with scrollback above it. Raises ``ValueError`` when the turn has
    not finished (no idle status line at the bottom) or ended without an answer.
    """
    rows = screen_rows(text)
    status = _status_row(rows)
    if status is None:
        raise ValueError("the status line is not back: the turn has not finished")
    line = _STATUS.match(rows[status])
    if line is None or not line.group("idle") or any(_WORKING.match(row) for row in rows[:status]):
        raise ValueError("a turn is still running")
    blocks = _blocks(rows[:status])
    if not blocks or not _is_answer(*blocks[0]) or _failure(blocks[0][0]) is not None:
        raise ValueError("no answer right above the status line")
    return _answer_text(blocks[0][0])
