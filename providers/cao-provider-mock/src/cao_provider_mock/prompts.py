"""Reading the prompt a mock_cli behaviour shows (``turn.ask``, drawn by ``asking``) off its screen.

The prompt is the last thing on screen, under a blank row, and ends with its key hint::

                                                  (blank row)
    Allow Bash(rm -rf build)?                     the question (rows joined: mock_cli wraps it itself)
    ❯ 1. Yes                                      the cursor: the option Enter takes (``default``)
      2. Yes, and don't ask again for Bash
      3. No, and tell the agent what to do differently ✎      ✎: the option opens a text field
    Enter to confirm · Esc to cancel              a permission ("Enter to select ..." a question)

A permission's tool and arguments come from its question, ``Allow <tool>(<arguments>)?``: a bare text
is the ``command`` argument, ``name=value, ...`` pairs are arguments by name. Options under a question
may have description rows, indented by five blanks. Each option is picked by its digit alone.

After an option with a text field was picked, the prompt shows that field instead of the menu::

    Allow Bash(rm -rf build)?
      3. No, and tell the agent what to do differently ✎
    ✎ <text typed so far>
    Enter to send · Esc to go back

It reads as the same kind and question with no options, ``free_text`` True and the option's label as
the ``title``: what is typed now, then Enter, goes with that option. Answered prompts are erased, so
any screen whose last row is not a key hint shows none.
"""

from __future__ import annotations

import re

from cao_hookspecs import OptionEffect, Prompt, PromptKind, PromptOption
from cao_screen_core.menus import guess_effect, numbered_menu, option_keys
from cao_screen_core.reports import never_raising

from .contract import DESCRIPTION_INDENT, PERMISSION_HINT, QUESTION_HINT, TEXT_HINT, TEXT_MARK
from .screen import screen_rows

__all__ = ["read_prompt"]

_KINDS = {PERMISSION_HINT: PromptKind.PERMISSION, QUESTION_HINT: PromptKind.QUESTION}
_ALLOW = re.compile(r"^Allow (?P<tool>[^\s()]+)\((?P<arguments>.*)\)\?$")
_PAIR = re.compile(r"^[A-Za-z_]\w*=")
_PAIR_SPLIT = re.compile(r", (?=[A-Za-z_]\w*=)")
_FIELD_OPTION = re.compile(rf"^  (?P<number>[1-9])\. (?P<label>.+) {TEXT_MARK}$")
# Rows an option's description may take before the menu reader gives up on the menu.
_DESCRIPTION_ROWS = 12


@never_raising
def read_prompt(screen: str) -> Prompt | None:
    """The prompt on a mock_cli screen, or None when none is open; never raises."""
    return _read(screen)


def _read(screen: str) -> Prompt | None:
    rows = screen_rows(screen)
    while rows and not rows[-1]:
        rows.pop()
    if not rows or rows[-1] not in (PERMISSION_HINT, QUESTION_HINT, TEXT_HINT):
        return None
    hint = rows[-1]
    start = next((i for i in range(len(rows) - 2, -1, -1) if not rows[i]), None)
    if start is None:
        return None
    block = rows[start + 1:-1]
    evidence = rows[start + 1:]
    if hint == TEXT_HINT:
        return _text_field(block, evidence)
    items = numbered_menu(block, max_gap=_DESCRIPTION_ROWS)
    if not items or items[0].row < 1 or sum(item.cursor for item in items) != 1:
        return None
    # The menu runs to the hint: every row after the question is an option or a description of one.
    if items[-1].row + 1 + len(items[-1].after) != len(block):
        return None
    kind = _KINDS[hint]
    question = "".join(block[:items[0].row])
    default = next(item.number for item in items if item.cursor)
    options = []
    for item in items:
        if not all(row.startswith(DESCRIPTION_INDENT) for row in item.after):
            return None
        label = item.label
        takes_text = label.endswith(f" {TEXT_MARK}")
        if takes_text:
            label = label[:-len(TEXT_MARK) - 1]
        effect = guess_effect(label) if kind == PromptKind.PERMISSION else OptionEffect.ANSWER
        options.append(PromptOption(
            label=label, keys=option_keys(item.number, default, "digit"), effect=effect,
            description="".join(row[len(DESCRIPTION_INDENT):] for row in item.after), takes_text=takes_text,
        ))
    tool, arguments = _tool(kind, question)
    return Prompt(kind=kind, question=question, tool=tool, arguments=arguments, options=tuple(options),
                  default=default, evidence=evidence)


def _text_field(block: list[str], evidence: list[str]) -> Prompt | None:
    at = next((i for i in range(len(block) - 1, 0, -1) if _FIELD_OPTION.match(block[i])), None)
    if at is None or at + 1 >= len(block) or not block[at + 1].startswith(TEXT_MARK):
        return None
    question = "".join(block[:at])
    label = _FIELD_OPTION.match(block[at]).group("label")  # type: ignore[union-attr]
    kind = PromptKind.PERMISSION if _ALLOW.match(question) else PromptKind.QUESTION
    tool, arguments = _tool(kind, question)
    return Prompt(kind=kind, question=question, title=label, tool=tool, arguments=arguments,
                  free_text=True, evidence=evidence)


def _tool(kind: PromptKind, question: str) -> tuple[str | None, dict[str, str]]:
    found = _ALLOW.match(question) if kind == PromptKind.PERMISSION else None
    if found is None:
        return None, {}
    shown = found.group("arguments")
    if not shown:
        return found.group("tool"), {}
    if not _PAIR.match(shown):
        return found.group("tool"), {"command": shown}
    pairs = (pair.partition("=") for pair in _PAIR_SPLIT.split(shown))
    return found.group("tool"), {name: value for name, _, value in pairs}
