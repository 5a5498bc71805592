"""Reading Hermes Agent's screen (its classic prompt_toolkit REPL): status with evidence, and the last
answer. The layout, bottom rows last::

    ────────────────────────────────────────       <- a 40-column rule opens each user message
    ● Say pong please                              <- the user's message
    Initializing agent...                          <- (first turn only)
    ────────────────────────────────────────
      ಠ_ಠ mulling...                             <- the model thinks (erased when it answers)
      💻 sleep 3 + 1 command  (  0.5s)             <- a tool runs (then ``┊ 💻 $ sleep 3 …  3.3s``)
    ╭─ ⚕ Hermes ─────────────────────────────╮     <- the answer: a rounded box, rows indented by 4
        PONG-42 from the scripted server
    ╰────────────────────────────────────────╯
     ─  ⚕ Hermes  ──────────────────────────       <- or, when the turn failed or was interrupted, an
         HTTP 401: Invalid API key                    open box (rows indented by 5), under ``❌`` rows
     ──────────────────────────────────────────
     ⚕ scripted │ 15.4K/256K │ … │ ⏲ 4s │ ✓ 0s     <- the status bar (``⏱`` while a turn runs)
    ──────────────────────────────────────────────  <- the input area: a full-width rule,
    ❯                                              <- the prompt: ``❯`` ready, ``❯ text`` typed,
    ──────────────────────────────────────────────     ``⚕ ❯ msg=interrupt · …`` busy, ``? ❯`` asking,
                                                       ``✎ ❯ type your answer here…`` taking an answer

While Hermes asks the user (its ``clarify`` tool) a ``Hermes needs your input`` box with a menu sits
above the status bar (prompts.py reads it). Everything here works on the rendered text ``tmux
capture-pane`` gives, never raises, and names the rule that decided in the report's evidence.
"""

from __future__ import annotations

import re

from cao_hookspecs import StatusReport, TerminalStatus
from cao_screen_core.reports import read_safely
from cao_screen_core.reports import report as _report
from cao_screen_core.rows import last_index

__all__ = ["ASKING", "INPUT_BOX", "detect_status", "extract_last_message", "screen_rows", "turn_rows"]

_RULE = re.compile(r"^─{20,}$")
_PROMPT = re.compile(r"^(?P<mark>⚕ |\? |✎ )?❯(?: (?P<typed>.*))?$")
_BUSY_PROMPT = re.compile(r"msg=interrupt|Ctrl\+C cancel")
_USER = re.compile(r"^● (?P<text>\S.*)$")
_ANSWER_TOP = re.compile(r"^╭─ ⚕ Hermes ─+╮$")
_ANSWER_BOTTOM = re.compile(r"^╰─+╯$")
_FAILED_TOP = re.compile(r"^ ─  ⚕ Hermes  ─+$")
_FAILED_BOTTOM = re.compile(r"^ ─{20,}$")
_ERROR = re.compile(r"^❌ (?P<text>.+)$")
# While the model thinks: a face and a word (``  ٩(๑❛ᴗ❛๑)۶ ruminating...``); while a tool runs: its row
# with a running clock (``  💻 sleep 3 + 1 command  (  0.5s)``). Both are erased when they end (a tool
# that ran stays as ``  ┊ 💻 $  sleep 3 …  3.3s``).
_THINKING = re.compile(r"^  (?!┊)\S+ [a-z]+\.\.\.$")
_RUNNING = re.compile(r"^  (?!┊)\S+ .*\(\s*\d+(?:\.\d+)?s\)$")
# A message typed while Hermes still finished a turn waits in its queue (the private config queues it):
# the next turn is owed, whatever the screen shows above. Hermes runs its turn-end hook before it has
# drawn the turn's last rows, so cao may type during them.
_QUEUED = re.compile(r"^\s*Queued for the next turn: (?P<text>.+)$")
_INTERRUPTED = re.compile(r"Operation interrupted|\[Interrupted")
#: The top of the box Hermes draws while it waits for the user's answer (prompts.py reads the box).
ASKING = re.compile(r"^╭─ Hermes needs your input ─+╮$")
#: Rows of the input area from the bottom: rule, prompt, rule.
INPUT_BOX = 3
# Screens left by a Hermes that stopped or never started: reported as errors with their name.
FATAL = (
    ("Hermes exited", re.compile(r"^(?:Resume this session with:|Goodbye! ⚕)$", re.MULTILINE)),
    ("Hermes crashed", re.compile(r"^Traceback \(most recent call last\):$", re.MULTILINE)),
    ("bad command-line option", re.compile(r"^hermes(?: chat)?: error: ", re.MULTILINE)),
    ("no model configured", re.compile(r"No (?:inference provider|model) (?:is )?configured", re.MULTILINE)),
)


def screen_rows(text: str) -> list[str]:
    """The screen's rows, right-stripped, without the blank rows under the last one."""
    rows = [row.rstrip() for row in text.splitlines()]
    while rows and not rows[-1]:
        rows.pop()
    return rows


def _input_area(rows: list[str]) -> re.Match[str] | None:
    """The prompt row between the input area's two rules at the bottom, or None when it is not there."""
    if len(rows) < INPUT_BOX or not (_RULE.match(rows[-1]) and _RULE.match(rows[-3])):
        return None
    return _PROMPT.match(rows[-2])


def turn_rows(rows: list[str]) -> tuple[str | None, list[str]]:
    """The last user message and the rows after it above the input area (the status bar excluded);
    (None, every row) when no message was sent yet."""
    body = rows[:-INPUT_BOX]
    if body and "│" in body[-1] and body[-1].startswith(" ⚕ "):
        body = body[:-1]
    user = last_index(body, _USER.match)
    if user is None:
        return None, body
    return body[user][2:].strip(), body[user + 1:]


def detect_status(screen: str) -> StatusReport:
    """Hermes Agent's status from its rendered screen. Never raises."""
    return read_safely(_detect, screen)


def _detect(text: str) -> StatusReport:
    rows = screen_rows(text)
    if not rows:
        return _report(TerminalStatus.UNKNOWN, "blank screen")
    prompt = _input_area(rows)
    if prompt is None:
        tail = "\n".join(rows[-15:])
        for name, pattern in FATAL:
            if pattern.search(tail):
                return _report(TerminalStatus.ERROR, f"the CLI stopped: {name}")
        return _report(TerminalStatus.UNKNOWN, "no input area at the bottom of the screen")
    user, turn = turn_rows(rows)
    about = f" after {user[:40]!r}" if user is not None else ""
    if prompt.group("mark") == "⚕ " or _BUSY_PROMPT.search(rows[-2]):
        return _report(TerminalStatus.PROCESSING, f"busy prompt{about}: {rows[-2].strip()[:80]}")
    if prompt.group("mark") in ("? ", "✎ ") and any(ASKING.match(row) for row in turn):
        return _report(TerminalStatus.WAITING_USER_ANSWER, f"Hermes needs your input{about}")
    queued = next((m.group("text") for m in map(_QUEUED.match, turn) if m), None)
    if queued is not None:
        return _report(TerminalStatus.PROCESSING, f"message queued for the next turn: {queued[:60]}")
    busy = next((row for row in turn if _THINKING.match(row) or _RUNNING.match(row)), None)
    if busy is not None:
        return _report(TerminalStatus.PROCESSING, f"busy row{about}: {busy.strip()[:80]}")
    typed = (prompt.group("typed") or "").strip()
    if typed:
        # Typed or pasted and not answered yet: whatever is above belongs to the previous turn.
        return _report(TerminalStatus.PROCESSING, f"input not answered yet: {typed[:60]}")
    for row in reversed(turn):
        if _ANSWER_TOP.match(row):
            return _report(TerminalStatus.COMPLETED, f"answer box{about} above an empty prompt")
        if _FAILED_TOP.match(row):
            body = _box(turn, turn.index(row), _FAILED_BOTTOM, 5)
            said = " ".join(body)[:120]
            if _INTERRUPTED.search(said):
                return _report(TerminalStatus.IDLE, f"turn{about} interrupted: {said}")
            errors = [m.group("text") for m in map(_ERROR.match, turn) if m]
            return _report(TerminalStatus.ERROR, f"turn{about} failed: {errors[-1] if errors else said}")
    errors = [m.group("text") for m in map(_ERROR.match, turn) if m]
    if errors:
        return _report(TerminalStatus.ERROR, f"turn{about} failed: {errors[-1]}")
    if user is None:
        return _report(TerminalStatus.IDLE, "empty prompt, no message sent yet")
    return _report(TerminalStatus.IDLE, f"turn{about} ended without an answer")


def _box(rows: list[str], top: int, bottom: re.Pattern[str], indent: int) -> list[str]:
    """The rows of the box opened at ``rows[top]``, up to its bottom rule, without their indent."""
    body: list[str] = []
    for row in rows[top + 1:]:
        if bottom.match(row):
            return body
        body.append(row[indent:] if row[:indent].isspace() else row.lstrip())
    return body


def extract_last_message(text: str) -> str:
    """The text of the answer to the user's last message, as Hermes drew it (its markdown rendered).

    ``text`` is a screen, optionally with scrollback above it. Raises ``ValueError`` when the turn has
    not finished (no empty prompt at the bottom) or ended without an answer box.
    """
    rows = screen_rows(text)
    prompt = _input_area(rows)
    if prompt is None or prompt.group("mark") or (prompt.group("typed") or "").strip():
        raise ValueError("the prompt is not back: the turn has not finished")
    _user, turn = turn_rows(rows)
    if any(_THINKING.match(row) or _RUNNING.match(row) or _QUEUED.match(row) for row in turn):
        raise ValueError("a turn is still running or owed")
    top = last_index(turn, _ANSWER_TOP.match)
    if top is None or any(_FAILED_TOP.match(row) for row in turn[top:]):
        raise ValueError("no answer box after the last message")
    answer = "\n".join(_box(turn, top, _ANSWER_BOTTOM, 4)).strip()
    if not answer:
        raise ValueError("the answer box after the last message is empty")
    return answer
