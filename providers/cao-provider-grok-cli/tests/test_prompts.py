"""The prompt reader: Grok never asks under cao, so no screen reads as a prompt, and nothing breaks it."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from cao_provider_grok_cli.provider import TESTED_VERSIONS
from cao_provider_grok_cli.prompts import read_prompt
from cao_testkit.recorded_screens import manifest, screen_text

SCREENS = Path(__file__).parent / "screens"
VERSION = TESTED_VERSIONS[-1]


def test_no_recorded_screen_reads_as_a_prompt():
    for name in manifest(SCREENS, VERSION)["screens"]:
        assert read_prompt(screen_text(SCREENS, VERSION, name)) is None, name


@settings(max_examples=60, deadline=None)
@given(text=st.text(max_size=400))
def test_the_reader_never_raises(text):
    assert read_prompt(text) is None
