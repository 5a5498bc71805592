"""Reading the prompts {{ cookiecutter.display_name }} shows into typed records (``ProviderSpec.read_prompt``).

TODO: this reads the prompts of the stand-in program ``tests/programs/example_cli.py``. Record the real
CLI's prompts (``scripts/record_screens.py``: every kind it shows, at two sizes), look at them, and
rewrite the reader for what it draws. The stand-in asks on the bottom row, options and their keys on
that row, and waits for one key (no Enter)::

    > Create a notes file.
    ⚙ run_command: touch notes.txt                 <- the tool and its command (``…``: cut to fit)
    Allow run_command? [y] Yes · [a] Yes, always for run_command · [n] No

    The example CLI has not run in 'project' before.
    Trust this folder? [y] Yes · [n] No, exit       <- the start-up dialog (dialogs.py)

Once a key is pressed the row stays and the outcome is printed under it (``  ⎿ allowed``), so only a
question on the bottom row is open; one further up is answered scrollback and reads as None.

Rules for every reader (the conformance kit checks them on the recorded screens):

- return None for any screen without an open prompt, never a guess; and never raise;
- each option's ``keys`` are the tmux keys that pick it from this very screen (prove them by recording:
  ``answer_each_option`` presses each and saves what follows);
- ``effect`` says what picking it means (allow, allow always, deny), so policies work for every CLI;
- ``arguments_complete=False`` when the screen cut an argument: a policy never allows on it;
- ``evidence`` is the rows the prompt was read from.

``cao_screen_core.menus`` has helpers for the usual layouts: ``numbered_menu`` (``❯ 1. Yes`` columns),
``option_keys`` (digit, digit and Enter, or arrows), ``key_hint`` (``(esc)`` printed in a label) and
``guess_effect`` (used below).
"""

from __future__ import annotations

import re

from cao_hookspecs import Prompt, PromptKind, PromptOption
from cao_screen_core.menus import guess_effect
from cao_screen_core.reports import never_raising

from .screen import DIALOGS, QUESTION, screen_rows

__all__ = ["read_prompt"]

# TODO: the real CLI's rows.
_OPTION = re.compile(r"^\[(?P<key>\w)\] (?P<label>\S.*)$")
_ALLOW = re.compile(r"^Allow (?P<tool>\S+)\?$")
_TOOL_ROW = re.compile(r"^⚙ (?P<tool>\S+): (?P<command>.*)$")
_CUT = "…"


@never_raising  # a screen that breaks the reader shows no prompt cao could answer
def read_prompt(screen: str) -> Prompt | None:
    """The prompt open on a {{ cookiecutter.display_name }} screen, or None when none is; never raises."""
    return _read(screen)


def _read(screen: str) -> Prompt | None:
    rows = screen_rows(screen)
    if not rows:
        return None
    # Only the bottom row can be an open question: above it, a question is answered.
    found = QUESTION.match(rows[-1])
    if found is None:
        return None
    options = []
    for shown in found.group("options").split(" · "):
        option = _OPTION.match(shown)
        if option is None:
            return None
        # One key, pressed alone, picks the option: the stand-in reads keys without waiting for Enter.
        options.append(PromptOption(label=option.group("label"), keys=(option.group("key"),),
                                    effect=guess_effect(option.group("label"))))
    question = found.group("question")
    if any(pattern.match(rows[-1]) for _, pattern in DIALOGS):
        # The row above the dialog's question says why it asks.
        return Prompt(kind=PromptKind.STARTUP_DIALOG, question=question, options=options,
                      evidence=rows[-2:])
    allow = _ALLOW.match(question)
    if allow is None:
        return None  # a question this reader does not know: better none than a wrong one
    tool, arguments, complete, evidence = allow.group("tool"), {}, True, rows[-1:]
    tool_row = _TOOL_ROW.match(rows[-2]) if len(rows) > 1 else None
    if tool_row is not None and tool_row.group("tool") == tool:
        command = tool_row.group("command")
        complete = not command.endswith(_CUT)
        arguments = {"command": command.removesuffix(_CUT)}
        evidence = rows[-2:]
    # No default: Enter picks nothing on this CLI.
    return Prompt(kind=PromptKind.PERMISSION, question=question, tool=tool, arguments=arguments,
                  arguments_complete=complete, options=options, evidence=evidence)
