"""The record a step call returns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class StepHandle:
    """One finished step: its key, the worker's terminal, the worker's last message (``output``), its
    status, and whether the server answered from its journal (``replayed``: the step had already run in
    an earlier attempt of this run, so ``terminal_id`` names a terminal that is gone)."""

    step_id: str
    terminal_id: str
    output: Any
    status: str
    replayed: bool = False
