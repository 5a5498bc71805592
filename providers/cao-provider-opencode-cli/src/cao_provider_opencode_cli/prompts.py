"""Reading the prompt OpenCode's inline (``--mini``) interface shows in its live area.

A prompt replaces the footer with a row of its own; everything is read upwards from that row, so an
answered prompt left in the scrollback never matches. A permission request is a row of buttons::

      △ Permission required

       # Shell command                          <- what asks (other tools: their title row)

      $ touch recorded.txt                      <- the command (the rows up to the buttons)

       Allow once   Allow always   Reject          ⇆ select  enter confirm  esc reject

The highlighted button is shown by colour only, so the plain text cannot say which one it is; OpenCode
opens the row on the first one, and Right moves one button on (recorded). Two buttons open a second
stage in the same place: ``Allow always`` asks to confirm the patterns it will allow
(``△ Always allow``, ``Confirm   Cancel``), ``Reject`` opens a text field for telling the model why
(``△ Reject permission``, ``enter confirm  esc cancel``). Each stage reads as a prompt of its own.

A question from the model is a numbered list without a cursor glyph (colour again), its own hint row
at the bottom::

      Which database should I use?

      1. SQLite
         Embedded                               <- an option's description
      2. Postgres
         Server
      3. Type your own answer                   <- opens a text field

      ↑↓ select  enter submit  esc dismiss
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from cao_hookspecs import OptionEffect, Prompt, PromptKind, PromptOption
from cao_screen_core.menus import guess_effect, numbered_menu
from cao_screen_core.reports import never_raising

__all__ = ["read_prompt"]

# A buttons row: the buttons, two or more blanks apart, then OpenCode's key hint.
_BUTTONS = re.compile(
    r"^\s+(?P<buttons>\S.*?\S)\s{2,}(?P<hint>(?:⇆ select\s+)?enter confirm\s+esc (?:\w+))\s*$")
_GAP = re.compile(r"\s{2,}")
_QUESTION_HINT = re.compile(r"^\s*↑↓ select\s+enter submit\s+esc dismiss\s*$")
# The hint while the user's own answer is typed into the field under "Type your own answer".
_FIELD_HINT = re.compile(r"^\s*enter save\s+esc cancel\s*$")
_HEADING = re.compile(r"^\s*△ (?P<title>\S.*?)\s*$")
_COMMAND = re.compile(r"^\s*\$ (?P<command>.*)$")
_TITLE = re.compile(r"^\s*(?:#|→|←|✱|%|⚙|◈|•) (?P<title>\S.*?)\s*$")
_USER = re.compile(r"^› ")
# Tool titles OpenCode gives its permission requests, and the permission each one is about.
_TOOLS = {"Shell command": "bash"}
# Labels of options that take text typed after them.
_TEXT_OPTION = re.compile(r"^Type your own answer$", re.IGNORECASE)
# Keys the hint row prints, as tmux names them.
_HINT_KEYS = {"esc": "Escape", "enter": "Enter"}


@never_raising
def read_prompt(screen: str) -> Prompt | None:
    """The prompt OpenCode shows at the bottom of ``screen``, or None. Never raises."""
    rows = [row.rstrip() for row in screen.replace("\r", "").split("\n")]
    while rows and not rows[-1].strip():
        rows.pop()
    if not rows:
        return None
    buttons = _BUTTONS.match(rows[-1])
    if buttons:
        return _staged(rows, buttons)
    if _QUESTION_HINT.match(rows[-1]):
        return _question(rows)
    if _FIELD_HINT.match(rows[-1]):
        return _question(rows, field=True)
    return None


def _live_area(rows: Sequence[str]) -> tuple[int, list[str]]:
    """Where the live prompt starts (its ``△`` heading, last above the hint row) and its rows."""
    end = len(rows) - 1
    user = max((i for i in range(end) if _USER.match(rows[i])), default=-1)
    heading = max((i for i in range(user + 1, end) if _HEADING.match(rows[i])), default=-1)
    return heading, list(rows[heading:end]) if heading >= 0 else []


def _staged(rows: list[str], buttons: re.Match[str]) -> Prompt | None:
    heading, area = _live_area(rows)
    if heading < 0:
        return None
    title = _HEADING.match(area[0]).group("title")  # type: ignore[union-attr]
    body = [row.strip() for row in area[1:] if row.strip()]
    labels = _GAP.split(buttons.group("buttons").strip())
    hint = buttons.group("hint")
    escape = hint.rsplit("esc ", 1)[1].strip()
    evidence = [row for row in area if row.strip()] + [rows[-1]]
    if title == "Permission required" and labels[:3] == ["Allow once", "Allow always", "Reject"]:
        return _permission(body, labels, escape, evidence)
    if title == "Always allow" and labels == ["Confirm", "Cancel"]:
        # Cancel goes back to the permission request: it answers nothing, so it is not offered.
        question = body[0] if body else title
        patterns = [row[2:].strip() for row in body[1:] if row.startswith("- ")]
        return Prompt(kind=PromptKind.CONFIRMATION, question=question, title=title,
                      arguments={"patterns": "\n".join(patterns)} if patterns else {},
                      options=(PromptOption(label="Confirm", keys=("Enter",),
                                            effect=OptionEffect.ALLOW_ALWAYS),),
                      default=1, evidence=evidence)
    if title == "Reject permission" and not labels[1:]:
        # The text field's placeholder is drawn on the hint row itself; Esc goes back to the request.
        question = body[0] if body else title
        return Prompt(kind=PromptKind.PERMISSION, question=question, title=title, free_text=True,
                      options=(PromptOption(label="Reject", keys=("Enter",), effect=OptionEffect.DENY,
                                            takes_text=True),),
                      default=1, evidence=evidence)
    return None


def _permission(body: list[str], labels: list[str], escape: str, evidence: list[str]) -> Prompt:
    tool_title = next((m.group("title") for m in map(_TITLE.match, body) if m), None)
    start = next((i for i, row in enumerate(body) if _COMMAND.match(row)), None)
    arguments: dict[str, str] = {}
    complete = True
    if start is not None:
        first = _COMMAND.match(body[start]).group("command")  # type: ignore[union-attr]
        command = " ".join([first, *body[start + 1:]]).strip()
        arguments["command"] = command
        complete = not command.endswith(("…", "..."))
    options = []
    for number, label in enumerate(labels, 1):
        if label.lower() == escape:
            keys: tuple[str, ...] = ("Escape",)
        else:
            keys = ("Right",) * (number - 1) + ("Enter",)
        # Rejecting opens a text field for telling the model what to do instead.
        options.append(PromptOption(label=label, keys=keys, effect=guess_effect(label),
                                    takes_text=guess_effect(label) == OptionEffect.DENY))
    tool = _TOOLS.get(tool_title, tool_title) if tool_title else None
    return Prompt(kind=PromptKind.PERMISSION, question="Permission required", title=tool_title or "",
                  tool=tool, arguments=arguments, arguments_complete=complete, options=tuple(options),
                  default=1, evidence=evidence)


def _question(rows: list[str], *, field: bool = False) -> Prompt | None:
    end = len(rows) - 1
    user = max((i for i in range(end) if _USER.match(rows[i])), default=-1)
    menu = numbered_menu(rows, end=end)
    if not menu or menu[0].row <= user or any(item.cursor for item in menu):
        return None
    # Nothing but blank rows may follow the menu down to the hint row.
    tail = menu[-1].row + 1 + len(menu[-1].after)
    if any(row.strip() for row in rows[tail:end]):
        return None
    above = menu[0].row - 1
    while above > user and not rows[above].strip():
        above -= 1
    question_rows = []
    while above > user and rows[above].strip():
        question_rows.insert(0, rows[above].strip())
        above -= 1
    if not question_rows:
        return None
    evidence = [*question_rows, *(r for r in rows[menu[0].row:end] if r.strip()), rows[-1]]
    if field:
        # Typed text and Enter answer with it; Esc goes back to the options (it answers nothing).
        if not any(_TEXT_OPTION.match(item.label) for item in menu):
            return None
        return Prompt(kind=PromptKind.QUESTION, question=" ".join(question_rows), free_text=True,
                      evidence=evidence)
    options = []
    for item in menu:
        takes_text = bool(_TEXT_OPTION.match(item.label))
        options.append(PromptOption(
            label=item.label, keys=(str(item.number),), description=" ".join(r.strip() for r in item.after),
            effect=OptionEffect.ANSWER, takes_text=takes_text))
    return Prompt(kind=PromptKind.QUESTION, question=" ".join(question_rows), options=tuple(options),
                  default=1, evidence=evidence)

