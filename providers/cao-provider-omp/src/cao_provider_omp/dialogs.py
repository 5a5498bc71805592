"""Start-up dialogs Oh My Pi may show before its prompt, and how cao answers each.

Oh My Pi opens a five-step setup wizard (sign in, default model, glyphs, composer, theme) until its
settings say ``setupVersion: 2``. cao's settings say so (config.py), so a terminal never shows it;
the steps stay here for a release or a user's settings that bring it back. Escape skips a step; each
step is a dialog of its own, since the kernel answers one dialog a limited number of times.
"""

from __future__ import annotations

from cao_hookspecs import StartupDialog

__all__ = ["STARTUP_DIALOGS", "WIZARD_STEPS"]

#: The setup wizard's steps in Oh My Pi 18.2.
WIZARD_STEPS = 5

STARTUP_DIALOGS = tuple(
    StartupDialog(name=f"setup wizard step {step}", pattern=rf"^\s*Setup step {step} of \d+\s*$",
                  keys=("Escape",))
    for step in range(1, WIZARD_STEPS + 1)
)
