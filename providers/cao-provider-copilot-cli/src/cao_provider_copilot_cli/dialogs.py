"""Start-up dialogs Copilot CLI may show before its prompt, and how cao answers each.

Copilot asks whether to trust the working folder the first time it runs there. cao launches it with
``COPILOT_ALLOW_ALL=true`` when the agent may use every tool, which trusts the folder without asking;
an agent restricted to some tools gets the dialog, and the kernel accepts it for this run only.

The pattern includes where the menu's cursor is ("❯ 1. Yes", this run only), so Enter can never
choose "remember this folder" (which would write the user's own config) or "No".
"""

from __future__ import annotations

from cao_hookspecs import StartupDialog

__all__ = ["STARTUP_DIALOGS", "TRUST_FOLDER"]

TRUST_FOLDER = "trust folder"

STARTUP_DIALOGS = (
    StartupDialog(
        name=TRUST_FOLDER,
        pattern=r"Confirm folder trust[\s\S]*Do you trust the files in this folder\?[\s\S]*❯ 1\. Yes\s",
        keys=("Enter",),
    ),
)
