"""Reading Gemini CLI's screen: status with evidence, and the last answer.

Gemini CLI draws its transcript inline, then the input area under a full-width rule, then a footer::

     > what the user sent                      <- transcript: user messages start with " > "
    ╭──────────────────────────╮
    │ ✓  Shell ls              │               <- tool calls in boxes (✓ done, ? waiting, x failed)
    ╰──────────────────────────╯
    ✦ The answer, continued on lines          <- answers start with "✦ ", errors with "✕ "
      indented by two spaces.
     ⠼ Thinking... (esc to cancel, 1s)   ? for shortcuts   <- status row (a spinner only while busy)
    ────────────────────────────────
     Shift+Tab to accept edits                 <- approval mode ("YOLO Ctrl+Y" in yolo mode)
     >   Type your message or @path/to/file    <- the prompt (" * " in yolo mode), a grey placeholder
     workspace (/directory)   sandbox   /model <- footer
     ~/project                no sandbox  Auto

At start-up the input area is drawn first and the header (logo, tips) only once Gemini CLI has
finished setting up, so a screen with nothing but the input area is still starting.

Dialogs (tool approvals, start-up questions) replace the input area with a box listing choices, the
selected one marked "●". Everything here works on the rendered text ``capture-pane`` gives (no
colours), never raises, and names the rule that decided in the report's evidence.
"""

from __future__ import annotations

import re

from cao_hookspecs import StatusReport, TerminalStatus
from cao_screen_core.blocks import indented_blocks
from cao_screen_core.reports import read_safely
from cao_screen_core.reports import report as _report
from cao_screen_core.rows import bottom_rows, last_index

__all__ = ["detect_status", "extract_last_message", "parse_screen"]

_RULE = re.compile(r"^─{20,}$")
_PROMPT = re.compile(r"^ (?P<mark>[>*!]) (?P<text>.*)$")
_USER = re.compile(r"^ [>*!] (?P<text>\S.*)$")
_ANSWER = re.compile(r"^✦ (?P<text>.*)$")
_ERROR = re.compile(r"^✕ (?P<text>.*)$")
# The status row of a running turn: one space, a braille spinner, the phase and "(esc to cancel, 3s)".
# Transcript rows never start this way (answers continue indented by two spaces).
_SPINNER = re.compile(r"^ ?[\u2800-\u28ff] (?P<text>\S.*?\(esc to cancel[^)]*\))")
_CANCELLED = re.compile(r"^ℹ Request cancelled")
_RESTARTING = re.compile(r"Gemini CLI is restarting")
# The row of a tool that has not finished: "⊶"/"⊷" (executing, two frames of a spinner) or "o"
# (scheduled) where finished tools show ✓, x or -, and "?" waits for an approval. Shell commands are
# drawn in a box ("│ ⊷  Shell ..."), other tools as compact rows ("  ⊷  ReadManyFiles ...").
_RUNNING_TOOL = re.compile(r"^(?:│ [⊶⊷o]|  [⊶⊷])\s{2,}(?P<text>\S.*?)\s*│?$")
# The selected choice of a dialog box ("│ ● 1. Allow once") and the box's question.
_CHOICE = re.compile(r"^\s*(?:│\s*)*● \d+\.\s+\S")
_QUESTION = re.compile(r"^\s*(?:│\s*)*(?P<text>\S[^│]*\?)\s*(?:│\s*)*$")
_BOX_EDGE = re.compile(r"^\s*[╭╰]")
# Grey hints the prompt shows while empty (a plain capture cannot tell them from typed text).
_PLACEHOLDER = re.compile(r"^(?:|Type your (?:message|shell command)\b.*)$")

# Start-up dialogs, in the words each one uses; the answerable ones are in dialogs.py.
DIALOGS = (
    ("trust folder", re.compile(r"Do you trust the files in this folder\?")),
    ("sign-in method", re.compile(r"How would you like to authenticate[\s\S]*Existing API key detected")),
    ("API key confirmation", re.compile(r"Enter Gemini API Key[\s\S]*Existing API key detected")),
)
# Screens left by a Gemini CLI that refused to start or cannot go on without a person.
FATAL = (
    ("bad command-line option",
     re.compile(r"^(?:Unknown arguments?|Invalid values?|Missing required argument|Not enough arguments)"
                r"\b.*:", re.MULTILINE)),
    ("printed its usage (bad command line)", re.compile(r"^\s+-h, --help\s+Show help\b", re.MULTILINE)),
    ("yolo mode disabled by the administrator", re.compile(r"YOLO mode is disabled by")),
    ("settings file not valid", re.compile(r"Please fix the configuration file|Invalid configuration in")),
    ("needs a sign-in", re.compile(r"How would you like to authenticate|Enter Gemini API Key|"
                                   r"No authentication method selected|Failed to sign in")),
)


class Screen:
    """A screen split into transcript, status row, input area and footer (any part may be missing)."""

    def __init__(self, text: str) -> None:
        self.lines = [line.rstrip() for line in text.splitlines()]
        self.rule: int | None = None
        self.prompt: int | None = None
        rule = last_index(self.lines, _RULE.match)
        if rule is not None:
            # The prompt is within a few rows under the rule (the approval-mode row comes first).
            for index in range(rule + 1, min(rule + 5, len(self.lines))):
                if _PROMPT.match(self.lines[index]):
                    self.rule, self.prompt = rule, index
                    break

    @property
    def has_input(self) -> bool:
        return self.prompt is not None

    @property
    def above(self) -> list[str]:
        """Everything above the input area (the whole screen when there is none)."""
        return self.lines[: self.rule]

    @property
    def status_row(self) -> str | None:
        """The row just above the rule, where the spinner runs (None when blank or no input area)."""
        if self.rule is None or self.rule == 0 or not self.lines[self.rule - 1].strip():
            return None
        return self.lines[self.rule - 1]

    @property
    def transcript(self) -> list[str]:
        rows = self.above
        if self.status_row is not None and rows:
            rows = rows[:-1]
        return rows

    @property
    def pending_input(self) -> str:
        """Text typed at the prompt and not submitted yet ('' when empty or only a hint shows)."""
        if self.prompt is None:
            return ""
        found = _PROMPT.match(self.lines[self.prompt])
        first = found.group("text").strip() if found else ""
        rows = [first]
        for line in self.lines[self.prompt + 1:]:
            if not line.startswith("   ") or not line.strip():
                break
            rows.append(line.strip())
        text = "\n".join(rows).strip()
        return "" if _PLACEHOLDER.match(text) else text

    def tail(self, rows: int = 30) -> list[str]:
        """The bottom ``rows`` non-empty rows (where dialogs are drawn)."""
        return bottom_rows(self.lines, rows)


def parse_screen(text: str) -> Screen:
    """Split a rendered screen into its parts (for tests and tools)."""
    return Screen(text)


def _last_user_message(transcript: list[str]) -> int | None:
    return last_index(transcript, _USER.match)


def detect_status(screen: str) -> StatusReport:
    """Gemini CLI's status from its rendered screen. Never raises."""
    return read_safely(_detect, screen)


def _choice_question(rows: list[str]) -> str | None:
    """The question of the dialog box at the bottom of ``rows``, when its selected choice shows."""
    at = last_index(rows, _CHOICE.match)
    if at is None:
        return None
    # The question is above the choices, inside the same box.
    for line in reversed(rows[:at]):
        if _BOX_EDGE.match(line) and "╭" in line:
            break
        question = _QUESTION.match(line)
        if question:
            return question.group("text").strip()
    return rows[at].strip(" │●")


def _live_dialog(text: str) -> str | None:
    """The start-up dialog drawn lowest in ``text``: an answered one (the trust dialog, whose answer
    restarts the CLI) stays on screen above whatever comes next. None when the restart notice is
    below it."""
    found: list[tuple[int, str]] = []
    for name, pattern in DIALOGS:
        matches = list(pattern.finditer(text))
        if matches:
            found.append((matches[-1].start(), name))
    restart = [m.start() for m in _RESTARTING.finditer(text)]
    if not found or (restart and restart[-1] > max(found)[0]):
        return None
    return max(found)[1]


def _detect(text: str) -> StatusReport:
    screen = Screen(text)
    if not screen.has_input:
        tail = screen.tail()
        joined = "\n".join(tail)
        if _RESTARTING.search(joined) and _live_dialog(joined) is None:
            return _report(TerminalStatus.UNKNOWN, "Gemini CLI is restarting (to apply a trust answer)")
        dialog = _live_dialog(joined)
        answerable = any(_CHOICE.match(line) or "Press Enter to submit" in line for line in tail)
        if dialog is not None and answerable:
            return _report(TerminalStatus.WAITING_USER_ANSWER, f"start-up dialog: {dialog}")
        # Before any other menu: the sign-in dialog without a key in the environment is a menu too,
        # and only a person can sign in.
        for name, pattern in FATAL:
            if pattern.search(joined):
                return _report(TerminalStatus.ERROR, f"Gemini CLI stopped: {name}")
        question = _choice_question(tail)
        if question is not None:
            return _report(TerminalStatus.WAITING_USER_ANSWER, f"dialog waiting for a choice: {question}")
        return _report(TerminalStatus.UNKNOWN, "no prompt on screen")

    above = screen.above
    # Only this turn's rows: a spinner left in the scrollback by an earlier turn says nothing.
    since = _last_user_message(above)
    spinner = next((m for m in map(_SPINNER.match, reversed(above[since or 0:])) if m), None)
    if spinner is not None:
        return _report(TerminalStatus.PROCESSING, f"spinner: {spinner.group('text').strip()}")
    # Text typed at the prompt and not sent yet changes nothing: the reading (evidence included) stays
    # the last turn's. On Enter, Gemini CLI clears the prompt one frame before it moves the message up,
    # so that frame shows the previous turn again: were the typed text read as busy, that frame would
    # look like a new reading of the old turn, and a caller waiting for the answer would get the old one.
    transcript = screen.transcript
    user = _last_user_message(transcript)
    if user is None:
        if not any(line.strip() for line in transcript):
            # Gemini CLI draws its prompt first and its header once its set-up is done; input typed
            # before that is queued, and Enter keys arriving while it is busy can turn into newlines.
            return _report(TerminalStatus.UNKNOWN,
                           "prompt drawn, header not yet: Gemini CLI is still starting")
        return _report(TerminalStatus.IDLE, "no message sent yet, prompt is waiting")
    turn = transcript[user + 1:]
    # Readings of two turns must differ even when their answers happen to match.
    about = f" after {_USER.match(transcript[user]).group('text').strip()[:40]!r}"  # type: ignore[union-attr]
    question = _choice_question(turn)
    if question is not None:
        return _report(TerminalStatus.WAITING_USER_ANSWER, f"dialog waiting for a choice: {question}")
    running = next((m for m in map(_RUNNING_TOOL.match, reversed(turn)) if m), None)
    if running is not None:
        return _report(TerminalStatus.PROCESSING, f"tool running: {running.group('text')[:60]}")
    for line in reversed(turn):
        if _CANCELLED.match(line):
            return _report(TerminalStatus.IDLE, "turn cancelled; prompt is waiting")
        if _ERROR.match(line):
            return _report(TerminalStatus.ERROR, f"turn{about} ended in an error: {line[2:].strip()}")
        if _ANSWER.match(line):
            return _report(TerminalStatus.COMPLETED, f"answer{about} above an empty prompt")
    output = [line for line in turn if line.strip() and not line.startswith("   ")]
    if not output:
        # Sent, not answered yet: the spinner is drawn a moment after the message moves up.
        return _report(TerminalStatus.PROCESSING, f"message{about} sent, nothing drawn after it yet")
    return _report(TerminalStatus.COMPLETED,
                   f"turn output{about} above an empty prompt: {output[-1].strip()[:60]}")


def extract_last_message(text: str) -> str:
    """The text of Gemini CLI's last answer after the user's last message.

    ``text`` is a screen, optionally with scrollback above it. Rows the CLI wrapped stay separate
    lines; Markdown is as rendered (list items keep the space Gemini CLI puts before their marker).
    Raises ``ValueError`` when the last turn has no finished answer: still working, waiting for an
    approval, ended in an error, or only tool calls.
    """
    report = detect_status(text)
    if report.status in (TerminalStatus.PROCESSING, TerminalStatus.WAITING_USER_ANSWER):
        raise ValueError(f"the last turn is not finished ({report.status.value}: {report.evidence})")
    screen = Screen(text)
    transcript = screen.transcript
    user = _last_user_message(transcript)
    turn = transcript[user + 1:] if user is not None else transcript
    last_event = last_index(turn, lambda line: bool(_ANSWER.match(line) or _ERROR.match(line)))
    if last_event is not None and _ERROR.match(turn[last_event]):
        raise ValueError(f"the last turn ended in an error: {turn[last_event][2:].strip()[:100]}")
    blocks = indented_blocks(turn, _ANSWER)
    if not blocks:
        raise ValueError("no Gemini CLI answer ('✦ ' block) after the last message")
    return "\n".join(blocks[-1].text).strip()
