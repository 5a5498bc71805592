"""The provider conformance kit (cao_kernel.testing.conformance) over the recorded Claude Code screens."""

from __future__ import annotations

from pathlib import Path

from cao_kernel.testing.conformance import ProviderConformance
from cao_provider_claude_code.screen import parse_screen

BUSY_FOOTER = ("  \u23f5\u23f5 bypass permissions on (shift+tab to cycle) \u00b7 esc to interrupt "
               "\u00b7 \u2190 for agents")


class TestConformance(ProviderConformance):
    entry_point = "claude_code"
    provider_name = "claude_code"
    screens_dir = Path(__file__).parent / "screens"
    # Spinner rows of the recorded processing screens (220 and 100 columns), and the footer drawn while
    # a turn runs.
    busy_lines = ("\u00b7 Fiddle-faddling\u2026", "\u00b7 Schlepping\u2026", BUSY_FOOTER)

    def insert_busy_line(self, screen: str, line: str) -> str:
        parsed = parse_screen(screen)
        rows = screen.split("\n")
        assert parsed.box_top is not None and parsed.box_bottom is not None, "no input box on the screen"
        if line == BUSY_FOOTER:
            # The footer replaces the one under the input box.
            footer = next(i for i in range(len(rows) - 1, parsed.box_bottom, -1) if rows[i].strip())
            return "\n".join([*rows[:footer], line, *rows[footer + 1:]])
        # Spinners are drawn where the turn summary goes: above the right-aligned rows over the box.
        at = parsed.box_top
        while at > 0 and rows[at - 1].startswith(" " * 20) and rows[at - 1].strip():
            at -= 1
        return "\n".join([*rows[:at], line, *rows[at:]])
