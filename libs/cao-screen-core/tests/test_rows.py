"""Finding rows from the bottom of a screen."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from cao_screen_core.rows import bottom_rows, last_index

ROWS = st.lists(st.sampled_from(["", "  ", "❯ hi", "● answer", "  more", "────"]), max_size=12)


@given(ROWS, st.integers(0, 14), st.none() | st.integers(0, 14))
def test_last_index_is_the_last_row_in_the_window_that_passes(rows, start, end):
    found = last_index(rows, str.strip, start, end)
    window = range(start, len(rows) if end is None else min(end, len(rows)))
    expected = [i for i in window if rows[i].strip()]
    assert found == (expected[-1] if expected else None)


def test_last_index_takes_a_pattern_match_as_its_test():
    rows = ["❯ one", "● a", "❯ two", "● b"]
    user = re.compile(r"^❯ ")
    assert last_index(rows, user.match) == 2
    assert last_index(rows, user.match, end=2) == 0
    assert last_index(rows, user.match, start=3) is None


@given(ROWS, st.integers(1, 14))
def test_bottom_rows_are_the_last_filled_rows_in_order(rows, count):
    tail = bottom_rows(rows, count)
    filled = [row for row in rows if row.strip()]
    assert tail == filled[max(len(filled) - count, 0):]
