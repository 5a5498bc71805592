"""cao's conformance kit over the Antigravity CLI screens, transcribed from upstream CAO's fixtures
("source": "documented" in the manifest): statuses, answers, dialogs, prompts and properties."""

from __future__ import annotations

from pathlib import Path

from cao_kernel.testing.conformance import ProviderConformance


class TestConformance(ProviderConformance):
    entry_point = "antigravity_cli"
    provider_name = "antigravity_cli"
    screens_dir = Path(__file__).parent / "screens"
    busy_lines = ("⣻  Generating...",)

    def insert_busy_line(self, screen: str, line: str) -> str:
        # The spinner is drawn at the end of the turn, right above the input box's top rule.
        rows = screen.rstrip("\n").split("\n")
        top = next(i for i in range(len(rows) - 3, -1, -1) if rows[i].startswith("─" * 20))
        return "\n".join([*rows[:top], line, *rows[top:]])
