"""Reading the prompts Qwen Code shows into typed records (``ProviderSpec.read_prompt``).

A prompt replaces the input box with a tool row, the question and a numbered menu, and a spinner row
under it; a digit alone picks an option (recorded: ``waiting_user_answer_answer<n>``)::

      ? Shell touch notes.txt (make notes) ←          <- the tool waiting ("?") and its arguments
         touch notes.txt
       Allow execution of: 'touch'?                   <- the question
       › 1. Yes, allow once                           <- the menu, the cursor on the default
         2. Always allow run 'touch *' commands in this project
         3. Always allow run 'touch *' commands for this user
         4. No, suggest changes (esc)                 <- a key printed in the label
      ⠏ Waiting for user confirmation...

      ? AskUserQuestion Ask user 1 question ←         <- the model asks (its ask_user_question tool)
       Colour                                         <- the question's header
       Which colour?
       ❯ 1. Red
            warm                                      <- an option's description
         3. Type something...                         <- opens a text field: once picked its row
                                                         reads "❯ 3. > Type something..." (free text)
       ↑/↓: Navigate | Enter: Select | Esc: Cancel

Only a menu under the last tool row that waits (``?``), with the input box gone, is open; the reader
never raises and reads nothing it does not know.
"""

from __future__ import annotations

import re

from cao_hookspecs import OptionEffect, Prompt, PromptKind, PromptOption
from cao_screen_core.menus import guess_effect, key_hint, numbered_menu
from cao_screen_core.reports import never_raising
from cao_screen_core.rows import last_index

__all__ = ["read_prompt"]

_WAITING_TOOL = re.compile(r"^\s{2}\? (?P<tool>\S+) (?P<args>.*?)\s*←?$")
# Under the tool row: the rest of it when it wraps (four spaces), the command it runs (five), then the
# question and the menu (three).
_DETAIL = re.compile(r"^ {5}(?P<text>\S.*)$")
_QUESTION_ROW = re.compile(r"^ {3}(?P<text>\S.*)$")
_CONFIRMING = re.compile(r"^\s{2}\S Waiting for user confirmation\.\.\.$")
_RULE = re.compile(r"^─{20,}$")
_QUESTION_TOOL = "AskUserQuestion"
# "Always allow run 'touch *' commands in this project": the common words do not start this way.
_ALWAYS = re.compile(r"^Always allow\b")
_TEXT_OPTION = re.compile(r"^Type something\.*$")
# A permission's arguments row is cut with "…" when it does not fit.
_CUT = "…"


@never_raising  # a screen that breaks the reader shows no prompt cao could answer
def read_prompt(screen: str) -> Prompt | None:
    """The prompt open on a Qwen Code screen, or None when none is; never raises."""
    rows = [row.rstrip() for row in screen.splitlines()]
    while rows and not rows[-1].strip():
        rows.pop()
    if not rows or not _CONFIRMING.match(rows[-1]) or any(_RULE.match(row) for row in rows[-8:]):
        return None
    start = last_index(rows, _WAITING_TOOL.match)
    if start is None:
        return None
    menu = numbered_menu(rows[start:], max_gap=3)
    if menu is None:
        return None
    tool_row = _WAITING_TOOL.match(rows[start])
    assert tool_row is not None
    tool = tool_row.group("tool")
    first = start + menu[0].row
    above, details = _texts(rows[start + 1:first], _QUESTION_ROW), _texts(rows[start + 1:first], _DETAIL)
    question = above[-1] if above else tool_row.group("args")
    default = next((item.number for item in menu if item.cursor), None)
    evidence = [row for row in rows[start:] if row.strip()]
    if tool == _QUESTION_TOOL:
        title = above[0] if len(above) > 1 else ""
        typing = next((item for item in menu if item.cursor and item.label.startswith("> ")), None)
        if typing is not None:
            # "Type something..." picked: its row became a text field that takes the answer's text.
            return Prompt(kind=PromptKind.QUESTION, question=question, title=title, tool=tool, free_text=True,
                          evidence=evidence)
        answers = [_answer(item.number, item.label, item.after) for item in menu]
        return Prompt(kind=PromptKind.QUESTION, question=question, title=title, tool=tool, options=answers,
                      default=default, evidence=evidence)
    options = []
    for item in menu:
        label, hint = key_hint(item.label)
        effect = OptionEffect.ALLOW_ALWAYS if _ALWAYS.match(label) else guess_effect(label)
        options.append(PromptOption(label=label, keys=(hint or str(item.number),), effect=effect))
    command = "".join(details) if details else tool_row.group("args")
    # A command wrapped over rows cannot be told apart from the screen's cuts at their ends.
    complete = len(details) <= 1 and not command.endswith(_CUT)
    return Prompt(kind=PromptKind.PERMISSION, question=question, title=tool, tool=tool,
                  arguments={"command": command.removesuffix(_CUT)}, arguments_complete=complete,
                  options=options, default=default, evidence=evidence)


def _texts(rows: list[str], pattern: re.Pattern[str]) -> list[str]:
    return [found.group("text") for row in rows if (found := pattern.match(row))]


def _answer(number: int, label: str, after: tuple[str, ...]) -> PromptOption:
    if _TEXT_OPTION.match(label):
        return PromptOption(label=label, keys=(str(number),), effect=OptionEffect.OTHER, takes_text=True)
    return PromptOption(label=label, keys=(str(number),), effect=OptionEffect.ANSWER,
                        description=" ".join(row.strip() for row in after))
