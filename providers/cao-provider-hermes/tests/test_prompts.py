"""The clarify box read into a Prompt, on recorded screens and edits of them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cao_hookspecs import OptionEffect, PromptKind
from cao_provider_hermes.prompts import read_prompt

SCREENS = Path(__file__).parent / "screens" / "0.19.0"
MANIFEST = json.loads((SCREENS / "manifest.json").read_text(encoding="utf-8"))["screens"]


def _screen(name: str) -> str:
    return (SCREENS / f"{name}.txt").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", ["waiting_user_answer", "waiting_user_answer-100x30"])
def test_the_clarify_box(name):
    prompt = read_prompt(_screen(name))
    assert prompt.kind == PromptKind.QUESTION and prompt.question == "Which database should I use?"
    assert [o.label for o in prompt.options] == ["PostgreSQL", "SQLite", "MySQL", "Other (type your answer)"]
    assert prompt.default == 1
    assert [o.keys for o in prompt.options] == [("Enter",), ("Down", "Enter"), ("Down", "Down", "Enter"),
                                               ("Down", "Down", "Down", "Enter")]
    assert [o.effect for o in prompt.options[:3]] == [OptionEffect.ANSWER] * 3
    assert prompt.options[3].takes_text and not any(o.takes_text for o in prompt.options[:3])


def test_other_turns_the_prompt_row_into_a_text_field():
    prompt = read_prompt(_screen("waiting_user_answer_answer4"))
    assert prompt.free_text and not prompt.options
    assert prompt.question == "Which database should I use?"
    assert prompt.evidence[-1].startswith("✎ ❯")


def test_an_answered_box_is_gone_and_reads_as_none():
    # Hermes prints the choice and the answer under it once Enter took an option.
    assert "Hermes needs your input" not in _screen("waiting_user_answer_answer2")
    assert read_prompt(_screen("waiting_user_answer_answer2")) is None


WAITING = "waiting_user_answer"


@pytest.mark.parametrize("name", sorted(n for n, e in MANIFEST.items() if e["status"] != WAITING))
def test_no_prompt_on_screens_without_one(name):
    assert read_prompt(_screen(name)) is None


def test_a_reply_quoting_the_box_is_not_a_prompt():
    box = [row for row in _screen("waiting_user_answer").splitlines() if row.startswith(("╭", "│", "╰"))]
    completed = _screen("completed").splitlines()
    # The quoted box sits in the answer; the prompt row is the empty one of a finished turn.
    assert read_prompt("\n".join([*completed[:-6], *box, *completed[-6:]])) is None


@given(st.text(max_size=400))
def test_the_reader_never_raises(text):
    read_prompt(text)
