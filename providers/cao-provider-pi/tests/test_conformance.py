"""cao's conformance kit over the recorded screens (tests/screens/<version>/): statuses, answers and
properties of the detector (never raises; a busy screen is never completed). pi asks no questions, so
no waiting screen is required."""

from __future__ import annotations

from pathlib import Path

from cao_kernel.testing.conformance import ProviderConformance


class TestConformance(ProviderConformance):
    entry_point = "pi"
    provider_name = "pi"
    screens_dir = Path(__file__).parent / "screens"
    # From the recorded processing screens.
    busy_lines = (" ⠴ Working...",)
    required_statuses = ("idle", "processing", "completed", "error")

    def insert_busy_line(self, screen: str, line: str) -> str:
        # pi draws its loader at the end of the transcript, above the input box's top rule.
        rows = screen.split("\n")
        rules = [i for i, row in enumerate(rows) if row.startswith("─" * 20)]
        top = rules[-2]
        return "\n".join([*rows[:top], "", line, "", *rows[top:]])
