"""Start-up dialogs {{ cookiecutter.display_name }} may show before its prompt, and how cao answers each.

The kernel presses a dialog's keys, unattended, when its pattern matches a screen while the terminal
starts. So each pattern must match only that dialog, in the state where the keys accept it, and each
dialog needs a recorded screen (the conformance kit checks both).

TODO: the stand-in program asks to trust a new folder; list the real CLI's dialogs instead (trust
folder, update prompt, first-run setup...). If the CLI can be told at launch not to ask (a flag, a
config file written by ``launch``), prefer that, and keep the dialog here as the fallback.
"""

from __future__ import annotations

from cao_hookspecs import StartupDialog

__all__ = ["STARTUP_DIALOGS"]

STARTUP_DIALOGS = (
    # The question is the bottom row until its key is pressed (the answer is printed under it), so the
    # kernel can never answer it twice. "y" alone picks "[y] Yes": no Enter (prompts.py reads the same
    # keys off the screen, and the recording presses them).
    StartupDialog(name="trust folder", pattern=r"^Trust this folder\? \[y\] Yes · \[n\] No, exit$",
                  keys=("y",)),
)
