"""Screens whose input box is drawn between two full-width rules (Claude Code, Copilot CLI)::

    ❯ what the user sent                <- transcript
    ● The answer.
    ──────────────────────────────      <- the box's top rule
    ❯ text typed, not sent yet          <- the box: its first row starts with the prompt glyph
    ──────────────────────────────      <- its bottom rule
      footer hints                      <- footer

A menu or a dialog replaces the box, so a screen may have none. The CLI says what its rules, its
prompt row and the grey hints of an empty box look like; the split is the same for each.
"""

from __future__ import annotations

import re
from typing import ClassVar

from .rows import bottom_rows, last_index

__all__ = ["InputBoxScreen"]


class InputBoxScreen:
    """A screen split into transcript, input box and footer (any part may be missing).

    Subclasses set :attr:`RULE`, :attr:`PROMPT` and :attr:`PLACEHOLDER`. ``box_top`` and ``box_bottom``
    are the rows of the box's two rules, both None when no box is drawn; ``transcript`` holds the rows
    above the box (the whole screen when there is none), ``footer_rows`` the rows under it.
    """

    #: A full-width rule above or below the box.
    RULE: ClassVar[re.Pattern[str]]
    #: The box's first row: the prompt glyph, then what is typed.
    PROMPT: ClassVar[re.Pattern[str]]
    #: What an empty box may show (hints a plain capture cannot tell from typed text).
    PLACEHOLDER: ClassVar[re.Pattern[str]]

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.box_top: int | None = None
        self.box_bottom: int | None = None
        bottom = last_index(lines, self.RULE.match)
        if bottom is not None:
            top = last_index(lines, self.RULE.match, end=bottom)
            if top is not None and top + 1 < bottom and self.PROMPT.match(lines[top + 1]):
                self.box_top, self.box_bottom = top, bottom
        self.has_box = self.box_top is not None
        self.transcript = lines[: self.box_top]
        self.footer_rows = lines[self.box_bottom + 1:] if self.box_bottom is not None else []

    @property
    def pending_input(self) -> str:
        """Text typed into the box and not submitted yet ('' when empty or only a hint shows)."""
        if self.box_top is None or self.box_bottom is None:
            return ""
        rows = self.lines[self.box_top + 1:self.box_bottom]
        text = "\n".join([rows[0][1:].strip(), *(row.strip() for row in rows[1:])]).strip()
        return "" if self.PLACEHOLDER.match(text) else text

    def tail(self, rows: int) -> list[str]:
        """The bottom ``rows`` rows that are not blank (where menus and dialogs are drawn)."""
        return bottom_rows(self.lines, rows)
