"""Blocks of a transcript that start with a marker and go on indented by two spaces::

    ● The answer, continued on rows      <- the marker row ("● ", "✦ ", "• ": each CLI has its own)
      indented by two spaces.            <- continuation rows

      A blank row, then more of it.      <- blank rows do not end a block
    ❯ the next message                   <- a row at column 0 does

Claude Code, Gemini CLI and Kimi CLI draw their answers (and some tool calls) this way.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

__all__ = ["Block", "indented_blocks"]

_INDENT = "  "


class Block(NamedTuple):
    """One block: ``rows[start:end]`` of the transcript, and its text (the marker row's ``text``
    group, then each continuation row without its indent; trailing blank rows left out)."""

    start: int
    end: int
    text: list[str]


def indented_blocks(rows: Sequence[str], marker: re.Pattern[str]) -> list[Block]:
    """Every block in ``rows`` (right-stripped rows) that starts at a row ``marker`` matches.

    ``marker`` must have a ``text`` group: the block's first line. A block goes on over blank rows and
    rows indented by two spaces, and ends before the first other row.
    """
    blocks: list[Block] = []
    index = 0
    while index < len(rows):
        found = marker.match(rows[index])
        if not found:
            index += 1
            continue
        text = [found.group("text")]
        end = index + 1
        while end < len(rows) and (not rows[end].strip() or rows[end].startswith(_INDENT)):
            text.append(rows[end][len(_INDENT):] if rows[end].startswith(_INDENT) else "")
            end += 1
        while text and not text[-1].strip():
            text.pop()
        blocks.append(Block(index, end, text))
        index = end
    return blocks
