"""Reading Antigravity CLI's prompts into typed records (``ProviderSpec.read_prompt``).

Three are known, from upstream CAO's provider and tests (see the README for what is documented):

- the trust question, a menu with its cursor on the first row::

      Antigravity CLI requires permission to read, edit, and execute files here.
      > Yes, I trust this folder
        No, exit

  keys are Up/Down from the cursor, then Enter;
- the feedback survey, one row: ``How's the CLI experience so far? [1] Good [2] Fine [3] Bad [0] Skip``,
  each option picked with its number then Enter;
- a tool's approval, ``Do you want to allow this action? [y/n]`` on the bottom row: ``y`` or ``n``, then
  Enter.

None of these keys is proven by a recording (the CLI is not installable here).
"""

from __future__ import annotations

import re

from cao_hookspecs import OptionEffect, Prompt, PromptKind, PromptOption
from cao_screen_core.menus import guess_effect
from cao_screen_core.reports import never_raising
from cao_screen_core.rows import screen_rows

from .dialogs import SURVEY, TRUST
from .screen import PERMISSION

__all__ = ["read_prompt"]

_TRUST = re.compile(TRUST)
_SURVEY = re.compile(SURVEY)
_TRUST_QUESTION = re.compile(r"^\s*(?P<text>Antigravity CLI requires permission to .+)$")
_NO_EXIT = re.compile(r"^\s*No, exit\s*$")
_RATING = re.compile(r"\[(?P<key>\d)\] (?P<label>[^\[\]]*[^\s\[\]])")


@never_raising  # a screen that breaks the reader shows no prompt cao could answer
def read_prompt(screen: str) -> Prompt | None:
    """The prompt open on an Antigravity CLI screen, or None; never raises."""
    rows = screen_rows(screen)
    tail = rows[-12:]
    return _trust(tail) or _survey(tail) or _permission(rows)


def _trust(rows: list[str]) -> Prompt | None:
    at = next((i for i, row in enumerate(rows) if _TRUST.match(row)), None)
    if at is None or at + 1 >= len(rows) or not _NO_EXIT.match(rows[at + 1]):
        return None
    asked = next((_TRUST_QUESTION.match(row) for row in reversed(rows[:at]) if _TRUST_QUESTION.match(row)),
                 None)
    question = asked.group("text") if asked else "Trust this folder?"
    options = (PromptOption(label="Yes, I trust this folder", keys=("Enter",), effect=OptionEffect.ALLOW),
               PromptOption(label="No, exit", keys=("Down", "Enter"), effect=OptionEffect.DENY))
    return Prompt(kind=PromptKind.STARTUP_DIALOG, question=question, options=options, default=1,
                  evidence=rows[at - 1 if asked else at:at + 2])


def _survey(rows: list[str]) -> Prompt | None:
    row = next((row for row in rows if _SURVEY.match(row)), None)
    if row is None:
        return None
    options = []
    for found in _RATING.finditer(row):
        label = found.group("label")
        effect = guess_effect(label)
        options.append(PromptOption(label=label, keys=(found.group("key"), "Enter"),
                                    effect=OptionEffect.ANSWER if effect == OptionEffect.OTHER else effect))
    if len(options) < 2:
        return None
    return Prompt(kind=PromptKind.STARTUP_DIALOG, question="How's the CLI experience so far?",
                  options=options, evidence=(row.strip(),))


def _permission(rows: list[str]) -> Prompt | None:
    found = PERMISSION.match(rows[-1]) if rows else None
    if found is None:
        return None
    options = (PromptOption(label="Yes", keys=("y", "Enter"), effect=OptionEffect.ALLOW),
               PromptOption(label="No", keys=("n", "Enter"), effect=OptionEffect.DENY))
    return Prompt(kind=PromptKind.PERMISSION, question=found.group("question"), options=options,
                  evidence=(rows[-1].strip(),))
