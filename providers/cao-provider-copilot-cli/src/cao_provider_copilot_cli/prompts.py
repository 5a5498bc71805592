"""Reading the prompt Copilot CLI shows in place of its input box: what it asks and how to answer.

A permission request or the folder-trust dialog is a box at the bottom of the screen, with a title,
what it is about in an inner box, the question and a numbered menu::

    ╭──────────────────────────────────────────────╮
    │ Create a file                                │   <- title (the call's description)
    │ ──────────────────────────────────────────── │
    │ ╭──────────────────────────────────────────╮ │
    │ │ touch recorded.txt                       │ │   <- the command (the folder, for trust)
    │ ╰──────────────────────────────────────────╯ │
    │ Do you want to run this command?             │
    │ ❯ 1. Yes                                     │
    │   2. Yes, and don't ask again for `touch` ...│
    │   3. No, and tell Copilot what to do ...     │
    │ ↑/↓ to navigate · enter to select · esc to cancel
    ╰──────────────────────────────────────────────╯

A question the model asks (ask_user) sits between two rules, its answers an unnumbered menu::

    ──────────────────────────────────
     Copilot needs information.
     Which database should I use?
     Database:                              <- the field's title
     ❯ SQLite
       Postgres
       Other (type your answer)
     ↑/↓ select · enter accept · ctrl+d decline · esc cancel
    ──────────────────────────────────

Digits pick a numbered option at once (the recordings press each one); a key printed in a label
("No (Esc)", "No, and tell Copilot what to do differently (Esc to stop)") is used instead. Unnumbered
answers take arrows from the cursor row, then Enter. "Other (type your answer)" takes the arrows
alone: on its row a text field opens under the question (the label then reads "... below") and
takes the typed answer and Enter; an Enter sent with the arrows would hit the empty field, which
refuses it and puts the cursor back one row. Keys only named in the footer (esc, ctrl+d) are not
options: they leave the prompt without picking a row.

With the field open the question reads as a prompt that takes text and has no options to press::

     ❯ Other (type your answer below)
     ↑/↓ select · enter accept · ctrl+d decline · esc cancel
    ──────────────────────────────────
    ──────────────────────────────────
    ❯ Type your answer...                   <- the field (the typed text once there is some)
    ──────────────────────────────────

A prompt is read only when it is the last thing on screen and no input box is drawn (the question's
own field aside), so an answered prompt left in the transcript, or a reply that quotes a menu, is
never read as one.
"""

from __future__ import annotations

import re

from cao_hookspecs import OptionEffect, Prompt, PromptKind, PromptOption
from cao_screen_core.menus import MenuItem, guess_effect, key_hint, numbered_menu, option_keys
from cao_screen_core.reports import never_raising

from .screen import DIALOGS, Screen

__all__ = ["read_prompt"]

_RULE = re.compile(r"^─{20,}$")
_MENU_HINT = re.compile(r"^↑/↓ to navigate · enter to select")
_QUESTION_HINT = re.compile(r"^↑/↓ select · enter accept")
_QUESTION_TITLE = re.compile(r"^Copilot needs information\.$")
_TEXT_OPTION = re.compile(r"\(type your answer\)$")
_OPEN_FIELD = re.compile(r"\(type your answer below\)$")
# The question of a permission request names what is asked for; the tool as Copilot's --allow-tool
# option spells it.
_TOOLS = ((re.compile(r"^Do you want to run this command\?"), "shell", "command"),)
_UNNUMBERED = re.compile(r"^(?P<indent>\s*)(?:(?P<cursor>❯)\s)?\s*(?P<label>\S.*?)\s*$")


@never_raising
def read_prompt(screen: str) -> Prompt | None:
    """The prompt Copilot CLI shows at the bottom of ``screen``, or None. Never raises."""
    return _read(screen)


def _read(text: str) -> Prompt | None:
    parsed = Screen(text)
    if parsed.question_field:
        return _question_field(parsed)
    if parsed.has_box:
        return None
    rows = parsed.lines
    last = max((i for i, row in enumerate(rows) if row.strip()), default=None)
    if last is None:
        return None
    if rows[last].startswith("╰"):
        return _boxed(rows, last)
    if _RULE.match(rows[last]):
        return _question(rows, last)
    return None


def _inside(row: str) -> str:
    """A row of the outer box without its borders and the one-column margin inside them."""
    row = row.rstrip()
    if not (row.startswith("│") and row.endswith("│")):
        raise ValueError("not a row of the box")
    inner = row[1:-1]
    return inner[1:] if inner.startswith(" ") else inner


def _boxed(rows: list[str], bottom: int) -> Prompt | None:
    top = next((i for i in range(bottom - 1, -1, -1) if rows[i].startswith("╭")), None)
    if top is None:
        return None
    inner = [_inside(row).rstrip() for row in rows[top + 1:bottom]]
    footer = max((i for i, row in enumerate(inner) if row.strip()), default=None)
    if footer is None or not _MENU_HINT.match(inner[footer]):
        return None
    menu = numbered_menu(inner, end=footer)
    if menu is None or any(row.strip() for row in inner[menu[-1].row + 1 + len(menu[-1].after):footer]):
        return None
    first = menu[0].row
    question = next((inner[i].strip() for i in range(first - 1, -1, -1) if inner[i].strip()), "")
    title = next((row.strip() for row in inner if row.strip()), "")
    framed = _framed(inner[:first])
    joined = "\n".join(rows[top:bottom + 1])
    startup = any(pattern.search(joined) for _, pattern in DIALOGS)
    tool, arguments = None, {}
    for pattern, name, argument in _TOOLS:
        if pattern.match(question):
            tool = name
            if framed is not None:
                arguments[argument] = framed
            if title and title != question:
                arguments["description"] = title
    default = _default(menu)
    options = tuple(_numbered_option(item, default) for item in menu)
    kind = PromptKind.STARTUP_DIALOG if startup else PromptKind.PERMISSION if tool else PromptKind.CHOICE
    return Prompt(kind=kind, question=question, title=title, tool=tool, arguments=arguments,
                  arguments_complete=tool is None or framed is not None, options=options, default=default,
                  evidence=tuple(row for row in inner[:footer + 1] if row.strip()))


def _framed(rows: list[str]) -> str | None:
    """The text of the inner box among ``rows``: its rows joined (a command wraps inside the box), or
    None when there is no whole inner box."""
    top = next((i for i, row in enumerate(rows) if row.startswith("╭")), None)
    bottom = next((i for i, row in enumerate(rows) if row.startswith("╰")), None)
    if top is None or bottom is None or bottom <= top:
        return None
    width = len(rows[top])
    text = ""
    for row in rows[top + 1:bottom]:
        content = _inside(row)
        text += content.rstrip()
        # A row filled to the box's edge was wrapped by the CLI: the next row goes on with it.
        text += "" if len(content.rstrip()) >= width - 3 else "\n"
    return text.rstrip("\n")


def _default(menu: list[MenuItem]) -> int | None:
    cursors = [item.number for item in menu if item.cursor]
    return cursors[0] if len(cursors) == 1 else None


def _numbered_option(item: MenuItem, default: int | None) -> PromptOption:
    # A wrapped label goes on in the rows under it.
    label = " ".join([item.label, *(row.strip() for row in item.after)])
    plain, printed = key_hint(label)
    # The key a label prints picks it. "No, and tell Copilot what to do differently (Esc to stop)" is
    # the one option it matters for: its digit only moves the cursor there, and a digit and Enter sent
    # together are taken as one piece of input, not two keys. Esc refuses the call and stops the turn,
    # so no text goes with it.
    keys = (printed,) if printed else option_keys(item.number, default, "digit")
    return PromptOption(label=plain, keys=keys, effect=guess_effect(plain))


def _question_field(parsed: Screen) -> Prompt | None:
    """The question whose "Other" row opened its text field (drawn under the question's bottom rule):
    only typed text answers it now, so it has no options to press."""
    top, bottom = parsed.box_top, parsed.box_bottom
    if top is None or bottom is None:
        return None
    prompt = _question(parsed.lines, top - 1, field=True)
    if prompt is None:
        return None
    field = tuple(row.strip() for row in parsed.lines[top + 1:bottom] if row.strip())
    return Prompt(kind=PromptKind.QUESTION, question=prompt.question, title=prompt.title, free_text=True,
                  evidence=prompt.evidence + field)


def _question(rows: list[str], bottom: int, *, field: bool = False) -> Prompt | None:
    hint = next((i for i in range(bottom - 1, -1, -1) if rows[i].strip()), None)
    if hint is None or not _QUESTION_HINT.match(rows[hint].strip()):
        return None
    top = next((i for i in range(bottom - 1, -1, -1) if _RULE.match(rows[i])), None)
    if top is None:
        return None
    body = rows[top + 1:hint]
    items, default, start = _unnumbered(body)
    # The field is open only while the cursor is on the text option, which then says "... below".
    if not items or field != bool(default and _OPEN_FIELD.search(items[default - 1])):
        return None
    above = [row.strip() for row in body[:start] if row.strip()]
    title = above[-1].rstrip(":") if above and above[-1].endswith(":") else ""
    asked = above[:-1] if title else above
    if asked and _QUESTION_TITLE.match(asked[0]):
        asked = asked[1:]
    options = tuple(_answer(number, label, default) for number, label in enumerate(items, 1))
    # Text typed at the menu itself is dropped and its Enter picks the cursor row: only the text
    # option's field takes text, so the menu is not free text.
    return Prompt(kind=PromptKind.QUESTION, question=" ".join(asked), title=title, options=options,
                  default=default, free_text=False,
                  evidence=tuple(row.strip() for row in rows[top + 1:hint + 1] if row.strip()))


def _answer(number: int, label: str, default: int | None) -> PromptOption:
    keys = option_keys(number, default, "arrows")
    takes_text = bool(_TEXT_OPTION.search(label))
    # The text option's row opens its field: the answer's text and its Enter go there. An Enter pressed
    # with the arrows would reach the empty field, which refuses it and moves the cursor back up.
    return PromptOption(label=label, keys=keys[:-1] if takes_text else keys, effect=OptionEffect.ANSWER,
                        takes_text=takes_text)


def _unnumbered(rows: list[str]) -> tuple[list[str], int | None, int]:
    """The labels of the last unnumbered menu in ``rows`` (the run of rows around the one cursor row,
    all at the cursor label's column), the cursor's number, and the index of the menu's first row."""
    cursor_rows = [i for i, row in enumerate(rows) if row.strip() and _UNNUMBERED.match(row)["cursor"]]
    if len(cursor_rows) != 1:
        return [], None, 0
    at = cursor_rows[0]
    column = _UNNUMBERED.match(rows[at]).start("label")
    start = at
    while start > 0 and rows[start - 1].strip() and _column(rows[start - 1]) == column:
        start -= 1
    end = at + 1
    while end < len(rows) and rows[end].strip() and _column(rows[end]) == column:
        end += 1
    if any(row.strip() for row in rows[end:]) or end - start < 2:
        return [], None, 0
    return [_UNNUMBERED.match(row).group("label") for row in rows[start:end]], at - start + 1, start


def _column(row: str) -> int:
    return _UNNUMBERED.match(row).start("label")
