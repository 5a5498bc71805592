"""Kiro's line-based chat (Kiro CLI 1.x, and 2.x with ``--legacy-ui``), inherited from Amazon Q's::

    [cao-developer-0123abcd] 20% λ > list the files        <- the prompt, with what the user sent
    > I'll list them.                                       <- an answer starts with "> " at column 0
    I will run the following command: ls (using tool: shell)
     - Completed in 0.2s                                    <- a tool call
    > There are three files.                                <- the final answer, unindented lines
     ▸ Credits: 0.14 • Time: 22s                            <- turn summary (Kiro only)
    [cao-developer-0123abcd] 22% λ >                        <- the prompt again: the turn is over

The prompt is ``[agent] `` then optional ``N% ``, ``λ ``, ``↯ `` and ``!`` markers, then ``> ``. A tool
that needs permission ends its block with ``Allow this action? ... [y/n/t]:`` and the prompt, where
the answer is typed.
"""

from __future__ import annotations

import re

from cao_hookspecs import TerminalStatus

from .patterns import MCP_LOADING, TURN_ERROR, Reading, reading

__all__ = ["ANSWER", "HINTS", "PROMPT", "find_prompts", "read"]

PROMPT = re.compile(r"^\[(?P<agent>[^\]\s]{1,128})\] (?:\d{1,3}% )?(?:λ )?(?:↯ )?!?>(?: (?P<rest>.*))?$")
ANSWER = re.compile(r"^>(?: (?P<text>.*))?$")
PERMISSION = re.compile(r"Allow this action\?.*\[y/n/t\]:")
TOOL = re.compile(r"[Uu]sing tool:? (?P<tool>[\w.-]+)")
#: Grey hints drawn after an empty prompt; a plain capture cannot tell them from typed text.
HINTS = frozenset({
    "How can I help?", "What should we work on?", "Ask me anything!", "What would you like to do?",
    "Ready when you are!", "Curious what I can do? Just ask!", "Not sure where to start? Ask me about my features",
    "Want to know what commands I have? Just ask", "Need help with features or setup? Use /help",
    "Use @file or @dir to include file contents inline", "What would you like to do next?",
})


def find_prompts(rows: list[str]) -> list[int]:
    """Indices of the rows that are the chat prompt."""
    return [i for i, row in enumerate(rows) if PROMPT.match(row)]


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


def read(rows: list[str]) -> Reading:
    """The status of a line-based chat screen (busy rows, dialogs and fatal errors already ruled out)."""
    filled = [i for i, row in enumerate(rows) if row.strip()]
    prompts = find_prompts(rows)
    if not prompts:
        if any(MCP_LOADING.search(rows[i]) for i in filled):
            return reading(TerminalStatus.PROCESSING, "MCP servers still loading, no prompt yet")
        return reading(TerminalStatus.UNKNOWN, "no Kiro chat prompt on screen")
    last = filled[-1]
    bottom = prompts[-1]
    if bottom != last:
        sent = _rest(rows[bottom])
        about = f"working on {sent[:40]!r}" if sent else "output after the prompt"
        return reading(TerminalStatus.PROCESSING, f"{about}: {rows[last].strip()[:80]}")

    # The prompt is the last row: Kiro waits for the user.
    before = _previous(rows, bottom)
    if before is not None and PERMISSION.search(rows[before]):
        tool = next((m.group("tool") for i in range(before, -1, -1) if (m := TOOL.search(rows[i]))), "a tool")
        return reading(TerminalStatus.WAITING_USER_ANSWER, f"asks to allow {tool} [y/n/t]")
    pending = _rest(rows[bottom])
    if pending and pending not in HINTS:
        return reading(TerminalStatus.PROCESSING, f"input not submitted yet: {pending[:60]!r}")
    user = next((p for p in reversed(prompts) if p < bottom and _is_message(rows, p)), None)
    if user is None:
        return reading(TerminalStatus.IDLE, "prompt waiting, no message sent yet")
    about = f" to {_rest(rows[user])[:40]!r}"
    for i in range(bottom - 1, user, -1):
        if TURN_ERROR.search(rows[i]):
            return reading(TerminalStatus.ERROR, f"turn{about} ended in an error: {rows[i].strip()}")
        if ANSWER.match(rows[i]):
            return reading(TerminalStatus.COMPLETED, f"answer{about}, prompt back", rows, (i, bottom), marker=">")
    return reading(TerminalStatus.IDLE, f"prompt back without an answer{about}")
