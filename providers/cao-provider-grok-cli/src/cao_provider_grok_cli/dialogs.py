"""Start-up dialogs Grok Build may show before its input box, and how cao answers each.

None: with an API key (``XAI_API_KEY``) or a linked sign-in Grok starts straight at its input box,
and its private home (``home.py``) has nothing left from an earlier run to ask about. Its folder-trust
question (shown only where the working folder brings Grok configuration of its own, and asked again in
every private home) is deliberately not answered here: trusting it would run that folder's hooks and MCP
servers unattended. It reads as ``waiting_user_answer`` with its prompt (``prompts.py``), so a person
or a policy answers it through cao while the terminal starts.
"""

from __future__ import annotations

from cao_hookspecs import StartupDialog

__all__ = ["STARTUP_DIALOGS"]

STARTUP_DIALOGS: tuple[StartupDialog, ...] = ()
