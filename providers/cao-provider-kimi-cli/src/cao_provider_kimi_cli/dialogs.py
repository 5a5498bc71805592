"""Start-up gates Kimi CLI may show before its prompt, and how cao answers each.

Kimi CLI 1.x blocks its start-up on two gates when its share folder holds what its update check last
fetched: an update gate (a newer kimi-cli) and a migration gate (the notice that kimi-cli is no
longer maintained). Both read a single key. cao runs Kimi with ``KIMI_CLI_NO_AUTO_UPDATE=1`` and a
fresh share folder, so neither should appear; they are still explicit states, answered with ``q``
("not now" / "continue with this version"). Enter would start a download and an install, so each
pattern includes the line that says what ``q`` does: a key press can only ever choose that.
"""

from __future__ import annotations

from cao_hookspecs import StartupDialog

__all__ = ["STARTUP_DIALOGS"]

# A gate waits with its choices and a closing rule as the last rows of the screen. Once answered it
# stays in the scrollback above Kimi's prompt, so the patterns only match it at the bottom: a second
# "q" must never be typed into the prompt.
_AT_THE_BOTTOM = r"[^\n]*\n─{10,}\s*\Z"

STARTUP_DIALOGS = (
    StartupDialog(
        name="update gate",
        pattern=r"\[Enter\]\s+Upgrade now\b.*\n\s*\[q\]\s+Not now, remind me next time\n\s*\[s\]"
                + _AT_THE_BOTTOM,
        keys=("q",),
    ),
    StartupDialog(
        name="migration gate",
        pattern=r"\[Enter\]\s+Migrate now\b.*\n\s*\[q\]\s+Continue with this unmaintained version"
                + _AT_THE_BOTTOM,
        keys=("q",),
    ),
)
