"""Menus on a rendered screen: the options an agent CLI offers on a prompt, and the keys that pick them.

Most CLIs draw a prompt's options as a numbered column with a cursor glyph on the current row::

    ❯ 1. Yes                                  Claude Code, Copilot CLI
      2. Yes, and don't ask again (p)         Codex (a key printed in the label)
    ● 1. Allow once                           Gemini CLI
    → [1] Approve once                        Kimi CLI

:func:`numbered_menu` finds the last such column (the live one: answered prompts scroll up), and the
rows drawn between and under its items (wrapped labels, descriptions) for the provider to sort out.
:func:`option_keys` turns an option's number into the keys that pick it, in the style the CLI takes.
:func:`guess_effect` sorts a label into allow, allow always, deny or other, the same way for every CLI.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

from cao_hookspecs import OptionEffect

__all__ = ["CURSORS", "MenuItem", "guess_effect", "key_hint", "numbered_menu", "option_keys"]

#: Glyphs CLIs draw on the selected row.
CURSORS = "❯›●→>▶"
_ITEM = re.compile(
    rf"^(?P<indent>\s*)(?P<cursor>[{CURSORS}])?\s*(?:(?P<num>\d{{1,2}})[.)]|\[(?P<bracket>\d{{1,2}})\])\s+"
    r"(?P<label>\S.*?)\s*$"
)
# A key printed at the end of a label: "(y)", "(esc)", "(Esc to stop)".
_HINT = re.compile(r"\s*\((?P<key>[A-Za-z]|esc|Esc|ESC)(?: to [a-z ]+)?\)\s*$")


class MenuItem(NamedTuple):
    """One numbered option: its ``number``, its ``label`` (the row's text after the number), the index
    of its ``row`` in the rows given, whether the cursor is on it, and the rows after it up to the next
    item (or the menu's end), right-stripped, blank ones left out."""

    number: int
    label: str
    row: int
    cursor: bool
    after: tuple[str, ...] = ()


def numbered_menu(rows: Sequence[str], *, end: int | None = None, max_gap: int = 3) -> list[MenuItem] | None:
    """The last numbered menu in ``rows[:end]``: items numbered 1, 2, ... n (n >= 2) in order, with at
    most ``max_gap`` other rows between two items (descriptions, wrapped labels). None when there is no
    such menu. The rows after the last item stop at the first blank row or after ``max_gap`` rows."""
    stop = len(rows) if end is None else min(end, len(rows))
    matches: list[tuple[int, re.Match[str]]] = []
    for index in range(stop):
        found = _ITEM.match(rows[index])
        if found:
            matches.append((index, found))
    # Walk back from the last item to one numbered 1, each step one number lower.
    for last in range(len(matches) - 1, -1, -1):
        chain = [matches[last]]
        while _number(chain[0][1]) > 1:
            wanted = _number(chain[0][1]) - 1
            earlier = [m for m in matches if m[0] < chain[0][0] and _number(m[1]) == wanted]
            if not earlier or chain[0][0] - earlier[-1][0] - 1 > max_gap:
                break
            chain.insert(0, earlier[-1])
        if _number(chain[0][1]) == 1 and len(chain) >= 2:
            return _items(rows, chain, stop, max_gap)
    return None


def _number(found: re.Match[str]) -> int:
    return int(found.group("num") or found.group("bracket"))


def _items(rows: Sequence[str], chain: list[tuple[int, re.Match[str]]], stop: int,
           max_gap: int) -> list[MenuItem]:
    items = []
    for position, (index, found) in enumerate(chain):
        if position + 1 < len(chain):
            after_end = chain[position + 1][0]
        else:
            after_end = index + 1
            while after_end < stop and after_end - index <= max_gap and rows[after_end].strip():
                after_end += 1
        after = tuple(row.rstrip() for row in rows[index + 1:after_end] if row.strip())
        items.append(MenuItem(number=_number(found), label=found.group("label"), row=index,
                              cursor=bool(found.group("cursor")), after=after))
    return items


def key_hint(label: str) -> tuple[str, str | None]:
    """A label without the key printed at its end, and that key as tmux names it (``Escape`` for esc),
    or None when the label prints none."""
    found = _HINT.search(label)
    if not found:
        return label, None
    key = found.group("key")
    return label[: found.start()].rstrip(), "Escape" if key.lower() == "esc" else key


def option_keys(number: int, default: int | None, style: str) -> tuple[str, ...]:
    """The keys that pick option ``number`` (from 1), the cursor being on ``default``.

    ``style``: ``digit`` (the digit alone picks and submits), ``digit_enter`` (the digit moves the cursor,
    Enter submits), ``arrows`` (Up or Down to the option, then Enter; with no known cursor, from 1).
    """
    if style == "digit":
        return (str(number),)
    if style == "digit_enter":
        return (str(number), "Enter")
    if style != "arrows":
        raise ValueError(f"unknown key style {style!r}")
    moves = number - (default or 1)
    return ("Down",) * moves + ("Up",) * -moves + ("Enter",)


_ALWAYS = re.compile(r"\b(always|don't ask again|do not ask again|for this session|during this session|"
                     r"remember|for the session|trust)\b", re.IGNORECASE)
_DENY = re.compile(r"^\s*(no\b|reject|deny|decline|don't|do not|cancel|skip|exit)", re.IGNORECASE)
_ALLOW = re.compile(r"^\s*(yes\b|allow|approve|accept|proceed|trust|continue|run\b|ok\b)", re.IGNORECASE)


def guess_effect(label: str) -> OptionEffect:
    """What picking an option labelled ``label`` means, read from the words CLIs use: ``No, and tell ...``
    denies, ``Yes, and don't ask again ...`` allows always, ``Allow once`` allows."""
    if _DENY.match(label):
        return OptionEffect.DENY
    if _ALLOW.match(label):
        return OptionEffect.ALLOW_ALWAYS if _ALWAYS.search(label) else OptionEffect.ALLOW
    return OptionEffect.OTHER
