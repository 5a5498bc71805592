"""The provider conformance kit (cao_kernel.testing.conformance) over the Kiro CLI screens.

The screens are transcribed from public documentation (``"source": "documented"``), not recorded: the
CLI cannot be installed from the registries this project may use (see the README).
"""

from __future__ import annotations

import re
from pathlib import Path

from cao_kernel.testing.conformance import ProviderConformance

_STATUS_BAR = re.compile(r"^[^\s·]+ · .*◔ ?\d{1,3}%")
_FRAME = re.compile(r"^\s*─{20,}\s*$|Trust All Tools active|/quit to exit")


class TestConformance(ProviderConformance):
    entry_point = "kiro_cli"
    provider_name = "kiro_cli"
    screens_dir = Path(__file__).parent / "screens"
    busy_lines = (
        # Line-based chat (1.x): the spinner while the model thinks.
        "⠋ Thinking...",
        # Full-screen interface (2.x): the composer's ghost text and the hint under a running tool.
        "›  Kiro is working · Type to steer · Ctrl+S to queue",
        "  esc to cancel",
    )

    def insert_busy_line(self, screen: str, line: str) -> str:
        rows = screen.split("\n")
        while rows and not rows[-1].strip():
            rows.pop()
        bar = next((i for i in range(len(rows) - 1, -1, -1) if _STATUS_BAR.match(rows[i])), None)
        if bar is None:
            # Line-based chat: the row after the message, just above the prompt that ends the screen.
            return "\n".join([*rows[:-1], "", line, rows[-1]])
        # Full-screen: the live rows are drawn at the end of the transcript, above the frame.
        top = bar
        while top > 0 and (not rows[top - 1].strip() or _FRAME.search(rows[top - 1])):
            top -= 1
        return "\n".join([*rows[:top], line, *rows[top:]])
