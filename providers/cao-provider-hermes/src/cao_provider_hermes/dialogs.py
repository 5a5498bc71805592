"""Start-up dialogs Hermes Agent may show before its prompt: none, with the private home cao writes.

Hermes's first-run questions are settled by the config: shell hooks would ask for consent on a
terminal (``hooks_auto_accept: true`` accepts cao's own), the model and provider come from the user's
config, and the setup wizard runs only when asked for (``hermes setup``). Recorded starts show the
prompt directly.
"""

from __future__ import annotations

from cao_hookspecs import StartupDialog

__all__ = ["STARTUP_DIALOGS"]

STARTUP_DIALOGS: tuple[StartupDialog, ...] = ()
