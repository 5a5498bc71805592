"""cao's conformance kit over the MiniMax Code screens, transcribed from documentation ("source":
"documented" in the manifest): statuses, answers, prompts and the detector's properties."""

from __future__ import annotations

from pathlib import Path

from cao_kernel.testing.conformance import ProviderConformance


class TestConformance(ProviderConformance):
    entry_point = "mcode"
    provider_name = "mcode"
    screens_dir = Path(__file__).parent / "screens"
    busy_lines = ("⠹ Loading 35s · Enter queue · Ctrl+X steer · Ctrl+O details · Esc stop",)

    def insert_busy_line(self, screen: str, line: str) -> str:
        # The activity row is drawn at the end of the turn, right above the composer.
        rows = screen.split("\n")
        top = next((i for i in range(len(rows) - 1, -1, -1) if rows[i].startswith("╭")), len(rows))
        return "\n".join([*rows[:top], line, *rows[top:]])
