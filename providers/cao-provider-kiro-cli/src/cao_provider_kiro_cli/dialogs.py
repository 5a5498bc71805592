"""The start-up dialog Kiro may show before its prompt, and how cao answers it.

Kiro CLI 2 asks for consent before it runs with ``--trust-all-tools`` (upstream CAO's kiro_cli
provider describes a "Yes, I accept" dialog that only ``--legacy-ui`` avoided): a warning that Kiro is
running in trust all tools mode, then the menu ``❯ No, exit`` / ``Yes, I accept`` with the cursor on
"No". cao starts every agent with ``--trust-all-tools`` (nobody is there to answer tool prompts), so
it accepts: one row down, then Enter. The pattern includes where the cursor is, so the keys can only
ever move it onto "Yes, I accept"; a menu drawn differently is left alone and reported as
``waiting_user_answer`` by the detector.
"""

from __future__ import annotations

from cao_hookspecs import StartupDialog

__all__ = ["STARTUP_DIALOGS", "TRUST_ALL_TOOLS"]

TRUST_ALL_TOOLS = StartupDialog(
    name="trust all tools consent",
    pattern=r"running in trust all tools mode[\s\S]*❯ No, exit[ \t]*\n[ \t]*Yes, I accept",
    keys=("Down", "Enter"),
)

STARTUP_DIALOGS = (TRUST_ALL_TOOLS,)
