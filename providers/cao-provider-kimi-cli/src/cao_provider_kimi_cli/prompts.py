"""Reading the prompt Kimi CLI shows: an approval or question panel, or a start-up gate.

A panel takes the place of the input box, right above the toolbar's rule, so only the bottom of the
screen is read and a panel left in the scrollback never matches::

    ╭─ approval ──────────────────────────────────────╮
    │  Shell is requesting approval to run command:   │   <- the tool, and what it wants to do
    │                                                 │
    │  touch recorded.txt                             │   <- the argument (wrapped rows joined)
    │                                                 │
    │ → [1] Approve once                              │   <- "→" marks the option Enter takes
    │   [2] Approve for this session                  │
    │   [3] Reject                                    │
    │   [4] Reject, tell the model what to do instead │
    │                                                 │
    │   ▲/▼ select  1/2/3/4 choose  ↵ confirm          │
    ╰─────────────────────────────────────────────────╯
    ─────────────────────────────────────────────────────    <- the toolbar

    ╭─ question ─────────────────────────╮
    │ ? Which database should I use?     │
    │                                    │
    │ → [1] SQLite                       │
    │       Embedded                     │   <- an option's description
    │   [2] Postgres                     │
    │   [3] Other                        │   <- opens a text field
    ╰────────────────────────────────────╯

A digit alone picks its option and submits (recorded). The options that take text (``[4] Reject,
tell the model...``, ``[3] Other``) turn their row into a text field (``→ [4] Reject: █``): then digits
are typed into it, Enter submits the text (and does nothing while it is empty) and Esc gives up on
it (a plain reject, a dismissed question). That state reads as a prompt of its own, taking text.

A start-up gate (see ``dialogs.py``) is a box, then its choices between two rules at the very bottom,
each with the key that picks it (``[Enter]``, ``[q]``, ``[s]``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from cao_hookspecs import OptionEffect, Prompt, PromptKind, PromptOption
from cao_screen_core.menus import guess_effect, numbered_menu
from cao_screen_core.reports import never_raising

__all__ = ["read_prompt"]

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?")
_RULE = re.compile(r"^─{20,}$")
_TOOLBAR = re.compile(r"^(?:(?:yolo|afk|plan)\s+)*(?:agent|shell)(?:\s|$)")
_PANEL_TOP = re.compile(r"^╭─ (?P<title>approval|question) ─")
_PANEL_BOTTOM = re.compile(r"^╰─+╯$")
_REQUEST = re.compile(r"^(?P<tool>\S.*?) is requesting approval to (?P<action>.+?):$")
_HINT = re.compile(r"select\s+.*choose\s+.*confirm$")
_QUESTION = re.compile(r"^\? (?P<text>\S.*)$")
# An option row turned into a text field: its label, a colon, what was typed so far, the cursor block.
_FIELD = re.compile(r"^(?P<label>\S.*?): (?P<typed>.*?)█?$")
_TAKES_TEXT = re.compile(r"\btell the model\b|^Other$", re.IGNORECASE)
# Argument names by the action a request names.
_ARGUMENT = {"run command": "command"}
# A gate's choices: "[Enter]  Upgrade now  (uv tool upgrade kimi-cli)".
_CHOICE = re.compile(r"^\s+\[(?P<key>Enter|[a-z])\]\s+(?P<label>\S.*?)\s*$")
_BOX_TITLE = re.compile(r"^╭─+ (?P<title>\S.*?) ─+╮$")
_DECLINE = re.compile(r"^(?:Not now|Skip reminders|Continue with this)", re.IGNORECASE)


@never_raising
def read_prompt(screen: str) -> Prompt | None:
    """The prompt Kimi CLI shows at the bottom of ``screen``, or None. Never raises."""
    rows = [_ANSI.sub("", row).rstrip() for row in screen.replace("\r", "").split("\n")]
    while rows and not rows[-1]:
        rows.pop()
    rule = _toolbar_rule(rows)
    if rule is None:
        return _gate(rows)
    return _panel(rows, rule)


def _toolbar_rule(rows: Sequence[str]) -> int | None:
    for index in range(len(rows) - 2, max(len(rows) - 5, -1), -1):
        if _RULE.match(rows[index]) and _TOOLBAR.match(rows[index + 1]):
            return index
    return None


def _inside(row: str) -> str:
    """A panel row without its borders (and the blanks that pad it)."""
    return row[1:].rstrip().removesuffix("│").rstrip() if row.startswith("│") else ""


def _panel(rows: list[str], rule: int) -> Prompt | None:
    bottom = rule - 1
    if bottom < 0 or not _PANEL_BOTTOM.match(rows[bottom]):
        return None
    top = next((i for i in range(bottom - 1, -1, -1) if not rows[i].startswith("│")), None)
    if top is None:
        return None
    found = _PANEL_TOP.match(rows[top])
    if not found:
        return None
    inner = [_inside(row) for row in rows[top + 1:bottom]]
    evidence = [rows[top], *(row for row in rows[top + 1:bottom + 1] if _inside(row).strip())]
    menu = numbered_menu(inner)
    if not menu:
        return None
    field = next((item for item in menu if item.cursor and _FIELD.match(item.label)), None)
    default = next((item.number for item in menu if item.cursor), None)
    heading = [row.strip() for row in inner[:menu[0].row] if row.strip()]
    if found.group("title") == "approval":
        return _approval(heading, menu, default, field, evidence)
    return _question(heading, menu, default, field, evidence)


def _approval(heading: list[str], menu: Sequence, default: int | None, field: object,
              evidence: list[str]) -> Prompt | None:
    request = _REQUEST.match(heading[0]) if heading else None
    if request is None:
        return None
    tool, action = request.group("tool"), request.group("action")
    detail = " ".join(heading[1:])
    arguments = {_ARGUMENT.get(action, "detail"): detail} if detail else {}
    question = heading[0]
    if field is not None:
        # The feedback field is open: text and Enter reject with it, Esc rejects without.
        label = _FIELD.match(field.label).group("label")  # type: ignore[attr-defined,union-attr]
        return Prompt(kind=PromptKind.PERMISSION, question=question, title="approval", tool=tool,
                      arguments=arguments, free_text=True, default=None, evidence=evidence,
                      options=(PromptOption(label=label, keys=("Escape",), effect=OptionEffect.DENY),))
    options = tuple(PromptOption(label=item.label, keys=(str(item.number),), effect=guess_effect(item.label),
                                 takes_text=bool(_TAKES_TEXT.search(item.label)))
                    for item in menu)
    return Prompt(kind=PromptKind.PERMISSION, question=question, title="approval", tool=tool,
                  arguments=arguments, options=options, default=default, evidence=evidence)


def _question(heading: list[str], menu: Sequence, default: int | None, field: object,
              evidence: list[str]) -> Prompt | None:
    asked = _QUESTION.match(heading[0]) if heading else None
    if asked is None:
        return None
    question = " ".join([asked.group("text"), *heading[1:]])
    if field is not None:
        # "Other" is open: text and Enter answer with it, Esc dismisses the question.
        return Prompt(kind=PromptKind.QUESTION, question=question, title="question", free_text=True,
                      default=None, evidence=evidence,
                      options=(PromptOption(label="Dismiss", keys=("Escape",), effect=OptionEffect.OTHER),))
    options = []
    for item in menu:
        takes_text = bool(_TAKES_TEXT.search(item.label))
        options.append(PromptOption(label=item.label, keys=(str(item.number),),
                                    description=" ".join(row.strip() for row in item.after),
                                    effect=OptionEffect.ANSWER,
                                    takes_text=takes_text))
    return Prompt(kind=PromptKind.QUESTION, question=question, title="question", options=tuple(options),
                  default=default, evidence=evidence)


def _gate(rows: list[str]) -> Prompt | None:
    """A start-up gate: choices between the last two rules, at the very bottom of the screen."""
    if len(rows) < 3 or not _RULE.match(rows[-1]):
        return None
    above = next((i for i in range(len(rows) - 2, -1, -1) if _RULE.match(rows[i])), None)
    if above is None:
        return None
    choices = [_CHOICE.match(row) for row in rows[above + 1:-1]]
    if len(choices) < 2 or not all(choices):
        return None
    box = next((i for i in range(above - 1, -1, -1) if _BOX_TITLE.match(rows[i])), None)
    title = _BOX_TITLE.match(rows[box]).group("title") if box is not None else ""  # type: ignore[union-attr]
    options = []
    for choice in choices:
        assert choice is not None
        key, label = choice.group("key"), " ".join(choice.group("label").split())
        # Enter takes what the gate offers (an upgrade, a migration); the letters decline it.
        effect = OptionEffect.DENY if _DECLINE.match(label) else OptionEffect.ALLOW
        options.append(PromptOption(label=label, keys=(key,), effect=effect))
    evidence = [rows[box]] if box is not None else []
    return Prompt(kind=PromptKind.STARTUP_DIALOG, question=title or "start-up gate", title=title,
                  options=tuple(options), default=1, evidence=[*evidence, *rows[above:]])
