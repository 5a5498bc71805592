"""Reading ``q chat``'s screen: status with evidence, and the last answer.

``q chat`` is a line-based chat (no full-screen interface)::

    [cao-developer-0123abcd] > List the files here.      <- the prompt, with what the user sent
                                                          <- (while waiting: "⠋ Thinking...")
    🛠️  Using tool: fs_read                               <- tool calls, each ending "● Completed in 0.1s"
    > There are three files: README.md, setup.py and      <- an answer starts with "> " at column 0
    src/.                                                    and continues unindented

    [cao-developer-0123abcd] 4% >                         <- the prompt again: the turn is over

The prompt is ``[agent] `` then optional ``N% `` (context used), ``λ `` and ``↯ `` markers and a ``!``,
then ``> `` (the format Q's own prompt parser accepts). A tool that needs permission ends its block
with ``Allow this action? ... [y/n/t]:`` followed by the prompt, where the answer is typed.

Everything here works on the rendered text ``capture-pane`` gives (no colours), never raises from
:func:`detect_status`, and names the rule that decided in the report's evidence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from cao_hookspecs import StatusReport, TerminalStatus

__all__ = ["HINTS", "Reading", "detect_status", "extract_last_message", "read_screen"]

PRODUCT = "Amazon Q"
PROMPT = re.compile(r"^\[(?P<agent>[^\]\s]{1,128})\] (?:\d{1,3}% )?(?:λ )?(?:↯ )?!?>(?: (?P<rest>.*))?$")
ANSWER = re.compile(r"^>(?: (?P<text>.*))?$")
PERMISSION = re.compile(r"Allow this action\?.*\[y/n/t\]:")
# One frame of the Dots spinner (braille) then its message: "⠋ Thinking...". The logo's braille art
# never has a single braille cell followed by a space and a word.
SPINNER = re.compile(r"^\s*[\u2801-\u28ff] +\S.*[A-Za-z]")
MCP_LOADING = re.compile(r"\d+ of \d+ mcp servers? initialized", re.IGNORECASE)
TOOL = re.compile(r"Using tool: (?P<tool>\S+)")
TURN_ERROR = re.compile(r"(?:Amazon Q|Kiro) is having trouble responding right now|Amazon Q rate limit reached")
CREDITS = re.compile(r"^\s*▸ Credits:")
# Screens of a q that stopped or cannot go on (no chat prompt drawn after them).
FATAL = (
    ("not logged in", re.compile(r"You are not logged in, please log in with \S+ login")),
    ("the agent file was not loaded", re.compile(r"no agent with name \S+ found")),
    ("bad command-line option", re.compile(r"^error: (?:unexpected argument|invalid value|unrecognized subcommand)",
                                           re.MULTILINE)),
)
#: Grey hints q shows after an empty prompt; a plain capture cannot tell them from typed text.
HINTS = frozenset({
    "How can I help?", "What should we work on?", "Ask me anything!", "What would you like to do?",
    "Ready when you are!", "Curious what I can do? Just ask!", "Not sure where to start? Ask me about my features",
    "Want to know what commands I have? Just ask", "Need help with features or setup? Use /help",
    "Use @file or @dir to include file contents inline", "What would you like to do next?",
})


@dataclass(frozen=True)
class Reading:
    """What one screen says: the status, the rule that decided it, and for a finished turn the rows
    of its answer (``answer`` is a ``(first, end)`` slice of ``rows``)."""

    status: TerminalStatus
    evidence: str
    rows: tuple[str, ...] = ()
    answer: tuple[int, int] | None = None


def _reading(status: TerminalStatus, evidence: str, rows: list[str] | None = None,
             answer: tuple[int, int] | None = None) -> Reading:
    return Reading(status=status, evidence=evidence[:200], rows=tuple(rows or ()), answer=answer)


def _rest(row: str) -> str:
    match = PROMPT.match(row)
    return (match.group("rest") or "").strip() if match else ""


def _previous(rows: list[str], index: int) -> int | None:
    for i in range(index - 1, -1, -1):
        if rows[i].strip():
            return i
    return None


def _is_message(rows: list[str], index: int) -> bool:
    """A prompt row holding something the user sent (not a hint, not the answer to a permission question)."""
    rest = _rest(rows[index])
    if not rest or rest in HINTS:
        return False
    before = _previous(rows, index)
    return before is None or not PERMISSION.search(rows[before])


def read_screen(text: str) -> Reading:
    """Split a screen into turns and decide its status (may raise on inputs it cannot read; use
    :func:`detect_status` where that matters)."""
    rows = [row.rstrip() for row in text.split("\n")]
    filled = [i for i, row in enumerate(rows) if row.strip()]
    if not filled:
        return _reading(TerminalStatus.UNKNOWN, "blank screen")
    last = filled[-1]
    prompts = [i for i in filled if PROMPT.match(rows[i])]
    for name, pattern in FATAL:
        hits = [i for i in filled if pattern.search(rows[i])]
        if hits and not any(p > hits[-1] for p in prompts):
            return _reading(TerminalStatus.ERROR, f"q stopped: {name}: {rows[hits[-1]].strip()}")
    spinners = [i for i in filled if SPINNER.match(rows[i])]
    if spinners:
        # q erases its spinner when the turn goes on, so one still drawn is running now.
        return _reading(TerminalStatus.PROCESSING, f"spinner: {rows[spinners[-1]].strip()}")
    if not prompts:
        if any(MCP_LOADING.search(rows[i]) for i in filled):
            return _reading(TerminalStatus.PROCESSING, "MCP servers still loading, no prompt yet")
        return _reading(TerminalStatus.UNKNOWN, "no q chat prompt on screen")
    bottom = prompts[-1]
    if bottom != last:
        sent = _rest(rows[bottom])
        about = f"working on {sent[:40]!r}" if sent else "output after the prompt"
        return _reading(TerminalStatus.PROCESSING, f"{about}: {rows[last].strip()[:80]}")

    # The prompt is the last row: q waits for the user.
    before = _previous(rows, bottom)
    if before is not None and PERMISSION.search(rows[before]):
        tool = next((m.group("tool") for i in range(before, -1, -1) if (m := TOOL.search(rows[i]))), "a tool")
        return _reading(TerminalStatus.WAITING_USER_ANSWER, f"asks to allow {tool} [y/n/t]")
    pending = _rest(rows[bottom])
    if pending and pending not in HINTS:
        return _reading(TerminalStatus.PROCESSING, f"input not submitted yet: {pending[:60]!r}")
    user = next((p for p in reversed(prompts) if p < bottom and _is_message(rows, p)), None)
    if user is None:
        return _reading(TerminalStatus.IDLE, "prompt waiting, no message sent yet")
    about = f" to {_rest(rows[user])[:40]!r}"
    for i in range(bottom - 1, user, -1):
        if TURN_ERROR.search(rows[i]):
            return _reading(TerminalStatus.ERROR, f"turn{about} ended in an error: {rows[i].strip()}")
        if ANSWER.match(rows[i]):
            return _reading(TerminalStatus.COMPLETED, f"answer{about}, prompt back", rows, (i, bottom))
    return _reading(TerminalStatus.IDLE, f"prompt back without an answer{about}")


def detect_status(screen: str) -> StatusReport:
    """q chat's status from its rendered screen. Never raises."""
    try:
        reading = read_screen(screen)
    except Exception as exc:  # noqa: BLE001 - a detector must never raise
        return StatusReport(status=TerminalStatus.UNKNOWN, evidence=f"screen not understood: {exc!r}")
    return StatusReport(status=reading.status, evidence=reading.evidence)


def extract_last_message(text: str) -> str:
    """The text of q's answer to the last message, from a screen optionally with scrollback above it.

    The answer is the last ``> `` block of the finished turn, its marker removed; rows the CLI wrapped
    stay separate lines. Raises ``ValueError`` when the last turn has not finished with an answer.
    """
    try:
        reading = read_screen(text)
    except Exception as exc:  # noqa: BLE001 - the extractor's only failure is ValueError
        raise ValueError(f"screen not understood: {exc!r}") from exc
    if reading.status is not TerminalStatus.COMPLETED or reading.answer is None:
        raise ValueError(f"no finished {PRODUCT} answer on screen ({reading.status.value}: {reading.evidence})")
    first, end = reading.answer
    body = list(reading.rows[first:end])
    body[0] = ANSWER.match(body[0]).group("text") or ""  # type: ignore[union-attr]
    while body and (not body[-1].strip() or CREDITS.match(body[-1])):
        body.pop()
    answer = "\n".join(body).strip()
    if not answer:
        raise ValueError(f"the last {PRODUCT} answer is empty")
    return answer
