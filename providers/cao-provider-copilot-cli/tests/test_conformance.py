"""The shared provider conformance kit over the screens recorded from the real Copilot CLI."""

from __future__ import annotations

from pathlib import Path

from cao_kernel.testing.conformance import ProviderConformance
from cao_kernel.testing.screens import load_screens

SCREENS = Path(__file__).parent / "screens"


def _busy_footers() -> tuple[str, ...]:
    """The footer rows of the recorded processing screens ("◉ Working esc esc edit prompt", and with a
    shell command running "○ Working · 64 B esc esc interrupt"): the spinner glyph and byte count change
    with every recording, so they are read from the screens rather than copied here. The screen taken
    between a tool's result and the model's next step shows the idle footer and is left out."""
    footers = []
    for version in load_screens(SCREENS):
        for screen in version.screens:
            # A program that exited may leave a blank screen.
            footer = next((row for row in reversed(screen.text.split("\n")) if row.strip()), "")
            if screen.status == "processing" and " Working" in footer:
                footers.append(footer)
    return tuple(dict.fromkeys(footers))


class TestConformance(ProviderConformance):
    entry_point = "copilot_cli"
    provider_name = "copilot_cli"
    screens_dir = SCREENS
    busy_lines = _busy_footers()

    def insert_busy_line(self, screen: str, line: str) -> str:
        """Copilot draws its busy state in the footer, the last row under the input box."""
        rows = screen.rstrip("\n").split("\n")
        last = max(i for i, row in enumerate(rows) if row.strip())
        rows[last] = line
        return "\n".join(rows)
