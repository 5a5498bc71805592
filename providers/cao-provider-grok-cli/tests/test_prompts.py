"""The prompt reader: the folder-trust question read with its options and keys; nothing else reads as a
prompt, and nothing breaks the reader."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from cao_hookspecs import OptionEffect, PromptKind
from cao_provider_grok_cli.provider import TESTED_VERSIONS
from cao_provider_grok_cli.prompts import read_prompt
from cao_testkit.recorded_screens import manifest, screen_text

SCREENS = Path(__file__).parent / "screens"
VERSION = TESTED_VERSIONS[-1]
MANIFEST = manifest(SCREENS, VERSION)


def screen(name: str) -> str:
    return screen_text(SCREENS, VERSION, name)


def test_the_folder_trust_question():
    for name in ("waiting_user_answer_trust", "waiting_user_answer_trust-100x30"):
        prompt = read_prompt(screen(name))
        assert prompt.kind == PromptKind.STARTUP_DIALOG
        assert prompt.question == "Do you trust the contents of this directory?"
        assert [(o.label, o.keys, o.effect) for o in prompt.options] == [
            ("Yes, proceed", ("y",), OptionEffect.ALLOW), ("No, quit", ("n",), OptionEffect.DENY)]
        assert prompt.evidence[0] == prompt.question and prompt.evidence[-1].startswith("No, quit")


def test_no_other_recorded_screen_reads_as_a_prompt():
    for name, entry in MANIFEST["screens"].items():
        if entry["status"] != "waiting_user_answer":
            assert read_prompt(screen(name)) is None, name


def test_a_question_with_rows_under_it_is_not_open():
    rows = screen("waiting_user_answer_trust").rstrip("\n").split("\n")
    assert read_prompt("\n".join([*rows, "  some other row"])) is None


@settings(max_examples=60, deadline=None)
@given(text=st.text(max_size=400))
def test_the_reader_never_raises(text):
    assert read_prompt(text) is None
