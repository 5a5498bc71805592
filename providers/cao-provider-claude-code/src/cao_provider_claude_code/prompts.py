"""Reading the prompt Claude Code shows in place of its input box: what it asks and how to answer.

Claude Code draws three kinds of menu at the bottom of the screen, each ending on a footer of key hints.
A permission request (the tool's title, an optional tip, the tool's description, its argument between
dashed rules, the question, numbered options)::

    ────────────────────────────────
     Bash command                           <- title: which tool
     Tip: auto mode handles these ...       <- (not always)
     Create a file                          <- the call's description
    ╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌
     touch recorded.txt                     <- the argument, wrapped at the rule's width
    ╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌
     Do you want to proceed?
     ❯ 1. Yes
       2. Yes, and always allow access to <folder> from this project
       3. Yes, and switch to auto mode · auto mode handles these prompts for you
       4. No

     Esc to cancel · Tab to amend

A question the model asks (AskUserQuestion): a row of question tabs, the question, numbered answers
with a description under each, a free-text row, a rule, and a way out of the question::

    ────────────────────────────────
     ☐ Database
    Which database should I use?
    ❯ 1. SQLite
         Embedded
      2. Postgres
         Server
      3. Type something.
    ────────────────────────────────
      4. Chat about this
    Enter to select · ↑/↓ to navigate · Esc to cancel

A start-up dialog (trust this folder, use this API key, accept bypass mode): text, then an unnumbered
menu whose cursor starts on the refusing choice, then ``Enter to confirm · Esc to cancel``.

Digits pick a numbered option at once, without Enter (the recordings press each one); unnumbered
menus take arrows from the cursor row, then Enter, the keys ``dialogs.py`` sends. Esc and Tab are
not options: Esc cancels (the tool call is refused, or the question dismissed) and Tab opens a text
field to amend the answer, neither of which picks a row of the menu.

A prompt is read only when its footer is the last row on screen and no input box is drawn, so an
answered prompt left in the transcript, or a reply that quotes a menu, is never read as one.
"""

from __future__ import annotations

import re

from cao_hookspecs import OptionEffect, Prompt, PromptKind, PromptOption
from cao_screen_core.menus import MenuItem, guess_effect, numbered_menu, option_keys
from cao_screen_core.reports import never_raising

from .screen import DIALOGS, Screen

__all__ = ["read_prompt"]

_RULE = re.compile(r"^\s*─{20,}\s*$")
_DASHED = re.compile(r"^\s*╌{20,}\s*$")
# Footers of the three kinds of menu (a permission request's may lose "· Tab to amend").
_FOOTER = re.compile(r"^\s*(?:Esc to cancel\b|Enter to (?:select|confirm|submit)\b.*Esc to cancel)")
# The question tabs row of AskUserQuestion: "☐ Database", "← ☐ Database  ✔ Submit →".
_TABS = re.compile(r"^\s*(?:←\s*)?[☐☒✔]\s")
_TAB = re.compile(r"[☐☒✔]\s+(?P<label>\S(?:.*?\S)?)(?=\s{2,}|\s*→|\s*$)")
_TIP = re.compile(r"^\s*Tip:")
# The footer while the free-text row of a question is being typed into.
_EDITING = re.compile(r"\bto edit in\b")
# Claude Code draws a free-text row in every question; typing into it replaces the placeholder.
_TYPE_SOMETHING = re.compile(r"^Type something\.?$")
# "Yes, and switch to auto mode · auto mode handles these prompts for you": a label and its hint.
_HINT_SEPARATOR = " · "
# Permission titles and the tool each names (the tool's own name, as settings and hooks spell it).
_TOOLS = {
    "Bash command": "Bash",
    "Edit file": "Edit",
    "Create file": "Write",
    "Write file": "Write",
    "Read file": "Read",
    "Fetch": "WebFetch",
    "Web Search": "WebSearch",
}
# Options that allow the call and also stop asking: "always allow", "allow all edits during this
# session", and switching to a mode that handles prompts without the user.
_ALWAYS = re.compile(r"\balways\b|\ballow all\b|\bswitch to auto mode\b|\bdon't ask again\b", re.IGNORECASE)
# An unnumbered menu row: its cursor, when it has one, then the label.
_UNNUMBERED = re.compile(r"^(?P<indent>\s*)(?:(?P<cursor>❯)\s)?\s*(?P<label>\S.*?)\s*$")


@never_raising
def read_prompt(screen: str) -> Prompt | None:
    """The prompt Claude Code shows at the bottom of ``screen``, or None. Never raises."""
    return _read(screen)


def _read(text: str) -> Prompt | None:
    rows = [row.rstrip() for row in text.splitlines()]
    if Screen(text).has_box:
        return None
    footer = max((i for i, row in enumerate(rows) if row.strip()), default=None)
    if footer is None or not _FOOTER.match(rows[footer]):
        return None
    menu = numbered_menu(rows, end=footer)
    if menu is not None and _ends_at(rows, menu[-1], footer):
        top = _rule_above(rows, menu[0].row)
        if top is not None and any(_TABS.match(row) for row in rows[top + 1:menu[0].row]):
            return _question(rows, top, menu, footer)
        return _permission(rows, top, menu, footer)
    return _dialog(rows, footer)


def _ends_at(rows: list[str], last: MenuItem, footer: int) -> bool:
    """Whether only the last item's own rows and blank rows lie between it and the footer."""
    return all(not row.strip() for row in rows[last.row + 1 + len(last.after):footer])


def _rule_above(rows: list[str], row: int) -> int | None:
    return next((i for i in range(row - 1, -1, -1) if _RULE.match(rows[i])), None)


def _default(menu: list[MenuItem]) -> int | None:
    cursors = [item.number for item in menu if item.cursor]
    return cursors[0] if len(cursors) == 1 else None


def _evidence(rows: list[str], start: int, footer: int) -> tuple[str, ...]:
    return tuple(row for row in rows[start:footer + 1] if row.strip() and not _RULE.match(row)
                 and not _DASHED.match(row))


def _permission(rows: list[str], top: int | None, menu: list[MenuItem], footer: int) -> Prompt:
    first = menu[0].row
    question = next((rows[i].strip() for i in range(first - 1, (top or -1), -1) if rows[i].strip()), "")
    body = [row for row in rows[(top + 1 if top is not None else 0):first] if row.strip()]
    title = body[0].strip() if top is not None and body else ""
    tool = _TOOLS.get(title)
    dashed = [i for i in range((top or 0), first) if _DASHED.match(rows[i])]
    arguments: dict[str, str] = {}
    complete = top is not None
    if len(dashed) >= 2:
        start, end = dashed[-2], dashed[-1]
        width = len(rows[start].strip())
        arguments[_argument_name(tool)] = _joined(rows[start + 1:end], width)
        about = [row.strip() for row in rows[(top or 0) + 2:start] if row.strip() and not _TIP.match(row)]
        if about:
            arguments["description"] = " ".join(about)
    elif tool is not None:
        # The argument box scrolled out of sight (or this tool draws none): nothing to match against.
        complete = False
    default = _default(menu)
    options = []
    for item in menu:
        label, _, hint = item.label.partition(_HINT_SEPARATOR)
        effect = guess_effect(label)
        if effect is OptionEffect.ALLOW and _ALWAYS.search(label):
            effect = OptionEffect.ALLOW_ALWAYS
        options.append(PromptOption(label=label.strip(), keys=option_keys(item.number, default, "digit"),
                                    effect=effect, description=hint.strip()))
    kind = PromptKind.PERMISSION if tool is not None or arguments else PromptKind.CHOICE
    return Prompt(kind=kind, question=question, title=title, tool=tool, arguments=arguments,
                  arguments_complete=complete, options=tuple(options), default=default,
                  evidence=_evidence(rows, top + 1 if top is not None else first, footer))


def _argument_name(tool: str | None) -> str:
    if tool in ("Edit", "Write", "Read"):
        return "file_path"
    if tool == "WebFetch":
        return "url"
    if tool == "WebSearch":
        return "query"
    return "command"


def _joined(rows: list[str], width: int) -> str:
    """The rows of a dashed box as one text: a row that fills the box's width was wrapped by the CLI,
    so the next one continues it; a shorter row ends a line of the argument."""
    text = ""
    for row in rows:
        content = row[1:] if row.startswith(" ") else row
        text += content.rstrip()
        text += "" if len(row) >= width - 1 else "\n"
    return text.rstrip("\n")


def _question(rows: list[str], top: int, menu: list[MenuItem], footer: int) -> Prompt:
    first = menu[0].row
    tabs_row = next(i for i in range(top + 1, first) if _TABS.match(rows[i]))
    tabs = [found.group("label") for found in _TAB.finditer(rows[tabs_row])]
    # With several questions the tab row shows them all and only colour marks the current one.
    title = tabs[0] if len(tabs) == 1 else ""
    question = " ".join(row.strip() for row in rows[tabs_row + 1:first] if row.strip())
    default = _default(menu)
    options = []
    for item in menu:
        separated = any(_RULE.match(row) for row in item.after)
        description = " ".join(row.strip() for row in item.after if not _RULE.match(row))
        takes_text = bool(_TYPE_SOMETHING.match(item.label)) or (separated and not description)
        # Below the rule the user leaves the question for the chat: no answer is given.
        below_rule = any(_RULE.match(row) for row in rows[first:item.row])
        effect = OptionEffect.OTHER if below_rule else OptionEffect.ANSWER
        options.append(PromptOption(label=item.label, keys=option_keys(item.number, default, "digit"),
                                    effect=effect, description=description, takes_text=takes_text))
    evidence = _evidence(rows, tabs_row, footer)
    if default is not None and options[default - 1].takes_text and _EDITING.search(rows[footer]):
        # The free-text row has the cursor and takes keys as text (digits included): only typing
        # answers now, so no option can be picked by its keys.
        return Prompt(kind=PromptKind.QUESTION, question=question, title=title, free_text=True,
                      evidence=evidence)
    return Prompt(kind=PromptKind.QUESTION, question=question, title=title, options=tuple(options),
                  default=default, free_text=any(option.takes_text for option in options), evidence=evidence)


def _dialog(rows: list[str], footer: int) -> Prompt | None:
    """An unnumbered menu just above the footer: the rows around the cursor row at its label's column."""
    bottom = next((i for i in range(footer - 1, -1, -1) if rows[i].strip()), None)
    if bottom is None:
        return None
    block_top = bottom
    while block_top > 0 and rows[block_top - 1].strip() and not _RULE.match(rows[block_top - 1]):
        block_top -= 1
    cursor_rows = [i for i in range(block_top, bottom + 1) if _UNNUMBERED.match(rows[i])["cursor"]]
    if len(cursor_rows) != 1:
        return None
    at = cursor_rows[0]
    cursor = _UNNUMBERED.match(rows[at])
    column = cursor.start("label")
    items = []
    for i in range(block_top, bottom + 1):
        found = _UNNUMBERED.match(rows[i])
        if found.start("label") != column:
            return None  # not a plain list of labels: some other drawing
        items.append(found.group("label"))
    if len(items) < 2:
        return None
    default = at - block_top + 1
    top = _rule_above(rows, block_top)
    body = [row.strip() for row in rows[(top + 1 if top is not None else 0):block_top] if row.strip()]
    if not body:
        return None
    joined = "\n".join(rows[top or 0:footer + 1])
    startup = any(pattern.search(joined) for _, pattern in DIALOGS)
    title = body[0]
    # A question has a row of its own, or is a sentence of a paragraph (which wraps on a narrow screen).
    asked = [row for row in body if row.endswith("?")] or re.findall(r"[^.?!:]*\?", " ".join(body))
    question = asked[-1].strip() if asked else title
    options = tuple(PromptOption(label=label, keys=option_keys(number, default, "arrows"),
                                 effect=guess_effect(label))
                    for number, label in enumerate(items, 1))
    return Prompt(kind=PromptKind.STARTUP_DIALOG if startup else PromptKind.CHOICE, question=question,
                  title=title, options=options, default=default,
                  evidence=_evidence(rows, top + 1 if top is not None else block_top, footer))
