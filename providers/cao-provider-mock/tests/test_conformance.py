"""The provider conformance kit (cao_kernel.testing.conformance) over screens recorded from mock_cli."""

from __future__ import annotations

from pathlib import Path

from cao_kernel.testing.conformance import ProviderConformance
from cao_provider_mock.contract import PROMPT_GLYPH


class TestConformance(ProviderConformance):
    entry_point = "mock_cli"
    provider_name = "mock_cli"
    screens_dir = Path(__file__).parent / "screens"
    # A sleeping turn's echoed input, a behaviour's progress row, text typed and not sent: each is the
    # last row while mock_cli is busy.
    busy_lines = ("\u276f __mock_sleep_30", "\u23fa reading the notes", "\u276f half-typed message, not sent")
    # "The last answer in the text", as upstream's mock: while a later turn runs (or after it failed) that
    # is still the earlier turn's answer. The kernel asks for it once a turn has completed.
    check_extraction_outside_completed = False

    def insert_busy_line(self, screen: str, line: str) -> str:
        # mock_cli draws a running turn where the fresh prompt would be: the bare prompt row is replaced.
        rows = screen.split("\n")
        last = max(i for i, row in enumerate(rows) if row.strip())
        assert rows[last].rstrip() == PROMPT_GLYPH, f"the screen does not end with the prompt: {rows[last]!r}"
        return "\n".join([*rows[:last], line, *rows[last + 1:]])
