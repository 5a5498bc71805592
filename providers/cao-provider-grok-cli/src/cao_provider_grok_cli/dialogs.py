"""Start-up dialogs Grok Build may show before its input box, and how cao answers each.

None: with an API key (``XAI_API_KEY``) or a linked sign-in Grok starts straight at its input box,
and its private home (``home.py``) has nothing left from an earlier run to ask about. Its folder-trust
question (shown only where the working folder brings Grok configuration of its own) is deliberately
not answered: trusting it would run that folder's hooks and MCP servers unattended.
"""

from __future__ import annotations

from cao_hookspecs import StartupDialog

__all__ = ["STARTUP_DIALOGS"]

STARTUP_DIALOGS: tuple[StartupDialog, ...] = ()
