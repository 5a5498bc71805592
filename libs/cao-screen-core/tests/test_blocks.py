"""Blocks that start at a marker row and go on indented by two spaces."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from cao_screen_core.blocks import Block, indented_blocks

ANSWER = re.compile(r"^● (?P<text>.*)$")


def test_blocks_keep_blank_rows_inside_and_lose_the_indent():
    rows = ["❯ hi", "● First line", "  second", "", "  after a blank", "", "❯ next", "● Two"]
    assert indented_blocks(rows, ANSWER) == [
        Block(1, 6, ["First line", "second", "", "after a blank"]),
        Block(7, 8, ["Two"]),
    ]


def test_a_row_at_column_zero_ends_a_block():
    assert indented_blocks(["● a", "b", "  c"], ANSWER) == [Block(0, 1, ["a"])]


ROWS = st.lists(st.sampled_from(["", "● answer", "● ", "  more", "    deeper", "❯ user", " one space"]),
                max_size=14)


@given(ROWS)
def test_blocks_are_in_order_apart_and_start_at_their_marker(rows):
    blocks = indented_blocks(rows, ANSWER)
    previous_end = 0
    for block in blocks:
        assert previous_end <= block.start < block.end <= len(rows)
        assert ANSWER.match(rows[block.start])
        assert all(not row.strip() or row.startswith("  ") for row in rows[block.start + 1:block.end])
        assert len(block.text) <= block.end - block.start
        assert not block.text or block.text[-1].strip()
        previous_end = block.end
    markers = [i for i, row in enumerate(rows) if ANSWER.match(row)]
    assert [block.start for block in blocks] == markers
