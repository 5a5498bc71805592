"""Reading the prompts Kiro CLI shows into cao's ``Prompt``.

- The line-based chat (1.x, and 2.x with ``--legacy-ui``) asks a tool's permission with a ``[y/n/t]``
  question answered at the chat prompt below it (read by ``cao_agent_file_core.chat_screen``, which Q
  CLI shares)::

      I will run the following command: aws s3 ls s3://bucket/ (using tool: shell)
      Purpose: List files in S3 bucket

      Allow this action? Use 't' to trust (always allow) this tool for the session. [y/n/t]:

      [cao-developer-0123abcd] 20% λ >          <- y, n or t, then Enter

  Only the question just above an empty prompt on the last row is open; answered ones stay in the
  scrollback, and one whose prompt already holds typed text is not read (keys would join that text).
- Kiro 2's consent to run with ``--trust-all-tools`` (kind ``startup_dialog``), an unnumbered menu with
  the cursor on the first choice, picked with Up/Down and Enter::

      Warning: Kiro is running in trust all tools mode

        ❯ No, exit
          Yes, I accept

- The full-screen interface's own permission question (``tui.PERMISSION``) is reported waiting by the
  detector but not read: no screen of it is documented to read it from.
"""

from __future__ import annotations

import re

from cao_hookspecs import Prompt, PromptKind, PromptOption
from cao_screen_core.menus import CURSORS, guess_effect, option_keys
from cao_screen_core.reports import never_raising

from . import classic, tui
from .patterns import DIALOG

__all__ = ["cursor_menu", "read_prompt"]

_WARNING = re.compile(
    r"^\s*(?:(?P<title>Warning):\s*)?(?P<question>.*running in trust all tools mode.*?)\s*$", re.IGNORECASE)
_CHOICE = re.compile(rf"^(?P<indent>\s+)(?:(?P<cursor>[{CURSORS}])\s+)?(?P<label>\S.*?)\s*$")


@never_raising
def read_prompt(screen: str) -> Prompt | None:
    """The prompt open on a Kiro CLI screen, or None; never raises."""
    return _read([row.rstrip() for row in screen.split("\n")])


def _read(rows: list[str]) -> Prompt | None:
    dialog = _trust_dialog(rows)
    if dialog is not None:
        return dialog
    bar = tui.find_status_bar(rows)
    if bar is not None and bar > max(classic.find_prompts(rows), default=-1):
        return None
    return classic.CHAT.prompt(rows)


def cursor_menu(rows: list[str]) -> tuple[list[str], int] | None:
    """An unnumbered menu that ends the screen: rows indented alike, one of them drawn with a cursor
    glyph, the cursor's row lined up with the others' labels. Returns the labels and the cursor's
    number (from 1), or None. (Generic: a candidate for ``cao_screen_core.menus``.)"""
    filled = [i for i, row in enumerate(rows) if row.strip()]
    labels: list[str] = []
    cursor = None
    column = None
    for index in reversed(filled):
        found = _CHOICE.match(rows[index])
        if found is None:
            break
        start = found.start("label")
        if column is not None and start != column:
            break
        if index != filled[-1] and index + 1 not in filled and labels:
            break  # a blank row ends the menu
        column = start
        labels.insert(0, found.group("label"))
        if found.group("cursor"):
            if cursor is not None:
                return None
            cursor = len(labels)
    if cursor is None or len(labels) < 2:
        return None
    return labels, len(labels) - cursor + 1


def _trust_dialog(rows: list[str]) -> Prompt | None:
    warning = next((i for i in range(len(rows) - 1, -1, -1) if DIALOG.search(rows[i])), None)
    if warning is None:
        return None
    found = _WARNING.match(rows[warning])
    menu = cursor_menu(rows[warning + 1:])
    if found is None or menu is None:
        return None
    labels, default = menu
    options = tuple(PromptOption(label=label, keys=option_keys(number, default, "arrows"),
                                 effect=guess_effect(label))
                    for number, label in enumerate(labels, 1))
    evidence = [row for row in rows[warning:] if row.strip()]
    return Prompt(kind=PromptKind.STARTUP_DIALOG, question=found.group("question"),
                  title=found.group("title") or "", options=options, default=default, evidence=evidence)
