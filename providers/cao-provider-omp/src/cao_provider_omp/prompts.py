"""Reading the prompts Oh My Pi shows into typed records (``ProviderSpec.read_prompt``).

Under the ``always-ask`` and ``write`` approval modes, a tool call waits in a box that takes the place
of the status line and composer at the bottom of the screen::

    ╭─ Allow tool: bash ─────────────────
    │
    │ Command: touch recorded.txt            <- the arguments, one per row (a long one goes on)
    │
    │  ❯ Approve                             <- the options; ❯ is the cursor
    │    Deny
    │
    │ up/down navigate  enter select  esc cancel
    │
    ╰────────────────────────────────────

Up and Down move the cursor and Enter picks (the keys are counted from the cursor on this screen).
Once picked, the box is gone: a box that is not the bottom of the screen is no open prompt.
"""

from __future__ import annotations

import re

from cao_hookspecs import Prompt, PromptKind, PromptOption
from cao_screen_core.menus import guess_effect, option_keys
from cao_screen_core.reports import never_raising

from .screen import APPROVAL, screen_rows

__all__ = ["read_prompt"]

_HINT = re.compile(r"^up/down navigate\b")
_OPTION = re.compile(r"^(?P<cursor>❯)?\s*(?P<label>\S.*)$")
_ARGUMENT = re.compile(r"^(?P<name>[A-Z][A-Za-z ]{0,30}): (?P<value>.*)$")
_CUT = "…"


def _inside(row: str) -> str | None:
    """A row of the box without its border; None for a row outside the box."""
    if not row.startswith("│"):
        return None
    return row[1:].rstrip().removesuffix("│").rstrip()


@never_raising
def read_prompt(screen: str) -> Prompt | None:
    """The prompt open on an Oh My Pi screen, or None when none is; never raises."""
    rows = screen_rows(screen)
    if not rows or not rows[-1].startswith("╰"):
        return None
    top = next((index for index in range(len(rows) - 1, max(-1, len(rows) - 40), -1)
                if APPROVAL.match(rows[index])), None)
    if top is None:
        return None
    tool = APPROVAL.match(rows[top]).group("tool")  # type: ignore[union-attr]
    inner = [_inside(row) for row in rows[top + 1:-1]]
    if any(row is None for row in inner):
        return None
    body = [row for row in inner if row is not None]
    hint = next((index for index, row in enumerate(body) if _HINT.match(row.strip())), None)
    if hint is None:
        return None
    arguments: dict[str, str] = {}
    current = None
    options: list[tuple[str, bool]] = []
    for row in body[:hint]:
        found = _ARGUMENT.match(row.strip())
        if not options and found and row.startswith(" ") and not row.startswith("  "):
            current = found.group("name").lower()
            arguments[current] = found.group("value")
        elif not row.strip():
            current = None
        elif current is not None and not options:
            arguments[current] += " " + row.strip()  # a long argument goes on
        else:
            option = _OPTION.match(row.strip())
            if option is None:
                return None
            options.append((option.group("label"), bool(option.group("cursor"))))
    if len(options) < 2:
        return None
    default = next((number for number, (_, cursor) in enumerate(options, 1) if cursor), None)
    complete = not any(value.endswith(_CUT) for value in arguments.values())
    return Prompt(
        kind=PromptKind.PERMISSION, question=f"Allow tool: {tool}", tool=tool,
        arguments={name: value.removesuffix(_CUT) for name, value in arguments.items()},
        arguments_complete=complete, default=default, evidence=rows[top:],
        options=[PromptOption(label=label, keys=option_keys(number, default, "arrows"),
                              effect=guess_effect(label))
                 for number, (label, _) in enumerate(options, 1)],
    )
