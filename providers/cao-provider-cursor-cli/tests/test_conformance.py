"""cao's conformance kit over the Cursor CLI screens, transcribed from upstream CAO's fixtures
("source": "documented" in the manifest): statuses, answers and the detector's properties."""

from __future__ import annotations

from pathlib import Path

from cao_kernel.testing.conformance import ProviderConformance


class TestConformance(ProviderConformance):
    entry_point = "cursor_cli"
    provider_name = "cursor_cli"
    screens_dir = Path(__file__).parent / "screens"
    busy_lines = ("⠠⠛ Composing  23 tokens",)

    def insert_busy_line(self, screen: str, line: str) -> str:
        # The spinner row is drawn in the transcript, above the input box.
        rows = screen.split("\n")
        box = next(i for i in range(len(rows) - 1, -1, -1) if rows[i].lstrip().startswith("→ "))
        return "\n".join([*rows[:box], line, *rows[box:]])
