"""Aider's questions read into prompts, on edits of the recorded screens."""

from __future__ import annotations

from pathlib import Path

from cao_hookspecs import OptionEffect
from cao_provider_aider.prompts import read_prompt

SCREENS = Path(__file__).parent / "screens" / "0.86.2"


def test_the_shell_command_question_reads_with_its_command_and_keys():
    prompt = read_prompt((SCREENS / "waiting_user_answer.txt").read_text())
    assert prompt is not None and prompt.tool == "shell"
    assert [option.keys for option in prompt.options] == [("y", "Enter"), ("n", "Enter"), ("d", "Enter")]
    assert [option.effect for option in prompt.options] == [OptionEffect.ALLOW, OptionEffect.DENY,
                                                            OptionEffect.DENY]


def test_an_answered_question_and_a_quoted_one_read_as_none():
    screen = (SCREENS / "waiting_user_answer.txt").read_text().rstrip() + " y\n"
    assert read_prompt(screen) is None
    assert read_prompt((SCREENS / "completed.txt").read_text()) is None
