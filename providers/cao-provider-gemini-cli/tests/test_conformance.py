"""The provider conformance kit (cao_kernel.testing.conformance) over the recorded Gemini CLI screens."""

from __future__ import annotations

import json
import re
from pathlib import Path

from cao_kernel.testing.conformance import ProviderConformance

SCREENS = Path(__file__).parent / "screens"
_RULE = re.compile(r"^─{20,}$")
_HINT = "? for shortcuts"


def _recorded_busy_rows() -> tuple[str, ...]:
    """Rows of the recorded processing screens that show a running turn: the status row with its
    spinner ("(esc to cancel, 0s)") and the box row of a tool still running ("⊶"/"⊷"). Taken from the
    files, so a new recording (other spinner frames) needs no edit here."""
    rows: dict[str, None] = {}
    for manifest in sorted(SCREENS.glob("*/manifest.json")):
        screens = json.loads(manifest.read_text(encoding="utf-8"))["screens"]
        for name, entry in screens.items():
            if entry["status"] != "processing":
                continue
            for row in (manifest.parent / f"{name}.txt").read_text(encoding="utf-8").split("\n"):
                if "(esc to cancel" in row or re.match(r"^│ [⊶⊷] ", row):
                    rows[row.rstrip()] = None
    return tuple(rows)


class TestConformance(ProviderConformance):
    entry_point = "gemini_cli"
    provider_name = "gemini_cli"
    screens_dir = SCREENS
    busy_lines = _recorded_busy_rows()

    def insert_busy_line(self, screen: str, line: str) -> str:
        rows = screen.split("\n")
        rule = max(i for i, row in enumerate(rows) if _RULE.match(row.rstrip()))
        status = rule - 1 if rule > 0 and _HINT in rows[rule - 1] else rule
        if line.startswith("│"):
            # A tool box row belongs to the transcript: at its end, above the status row.
            end = status
            while end > 0 and not rows[end - 1].strip():
                end -= 1
            edge = "─" * (len(line) - 2)
            return "\n".join([*rows[:end], f"╭{edge}╮", line, f"╰{edge}╯", *rows[end:]])
        # Gemini CLI draws the spinner in the status row, right above the input area's rule.
        return "\n".join([*rows[:status], line, *rows[rule:]])


def test_busy_rows_were_found_in_the_recordings():
    assert any("esc to cancel" in row for row in TestConformance.busy_lines)
    assert any(row.startswith("│") for row in TestConformance.busy_lines)
