"""Reading MiniMax Code's tool approval into a typed prompt (``ProviderSpec.read_prompt``).

The question, as upstream CAO's fixture of 0.1.2 shows it, bottom rows last::

    Approval needed
    Run this command?              <- the question
    $ pnpm test                    <- what would run
    1 Allow for this conversation
    2 Always allow this action
    3 Deny

Each option is picked with its number (the keys are read from the documented screen, not proven by a
recording: see the README). Only a question whose options end the screen is open; one with the turn's
rows drawn under it was answered.
"""

from __future__ import annotations

import re

from cao_hookspecs import OptionEffect, Prompt, PromptKind, PromptOption
from cao_screen_core.menus import guess_effect
from cao_screen_core.reports import never_raising
from cao_screen_core.rows import last_index, screen_rows

from .screen import APPROVAL

__all__ = ["read_prompt"]

_OPTION = re.compile(r"^(?P<number>[1-9]) (?P<label>\S.*)$")
_COMMAND = re.compile(r"^\$ (?P<command>.+)$")
_CUT = "…"


def _effect(label: str) -> OptionEffect:
    # "Always allow this action" is the lasting choice; "Allow for this conversation", the narrowest
    # allow offered (there is no "once"), counts as a plain allow.
    return OptionEffect.ALLOW_ALWAYS if label.lower().startswith("always allow") else guess_effect(label)


@never_raising  # a screen that breaks the reader shows no prompt cao could answer
def read_prompt(screen: str) -> Prompt | None:
    """The approval question open on a MiniMax Code screen, or None; never raises."""
    rows = screen_rows(screen)
    start = last_index(rows, APPROVAL.match)
    if start is None or start + 3 >= len(rows):
        return None
    body = rows[start + 1:]
    first = next((i for i, row in enumerate(body) if _OPTION.match(row)), None)
    if first is None or first == 0:
        return None
    options = []
    for number, row in enumerate(body[first:], 1):
        found = _OPTION.match(row)
        if found is None or int(found.group("number")) != number:
            return None  # rows under the menu: the question was answered
        label = found.group("label")
        options.append(PromptOption(label=label, keys=(str(number),), effect=_effect(label)))
    if len(options) < 2:
        return None
    question = body[0].strip()
    arguments: dict[str, str] = {}
    complete = True
    for row in body[1:first]:
        command = _COMMAND.match(row)
        if command:
            arguments["command"] = command.group("command").removesuffix(_CUT)
            complete = not command.group("command").endswith(_CUT)
    tool = "shell" if "command" in arguments else None
    return Prompt(kind=PromptKind.PERMISSION, question=question, title="Approval needed", tool=tool,
                  arguments=arguments, arguments_complete=complete, options=options,
                  evidence=rows[start:])
