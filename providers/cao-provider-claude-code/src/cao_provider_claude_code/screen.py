"""Reading Claude Code's screen: status with evidence, and the last answer.

Claude Code draws a transcript, then an input box between two full-width rules, then a footer::

    ❯ what the user sent                 <- transcript: user messages start with "❯ " at column 0
    ● The answer, continued on lines      <- answers (and tool calls) start with "● "
      indented by two spaces.
    ✻ Worked for 3s · done 11:09 PM      <- turn summary (a spinner line "✢ Thinking…" while busy)
    ────────────────────────────────
    ❯                                     <- the input box
    ────────────────────────────────
      ⏵⏵ auto mode on · esc to interrupt  <- footer ("esc to interrupt" only while busy)

Menus (permission prompts, start-up dialogs) replace the input box with a list whose selected row
starts with an indented "❯". Everything here works on the rendered text ``capture-pane`` gives (no
colours), never raises, and names the rule that decided in the report's evidence.
"""

from __future__ import annotations

import re

from cao_hookspecs import StatusReport, TerminalStatus
from cao_screen_core.blocks import indented_blocks
from cao_screen_core.input_box import InputBoxScreen
from cao_screen_core.reports import read_safely
from cao_screen_core.reports import report as _report
from cao_screen_core.rows import last_index

__all__ = ["detect_status", "extract_last_message", "parse_screen"]

# Spinner and summary glyphs Claude Code cycles through (the summary keeps the last one shown).
GLYPHS = "·✢✳✶✻✽*✺✹✸✷"
_RULE = re.compile(r"^\s*─{20,}\s*$")
_PROMPT = re.compile("^❯(?:[ \u00a0]|$)")
_SPINNER = re.compile(rf"^[{re.escape(GLYPHS)}] (?P<text>\S.*)$")
_SUMMARY = re.compile(rf"^[{re.escape(GLYPHS)}] \S+ for \d+(?:\.\d+)?[smh]\b")
_ANSWER = re.compile(r"^[●⏺] (?P<text>.*)$")
_TOOL_OUTPUT = re.compile(r"^\s+⎿ ")
# The selected row of a menu: numbered ("❯ 1. Yes", at any indent) or indented ("  ❯ No, exit").
_MENU_CURSOR = re.compile(r"^(?:\s*❯ \d+\. |\s+❯ )\S")
_MENU_HINT = re.compile(r"(Enter to (?:confirm|select|submit)|Esc to cancel|↑/↓ to navigate)")
# Menus and dialogs are drawn in the bottom rows.
_MENU_ROWS = 25
# Rows right-aligned far to the right of the transcript (effort level, model retirement notes).
_DECORATION = re.compile(r"^\s{20,}\S")

# Start-up dialogs, in the words each one uses; they are answered by the kernel (see dialogs.py).
DIALOGS = (
    ("trust folder",
     re.compile(r"Is this a project you created or one you trust|Do you trust the files in this folder")),
    ("API key confirmation", re.compile(r"Do you want to use this API key\?")),
    ("bypass permissions confirmation", re.compile(r"Bypass Permissions mode")),
    ("theme selection", re.compile(r"Choose the text style that looks best")),
)
# Screens left by a Claude Code that refused to start or cannot go on.
FATAL = (
    ("refuses bypass mode as root", re.compile(r"cannot be used with root/sudo privileges")),
    ("bad command-line option",
     re.compile(r"^error: (?:option|unknown option|too many arguments)", re.MULTILINE)),
    ("MCP config not found", re.compile(r"MCP config file not found")),
    ("cannot reach the API at start-up", re.compile(r"Unable to connect to Anthropic services")),
    # Printed under the trust dialog's last frame when the user chose "No, exit".
    ("folder not trusted", re.compile(r"^Claude Code didn't start because", re.MULTILINE)),
)
# A turn that ended on one of these (after the user's last message) ended in an error.
TURN_ERRORS = re.compile(
    r"^(?:[●⏺] API Error\b|\s+⎿\s+(?:API Error\b|Invalid API key|Please run /login|Credit balance is too low"
    r"|.*· Fix external API key))"
)
_INTERRUPTED = re.compile(r"^\s+⎿\s+Interrupted\b")
# Notices Claude Code draws as "●" blocks after a turn, which are not the model's answer.
_NOTICE = re.compile(r"^[●⏺] Auto mode lets Claude handle permission prompts\b")
# Grey hints Claude Code shows in an empty input box (a plain capture cannot tell them from typed text).
_PLACEHOLDER = re.compile(r"^(?:|Try \".*\"|Resend your message to try again|Once fixed, resend your message"
                          r"|Press up to edit queued messages)$")


class Screen(InputBoxScreen):
    """A screen split into transcript, input box and footer (any part may be missing)."""

    RULE = _RULE
    PROMPT = _PROMPT
    PLACEHOLDER = _PLACEHOLDER

    def __init__(self, text: str) -> None:
        super().__init__([line.rstrip() for line in text.splitlines()])

    @property
    def footer(self) -> str:
        return " ".join(self.footer_rows)


def parse_screen(text: str) -> Screen:
    """Split a rendered screen into its parts (for tests and tools)."""
    return Screen(text)


def _status_line(transcript: list[str]) -> str | None:
    """The row just above the input box that tells what the turn is doing (spinner or summary)."""
    for line in reversed(transcript):
        if not line.strip() or _DECORATION.match(line) or (_TOOL_OUTPUT.match(line) and "Tip:" in line):
            continue
        return line
    return None


def _last_user_message(transcript: list[str]) -> int | None:
    return last_index(transcript, lambda line: bool(_PROMPT.match(line)) and line.strip() != "❯")


def detect_status(screen: str) -> StatusReport:
    """Claude Code's status from its rendered screen. Never raises."""
    return read_safely(_detect, screen)


def _detect(text: str) -> StatusReport:
    screen = Screen(text)
    if not screen.has_box:
        tail = screen.tail(_MENU_ROWS)
        joined = "\n".join(tail)
        # A refusal printed under a dialog's last frame ends the program: the dialog is not waiting.
        for name, pattern in FATAL:
            if pattern.search(joined):
                return _report(TerminalStatus.ERROR, f"Claude Code stopped: {name}")
        for name, pattern in DIALOGS:
            if pattern.search(joined) and _MENU_HINT.search(joined):
                return _report(TerminalStatus.WAITING_USER_ANSWER, f"start-up dialog: {name}")
        at = next((i for i in range(len(tail) - 1, -1, -1) if _MENU_CURSOR.match(tail[i])), None)
        if at is not None and _MENU_HINT.search(joined):
            question = next((line.strip() for line in reversed(tail[:at]) if line.rstrip().endswith("?")),
                            tail[at].strip())
            return _report(TerminalStatus.WAITING_USER_ANSWER, f"menu waiting for a choice: {question}")
        return _report(TerminalStatus.UNKNOWN, "no input box on screen")

    if "esc to interrupt" in screen.footer:
        return _report(TerminalStatus.PROCESSING, "footer says 'esc to interrupt'")
    transcript = screen.transcript
    status_line = _status_line(transcript)
    if status_line is not None and _SPINNER.match(status_line) and not _SUMMARY.match(status_line):
        if "…" in status_line or "retrying" in status_line:
            return _report(TerminalStatus.PROCESSING, f"spinner: {status_line.strip()}")

    pending = screen.pending_input
    if pending:
        # Typed or pasted, Enter not handled yet: whatever the transcript says belongs to the last turn.
        return _report(TerminalStatus.PROCESSING, f"input not submitted yet: {pending.splitlines()[0][:60]}")
    user = _last_user_message(transcript)
    turn = transcript[user + 1:] if user is not None else transcript
    # Readings of two turns must differ even when their summary rows happen to match.
    about = f" after {transcript[user][2:].strip()[:40]!r}" if user is not None else ""
    for line in reversed(turn):
        if TURN_ERRORS.match(line):
            return _report(TerminalStatus.ERROR, f"turn{about} ended in an error: {line.strip()}")
        if _ANSWER.match(line) or _SUMMARY.match(line):
            break
    if any(_INTERRUPTED.match(line) for line in turn):
        return _report(TerminalStatus.IDLE, "turn interrupted; prompt is waiting")
    if status_line is not None and _SUMMARY.match(status_line):
        return _report(TerminalStatus.COMPLETED, f"turn summary{about}: {status_line.strip()}")
    if any(_ANSWER.match(line) for line in turn):
        return _report(TerminalStatus.COMPLETED, f"answer{about} above an empty prompt")
    if user is None:
        return _report(TerminalStatus.IDLE, "no message sent yet, prompt is waiting")
    output = _turn_output(turn)
    if not output:
        # Sent, not answered yet: the spinner is drawn a moment after the message moves up.
        return _report(TerminalStatus.PROCESSING, "message sent, nothing drawn after it yet")
    return _report(TerminalStatus.COMPLETED,
                   f"turn output{about} above an empty prompt: {output[-1].strip()}")


def _turn_output(turn: list[str]) -> list[str]:
    """Rows the CLI drew after the user's message (the message's own continuation rows left out)."""
    index = 0
    while index < len(turn) and (not turn[index].strip()
                                 or turn[index].startswith("  ") and not _TOOL_OUTPUT.match(turn[index])):
        index += 1
    return [line for line in turn[index:] if line.strip() and not _DECORATION.match(line)]


def _answer_blocks(lines: list[str]) -> list[list[str]]:
    """The text of each answer block in ``lines``; tool calls and API errors are left out."""
    return [block.text for block in indented_blocks(lines, _ANSWER)
            if not TURN_ERRORS.match(lines[block.start]) and not _NOTICE.match(lines[block.start])
            and not any(_TOOL_OUTPUT.match(row) for row in lines[block.start + 1:block.end])]


def extract_last_message(text: str) -> str:
    """The text of Claude Code's last answer after the user's last message.

    ``text`` is a screen, optionally with scrollback above it. Rows the CLI wrapped stay separate
    lines. Raises ``ValueError`` when no answer follows the last message (still working, or the turn
    ended in an error or only in tool calls).
    """
    screen = Screen(text)
    transcript = screen.transcript
    user = _last_user_message(transcript)
    turn = transcript[user + 1:] if user is not None else transcript
    blocks = _answer_blocks(turn)
    if not blocks:
        raise ValueError("no Claude Code answer ('● ' block) after the last message")
    return "\n".join(blocks[-1]).strip()
