"""Start-up dialogs Antigravity CLI may show before its prompt, and how cao answers each.

Both are known from upstream CAO's provider, which answers them the same way:

- **trust folder**: the first start in a folder asks for permission to read, edit and execute files
  there, with a menu whose cursor starts on "Yes, I trust this folder" (``--dangerously-skip-permissions``
  does not cover it). The pattern includes the cursor on that row, so Enter can only ever accept it.
- **feedback survey**: "How's the CLI experience so far?" with ``[1] Good [2] Fine [3] Bad [0] Skip``,
  drawn over the ready footer now and then; ``0`` then Enter skips it.
"""

from __future__ import annotations

import re

from cao_hookspecs import StartupDialog

__all__ = ["DIALOGS", "STARTUP_DIALOGS", "SURVEY", "TRUST"]

TRUST = r"^\s*> Yes, I trust this folder\s*$"
SURVEY = r"^\s*How's the CLI experience so far\?"

STARTUP_DIALOGS = (
    StartupDialog(name="trust folder", pattern=TRUST, keys=("Enter",)),
    StartupDialog(name="feedback survey", pattern=SURVEY, keys=("0", "Enter")),
)
#: The dialogs by name, with their compiled patterns (the detector and the prompt reader use them).
DIALOGS = tuple((dialog.name, re.compile(dialog.pattern)) for dialog in STARTUP_DIALOGS)
