"""The provider conformance kit over the screens recorded from the real Kimi CLI (tests/screens/)."""

from __future__ import annotations

from pathlib import Path

from cao_kernel.testing.conformance import ProviderConformance


class TestConformance(ProviderConformance):
    entry_point = "kimi_cli"
    provider_name = "kimi_cli"
    screens_dir = Path(__file__).parent / "screens"
    # Copied from the recorded processing screens: the model turn's moon and a running tool call.
    busy_lines = ("🌕", "⠏ Using Shell (sleep 4; ls)", "⠦ Using Shell (sleep 4; ls)")

    def insert_busy_line(self, screen: str, line: str) -> str:
        """Kimi draws its live area above the input box, after a blank row."""
        rows = screen.split("\n")
        header = max(i for i, row in enumerate(rows) if row.startswith("── input "))
        return "\n".join([*rows[:header], line, "", *rows[header:]])
