"""Start-up dialogs Claude Code may show before its prompt, and how cao answers each.

The private config folder cao seeds (see ``config.py``) marks onboarding done, the folder trusted, the
API key approved and bypass mode accepted, so none of these should appear. They are still listed as
explicit states: a Claude Code release that asks again, under another key, must not leave an agent
stuck behind a dialog until the start-up timeout.

Each pattern includes where the menu's cursor is, so a key press can only ever move it to the
accepting choice: Claude Code 2.1 puts the cursor on "No" by default. Every dialog here is recorded
from a tested release (``tests/screens/<version>/dialog_*.txt``): a dialog whose keys the kernel
presses unattended must never be written from memory.
"""

from __future__ import annotations

from cao_hookspecs import StartupDialog

__all__ = ["STARTUP_DIALOGS"]

STARTUP_DIALOGS = (
    # "❯ No, exit" above "Yes, I trust this folder": one row down, then confirm. The footer ends the
    # screen: after "No, exit" the dialog's last frame stays, with the refusal printed under it.
    StartupDialog(
        name="trust folder",
        pattern=(r"one you trust[\s\S]*❯ No, exit\s*\n\s*Yes, I trust this folder\s*\n"
                 r"\s*Enter to confirm[^\n]*\s*\Z"),
        keys=("Down", "Enter"),
    ),
    # "Yes" above "❯ No (recommended)": one row up, then confirm. The key is the user's own, from the
    # environment the terminal was started with.
    StartupDialog(
        name="API key confirmation",
        pattern=r"Do you want to use this API key\?\s*\n\s*Yes\s*\n\s*❯ No \(recommended\)",
        keys=("Up", "Enter"),
    ),
    # Bypass mode was asked for by the launch command itself (yolo or the default orchestration mode).
    StartupDialog(
        name="bypass permissions confirmation",
        pattern=r"Bypass Permissions mode[\s\S]*❯ No, exit\s*\n\s*Yes, I accept",
        keys=("Down", "Enter"),
    ),
)
