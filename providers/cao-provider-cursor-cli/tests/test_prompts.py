"""The prompt reader: no prompt of this CLI is documented, so it reads none, and never raises."""

from __future__ import annotations

from functools import partial
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from cao_provider_cursor_cli.prompts import read_prompt
from cao_provider_cursor_cli.provider import TESTED_VERSIONS
from cao_testkit.recorded_screens import manifest, screen_text

SCREENS = Path(__file__).parent / "screens"
VERSION = TESTED_VERSIONS[-1]
MANIFEST = manifest(SCREENS, VERSION)
screen = partial(screen_text, SCREENS, VERSION)


def test_no_documented_screen_shows_a_prompt():
    for name in MANIFEST["screens"]:
        assert read_prompt(screen(name)) is None


@settings(max_examples=100, deadline=None)
@given(text=st.text())
def test_any_text_reads_as_none(text):
    assert read_prompt(text) is None
