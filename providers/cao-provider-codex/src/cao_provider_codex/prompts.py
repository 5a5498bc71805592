"""Reading the prompt Codex shows: approvals and start-up dialogs, with the keys that answer them.

Codex draws every prompt in place of its composer, at the bottom of the screen, a numbered list with
``›`` on the selected row, and a key hint as the last row::

      Would you like to run the following command?        <- the question (approvals)
      Environment: local
      Reason: Create the marker file?                       <- why the model asks
      $ touch marker                                        <- the command

    › 1. Yes, proceed (y)                                   <- a key printed at the end of a label
      2. Yes, and don't ask again for commands that start with `touch marker` (p)
      3. No, and tell Codex what to do differently (esc)

      Press enter to confirm or esc to cancel               <- the key hint: the last row

Start-up dialogs (``Trust this folder?``, ``Update available · a → b``) have the same list under a
heading, and a shorter hint (``enter continue · esc back``).

An option is picked by the key its label prints (``y``, ``p``, ``esc``), else by moving the cursor
with the arrow keys and Enter (what the hint offers). A prompt is read only where the status detector
sees one waiting (the list and its hint at the bottom), so an answered prompt in the scrollback or a
reply quoting one is never read; the login screen, a list too, is an error, not a prompt.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from cao_hookspecs import OptionEffect, Prompt, PromptKind, PromptOption, TerminalStatus
from cao_screen_core.menus import MenuItem, guess_effect, key_hint, numbered_menu, option_keys
from cao_screen_core.reports import never_raising

from .screen import PROMPT, _rows, detect_status

__all__ = ["read_prompt"]

# Rows between the list and the key hint under it: blank ones, and Codex's own spacing.
_FOOTER_GAP = 3
# How far above the list the prompt's heading may be.
_HEAD_DEPTH = 16
_COMMAND = re.compile(r"^\s*\$ (?P<command>.*\S)\s*$")
_REASON = re.compile(r"^\s*Reason:\s*(?P<value>.*\S)\s*$")
_DEFER = re.compile(r"\btell \w+ what to do differently\b", re.IGNORECASE)
# A question's option: its label, then its description in a column of its own.
_DESCRIBED = re.compile(r"^(?P<label>\S.*?)\s{2,}(?P<description>\S.*)$")
_NONE_ABOVE = re.compile(r"^None of the above\b")
# The notes field under a question's options, once open: "› Add notes" (its placeholder) or the notes.
_NOTES = re.compile(rf"^\s+{PROMPT} \S")
# Continuation rows of a wrapped label are indented past the item's number.
_CONTINUATION = re.compile(r"^\s{4,}\S")

# What each prompt is, by its heading: (pattern, kind, tool). Codex names no tool on screen; ``shell``
# and ``apply_patch`` are the kind of action the heading asks about, so a policy can tell them apart.
_HEADINGS: tuple[tuple[re.Pattern[str], PromptKind, str | None], ...] = (
    (re.compile(r"Would you like to run the following command\?"), PromptKind.PERMISSION, "shell"),
    (re.compile(r"Would you like to make the following edits\?"), PromptKind.PERMISSION, "apply_patch"),
    (re.compile(r"Would you like to grant these permissions\?"), PromptKind.PERMISSION, None),
    (re.compile(r"Do you want to approve network access to\b"), PromptKind.PERMISSION, "network"),
    (re.compile(r"^\s*Question \d+/\d+"), PromptKind.QUESTION, None),
    (re.compile(r"Trust this folder\?|Do you trust the contents of this directory"),
     PromptKind.STARTUP_DIALOG, None),
    (re.compile(r"Update available(?:!| \u00b7 )"), PromptKind.STARTUP_DIALOG, None),
)


@never_raising
def read_prompt(screen: str) -> Prompt | None:
    """The prompt ``screen`` shows, or None (never raises)."""
    return _read(screen)


def _read(screen: str) -> Prompt | None:
    if detect_status(screen).status != TerminalStatus.WAITING_USER_ANSWER:
        return None
    rows = [row.replace("\u00a0", " ") for row in _rows(screen)]
    items = numbered_menu(rows, end=len(rows) - 1)
    if not items:
        return None
    last = items[-1]
    below = [row for row in rows[last.row + 1 + len(last.after):-1] if row.strip()]
    start = _head_start(rows, items[0].row)
    head = rows[start:items[0].row]
    kind, tool, heading = _kind(head)
    question, title, arguments, reason = _describe(head, kind, heading)
    evidence = [row for row in rows[start:] if row.strip()]
    if kind == PromptKind.QUESTION and len(below) == 1 and _NOTES.match(below[0]) and "notes" in rows[-1]:
        # "None of the above" took the cursor into its notes field: what is typed there is the answer.
        return Prompt(kind=kind, question=question, title=title, free_text=True, evidence=evidence)
    if len(rows) - 1 - (last.row + 1 + len(last.after)) > _FOOTER_GAP or below:
        return None  # the list is not the one just above the key hint
    options, default = _options(items, kind)
    if reason:
        arguments = {**arguments, "reason": reason}
    return Prompt(kind=kind, question=question, title=title, tool=tool, arguments=arguments,
                  arguments_complete=not _cut(arguments), options=options, default=default, evidence=evidence)


def _head_start(rows: Sequence[str], first: int) -> int:
    """Where the prompt's rows above its list begin: under the transcript event or user message above
    it (rows of the transcript start at column 0), blank rows left out."""
    start = first
    while start > 0 and first - start < _HEAD_DEPTH:
        row = rows[start - 1]
        if row.startswith(PROMPT) or (row[:1].strip() and not row.startswith(" ")):
            break
        start -= 1
    while start < first and not rows[start].strip():
        start += 1
    return start


def _kind(head: Sequence[str]) -> tuple[PromptKind, str | None, int | None]:
    for index, row in enumerate(head):
        for pattern, kind, tool in _HEADINGS:
            if pattern.search(row):
                return kind, tool, index
    return PromptKind.CHOICE, None, None


def _options(items: Sequence[MenuItem], kind: PromptKind) -> tuple[list[PromptOption], int | None]:
    default = next((item.number for item in items if item.cursor), None)
    options = []
    for item in items:
        label = " ".join([item.label, *(row.strip() for row in item.after if _CONTINUATION.match(row))])
        label, key = key_hint(label)
        keys = (key,) if key else option_keys(item.number, default, "arrows")
        description = ""
        if kind == PromptKind.QUESTION:
            described = _DESCRIBED.match(label)
            if described:
                label, description = described.group("label"), described.group("description")
            effect = OptionEffect.OTHER if _NONE_ABOVE.match(label) else OptionEffect.ANSWER
        else:
            effect = guess_effect(label)
        if kind == PromptKind.STARTUP_DIALOG and label.startswith("Update now"):
            effect = OptionEffect.ALLOW
        # "None of the above" opens the question's notes field.
        takes_text = bool(_DEFER.search(label)) or (kind == PromptKind.QUESTION
                                                    and bool(_NONE_ABOVE.match(label)))
        options.append(PromptOption(label=label, keys=keys, effect=effect, description=description,
                                    takes_text=takes_text))
    return options, default


def _describe(head: Sequence[str], kind: PromptKind,
              heading: int | None) -> tuple[str, str, dict[str, str], str]:
    """question, title, arguments and the model's reason, from the rows above the list."""
    text = [row.strip() for row in head if row.strip()]
    arguments: dict[str, str] = {}
    reason = ""
    if heading is None:
        return (text[-1] if text else "Choose an option"), "", arguments, reason
    question = head[heading].strip()
    title = ""
    if kind == PromptKind.QUESTION:
        # "Question 1/2 (2 unanswered)" over the question, which may wrap onto more rows.
        title = re.sub(r"\s*\(\d+ unanswered\)$", "", question)
        asked = [row.strip() for row in head[heading + 1:] if row.strip()]
        return " ".join(asked) or title, title, arguments, reason
    if kind == PromptKind.STARTUP_DIALOG:
        before = [row.strip() for row in head[:heading] if row.strip()]
        if before:
            # "Folder access" over the folder's path.
            title = before[0]
            if len(before) > 1:
                arguments["folder"] = before[-1]
        # The trust question goes on with an explanation: keep its first sentence.
        question = question.split("? ", 1)[0] + ("?" if "? " in question else "")
        return question, title, arguments, reason
    commands = []
    for row in head[heading + 1:]:
        command = _COMMAND.match(row)
        why = _REASON.match(row)
        if command:
            commands.append(command.group("command"))
        elif commands and row.startswith("    ") and row.strip():
            commands.append(row.strip())  # a command wrapped onto the next rows
        elif why:
            reason = why.group("value")
    if commands:
        arguments["command"] = " ".join(commands)
    return question, title, arguments, reason


def _cut(arguments: dict[str, str]) -> bool:
    """Whether the screen visibly cut the command (Codex ends a shortened one with an ellipsis)."""
    return arguments.get("command", "").endswith(("\u2026", "..."))
