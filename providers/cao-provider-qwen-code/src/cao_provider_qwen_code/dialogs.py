"""Start-up dialogs Qwen Code may show before its prompt: none, with the private settings of config.py.

Its folder-trust dialog is off (``security.folderTrust.enabled``), its sign-in dialog does not show
when the user's settings or variables name a way to sign in, and its update notice never shows with
``general.enableAutoUpdate`` off. A Qwen Code whose user never signed in stops at its sign-in dialog,
which cao does not answer (it needs the person's choice and secrets).
"""

from __future__ import annotations

from cao_hookspecs import StartupDialog

__all__ = ["STARTUP_DIALOGS"]

STARTUP_DIALOGS: tuple[StartupDialog, ...] = ()
