"""Reading the prompts Grok Build shows into typed records (``ProviderSpec.read_prompt``).

cao launches Grok only in modes where it decides alone (``--always-approve``, or ``dontAsk`` with
allow rules: a tool not allowed is refused, never asked about; ``launch.py`` refuses the modes that
ask), so no recorded screen has a prompt and the reader finds none. Grok's approval picker and its
question tool are not recorded yet; until they are, a screen showing one reads as None rather than
as a guess.
"""

from __future__ import annotations

from cao_hookspecs import Prompt
from cao_screen_core.reports import never_raising

__all__ = ["read_prompt"]


@never_raising  # a screen that breaks the reader shows no prompt cao could answer
def read_prompt(screen: str) -> Prompt | None:
    """The prompt open on a Grok Build screen: None, as no mode cao starts Grok in asks."""
    del screen
    return None
