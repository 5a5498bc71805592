"""The provider conformance kit over the screens recorded from the real Hermes Agent (tests/screens/)."""

from __future__ import annotations

from pathlib import Path

from cao_kernel.testing.conformance import ProviderConformance


class TestConformance(ProviderConformance):
    entry_point = "hermes"
    provider_name = "hermes"
    screens_dir = Path(__file__).parent / "screens"
    # Copied from the recorded processing screens: the thinking face and a running terminal call; and the
    # row Hermes prints for a message typed during a turn.
    busy_lines = ("  (°ロ°) mulling...", "  (⌐■_■) reasoning...", "  💻 sleep 4 + 1 command  (  0.3s)",
                  "  Queued for the next turn: Second question.")

    def insert_busy_line(self, screen: str, line: str) -> str:
        """Hermes draws its live rows above the status bar, over the input area's three rows."""
        rows = screen.rstrip("\n").split("\n")
        bar = max(i for i, row in enumerate(rows) if row.startswith(" ⚕ ") and "│" in row)
        return "\n".join([*rows[:bar], line, *rows[bar:]])
