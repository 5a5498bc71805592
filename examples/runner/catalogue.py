"""The examples the runner knows: where their profiles are, who starts, and the task it gets."""

from __future__ import annotations

import dataclasses
from pathlib import Path

EXAMPLES_DIR = Path(__file__).resolve().parents[1]
REPO_ROOT = EXAMPLES_DIR.parent


@dataclasses.dataclass(frozen=True)
class Example:
    """One example folder: its agent profiles (every ``*.md`` but the README), the profile that is
    launched, and the task typed into it."""

    name: str
    supervisor: str
    task: str
    summary: str

    @property
    def folder(self) -> Path:
        return EXAMPLES_DIR / self.name

    def profiles(self) -> list[Path]:
        return sorted(p for p in self.folder.glob("*.md") if p.name != "README.md")


EXAMPLES: dict[str, Example] = {
    example.name: example
    for example in (
        Example(
            name="assign",
            supervisor="analysis_supervisor",
            task=("Analyze these three datasets and write a report. Dataset A: [1, 2, 3, 4, 5]. "
                  "Dataset B: [10, 20, 30, 40, 50, 60]. Dataset C: [2, 4, 4, 4, 5, 5, 7, 9]."),
            summary="a supervisor assigns three data analysts in parallel and hands off to a report generator",
        ),
        Example(
            name="handoff",
            supervisor="release_manager",
            task=("Write the release notes for version 2.1 from these changes: "
                  "feat: export reports as CSV; fix: crash when the config file is empty; "
                  "docs: a tutorial for first-time users; feat: a --json flag for every command; "
                  "fix: wrong totals when a dataset has one value."),
            summary="a supervisor hands off to a planner, then to a writer, one after the other",
        ),
        Example(
            name="send_message",
            supervisor="buyer",
            task="Buy the used bike. Your budget is 340: open with 250 and raise by at most 30 per round.",
            summary="a buyer and a seller negotiate a price over several rounds of send_message",
        ),
    )
}
