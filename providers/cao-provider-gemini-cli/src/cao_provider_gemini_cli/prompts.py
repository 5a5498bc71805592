"""Reading the prompt Gemini CLI shows: tool approvals, questions and start-up dialogs, with their keys.

Gemini CLI draws every prompt in a box at the bottom of the screen, in place of its input area, the
selected option marked ``●``::

    ╭──────────────────────────────────────────╮
    │ ? Shell  touch recorded.txt              │   <- "?" (waiting), the tool, what it does
    │ ╭──────────────────────────────────────╮ │
    │ │ touch recorded.txt                   │ │   <- the command, in a box of its own
    │ ╰──────────────────────────────────────╯ │
    │ Allow execution of [Shell]?              │   <- the question
    │                                          │
    │ ● 1. Allow once                          │   <- digits pick (and submit) an option
    │   2. Allow for this session              │
    │   3. No, suggest changes (esc)           │   <- a key printed at the end of a label
    ╰──────────────────────────────────────────╯

A question (``ask_user``) is headed ``Answer Questions``, has a description row under each option and
the hint ``Enter to select · ↑/↓ to navigate · Esc to cancel``: its options are picked with the arrow
keys and Enter. Start-up dialogs (trust this folder, the sign-in method) are menus in a box too; the
API-key dialog is a text field whose hint offers Enter (submit) and Esc (cancel).

A prompt is read only where the status detector sees one waiting and only from the box that ends the
screen, so an answered prompt in the scrollback or a reply quoting one is never read.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from cao_hookspecs import OptionEffect, Prompt, PromptKind, PromptOption, TerminalStatus
from cao_screen_core.menus import MenuItem, guess_effect, key_hint, numbered_menu, option_keys
from cao_screen_core.reports import never_raising

from .screen import detect_status

__all__ = ["read_prompt"]

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_BOX_BOTTOM = re.compile(r"^(?P<indent>\s*)╰─+╯$")
_TOOL = re.compile(r"^\?\s+(?P<tool>\S+)(?:\s{2,}(?P<what>\S.*))?$")
_QUESTION_HEAD = "Answer Questions"
_QUESTION_HINT = re.compile(r"↑/↓ to navigate")
_KEY_FIELD = re.compile(r"\(Press Enter to submit, Esc to cancel\b")
_DEFER = re.compile(r"\bsuggest changes\b|\bcustom value\b", re.IGNORECASE)
# Rows an inner box cuts a long argument with.
_HIDDEN = re.compile(r"\b(?:lines? hidden|more lines?)\b|\.\.\.$|…$")

# Start-up dialogs by their question; the rest are approvals (a tool row heads them) or questions.
_STARTUP = re.compile(r"Do you trust the files in this folder\?|How would you like to authenticate"
                      r"|Enter Gemini API Key")


@never_raising
def read_prompt(screen: str) -> Prompt | None:
    """The prompt ``screen`` shows, or None (never raises)."""
    return _read(screen)


def _read(screen: str) -> Prompt | None:
    if detect_status(screen).status != TerminalStatus.WAITING_USER_ANSWER:
        return None
    rows = [_ANSI.sub("", row).rstrip() for row in screen.splitlines()]
    while rows and not rows[-1].strip():
        rows.pop()
    box = _last_box(rows)
    if box is None:
        return None
    evidence = [row for row in box if row.strip()]
    items = numbered_menu(box)
    if not items:
        if any(_KEY_FIELD.search(row) for row in box):
            return _key_field(box, evidence)
        return None
    if any(row.strip() == _QUESTION_HEAD for row in box[:items[0].row]):
        return _question(box, items, evidence)
    return _choice(box, items, evidence)


def _last_box(rows: Sequence[str]) -> list[str] | None:
    """The rows inside the box the screen ends with, its borders taken off (inner boxes keep theirs)."""
    if not rows:
        return None
    bottom = _BOX_BOTTOM.match(rows[-1])
    if not bottom:
        return None
    column = len(bottom.group("indent"))
    for top in range(len(rows) - 2, -1, -1):
        row = rows[top]
        if row[column:column + 1] == "╭" and row.endswith("╮"):
            break
        if row[column:column + 1] != "│":
            return None
    else:
        return None
    inside = []
    for row in rows[top + 1:-1]:
        body = row[column + 1:]
        if body.endswith("│"):
            body = body[:-1]
        inside.append(body[1:].rstrip() if body.startswith(" ") else body.rstrip())
    return inside


def _question_row(box: Sequence[str], before: int) -> tuple[int, str] | None:
    for index in range(before - 1, -1, -1):
        text = box[index].strip()
        if text.endswith("?") and not text.startswith(("│", "╭", "╰")):
            return index, text
    return None


def _choice(box: Sequence[str], items: Sequence[MenuItem], evidence: list[str]) -> Prompt | None:
    asked = _question_row(box, items[0].row)
    if asked is None:
        return None
    _, question = asked
    startup = bool(_STARTUP.search(question))
    tool_row = next((m for m in (_TOOL.match(row.strip()) for row in box[:items[0].row]) if m), None)
    tool = tool_row.group("tool") if tool_row and not startup else None
    title = tool_row.group("what") or "" if tool_row and not startup else ""
    arguments: dict[str, str] = {}
    complete = True
    inner = _inner_box(box[:items[0].row])
    if tool is not None and inner:
        arguments["command" if tool == "Shell" else "details"] = " ".join(row.strip() for row in inner)
        complete = not any(_HIDDEN.search(row.strip()) for row in inner)
    default = next((item.number for item in items if item.cursor), None)
    options = []
    for item in items:
        label, key = key_hint(" ".join([item.label, *(row.strip() for row in item.after)]))
        keys = (key,) if key else option_keys(item.number, default, "digit")
        options.append(PromptOption(label=label, keys=keys,
                                    effect=guess_effect(label), takes_text=bool(_DEFER.search(label))))
    kind = PromptKind.STARTUP_DIALOG if startup else (PromptKind.PERMISSION if tool else PromptKind.CHOICE)
    return Prompt(kind=kind, question=question, title=title, tool=tool, arguments=arguments,
                  arguments_complete=complete, options=options, default=default, evidence=evidence)


def _inner_box(rows: Sequence[str]) -> list[str]:
    """The rows inside the first box drawn within ``rows`` (the command of a shell approval)."""
    start = next((i for i, row in enumerate(rows) if row.startswith("╭")), None)
    if start is None:
        return []
    inside = []
    for row in rows[start + 1:]:
        if row.startswith("╰"):
            return inside
        inside.append(row.strip().strip("│").strip())
    return []


def _question(box: Sequence[str], items: Sequence[MenuItem], evidence: list[str]) -> Prompt:
    head = next(i for i, row in enumerate(box) if row.strip() == _QUESTION_HEAD)
    question = " ".join(row.strip() for row in box[head + 1:items[0].row] if row.strip())
    if not any(_QUESTION_HINT.search(row) for row in box[items[-1].row:]):
        # "Enter a custom value" picked: the options stay drawn, the hint says Enter submits what is typed.
        return Prompt(kind=PromptKind.QUESTION, question=question or _QUESTION_HEAD, title=_QUESTION_HEAD,
                      free_text=True, evidence=evidence)
    default = next((item.number for item in items if item.cursor), None)
    options = []
    for item in items:
        custom = bool(_DEFER.search(item.label))
        options.append(PromptOption(
            label=item.label, keys=option_keys(item.number, default, "arrows"),
            effect=OptionEffect.OTHER if custom else OptionEffect.ANSWER,
            description=" ".join(row.strip() for row in item.after if not _QUESTION_HINT.search(row)),
            takes_text=custom))
    return Prompt(kind=PromptKind.QUESTION, question=question or _QUESTION_HEAD, title=_QUESTION_HEAD,
                  options=options, default=default, evidence=evidence)


def _key_field(box: Sequence[str], evidence: list[str]) -> Prompt | None:
    title = next((row.strip() for row in box if row.strip()), "")
    if not _STARTUP.search(title):
        return None
    # Esc (cancel) goes back to the sign-in menu, a prompt of its own: only Enter answers this one.
    options = [PromptOption(label="Submit", keys=("Enter",), effect=OptionEffect.ALLOW)]
    return Prompt(kind=PromptKind.STARTUP_DIALOG, question=title, options=options, default=1, free_text=True,
                  evidence=evidence)
