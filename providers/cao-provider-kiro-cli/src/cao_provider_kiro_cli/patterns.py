"""What only Kiro CLI draws, as patterns shared by the two interfaces it has (see ``classic.py``,
``tui.py``); what it shares with Q CLI's chat is in ``cao_agent_file_core.chat_screen``.

Each pattern matches one rendered row (``capture-pane`` text, no colours).
"""

from __future__ import annotations

import re

__all__ = ["BUSY", "DIALOG", "RULE", "TURN_ERROR"]

# Rows the full-screen interface draws only while a turn runs: the composer's ghost text and the
# hint under a running tool.
BUSY = (
    ("composer says Kiro is working", re.compile(r"^\s*›?\s*Kiro is working\b")),
    ("a tool is running (esc to cancel)", re.compile(r"^\s*esc to cancel\s*$")),
    ("starting up", re.compile(r"^\s*›?\s*Initializing\b")),
)
TURN_ERROR = re.compile(r"Kiro is having trouble responding right now|Amazon Q is having trouble responding right now")
RULE = re.compile(r"^\s*─{20,}\s*$")
# The consent Kiro 2 asks for before running with --trust-all-tools (answered by the kernel, see dialogs.py).
DIALOG = re.compile(r"running in trust all tools mode", re.IGNORECASE)
