"""Reading the screen of Cursor's CLI: status with evidence, and the last answer.

The interface of 2026.06.15, transcribed from upstream CAO's fixtures (no borders: the input box is a
shaded band, which ``tmux capture-pane`` prints as blank rows around its text)::

      Cursor Agent                                     <- header: name, version, a tip
      v2026.06.15-03-48-54-da23e37
      Use subagents to parallelize work and preserve context.

      ⠠⠛ Composing  23 tokens                         <- spinner row while the model works
      $ sleep 10 10s                                   <- a shell command it ran
      1 + 1 = 2                                        <- the answer

       → Add a follow-up                ctrl+c to stop <- input box: placeholder or typed text, and the
                                                          interrupt hint while a turn runs
      Composer 2.5 Fast                 Run Everything <- status bar: model and run mode
      ~/project · main

The placeholder is ``Plan, search, build anything`` before the first turn and ``Add a follow-up``
after. The documented screens show no echo of the user's message, so a turn's answer is told from the
header and the commands above it (see ``extract_last_message``).
"""

from __future__ import annotations

import re

from cao_hookspecs import StatusReport, TerminalStatus
from cao_screen_core.reports import read_safely
from cao_screen_core.reports import report as _report
from cao_screen_core.rows import last_index, screen_rows

__all__ = ["detect_status", "extract_last_message", "screen_rows"]

_INPUT = re.compile(r"^\s*→ (?P<text>.*?)(?P<busy>\s{2,}ctrl\+c to stop)?\s*$")
_FIRST = "Plan, search, build anything"
_FOLLOW_UP = "Add a follow-up"
_STATUS_BAR = re.compile(r"^\s*\S.*\s{2,}Run Everything\s*$|^\s*Composer \d")
_SPINNER = re.compile(r"^\s*[\u2801-\u28ff]+\s+\S+.*\d+ tokens\s*$")
_NAVIGATE = re.compile(r"↑/↓ to navigate")
_BANNER = re.compile(r"^\s*Cursor Agent\s*$")
_TOOL = re.compile(r"^\s*\$ \S")
_TIP = re.compile(r"^\s*Tip: ")
_FATAL = re.compile(r"^\s*(?:Error: |error: |\[invalid_argument\])")


def _transcript(rows: list[str], end: int) -> list[str]:
    """The rows between the header (banner and the rows under it) and ``end``."""
    banner = last_index(rows, _BANNER.match, end=end)
    start = 0
    if banner is not None:
        start = banner + 1
        while start < end and rows[start].strip():
            start += 1
    return rows[start:end]


def _answer(transcript: list[str]) -> list[str]:
    """The rows after the last shell command and spinner, tips left out, unindented and trimmed."""
    last = last_index(transcript, lambda row: _TOOL.match(row) or _SPINNER.match(row))
    rows = [row[2:] if row.startswith("  ") else row for row in transcript[(last or -1) + 1:]
            if not _TIP.match(row)]
    while rows and not rows[0].strip():
        rows.pop(0)
    while rows and not rows[-1].strip():
        rows.pop()
    return rows


def detect_status(screen: str) -> StatusReport:
    """The CLI's status from its rendered screen. Never raises."""
    return read_safely(_detect, screen)


def _detect(text: str) -> StatusReport:
    rows = screen_rows(text)
    if not rows:
        return _report(TerminalStatus.UNKNOWN, "blank screen")
    if any(_NAVIGATE.search(row) for row in rows[-8:]):
        return _report(TerminalStatus.WAITING_USER_ANSWER, "a menu waits: '↑/↓ to navigate'")
    bar = last_index(rows, _STATUS_BAR.match)
    box = last_index(rows, _INPUT.match, end=bar) if bar is not None else None
    if box is None:
        fatal = next((row for row in reversed(rows[-10:]) if _FATAL.match(row)), None)
        if fatal is not None:
            return _report(TerminalStatus.ERROR, f"the CLI stopped: {fatal.strip()[:80]}")
        return _report(TerminalStatus.UNKNOWN, "no input box above a status bar")
    found = _INPUT.match(rows[box])
    assert found is not None
    if found.group("busy"):
        return _report(TerminalStatus.PROCESSING, "input box shows 'ctrl+c to stop'")
    transcript = _transcript(rows, box)
    spinner = next((row for row in transcript if _SPINNER.match(row)), None)
    if spinner is not None:
        return _report(TerminalStatus.PROCESSING, f"spinner: {spinner.strip()[:60]}")
    typed = found.group("text").strip()
    if typed == _FIRST:
        return _report(TerminalStatus.IDLE, f"placeholder '{_FIRST}': no message sent yet")
    if typed != _FOLLOW_UP:
        return _report(TerminalStatus.PROCESSING, f"input not sent yet: {typed[:60]}")
    fatal = next((row for row in reversed(transcript) if _FATAL.match(row)), None)
    if fatal is not None:
        return _report(TerminalStatus.ERROR, f"the turn failed: {fatal.strip()[:80]}")
    answer = _answer(transcript)
    if not answer:
        return _report(TerminalStatus.IDLE, f"placeholder '{_FOLLOW_UP}' with no answer above it")
    # Name the answer: the evidence of two finished turns must differ.
    return _report(TerminalStatus.COMPLETED, f"answer {answer[0].strip()[:40]!r} above '{_FOLLOW_UP}'")


def extract_last_message(text: str) -> str:
    """The last answer: the rows above the input box after the last shell command (or the header).

    With no echo of the user's message on the documented screens, an earlier answer with no command
    after it would be taken with the last one (see the README). Raises ``ValueError`` unless a
    finished turn with an answer is on screen.
    """
    status = detect_status(text)
    if status.status != TerminalStatus.COMPLETED:
        raise ValueError(f"no finished turn on screen ({status.status.value}: {status.evidence})")
    rows = screen_rows(text)
    bar = last_index(rows, _STATUS_BAR.match)
    box = last_index(rows, _INPUT.match, end=bar)
    return "\n".join(_answer(_transcript(rows, box or 0))).strip()
