"""Reading Codex's screen: status with evidence, start-up dialogs, and the last answer.

Codex runs inline (``--no-alt-screen``): the transcript scrolls like ordinary output and the bottom
of the screen is the composer (a row starting with ``›``) above a footer. Since 0.169 the footer has
two rows (``<model> <effort> · <folder> [· <title>]`` and the key hints), which is what made
"the prompt is on the last row" detectors read every finished turn as still running.

A turn in the transcript looks like this::

    › the user's message              <- user rows start with the prompt glyph at column 0
      (more lines of it, indented)

    • Called cao.send_message(...)    <- events start at column 0 with a glyph
      └ result
    ◦ Working (3s • esc to interrupt) <- the live row, last, while the model thinks or a tool runs

and once the turn is over::

    • The answer.                     <- the agent's text; its further lines are indented
      Worked for 3s • 12:34           <- the turn summary

The detector never looks at the last row alone: it finds the composer, reads the transcript above
it from the last user message down, and names the row that decided (``StatusReport.evidence``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from cao_hookspecs import StatusReport, TerminalStatus

__all__ = ["detect_status", "extract_last_message"]

PROMPT = "\u203a"  # › : the composer, user messages and the selected option of a list
_EVENT_GLYPHS = ("\u2022", "\u25e6", "\u25a0", "\u2714", "\u2717", "\u26a0")  # • ◦ ■ ✔ ✗ ⚠
_ANSWER_GLYPH = "\u2022"
_ERROR_GLYPH = "\u25a0"
_SUMMARY = re.compile(r"^\s+(?:\u2500+\s*)?Worked for\b")
# The live status row at the bottom of a running turn: "◦ Working (12s • esc to interrupt)", possibly
# followed by notes such as "· 1 background terminal running · /ps to view".
_WORKING = re.compile(r"^[\u2022\u25e6] .*\((?:\d+\s*[hms]\s*)+(?:\u2022\s*)?esc to interrupt\)")
_INTERRUPTED = re.compile(r"interrupted", re.IGNORECASE)
_SHORTCUTS_HINT = "? for shortcuts"
_MODEL_LINE = " \u00b7 "  # the footer's first row: "<model> <effort> · <folder> [· <title>]"
_HINTS = re.compile(r"for shortcuts|for agents|to queue|f2 to view")
_OPTION = re.compile(rf"^(?:{PROMPT}|\s)\s*\d+\.\s+\S")
_TOOL_RESULT = re.compile(r"^\s+\u2514")  # └ : the output row under a tool call
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")

# Dialogs Codex shows instead of the composer: (title, status, evidence). A dialog counts only when its
# title is near the bottom and the bottom row is its key hint, so an answer quoting one is not one.
_KEY_HINT = re.compile(
    r"(?i)\b(?:press\s+)?enter\b.*\b(?:continue|confirm|select|submit)\b|\besc\b.*\b(?:back|cancel)\b")
_DIALOGS: tuple[tuple[re.Pattern[str], TerminalStatus, str], ...] = (
    (re.compile(r"Sign in with ChatGPT|Choose how you want to use Codex|Paste or type your API key"),
     TerminalStatus.ERROR,
     "login screen: Codex is not signed in (run `codex login`, or give the profile a model provider "
     "with an API key)"),
    (re.compile(r"Trust this folder\?|Do you trust the contents of this directory"
                r"|allow Codex to work in this folder"),
     TerminalStatus.WAITING_USER_ANSWER, "trust-folder dialog"),
    (re.compile(r"Update available(?:!| \u00b7 )"), TerminalStatus.WAITING_USER_ANSWER, "update prompt"),
    (re.compile(r"Would you like to |Allow .* to run|requests? (?:approval|permission)"),
     TerminalStatus.WAITING_USER_ANSWER, "approval prompt"),
)
_DIALOG_DEPTH = 16  # rows from the bottom a dialog's title may be in


def _rows(screen: str) -> list[str]:
    rows = [_ANSI.sub("", row).rstrip() for row in screen.splitlines()]
    while rows and not rows[-1]:
        rows.pop()
    return rows


def _is_event(row: str) -> bool:
    return row.startswith(_EVENT_GLYPHS) or bool(_SUMMARY.match(row))


def _composer(rows: Sequence[str]) -> int | None:
    """Index of the composer: the last prompt row with no transcript event below it."""
    for index in range(len(rows) - 1, -1, -1):
        if _is_event(rows[index]):
            return None
        if rows[index].startswith(PROMPT):
            return index
    return None


def _last_user_row(rows: Sequence[str], end: int) -> int | None:
    for index in range(end - 1, -1, -1):
        if rows[index].startswith(PROMPT):
            return index
    return None


def _dialog(rows: Sequence[str]) -> StatusReport | None:
    if not rows or not _KEY_HINT.search(rows[-1]):
        return None
    bottom = rows[-_DIALOG_DEPTH:]
    for pattern, status, evidence in _DIALOGS:
        for row in bottom:
            if pattern.search(row):
                return StatusReport(status=status, evidence=f"{evidence}: {row.strip()!r}")
    if any(_OPTION.match(row) for row in bottom):
        return StatusReport(status=TerminalStatus.WAITING_USER_ANSWER,
                            evidence=f"a list waits for a choice: {rows[-1].strip()!r}")
    return None


def _report(status: TerminalStatus, evidence: str) -> StatusReport:
    return StatusReport(status=status, evidence=evidence)


def detect_status(screen: str) -> StatusReport:
    """Codex's status from its rendered screen (never raises)."""
    try:
        return _detect(_rows(screen))
    except Exception as exc:  # noqa: BLE001 - a detector must never raise; say why instead
        return _report(TerminalStatus.UNKNOWN, f"detector failed: {type(exc).__name__}: {exc}")


def _detect(rows: list[str]) -> StatusReport:
    if not rows:
        return _report(TerminalStatus.UNKNOWN, "blank screen")
    dialog = _dialog(rows)
    if dialog is not None:
        return dialog
    composer = _composer(rows)
    if composer is None:
        return _report(TerminalStatus.UNKNOWN, f"no prompt on screen (last row {rows[-1].strip()!r})")
    footer = rows[composer + 1:]
    if not any(_MODEL_LINE in row and not _HINTS.search(row) for row in footer):
        # Codex draws a bare composer for a moment before its sign-in screen: not ready until the
        # footer names the model and folder.
        return _report(TerminalStatus.UNKNOWN, "starting: no model line under the prompt yet")
    user = _last_user_row(rows, composer)
    segment = rows[(user + 1 if user is not None else 0):composer]
    last_event = next((row for row in reversed(segment) if _is_event(row)), None)
    if last_event is not None and _WORKING.match(last_event):
        return _report(TerminalStatus.PROCESSING, f"working row {last_event.strip()!r}")
    if not any(_SHORTCUTS_HINT in row for row in footer) and rows[composer].strip() != PROMPT:
        # The key hints leave the footer while the composer holds text: typed (or pasted) and not sent.
        # Typing more into it would merge two messages; report busy until it is sent or cleared.
        typed = rows[composer].strip()[:60]
        return _report(TerminalStatus.PROCESSING, f"unsent text in the prompt {typed!r}")
    if last_event is not None and _SUMMARY.match(last_event):
        return _report(TerminalStatus.COMPLETED, f"turn summary {last_event.strip()!r}")
    if last_event is not None and last_event.startswith(_ERROR_GLYPH):
        if _INTERRUPTED.search(last_event):
            return _report(TerminalStatus.IDLE, f"turn interrupted {last_event.strip()!r}")
        return _report(TerminalStatus.ERROR, f"error row {last_event.strip()!r}")
    if user is not None:
        where = f"after {last_event.strip()[:60]!r}" if last_event else "no answer yet"
        return _report(TerminalStatus.PROCESSING, f"turn under way ({where})")
    if last_event is not None:
        shown = last_event.strip()[:60]
        return _report(TerminalStatus.PROCESSING, f"answer streaming, its message scrolled away ({shown!r})")
    return _report(TerminalStatus.IDLE, f"empty prompt, no turn yet {rows[composer].strip()!r}")


def _blocks(segment: Sequence[str]) -> list[list[str]]:
    """The transcript events of a segment, each with its continuation rows."""
    blocks: list[list[str]] = []
    for row in segment:
        if _is_event(row):
            blocks.append([row])
        elif blocks and (not row or row.startswith(" ")):
            blocks[-1].append(row)
        elif row:
            blocks.append([row])  # something unexpected at column 0: it ends the previous block
    return blocks


def _answer_text(block: Sequence[str]) -> str:
    first = block[0][len(_ANSWER_GLYPH):].lstrip(" ")
    rest = [row[2:] if row.startswith("  ") else row.lstrip() for row in block[1:]]
    return "\n".join([first, *rest]).strip("\n").rstrip()


def extract_last_message(text: str) -> str:
    """The agent's answer in the last finished turn of ``text`` (screen plus history).

    The answer is the last text event (``•``, no tool output under it) between the last user message
    and its turn summary, with Codex's two-space continuation indent removed. Raises ``ValueError``
    when the last turn has no finished answer (still running, failed, or only tool calls).
    """
    rows = _rows(text)
    composer = _composer(rows)
    end = composer if composer is not None else len(rows)
    user = _last_user_row(rows, end)
    segment = rows[(user + 1 if user is not None else 0):end]
    summary = next((i for i in range(len(segment) - 1, -1, -1) if _SUMMARY.match(segment[i])), None)
    if summary is None:
        raise ValueError("no finished Codex turn on screen (no 'Worked for' summary after the last message)")
    for block in reversed(_blocks(segment[:summary])):
        if block[0].startswith(_ANSWER_GLYPH) and not any(_TOOL_RESULT.match(row) for row in block[1:]):
            answer = _answer_text(block)
            if answer:
                return answer
    raise ValueError("the last Codex turn finished without a text answer")
