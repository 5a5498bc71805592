"""Reading Kimi CLI's screen: status with evidence, and the last answer.

Kimi CLI (1.x, the Python ``kimi-cli``) runs inline: what it committed scrolls like ordinary output,
and the bottom of the screen is its prompt area::

    ✨ what the user sent              <- user messages: "✨ " at column 0 (more lines unindented)

    • Used Shell (ls)                  <- a finished tool call: "• Used <Tool> (<argument>)"

    • The answer, continued on rows    <- answers: "• " at column 0, further rows indented by two
      indented by two spaces.

    🌓                                 <- the live area while a turn runs: a spinner row ("🌓",
                                          "⠸ Using Shell (ls)", "Retrying after ...")
    ── input ────────────────────      <- the input box (typed text on the rows below)

    ─────────────────────────────      <- the toolbar: a rule, then flags, mode, model, folder and
    yolo  agent (model ○)  ~/project      rotating tips, then the context meter
                 context: 6.2% (...)

An approval or a question replaces the input box with a panel (``╭─ approval ─``, ``╭─ question ─``).
Before the prompt, Kimi may stop at an update or migration gate (see ``dialogs.py``), or exit with an
error. Everything here works on the rendered text ``capture-pane`` gives (no colours), never raises,
and names the rule that decided in the report's evidence.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from cao_hookspecs import StatusReport, TerminalStatus
from cao_screen_core.blocks import indented_blocks
from cao_screen_core.reports import report as _report
from cao_screen_core.rows import last_index

from .dialogs import STARTUP_DIALOGS

__all__ = ["detect_status", "extract_last_message"]

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?")
_RULE = re.compile(r"^─{20,}$")
# The toolbar's first row: optional flags, then the mode (with the model when there is room).
_TOOLBAR = re.compile(r"^(?:(?:yolo|afk|plan)\s+)*(?:agent|shell)(?:\s|$)")
_INPUT_HEADER = re.compile(r"^(?:──|╌╌) input\b")
# Messages typed while a turn runs wait in Kimi's queue ("── input · 1 queued ──") for the next turn.
_QUEUED = re.compile(r"· (\d+) queued\b")
_PANEL_TOP = re.compile(r"^╭─ (?P<title>\S[^─]*?) ─")
_PANEL_BOTTOM = re.compile(r"^╰─")
_BOX = ("│", "╭", "╰", "├", "┌", "└")
_USER = re.compile(r"^✨ ?(?P<text>.*)$")
_BULLET = re.compile(r"^• (?P<text>.*)$")
_TOOL = re.compile(r"^• Used [A-Za-z_][\w-]*(?: \(|$)")
# Rows of the live area: the spinners Kimi draws while a turn runs (rich's "dots" braille frames before
# "Using <Tool>", "Composing...", "Thinking...", "Connecting to MCP servers..."; the "moon" frames on
# their own), the compact thinking label, retries and compaction.
_BUSY = (
    ("spinner", re.compile(r"^[\u2800-\u28ff](?: |$)")),
    ("waiting for the model", re.compile(r"^[\U0001F311-\U0001F318]$")),
    ("thinking", re.compile(r"^Thinking\b")),
    ("retrying", re.compile(r"^Retrying after ")),
    ("compacting", re.compile(r"^.{0,2}Compacting\.\.\.")),
)
# Rows a turn ends on when it failed (what Kimi prints for each kind of failure).
_TURN_ERRORS = re.compile(
    r"^(?:LLM provider error: |LLM not set\b|Authorization failed\.|Membership expired\b"
    r"|Server: Error code: \d|Network connection failed: |Request timed out: "
    r"|The server returned an empty response\.|Unexpected error: |Max number of steps reached\b)"
)
_INTERRUPTED = re.compile(r"^Interrupted by user$")
# Blank rows above the input box once a turn is over: after a "• " block (its own blank row, the
# end-of-turn one, the prompt's), after plain text such as an error (the end-of-turn one, the prompt's).
_TURN_END_AFTER_BLOCK = 3
_TURN_END_AFTER_TEXT = 2
# Screens of a Kimi CLI that refused to start or is gone (no toolbar any more).
_FATAL = (
    ("bad command-line option", re.compile(r"^Usage: kimi \[OPTIONS\]", re.MULTILINE)),
    ("configuration refused", re.compile(r"^Invalid configuration (?:file|text)\b", re.MULTILINE)),
    ("this kimi-cli release is only a deprecation notice",
     re.compile(r"kimi-cli is no longer maintained\. Please use the new Kimi Code CLI"
                r"|kimi-cli 已停止维护，请使用")),
    ("start-up failed", re.compile(r"^Run with --debug for full traceback", re.MULTILINE)),
    # What Enter at a start-up gate leads to when it does not come back to the prompt.
    ("the upgrade the update gate started failed",
     re.compile(r"^Upgrade failed\. Please try running manually:", re.MULTILINE)),
    ("migrated to the new Kimi Code; this kimi-cli is done",
     re.compile(r"^Migration complete! Open a new terminal", re.MULTILINE)),
    ("Kimi CLI exited", re.compile(r"^To resume this session: kimi -r ", re.MULTILINE)),
)
_STARTING = re.compile(r"^[\u2800-\u28ff] (?P<text>(?:Loading|Preparing|Scanning|Connecting)\b.*)$")


def _rows(text: str) -> list[str]:
    rows = [_ANSI.sub("", row).rstrip() for row in text.split("\n")]
    while rows and not rows[-1]:
        rows.pop()
    return rows


def _footer(rows: Sequence[str]) -> int | None:
    """Index of the toolbar's rule (the last full rule with the toolbar row under it)."""
    for index in range(len(rows) - 2, -1, -1):
        if _RULE.match(rows[index]) and _TOOLBAR.match(rows[index + 1]):
            return index
    return None


def _segment(transcript: Sequence[str]) -> tuple[int | None, list[str]]:
    """The last user message's row and what the CLI drew after it (the message's own further rows,
    up to the blank row Kimi prints under it, left out). Without a user message on screen (none sent,
    or scrolled away), the whole transcript."""
    user = last_index(transcript, _USER.match)
    if user is None:
        return None, list(transcript)
    start = user + 1
    while start < len(transcript) and transcript[start].strip():
        start += 1
    return user, list(transcript[start:])


def _busy(segment: Sequence[str]) -> str | None:
    for row in segment:
        for name, pattern in _BUSY:
            if pattern.match(row):
                return f"{name}: {row.strip()}"
    return None


def _events(segment: Sequence[str]) -> list[tuple[int, str]]:
    """Rows at column 0 (each starts a block of the transcript), boxes left out."""
    return [(i, row) for i, row in enumerate(segment)
            if row and not row[0].isspace() and not row.startswith(_BOX)]


def detect_status(screen: str) -> StatusReport:
    """Kimi CLI's status from its rendered screen. Never raises."""
    try:
        return _detect(_rows(screen))
    except Exception as exc:  # noqa: BLE001 - a detector must never raise; say why instead
        return _report(TerminalStatus.UNKNOWN, f"screen not understood: {type(exc).__name__}: {exc}")


def _without_toolbar(rows: list[str]) -> StatusReport:
    joined = "\n".join(rows)
    for dialog in STARTUP_DIALOGS:
        if re.search(dialog.pattern, joined, re.MULTILINE):
            return _report(TerminalStatus.WAITING_USER_ANSWER, f"start-up dialog: {dialog.name}")
    for name, pattern in _FATAL:
        if pattern.search(joined):
            return _report(TerminalStatus.ERROR, f"Kimi CLI stopped: {name}")
    starting = last_index(rows, _STARTING.match)
    if starting is not None:
        return _report(TerminalStatus.UNKNOWN, f"starting: {rows[starting][2:].strip()}")
    shown = rows[-1].strip() if rows else ""
    return _report(TerminalStatus.UNKNOWN, f"no Kimi CLI prompt on screen (last row {shown[:60]!r})")


def _modal(rows: list[str], rule: int) -> StatusReport | None:
    """A panel drawn instead of the input box (approval, question), right above the toolbar."""
    top = last_index(rows, _PANEL_TOP.match, end=rule)
    if top is None:
        return None
    bottom = last_index(rows, _PANEL_BOTTOM.match, end=rule)
    if bottom is None or bottom < top or any(row.strip() for row in rows[bottom + 1:rule]):
        return None
    title = rows[top][3:].split(" ─", 1)[0].strip()
    body = next((row.strip(" │") for row in rows[top + 1:bottom] if row.strip(" │")), "")
    return _report(TerminalStatus.WAITING_USER_ANSWER, f"{title} panel: {body}")


def _detect(rows: list[str]) -> StatusReport:
    if not rows:
        return _report(TerminalStatus.UNKNOWN, "blank screen")
    rule = _footer(rows)
    if rule is None:
        return _without_toolbar(rows)
    header = last_index(rows, _INPUT_HEADER.match, end=rule)
    if header is None:
        modal = _modal(rows, rule)
        if modal is not None:
            return modal
        return _report(TerminalStatus.UNKNOWN, "no input box above the toolbar")
    queued = _QUEUED.search(rows[header])
    if queued:
        return _report(TerminalStatus.PROCESSING, f"{queued.group(1)} message(s) queued for the next turn")
    pending = " ".join(row.strip() for row in rows[header + 1:rule]).strip()
    if pending:
        # Typed or pasted, Enter not handled yet: whatever the transcript says belongs to the last turn.
        return _report(TerminalStatus.PROCESSING, f"input not submitted yet: {pending[:60]}")
    transcript = rows[:header]
    user, segment = _segment(transcript)
    busy = _busy(segment)
    if busy is not None:
        return _report(TerminalStatus.PROCESSING, busy)
    # Readings of two turns must differ even when they end the same way.
    about = f" after {transcript[user][2:].strip()[:40]!r}" if user is not None else ""
    events = _events(segment)
    bullets = [i for i, (_, row) in enumerate(events) if _BULLET.match(row)]
    if user is None and not bullets:
        # Only what Kimi printed before its prompt (welcome box, a start-up gate that was answered).
        return _report(TerminalStatus.IDLE, "empty prompt, no message sent yet")
    if not events:
        return _report(TerminalStatus.PROCESSING, f"message sent{about}, nothing drawn after it yet")
    last = events[-1][1].strip()
    # Kimi prints a blank row under each block and one more when the turn is over; the prompt adds one
    # above the input box. Between a step's last block and the end of the turn (the final part of an
    # answer not printed yet) the live area can be empty for a moment: not finished.
    ends_in_block = bool(bullets) and bullets[-1] == len(events) - 1
    needed = _TURN_END_AFTER_BLOCK if ends_in_block else _TURN_END_AFTER_TEXT
    ended = _blank_rows_above(transcript) >= needed
    if not ended:
        return _report(TerminalStatus.PROCESSING, f"turn{about} still being drawn (not ended): {last[:60]}")
    after = events[bullets[-1] + 1:] if bullets else events
    for _, row in after:
        if _TURN_ERRORS.match(row):
            return _report(TerminalStatus.ERROR, f"turn{about} ended in an error: {row.strip()}")
        if _INTERRUPTED.match(row):
            return _report(TerminalStatus.IDLE, f"turn{about} interrupted; the prompt is waiting")
    answers = [row for _, row in events if _BULLET.match(row) and not _TOOL.match(row)]
    if answers:
        return _report(TerminalStatus.COMPLETED,
                       f"answer{about} above an empty prompt: {answers[-1][2:].strip()}")
    return _report(TerminalStatus.COMPLETED, f"turn{about} ended without an answer: {last}")


def _blank_rows_above(transcript: Sequence[str]) -> int:
    count = 0
    while count < len(transcript) and not transcript[-1 - count].strip():
        count += 1
    return count


def extract_last_message(text: str) -> str:
    """The text of Kimi CLI's last answer after the user's last message.

    ``text`` is a screen, optionally with scrollback above it. The answer is the last "• " block that
    is not a tool call, with Kimi's two-space indent removed; blank rows between paragraphs are kept.
    Kimi renders Markdown and wraps long lines itself: the text is what the screen shows. Raises
    ``ValueError`` when no answer follows the last message (still running, a question or approval
    pending, or the turn ended in an error or only in tool calls).
    """
    rows = _rows(text)
    rule = _footer(rows)
    end = rule if rule is not None else len(rows)
    header = last_index(rows, _INPUT_HEADER.match, end=end)
    transcript = rows[:header if header is not None else end]
    _, segment = _segment(transcript)
    busy = _busy(segment)
    if busy is not None:
        raise ValueError(f"the last Kimi CLI turn is still running ({busy})")
    events = _events(segment)
    bullets = [i for i, (_, row) in enumerate(events) if _BULLET.match(row)]
    if bullets and any(_TURN_ERRORS.match(row) for _, row in events[bullets[-1] + 1:]):
        raise ValueError("the last Kimi CLI turn ended in an error")
    # Tool calls are "• " blocks too: "• Used Shell (ls)".
    blocks = [block for block in indented_blocks(segment, _BULLET) if not _TOOL.match(segment[block.start])]
    if not blocks:
        raise ValueError("no Kimi CLI answer ('• ' block) after the last message")
    return "\n".join(blocks[-1].text).strip()
