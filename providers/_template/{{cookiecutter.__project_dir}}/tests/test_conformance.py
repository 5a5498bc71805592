"""cao's conformance kit over the recorded screens (tests/screens/<version>/): statuses, answers,
start-up dialogs, and properties of the detector (never raises; a busy screen is never completed)."""

from __future__ import annotations

from pathlib import Path

from cao_kernel.testing.conformance import ProviderConformance


class TestConformance(ProviderConformance):
    entry_point = "{{ cookiecutter.provider_name }}"
    provider_name = "{{ cookiecutter.provider_name }}"
    screens_dir = Path(__file__).parent / "screens"
    # TODO: rows copied from the real CLI's recorded processing screens (a spinner, a running tool).
    # The kit draws each above the screen's last block of rows (above the input box, also one drawn as
    # two rules around an empty row). Where the CLI draws it elsewhere, say where, from the bottom up:
    #     def insert_busy_line(self, screen: str, line: str) -> str:
    #         rows = screen.split("\n")
    #         footer = max(i for i, row in enumerate(rows) if row.strip())   # e.g. in its footer
    #         return "\n".join([*rows[:footer], line, *rows[footer + 1:]])
    busy_lines = ("· Working… (ctrl+c to interrupt)",)
