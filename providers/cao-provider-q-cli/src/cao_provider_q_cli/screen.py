"""Reading ``q chat``'s screen: status with evidence, and the last answer.

``q chat`` is a line-based chat (no full-screen interface)::

    [cao-developer-0123abcd] > List the files here.      <- the prompt, with what the user sent
                                                          <- (while waiting: "⠋ Thinking...")
    🛠️  Using tool: fs_read                               <- tool calls, each ending "● Completed in 0.1s"
    > There are three files: README.md, setup.py and      <- an answer starts with "> " at column 0
    src/.                                                    and continues unindented

    [cao-developer-0123abcd] 4% >                         <- the prompt again: the turn is over

The chat, its prompt and its patterns are the ones Kiro CLI inherited, read by
``cao_agent_file_core.chat_screen``; what is q's own is here: how it names a tool it asks about, the
rows a failed turn ends on, and the name evidence gives it. Everything works on the rendered text
``capture-pane`` gives (no colours), never raises from :func:`detect_status`, and names the rule that
decided in the report's evidence.
"""

from __future__ import annotations

import re

from cao_agent_file_core.chat_screen import (
    HINTS,
    PROMPT,
    SPINNER,
    ChatScreen,
    Reading,
    find_prompts,
    last_answer,
)
from cao_agent_file_core.chat_screen import reading as _reading
from cao_hookspecs import StatusReport, TerminalStatus
from cao_screen_core.reports import read_safely

__all__ = ["HINTS", "PROMPT", "Reading", "detect_status", "extract_last_message", "read_screen"]

PRODUCT = "Amazon Q"
TOOL = re.compile(r"Using tool: (?P<tool>\S+)")
TURN_ERROR = re.compile(r"(?:Amazon Q|Kiro) is having trouble responding right now|Amazon Q rate limit reached")
CHAT = ChatScreen(name="q", tool=TOOL, turn_error=TURN_ERROR)


def read_screen(text: str) -> Reading:
    """Split a screen into turns and decide its status (may raise on inputs it cannot read; use
    :func:`detect_status` where that matters)."""
    rows = [row.rstrip() for row in text.split("\n")]
    filled = [i for i, row in enumerate(rows) if row.strip()]
    if not filled:
        return _reading(TerminalStatus.UNKNOWN, "blank screen")
    stopped = CHAT.stopped(rows, filled, find_prompts(rows))
    if stopped is not None:
        return stopped
    spinners = [i for i in filled if SPINNER.match(rows[i])]
    if spinners:
        # q erases its spinner when the turn goes on, so one still drawn is running now.
        return _reading(TerminalStatus.PROCESSING, f"spinner: {rows[spinners[-1]].strip()}")
    return CHAT.read(rows)


def detect_status(screen: str) -> StatusReport:
    """q chat's status from its rendered screen. Never raises."""
    return read_safely(lambda text: read_screen(text).report, screen)


def extract_last_message(text: str) -> str:
    """The text of q's answer to the last message, from a screen optionally with scrollback above it.

    The answer is the last ``> `` block of the finished turn, its marker removed; rows the CLI wrapped
    stay separate lines. Raises ``ValueError`` when the last turn has not finished with an answer.
    """
    return last_answer(read_screen, text, PRODUCT)
