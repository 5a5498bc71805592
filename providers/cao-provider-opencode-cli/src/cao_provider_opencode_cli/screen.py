"""Reading OpenCode's inline (``--mini``) screen: status with evidence, and the last answer.

The inline interface prints the conversation into the terminal's normal screen (so it scrolls into
tmux's history) and keeps a small live area at the bottom::

    █▀▀█  OpenCode                         <- header, printed once
    █  █  ~/project
    ▀▀▀▀

    › what the user sent                   <- a user message ("› ", further rows unmarked)

    $ ls                                   <- a tool: an icon, a title, and for some a body
                                              after a blank row
    total 8

    The answer, Markdown rendered.         <- the model's text

    ▣ Cao-Developer · Model default · 2.8s <- written when the turn ends (its duration)

    Ask anything... "Fix a TODO"           <- live area: the prompt (or its placeholder)

     BUILD  ⬝⬝■■■■■■ esc interrupt   ...  ctrl+p cmd     <- footer ("esc interrupt" while busy)

A permission request or a question from the model replaces the footer with its own hint row
(``Allow once   Allow always   Reject``, ``↑↓ select  enter submit  esc dismiss``). An error OpenCode
reports for the conversation is printed after the turn's ``▣`` row; an interrupted turn shows
``Aborted`` above it.

Everything here works on the plain text ``capture-pane`` gives (no colours), never raises, and names
the rule that decided in the report's evidence. What plain text cannot tell apart is listed in the
README (a user message's later paragraphs, a tool's output with blank rows, code rows that look like
tool titles).
"""

from __future__ import annotations

import re

from cao_hookspecs import StartupDialog, StatusReport, TerminalStatus
from cao_screen_core.reports import read_safely
from cao_screen_core.reports import report as _report
from cao_screen_core.rows import last_index

from .prompts import read_prompt

__all__ = ["STARTUP_DIALOGS", "Screen", "detect_status", "extract_last_message", "parse_screen"]

#: OpenCode asks nothing at start-up that cao could answer: with ``OPENCODE_DISABLE_AUTOUPDATE`` (set
#: by the launch plan) there is no update offer, and the inline interface has no trust or login
#: screens (a missing model provider fails the first turn instead, read as an error).
STARTUP_DIALOGS: tuple[StartupDialog, ...] = ()

_FOOTER = re.compile(r"^ \S.*(?:ctrl\+p cmd|esc (?:again to )?interrupt)")
_BUSY = re.compile(r"^ \S.*\besc (?:again to )?interrupt\b")
_PERMISSION_HINT = re.compile(r"Allow once\s+Allow always\s+Reject")
_QUESTION_HINT = re.compile(r"enter submit\s+esc dismiss")
_PLACEHOLDER = re.compile(r'^Ask anything\.\.\. ".*"$')
_USER = re.compile(r"^› (?P<text>.*)$")
_MARKER = re.compile(r"^▣ (?P<agent>[^·]+?) · (?P<model>.+?) · (?P<tail>\S.*)$")
# Tool titles, by the icons OpenCode's inline interface gives them.
_TOOL = re.compile(r"^(?:[→←✱%⚙◈✗✖•✓] \S|\$ \S|# \S)")
# Tools drawn as a block: the title, a blank row, then the body.
_BLOCK_TOOL = re.compile(r"^(?:\$ \S|# \S)")
_STACK = re.compile(r"^\s{2,}at \S")
_ERROR_NAME = re.compile(r"^(?:[A-Z]\w*)?Error\b:?")
_INTERRUPTED = "Aborted"
_THINKING = re.compile(r"^_?Thinking:_? ")
# Screens of an OpenCode that stopped before drawing its interface.
FATAL = (
    ("config file is not valid", re.compile(r"Config file at .+ is (?:not valid JSON|invalid)")),
    ("error at start-up", re.compile(r"^Error: \S", re.MULTILINE)),
    # OpenCode answers an option it does not know (as a release without --mini would) with its usage.
    ("printed its usage: an option it does not know?",
     re.compile(r"^Positionals:\s*\n[\s\S]*^Options:\s*\n[\s\S]*--help", re.MULTILINE)),
)


def _blank(row: str) -> bool:
    return not row.strip()


class Screen:
    """A screen split into transcript, prompt and footer (any part may be missing).

    ``footer`` is the last non-blank row; ``prompt`` the rows typed into the prompt (empty when it is
    empty or shows its placeholder); ``transcript`` everything above the live area.
    """

    def __init__(self, text: str) -> None:
        rows = [row.rstrip() for row in text.replace("\r", "").split("\n")]
        while rows and _blank(rows[-1]):
            rows.pop()
        self.rows = rows
        self.footer = rows[-1] if rows else ""
        self.has_footer = bool(_FOOTER.match(self.footer))
        self.prompt: list[str] = []
        self.placeholder = False
        self.transcript = rows
        if not self.has_footer:
            return
        end = len(rows) - 1
        index = end - 1
        if index >= 0 and _blank(rows[index]):
            index -= 1
        start = index + 1
        while start > 0 and not _blank(rows[start - 1]):
            start -= 1
        if index >= 0 and not _blank(rows[index]):
            typed = rows[start:index + 1]
            if len(typed) == 1 and _PLACEHOLDER.match(typed[0]):
                self.placeholder = True
            else:
                self.prompt = typed
            self.transcript = rows[:start]
        else:
            self.transcript = rows[:max(index, 0)]

    @property
    def busy(self) -> str | None:
        """The busy footer row, when one is drawn (looked for anywhere: a stray row below it must not
        hide it)."""
        at = last_index(self.rows, _BUSY.match)
        return self.rows[at] if at is not None else None

    def last_turn(self) -> Turn:
        return Turn(self.transcript)


class Turn:
    """The transcript's last turn: the user's last message, what followed it, and its ``▣`` row."""

    def __init__(self, transcript: list[str]) -> None:
        self.rows = transcript
        self.user = last_index(transcript, _USER.match)
        first = self.user + 1 if self.user is not None else 0
        self.marker = last_index(transcript, _MARKER.match, first)

    @property
    def message(self) -> str:
        """The first row of the user's last message ('' when none is on screen)."""
        if self.user is None:
            return ""
        match = _USER.match(self.rows[self.user])
        return match.group("text").strip() if match else ""

    @property
    def about(self) -> str:
        # Readings of two turns must differ even when their last rows happen to match.
        return f" after {self.message[:40]!r}" if self.message else ""

    def after_marker(self) -> list[str]:
        """Rows printed after the turn's ``▣`` row: an error OpenCode reported for the conversation."""
        if self.marker is None:
            return []
        return [row for row in self.rows[self.marker + 1:] if not _blank(row)]

    def body(self) -> list[str]:
        """The rows between the user's message (its own rows left out) and the ``▣`` row."""
        end = self.marker if self.marker is not None else len(self.rows)
        if self.user is None:
            return self.rows[:end]
        index = self.user + 1
        # A message's further rows (wrapped or typed on several lines) follow it up to a blank row.
        while index < end and not _blank(self.rows[index]):
            index += 1
        return self.rows[index:end]


def parse_screen(text: str) -> Screen:
    """Split a rendered screen into its parts (for tests and tools)."""
    return Screen(text)


def detect_status(screen: str) -> StatusReport:
    """OpenCode's status from its rendered screen. Never raises."""
    return read_safely(_detect, screen)


def _asked(screen: Screen) -> tuple[str, str]:
    """What a permission prompt is about, and the question a question prompt asks (from the rows
    after the user's last message)."""
    turn = screen.last_turn()
    start = turn.user + 1 if turn.user is not None else 0
    rows = [row.strip() for row in turn.rows[start:] if not _blank(row)]
    at = next((i for i, row in enumerate(rows) if row.endswith("Permission required")), None)
    titles = [row[2:] for row in rows[at or 0:] if row.startswith("# ")] if at is not None else []
    questions = [row for row in rows if row.endswith("?")]
    return (titles[0] if titles else "a tool"), (questions[-1] if questions else "a question")


def _detect(text: str) -> StatusReport:
    screen = Screen(text)
    if not screen.rows:
        return _report(TerminalStatus.UNKNOWN, "nothing on screen yet")
    if _PERMISSION_HINT.search(screen.footer):
        return _report(TerminalStatus.WAITING_USER_ANSWER, f"permission prompt: {_asked(screen)[0]}")
    if _QUESTION_HINT.search(screen.footer):
        return _report(TerminalStatus.WAITING_USER_ANSWER, f"question from the model: {_asked(screen)[1]}")
    # The second stages (confirming Allow always, the reason for a reject, a question's own answer).
    staged = read_prompt(text)
    if staged is not None:
        return _report(TerminalStatus.WAITING_USER_ANSWER,
                       f"{staged.kind.value} prompt: {staged.title or staged.question}"[:120])
    busy = screen.busy
    if busy is not None:
        footer = " ".join(busy.split())[:60]
        return _report(TerminalStatus.PROCESSING, f"footer says 'esc interrupt': {footer}")
    if not screen.has_footer:
        joined = "\n".join(screen.rows)
        for name, pattern in FATAL:
            found = pattern.search(joined)
            if found:
                return _report(TerminalStatus.ERROR, f"OpenCode stopped ({name}): {found.group(0)[:120]}")
        return _report(TerminalStatus.UNKNOWN, "no OpenCode footer on screen")
    if screen.prompt:
        typed = screen.prompt[0][:60]
        return _report(TerminalStatus.PROCESSING, f"text in the prompt, not sent yet: {typed}")
    turn = screen.last_turn()
    if turn.marker is None:
        if turn.user is None:
            return _report(TerminalStatus.IDLE, "no message sent yet, prompt is waiting")
        # Sent, not finished: OpenCode writes the ▣ row when the turn ends.
        return _report(TerminalStatus.PROCESSING, f"message{turn.about} sent, its turn has not ended")
    marker = turn.rows[turn.marker].strip()
    after = turn.after_marker()
    if after:
        return _report(TerminalStatus.ERROR, f"turn{turn.about} ended in an error: {after[0].strip()}")
    body = [row for row in turn.body() if not _blank(row)]
    if body and body[-1].strip() == _INTERRUPTED:
        return _report(TerminalStatus.IDLE, f"turn{turn.about} interrupted; prompt is waiting")
    failure = _failure(body)
    if failure is not None:
        return _report(TerminalStatus.ERROR, f"turn{turn.about} ended in an error: {failure}")
    return _report(TerminalStatus.COMPLETED, f"turn{turn.about} finished: {marker}")


def _failure(body: list[str]) -> str | None:
    """The error row when the turn's last entry is an error with a stack trace."""
    last_entry: list[str] = []
    for row in reversed(body):
        last_entry.insert(0, row)
        if not _STACK.match(row):
            break
    if len(last_entry) > 1 and _ERROR_NAME.match(last_entry[0].strip()):
        return last_entry[0].strip()
    return None


def _paragraphs(rows: list[str]) -> list[tuple[int, int]]:
    """(start, end) of each run of non-blank rows."""
    runs: list[tuple[int, int]] = []
    index = 0
    while index < len(rows):
        if _blank(rows[index]):
            index += 1
            continue
        end = index
        while end < len(rows) and not _blank(rows[end]):
            end += 1
        runs.append((index, end))
        index = end
    return runs


def _answer_start(body: list[str]) -> int:
    """Where the model's last text begins in a turn's body: after the last tool and its output."""
    runs = _paragraphs(body)
    start = 0
    for number, (first, end) in enumerate(runs):
        # OpenCode writes each text and each tool as its own paragraph, a tool's title first.
        if not _TOOL.match(body[first]):
            continue
        # Inline tools keep their details on the rows under the title; a block tool's title stands
        # alone and its body is the next paragraph.
        start = end
        last_tool = last_index(body[first:end], _TOOL.match)
        title = body[first + (last_tool or 0)]
        if _BLOCK_TOOL.match(title) and first + (last_tool or 0) == end - 1 and number + 1 < len(runs):
            start = runs[number + 1][1]
    return start


def extract_last_message(text: str) -> str:
    """The text of OpenCode's last answer, after the user's last message.

    ``text`` is a screen, optionally with scrollback above it. Rows OpenCode wrapped stay separate
    lines; Markdown is as OpenCode rendered it. Raises ``ValueError`` when the last turn has not ended,
    ended in an error or was interrupted, shows no text after its last tool, or when the user's
    message is not in ``text`` (the answer may begin above it).
    """
    screen = Screen(text)
    turn = screen.last_turn()
    if turn.marker is None:
        raise ValueError("no finished OpenCode turn ('▣' row) after the last message")
    if turn.user is None:
        # The answer may begin above the text: the kernel asks again with more scrollback.
        raise ValueError("the user's last message is not in the text; its answer may start above it")
    if screen.busy is not None or screen.prompt:
        raise ValueError("OpenCode is busy with a newer message")
    if turn.after_marker():
        raise ValueError("the last OpenCode turn ended in an error")
    body = turn.body()
    content = [row for row in body if not _blank(row)]
    if content and content[-1].strip() == _INTERRUPTED:
        raise ValueError("the last OpenCode turn was interrupted")
    if _failure(content) is not None:
        raise ValueError("the last OpenCode turn ended in an error")
    rows = body[_answer_start(body):]
    while rows and (_blank(rows[0]) or _THINKING.match(rows[0])):
        # Reasoning OpenCode shows (when asked to) comes before the text, as its own paragraph.
        if _THINKING.match(rows[0]):
            while rows and not _blank(rows[0]):
                rows.pop(0)
        else:
            rows.pop(0)
    while rows and _blank(rows[-1]):
        rows.pop()
    if not rows:
        raise ValueError("the last OpenCode turn shows no text after its tools")
    return "\n".join(rows)
