"""Reading the prompt Hermes Agent shows into a typed record (``ProviderSpec.read_prompt``).

Hermes asks the user through its ``clarify`` tool: a box above the status bar with the question and a
numbered menu whose last option opens a text field, the prompt row showing ``? ❯``::

    ╭─ Hermes needs your input ──────────────────────╮
    │                                                │
    │ Which database should I use?                   │   <- the question (wrapped on narrow screens)
    │                                                │
    │ ❯ 1. PostgreSQL                                │   <- the cursor
    │   2. SQLite                                    │
    │   4. Other (type your answer)                  │   <- opens a text field
    │                                                │
    ╰────────────────────────────────────────────────╯
      ↑/↓ to select, Enter to confirm  (116s)
    ────────────────────────────────────
    ? ❯
    ────────────────────────────────────

Up and Down move the cursor and Enter picks (recorded). ``Other`` turns into ``Other (type below)`` and
the prompt row into a text field (``✎ ❯ type your answer here and press Enter``); that state is a
prompt of its own, taking text. Hermes's approval prompts for dangerous commands are never
shown: cao runs it with ``--yolo``. A box answered earlier is gone from the screen (Hermes prints the
answer as ``? Clarify: … → SQLite``), so only a box in the current turn with the asking prompt is open.
"""

from __future__ import annotations

import re

from cao_hookspecs import OptionEffect, Prompt, PromptKind, PromptOption
from cao_screen_core.menus import numbered_menu, option_keys
from cao_screen_core.reports import never_raising

from .screen import ASKING, screen_rows, turn_rows

__all__ = ["read_prompt"]

_SIDE = re.compile(r"^│ ?(?P<text>.*?) ?│$")
_BOTTOM = re.compile(r"^╰─+╯$")
_OTHER = re.compile(r"^Other\b")
_ASKING_PROMPT = re.compile(r"^(?P<mark>[?✎]) ❯(?: .*)?$")


@never_raising
def read_prompt(screen: str) -> Prompt | None:
    """The prompt an asking screen shows, or None (never raises)."""
    rows = screen_rows(screen)
    asking = _ASKING_PROMPT.match(rows[-2]) if len(rows) >= 3 else None
    if asking is None:
        return None
    _user, turn = turn_rows(rows)
    top = max((i for i, row in enumerate(turn) if ASKING.match(row)), default=None)
    if top is None:
        return None
    inside: list[str] = []
    for row in turn[top + 1:]:
        if _BOTTOM.match(row):
            break
        side = _SIDE.match(row)
        if side is None:
            return None
        inside.append(side.group("text").rstrip())
    else:
        return None
    evidence = tuple(turn[top:top + len(inside) + 2])
    menu = numbered_menu(inside)
    if menu is None:
        return None
    question = " ".join(row.strip() for row in inside[:menu[0].row] if row.strip())
    if asking.group("mark") == "✎":
        # "Other" was picked: the prompt row takes the answer's text.
        return Prompt(kind=PromptKind.QUESTION, question=question, title="Hermes needs your input",
                      free_text=True, evidence=(*evidence, rows[-2]))
    default = next((item.number for item in menu if item.cursor), None)
    options = tuple(
        PromptOption(label=item.label, keys=option_keys(item.number, default, "arrows"),
                     effect=OptionEffect.OTHER if _OTHER.match(item.label) else OptionEffect.ANSWER,
                     takes_text=bool(_OTHER.match(item.label)))
        for item in menu)
    return Prompt(kind=PromptKind.QUESTION, question=question, title="Hermes needs your input",
                  options=options, default=default, evidence=evidence)
