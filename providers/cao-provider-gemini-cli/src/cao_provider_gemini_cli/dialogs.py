"""Start-up dialogs Gemini CLI may show before its prompt, and how cao answers each.

The private home cao prepares (see ``config.py``) selects the API-key sign-in when a key is in the
environment, and the launch trusts the working folder, so none of these should appear. They are still
listed as explicit states: a Gemini CLI release that asks again, under another setting, must not leave
an agent stuck behind a dialog until the start-up timeout.

Each pattern includes the selected row ("●") or the notice that the field holds the environment's key,
so Enter can only ever accept what cao would have chosen.
"""

from __future__ import annotations

from cao_hookspecs import StartupDialog

__all__ = ["STARTUP_DIALOGS"]

STARTUP_DIALOGS = (
    # "● 1. Trust folder (<name>)" is selected; Gemini CLI restarts itself to apply the answer.
    StartupDialog(
        name="trust folder",
        pattern=r"Do you trust the files in this folder\?[\s\S]*● 1\. Trust folder",
        keys=("Enter",),
    ),
    # No sign-in method chosen yet, a GEMINI_API_KEY in the environment: "● 2. Use Gemini API Key" is
    # selected for it.
    StartupDialog(
        name="sign-in method",
        pattern=r"How would you like to authenticate[\s\S]*● \d\. Use Gemini API Key[\s\S]*"
                r"Existing API key detected \(GEMINI_API_KEY\)",
        keys=("Enter",),
    ),
    # Right after that choice: the key field is filled from GEMINI_API_KEY; Enter keeps it.
    StartupDialog(
        name="API key confirmation",
        pattern=r"Enter Gemini API Key[\s\S]*Existing API key detected \(GEMINI_API_KEY\)[\s\S]*"
                r"Press Enter to submit",
        keys=("Enter",),
    ),
)
