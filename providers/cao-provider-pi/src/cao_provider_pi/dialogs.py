"""Start-up dialogs pi may show before its prompt: none.

pi 0.73 asks nothing at start (no trust question, no sign-in screen, no update prompt: update checks
are off with ``--offline``). Its one start-up warning (tmux's extended keys) is a line of the
transcript, not a question, and needs no key.
"""

from __future__ import annotations

from cao_hookspecs import StartupDialog

__all__ = ["STARTUP_DIALOGS"]

STARTUP_DIALOGS: tuple[StartupDialog, ...] = ()
