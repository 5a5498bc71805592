"""Reading the prompt ``q chat`` shows: a tool's ``[y/n/t]`` permission question, answered at the chat
prompt below it::

    🛠️  Using tool: execute_bash
     ⋮
     ● I will run the following shell command:
    mkdir -p frontend/src                                   <- the command (arguments: {"command": ...})

    Allow this action? Use 't' to trust (always allow) this tool for the session. [y/n/t]:

    [cao-developer-0123abcd] >                              <- the answer is typed here: y, n or t, Enter

Read by ``cao_agent_file_core.chat_screen`` (Kiro's line-based chat draws the same). Only the question
just above an empty prompt on the last row is open; answered ones stay in the scrollback. When text is
already typed at that prompt (a message put in while q waited), no prompt is read: a key pressed now
would join that text instead of answering, so the status stays waiting and a person has to clear it.
"""

from __future__ import annotations

from cao_hookspecs import Prompt
from cao_screen_core.reports import never_raising

from .screen import CHAT

__all__ = ["read_prompt"]


@never_raising
def read_prompt(screen: str) -> Prompt | None:
    """The permission question open on a q chat screen, or None; never raises."""
    return CHAT.prompt([row.rstrip() for row in screen.split("\n")])
