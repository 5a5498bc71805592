"""The provider conformance kit (cao_kernel.testing.conformance) over the recorded Codex screens."""

from __future__ import annotations

from pathlib import Path

from cao_kernel.testing.conformance import ProviderConformance

PROMPT = "\u203a"


class TestConformance(ProviderConformance):
    entry_point = "codex"
    provider_name = "codex"
    screens_dir = Path(__file__).parent / "screens"
    # The live row of a running turn, as recorded while the model thought and while a tool ran.
    busy_lines = (
        "\u2022 Working (0s \u2022 esc to interrupt)",
        ("\u2022 Working (2s \u2022 esc to interrupt) \u00b7 1 background terminal running \u00b7 /ps to view"
         " \u00b7 /stop to close"),
    )

    def insert_busy_line(self, screen: str, line: str) -> str:
        # Codex draws the live row at the end of the transcript, two blank rows above the composer.
        rows = screen.split("\n")
        composer = max(i for i, row in enumerate(rows) if row.startswith(PROMPT))
        return "\n".join([*rows[:composer], line, "", "", *rows[composer:]])
