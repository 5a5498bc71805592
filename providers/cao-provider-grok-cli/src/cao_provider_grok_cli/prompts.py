"""Reading the prompts Grok Build shows into typed records (``ProviderSpec.read_prompt``).

One prompt shows under cao: the folder-trust question Grok asks before its input box where the working
folder brings Grok configuration of its own (``screen.py`` draws it). It reads as a start-up dialog with
its two options and the key each prints (``y``, ``n``: one key, no Enter). cao does not answer it by
itself (``dialogs.py``); a person or a policy does, through cao.

No tool approval shows: cao launches Grok only in modes where it decides alone (``--always-approve``, or
``dontAsk`` with allow rules; ``launch.py`` refuses the modes that ask), so Grok's approval picker is
not recorded, and a screen showing one reads as None rather than as a guess.
"""

from __future__ import annotations

from cao_hookspecs import OptionEffect, Prompt, PromptKind, PromptOption
from cao_screen_core.reports import never_raising

from .screen import TRUST_QUESTION, VERSION_ROW, screen_rows, trust_question

__all__ = ["read_prompt"]

_EFFECTS = {"y": OptionEffect.ALLOW, "n": OptionEffect.DENY}


@never_raising  # a screen that breaks the reader shows no prompt cao could answer
def read_prompt(screen: str) -> Prompt | None:
    """The prompt open on a Grok Build screen, or None when none is; never raises."""
    rows = screen_rows(screen)
    found = trust_question(rows)
    if found is None:
        return None
    at, options = found
    return Prompt(kind=PromptKind.STARTUP_DIALOG, question=TRUST_QUESTION,
                  options=[PromptOption(label=label, keys=(key,), effect=_EFFECTS[key])
                           for label, key in options],
                  evidence=[row.strip() for row in rows[at:]
                            if row.strip() and not VERSION_ROW.match(row.strip())])
