"""Start-up dialogs MiniMax Code may show before its composer: none that cao answers.

The one screen documented before the composer is sign-in (``Sign in required``), which needs the
person: the detector reports it as an error with its text. Sign in once with ``mcode login``.
"""

from __future__ import annotations

from cao_hookspecs import StartupDialog

__all__ = ["STARTUP_DIALOGS"]

STARTUP_DIALOGS: tuple[StartupDialog, ...] = ()
