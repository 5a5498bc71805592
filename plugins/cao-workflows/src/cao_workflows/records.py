"""Records shared by a run's code and the server: what a step asks for, what a run carries in its
journal, and an approval's answer. They are pickled into the journal, so fields are only ever added,
with defaults."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from .source import WorkflowSource


def _frozen_dict(value: Mapping[str, Any] | None) -> dict[str, Any]:
    return dict(value or {})


@attrs.frozen(kw_only=True)
class Step:
    """One agent step: ``profile`` gets ``prompt`` like a handoff (a fresh agent, its final answer
    returned, the agent closed). ``provider`` overrides the profile's; ``timeout`` (seconds) bounds the
    agent's work; ``label`` names the step in events (the profile when empty)."""

    profile: str
    prompt: str
    provider: str | None = None
    timeout: float = 1800.0
    label: str = ""
    working_directory: str | None = None
    #: Added to the agent's environment (a script's steps: the run's identity, as upstream gives it).
    env: dict[str, str] = attrs.field(factory=dict, converter=_frozen_dict)

    @property
    def name(self) -> str:
        return self.label or self.profile


@attrs.frozen(kw_only=True)
class RunSpec:
    """What a run journals as its input: the workflow's code, its inputs, where its agents work, and
    its tier: ``function`` (the file's ``workflow(inputs)`` runs in the server) or ``script`` (the file
    runs as a process of its own, its steps calling the server; :mod:`cao_workflows.scripts`)."""

    source: WorkflowSource
    inputs: dict[str, Any] = attrs.field(factory=dict, converter=_frozen_dict)
    working_directory: str | None = None
    tier: str = "function"


@attrs.frozen(kw_only=True)
class Decision:
    """The answer to ``approve(question)``: true when approved. ``by`` says who answered (``cli``,
    ``http``, ``mcp``, or ``policy`` when the timeout's default applied); ``note`` is their comment."""

    approved: bool
    note: str = ""
    by: str = ""

    def __bool__(self) -> bool:
        return self.approved
