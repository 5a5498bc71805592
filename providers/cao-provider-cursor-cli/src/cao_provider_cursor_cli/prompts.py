"""Reading the prompts of Cursor's CLI into typed records (``ProviderSpec.read_prompt``).

No prompt of the 2026.06.15 interface is documented as a screen: cao starts the CLI with ``--force``
(no command approvals) and ``--approve-mcps`` (no MCP approvals), there is no folder-trust dialog, and
the one sign of a menu known is its ``↑/↓ to navigate`` hint, which the detector reports as
``waiting_user_answer``. So this reader gives None for every screen: a prompt guessed from no screen
could be answered with the wrong keys. Write it from the first recorded menu (the README says how).
"""

from __future__ import annotations

from cao_hookspecs import Prompt
from cao_screen_core.reports import never_raising

__all__ = ["read_prompt"]


@never_raising
def read_prompt(screen: str) -> Prompt | None:
    """None: no prompt of this CLI is documented yet (see the module docstring)."""
    return None
