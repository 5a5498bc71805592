"""Reading Copilot CLI's screen: status with evidence, and the last answer.

Copilot CLI draws a full-screen interface (on the terminal's alternate screen): a row of tabs, the
transcript, the working folder, an input box between two full-width rules, and a footer::

     [Current]  …                                                     <- a row of tabs
     ❯ what the user sent                                     00:43  <- user messages: " ❯ ", then the time
     $ Shell List files 4 lines…                                      <- tool calls ("$", "/", "✗", some "●")
       ls -la
     ● The answer, continued on rows                                  <- answers: " ● ", rows indented by 3
       indented by three spaces.
     /home/me/project                                                 <- the working folder
    ──────────────────────────────────
    ❯                                                                 <- the input box
    ──────────────────────────────────
     ← open sidebar · Interactive · Allow All · / commands · ? help  <- footer ("◉ Working … esc …" if busy)

When the transcript is taller than the screen a scrollbar ("┃") is drawn in the last column. Dialogs
(folder trust, permission requests) and questions the model asks replace the input box; the text field
a question opens on its "Other" row is drawn like an input box, under the question's own rule. Between a
tool's result and the model's next step the footer shows its idle hints for a moment, so a turn is
over only when an answer (or an error) is its last item.

A plain capture has no colours, so tool calls drawn with a "●" (file reads and edits, MCP tools, SQL)
look like answers; they are told apart by their shapes (:data:`NOT_ANSWERS`), and rows the CLI adds
on its own (tips, MCP status, the selected agent) by :data:`INFO`. Everything here works on the
rendered text ``capture-pane`` gives, never raises, and names the rule that decided in the evidence.
"""

from __future__ import annotations

import re

from cao_hookspecs import StatusReport, TerminalStatus
from cao_screen_core.input_box import InputBoxScreen
from cao_screen_core.reports import read_safely
from cao_screen_core.reports import report as _report

__all__ = ["Block", "Screen", "detect_status", "extract_last_message", "parse_screen"]

_RULE = re.compile(r"^─{20,}$")
_BOX_ROW = re.compile("^❯(?:[ \u00a0]|$)")
_SCROLLBAR = re.compile(r"\s*┃$")
# A transcript item starts in the second column with a one-character glyph and a space; the working
# folder (" /home/me") and the tab row (" [Current]") never have a space after their first character.
_ITEM = re.compile(r"^ (?P<glyph>\S) (?P<text>.*)$")
_CONTINUATION = re.compile(r"^(?:\s*$|  )")
_TIME = re.compile(r"\s{2,}\d{1,2}:\d{2}(?:\s?[AaPp][Mm])?$")
# The footer while a turn runs: "◉ Working esc esc edit prompt", "◎ Working · 68 B esc esc interrupt".
_BUSY_FOOTER = re.compile(r"^\s*\S\s+Working\b|\besc\b.{0,20}\b(?:interrupt|cancel|edit prompt)\b")
# The footer while the CLI starts (the first run's banner animates meanwhile): "◉ Loading:".
_LOADING_FOOTER = re.compile(r"^\s*\S\s+Loading\b")
# Hints Copilot may draw in an empty input box (a plain capture cannot tell them from typed text).
_PLACEHOLDER = re.compile(r"^(?:|Type @ to mention files.*)$")
# Dialogs and menus are drawn in the bottom rows.
_DIALOG_ROWS = 40

#: Rows Copilot adds to the transcript on its own, at start-up or whenever they are ready (a tip can be
#: drawn after the first message): never an answer, never part of a turn.
INFO = re.compile(
    r"^(?:Tip: |MCP Servers reloaded: |Selected custom agent: |Disabled tools: "
    r"|Folder .* has been added to trusted folders\.)"
)
#: "●" rows that are not answers: tool calls and notes about the turn (first row of the block, without
#: its "● ").
NOT_ANSWERS = re.compile(
    r"\(MCP: [^)]+\)"                                  # ping (MCP: server) · text: "hi" pong
    r"|^Asked user "                                   # Asked user Which database? / └ SQLite
    r"|^(?:Read|View) \S+ \d+ lines? read$"            # Read notes.txt 2 lines read
    r"|^(?:Create|Edit) \S+(?: [+-]\d+)+$"             # Edit notes.txt +1 -1
    r"|^\S.* \(sql\)$"                                 # List todos (sql)
    r"|^Listing background agents$|^Checking my documentation\b"
    r"|^Response was interrupted due to a server error\. Retrying\.\.\.$"
    r"|^Operation cancelled by user$"
)
_CANCELLED = "Operation cancelled by user"
# A "✗" row naming a tool is a failed tool call (the model gets the failure and goes on); any other
# "✗" row ends the turn (✗ 400 ..., ✗ Could not connect to local model provider, ✗ You must be logged in).
_TOOL_TITLE = re.compile(
    r"^(?:Shell|Read|View|Create|Edit|Write|Delete|Search|Glob|Grep|Fetch|Web \w+)\b"
    r"|^[\w.-]+\([^)]*\)"                               # skill(nosuch) Skill not found
    r"|\(MCP: [^)]+\)|\(sql\)"
)
# A block whose second row starts with one of these draws a tool's input or result (│ SELECT 1, └ 1 row).
_TOOL_DETAIL = re.compile(r"^\s*[│└]")

# Dialogs drawn instead of the input box, in the words each one uses.
DIALOGS = (("trust folder", re.compile(r"Do you trust the files in this folder\?")),)
_PERMISSION = re.compile(r"^\W*(?P<question>Do you want to [^?\n]*\?)", re.MULTILINE)
_MENU_HINT = re.compile(r"↑/↓ to navigate · enter to select")
_QUESTION_HINT = re.compile(r"↑/↓ select · enter accept|enter accept · ctrl\+d decline")
_QUESTION_TITLE = re.compile(r"^\s*Copilot needs information\.\s*$")
# Screens left by a Copilot CLI that refused to start.
FATAL = (
    ("bad command-line option",
     re.compile(r"^error: (?:unexpected argument|invalid value|a value is required)", re.MULTILINE)),
    ("offline mode without a model provider", re.compile(r"^Offline mode requires a local model provider",
                                                          re.MULTILINE)),
)
# Shown above the input box when no GitHub account (or token) is available and no model provider is set.
LOGIN_NEEDED = re.compile(r"Please use /login to sign in to use Copilot")


class Block:
    """One transcript item: its glyph, its first row's text and its continuation rows."""

    def __init__(self, glyph: str, first: str, rest: list[str]) -> None:
        self.glyph = glyph
        self.first = first
        self.rest = rest

    @property
    def is_user(self) -> bool:
        return self.glyph == "❯"

    @property
    def is_info(self) -> bool:
        return (self.glyph == "●" and INFO.match(self.first) is not None) or self.glyph == "!"

    @property
    def is_answer(self) -> bool:
        if self.glyph != "●" or self.is_info or NOT_ANSWERS.search(self.first):
            return False
        return not (self.rest and _TOOL_DETAIL.match(self.rest[0]))

    @property
    def is_tool_failure(self) -> bool:
        return self.glyph == "✗" and _TOOL_TITLE.search(self.first) is not None

    @property
    def user_text(self) -> str:
        return _TIME.sub("", self.first).strip()

    def text(self) -> str:
        """The block's text: the first row, then the others without their three-space indent."""
        rows = [self.first, *(row[3:] if row.startswith("   ") else row.strip() for row in self.rest)]
        while rows and not rows[-1].strip():
            rows.pop()
        return "\n".join(row.rstrip() for row in rows).strip()


class Screen(InputBoxScreen):
    """A screen split into transcript, input box and footer (any part may be missing)."""

    RULE = _RULE
    PROMPT = _BOX_ROW
    PLACEHOLDER = _PLACEHOLDER

    def __init__(self, text: str) -> None:
        super().__init__([_SCROLLBAR.sub("", line.rstrip()) for line in text.splitlines()])

    @property
    def footer(self) -> str:
        return re.sub(r"\s+", " ", " ".join(self.footer_rows)).strip()

    @property
    def question_field(self) -> bool:
        """The box drawn is not the input box but the text field of a question's "Other" row: the
        question's rule right above it, the question's key hints above that, nothing under it."""
        if self.box_top is None or self.footer_rows or self.box_top < 1:
            return False
        if not self.RULE.match(self.lines[self.box_top - 1]):
            return False
        hint = next((line for line in reversed(self.lines[:self.box_top - 1]) if line.strip()), "")
        return _QUESTION_HINT.search(hint) is not None

    def blocks(self) -> list[Block]:
        """The transcript's items, oldest first."""
        found: list[Block] = []
        current: Block | None = None
        for line in self.transcript:
            item = _ITEM.match(line)
            if item:
                current = Block(item.group("glyph"), item.group("text").rstrip(), [])
                found.append(current)
            elif current is not None and _CONTINUATION.match(line):
                current.rest.append(line)
            else:
                current = None
        for block in found:
            while block.rest and not block.rest[-1].strip():
                block.rest.pop()
        return found


def parse_screen(text: str) -> Screen:
    """Split a rendered screen into its parts (for tests and tools)."""
    return Screen(text)


def _turn(blocks: list[Block]) -> tuple[Block | None, list[Block]]:
    """The last user message and the items drawn after it (rows Copilot adds on its own left out)."""
    at = next((i for i in range(len(blocks) - 1, -1, -1) if blocks[i].is_user), None)
    if at is None:
        return None, []
    return blocks[at], [block for block in blocks[at + 1:] if not block.is_info]


def detect_status(screen: str) -> StatusReport:
    """Copilot CLI's status from its rendered screen. Never raises."""
    return read_safely(_detect, screen)


def _without_box(screen: Screen) -> StatusReport:
    tail = screen.tail(_DIALOG_ROWS)
    joined = "\n".join(tail)
    for name, pattern in DIALOGS:
        if pattern.search(joined) and _MENU_HINT.search(joined):
            return _report(TerminalStatus.WAITING_USER_ANSWER, f"start-up dialog: {name}")
    permission = _PERMISSION.search(joined)
    if permission and _MENU_HINT.search(joined):
        question = permission.group("question")
        return _report(TerminalStatus.WAITING_USER_ANSWER, f"permission request: {question}")
    if _QUESTION_HINT.search(joined):
        at = next((i for i, line in enumerate(tail) if _QUESTION_TITLE.match(line)), None)
        question = tail[at + 1].strip() if at is not None and at + 1 < len(tail) else "(question not shown)"
        field = ", its text field open" if screen.question_field else ""
        return _report(TerminalStatus.WAITING_USER_ANSWER, f"question from the model: {question}{field}")
    if _MENU_HINT.search(joined) and re.search(r"❯ 1\. ", joined):
        return _report(TerminalStatus.WAITING_USER_ANSWER, "menu waiting for a choice")
    for name, pattern in FATAL:
        if pattern.search(joined):
            return _report(TerminalStatus.ERROR, f"Copilot CLI stopped: {name}")
    return _report(TerminalStatus.UNKNOWN, "no input box on screen")


def _detect(text: str) -> StatusReport:
    screen = Screen(text)
    if not screen.has_box or screen.question_field:
        return _without_box(screen)
    footer = screen.footer
    if _BUSY_FOOTER.search(footer):
        return _report(TerminalStatus.PROCESSING, f"footer says the turn runs: {footer[:80]}")
    pending = screen.pending_input
    if pending:
        # Typed or pasted, Enter not handled yet: whatever the transcript says belongs to the last turn.
        return _report(TerminalStatus.PROCESSING, f"input not submitted yet: {pending.splitlines()[0][:60]}")
    blocks = screen.blocks()
    user, turn = _turn(blocks)
    if user is None:
        # Signed out, a message is refused before it joins the transcript: "✗ You must be logged in...".
        refused = [block for block in blocks if block.glyph == "✗" and not block.is_tool_failure]
        if refused:
            return _report(TerminalStatus.ERROR, f"message refused: ✗ {refused[-1].first}")
        login = next((line.strip() for line in screen.transcript if LOGIN_NEEDED.search(line)), None)
        if login is not None:
            return _report(TerminalStatus.ERROR, f"not signed in: {login}")
        if _LOADING_FOOTER.search(footer):
            return _report(TerminalStatus.UNKNOWN, f"still starting: {footer[:60]}")
        return _report(TerminalStatus.IDLE, "no message sent yet, prompt is waiting")
    # Readings of two turns must differ even when their last rows happen to match.
    about = f" after {user.user_text[:40]!r}"
    if not turn:
        return _report(TerminalStatus.PROCESSING, f"message{about} sent, nothing drawn after it yet")
    last = turn[-1]
    if last.glyph == "●" and last.first == _CANCELLED:
        return _report(TerminalStatus.IDLE, f"turn{about} cancelled; prompt is waiting")
    if last.glyph == "✗" and not last.is_tool_failure:
        return _report(TerminalStatus.ERROR, f"turn{about} ended in an error: ✗ {last.first}")
    if last.is_answer:
        return _report(TerminalStatus.COMPLETED, f"answer{about} above an empty prompt")
    # Between a tool's result and the model's next step the footer shows the idle hints for a moment:
    # a turn whose last item is a tool call is not over.
    return _report(TerminalStatus.PROCESSING,
                   f"turn{about} waits for the model after: {last.glyph} {last.first[:60]}")


def extract_last_message(text: str) -> str:
    """The text of Copilot's last answer to the user's last message.

    ``text`` is a screen (Copilot draws on the alternate screen, so there is no scrollback above it).
    Rows the CLI wrapped stay separate lines; Markdown arrives as Copilot rendered it. Raises
    ``ValueError`` while a turn runs, and when no answer follows the last message (the turn ended in an
    error or only in tool calls, or nothing was sent yet).
    """
    screen = Screen(text)
    if screen.has_box and _BUSY_FOOTER.search(screen.footer):
        raise ValueError("Copilot CLI is still working on the turn")
    user, turn = _turn(screen.blocks())
    if user is None:
        raise ValueError("no message sent to Copilot CLI on this screen")
    answers = [block for block in turn if block.is_answer]
    if not answers:
        raise ValueError("no Copilot CLI answer ('● ' block) after the last message")
    return answers[-1].text()
