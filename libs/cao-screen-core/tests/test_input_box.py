"""The input box between two rules, on screens shaped like Claude Code's and Copilot CLI's."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from cao_screen_core.input_box import InputBoxScreen

RULE = "─" * 30


class Screen(InputBoxScreen):
    RULE = re.compile(r"^─{20,}$")
    PROMPT = re.compile("^❯(?:[ \u00a0]|$)")
    PLACEHOLDER = re.compile(r"^(?:|Try \".*\")$")


def screen(*rows: str) -> Screen:
    return Screen(list(rows))


def test_the_box_splits_transcript_box_and_footer():
    parsed = screen("❯ hello", "● Hi.", RULE, "❯ next one", "  and more", RULE, "  esc to interrupt")
    assert parsed.has_box and (parsed.box_top, parsed.box_bottom) == (2, 5)
    assert parsed.transcript == ["❯ hello", "● Hi."]
    assert parsed.pending_input == "next one\nand more"
    assert parsed.footer_rows == ["  esc to interrupt"]


def test_an_empty_box_or_one_with_a_hint_holds_nothing_typed():
    assert screen(RULE, "❯", RULE).pending_input == ""
    assert screen(RULE, '❯ Try "fix the tests"', RULE).pending_input == ""


def test_without_a_prompt_row_under_the_top_rule_there_is_no_box():
    parsed = screen("❯ hello", RULE, "  ❯ 1. Yes", "    2. No", RULE, "Enter to confirm")
    assert not parsed.has_box
    assert parsed.transcript == parsed.lines and parsed.footer_rows == [] and parsed.pending_input == ""
    assert parsed.tail(2) == ["    2. No", RULE, "Enter to confirm"][-2:]


ROWS = st.lists(st.sampled_from(["", RULE, "❯", "❯ typed", "● answer", "  more", "hint"]), max_size=14)


@given(ROWS)
def test_any_screen_splits_into_parts_that_add_up(rows):
    parsed = Screen(rows)
    if parsed.box_top is None:
        assert parsed.box_bottom is None and parsed.transcript == rows and parsed.footer_rows == []
        return
    top, bottom = parsed.box_top, parsed.box_bottom
    assert top is not None and bottom is not None
    assert rows[top] == rows[bottom] == RULE and top + 1 < bottom and rows[top + 1].startswith("❯")
    assert RULE not in rows[bottom + 1:]
    assert parsed.transcript + rows[top:bottom + 1] + parsed.footer_rows == rows
