"""The provider conformance kit (cao_kernel.testing.conformance) over the q chat screens.

The screens are transcribed from public documentation (``"source": "documented"``), not recorded: the
CLI cannot be installed from the registries this project may use (see the README).
"""

from __future__ import annotations

from pathlib import Path

from cao_kernel.testing.conformance import ProviderConformance


class TestConformance(ProviderConformance):
    entry_point = "q_cli"
    provider_name = "q_cli"
    screens_dir = Path(__file__).parent / "screens"
    # The spinner q draws while the model thinks, and while MCP servers load at start-up.
    busy_lines = (
        "⠋ Thinking...",
        "⠏ 0 of 1 mcp servers initialized. ctrl-c to start chatting now",
    )

    def insert_busy_line(self, screen: str, line: str) -> str:
        # q draws its spinner on the row after the message, where the next output or prompt goes:
        # put it just above the prompt that ends the screen.
        rows = screen.split("\n")
        while rows and not rows[-1].strip():
            rows.pop()
        return "\n".join([*rows[:-1], "", line, rows[-1]])
