"""Start-up dialogs Cursor's CLI may show before its input box: none that cao answers.

Upstream CAO found no folder-trust dialog in the interactive interface of 2026.06.15 (``--trust`` is
refused there as a print-mode option), and MCP servers are approved at launch (``--approve-mcps``). A
selection menu that does show is reported ``waiting_user_answer`` for a person to answer.
"""

from __future__ import annotations

from cao_hookspecs import StartupDialog

__all__ = ["STARTUP_DIALOGS"]

STARTUP_DIALOGS: tuple[StartupDialog, ...] = ()
