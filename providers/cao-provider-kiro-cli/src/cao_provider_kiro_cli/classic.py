"""Kiro's line-based chat (Kiro CLI 1.x, and 2.x with ``--legacy-ui``), inherited from Amazon Q's.

Q CLI draws the same chat, so both are read by ``cao_agent_file_core.chat_screen`` (whose docstring
draws it); what is Kiro's own is here: the name its evidence uses, how the tool a permission question
is about is named (``(using tool: shell)``) and the rows a failed turn ends on.
"""

from __future__ import annotations

import re

from cao_agent_file_core.chat_screen import ANSWER, HINTS, PROMPT, ChatScreen, find_prompts

from .patterns import TURN_ERROR

__all__ = ["ANSWER", "CHAT", "HINTS", "PROMPT", "find_prompts", "read"]

#: Kiro's chat, as ``cao_agent_file_core.chat_screen`` reads it: its name in evidence, how it names
#: the tool a permission question is about, how a failed turn reads.
CHAT = ChatScreen(name="Kiro", tool=re.compile(r"[Uu]sing tool:? (?P<tool>[\w.-]+)"), turn_error=TURN_ERROR)
#: The status of a line-based chat screen (busy rows, dialogs and fatal errors already ruled out).
read = CHAT.read
