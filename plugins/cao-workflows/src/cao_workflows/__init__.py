"""cao-workflows: durable multi-step runs of agents.

A workflow is a Python file with ``def workflow(inputs):`` that calls ``run_step``, ``assign_step``,
``approve`` and ``emit`` (:mod:`cao_workflows.api`); the server runs it as a DBOS workflow, journaling
each step (docs/workflows.md). The names load on first use: the ``cao`` command imports this package
for its entry point and must stay quick.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Decision", "Step", "approve", "assign_step", "emit", "run_step"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module 'cao_workflows' has no attribute {name!r}")
