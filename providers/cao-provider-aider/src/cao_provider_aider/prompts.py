"""Reading the questions Aider asks into typed records (``ProviderSpec.read_prompt``).

Aider asks on the bottom row, its options spelled with their letter in brackets and the default last::

    Run shell command? (Y)es/(N)o/(D)on't ask again [Yes]:
    Add file to the chat? (Y)es/(N)o/(A)ll/(S)kip all/(D)on't ask again [Yes]:

The answer is a word typed at that row and Enter (Enter alone takes the default). Once answered, the row
stays with the answer after the colon (``[Yes]: n``), so only a bottom row ending with the colon is open;
a question further up is answered scrollback and reads as None. With ``--yes-always`` (yolo) Aider prints
the question with ``y`` already after it and never waits.
"""

from __future__ import annotations

import re

from cao_hookspecs import OptionEffect, Prompt, PromptKind, PromptOption
from cao_screen_core.reports import never_raising

from .screen import QUESTION, screen_rows

__all__ = ["read_prompt"]

_OPTION = re.compile(r"^\((?P<key>\w)\)(?P<rest>.*)$")
# What each of Aider's answers does: Yes and All go ahead, No, Skip all and Don't ask again decline.
_EFFECTS = {"y": OptionEffect.ALLOW, "a": OptionEffect.ALLOW_ALWAYS, "n": OptionEffect.DENY,
            "s": OptionEffect.DENY, "d": OptionEffect.DENY}
_SHELL = re.compile(r"^Run shell commands?\?$")


@never_raising  # a screen that breaks the reader shows no prompt cao could answer
def read_prompt(screen: str) -> Prompt | None:
    """The question open on an Aider screen, or None when none is; never raises."""
    return _read(screen)


def _read(screen: str) -> Prompt | None:
    rows = screen_rows(screen)
    found = QUESTION.match(rows[-1]) if rows else None
    if found is None:
        return None
    options = []
    for shown in found.group("options").split("/"):
        option = _OPTION.match(shown)
        if option is None or option.group("key").lower() not in _EFFECTS:
            return None
        key = option.group("key").lower()
        options.append(PromptOption(label=f"{option.group('key')}{option.group('rest')}", keys=(key, "Enter"),
                                    effect=_EFFECTS[key]))
    question = found.group("question")
    if _SHELL.match(question):
        # The commands are the indented rows of the answer's code block above the question.
        commands = [row.strip() for row in _block_above(rows[:-1])]
        return Prompt(kind=PromptKind.PERMISSION, question=question, tool="shell",
                      arguments={"command": "\n".join(commands)} if commands else {},
                      options=options, evidence=rows[-1:])
    return Prompt(kind=PromptKind.PERMISSION, question=question, options=options, evidence=rows[-1:])


def _block_above(rows: list[str]) -> list[str]:
    """The shell commands Aider lists above its question: the code block it found in the answer."""
    end = len(rows)
    while end > 0 and not rows[end - 1].strip():
        end -= 1
    start = end
    while start > 0 and rows[start - 1].strip() and not rows[start - 1].startswith("```"):
        start -= 1
    return rows[start:end] if start > 0 and rows[start - 1].startswith("```") else []
