"""What a workflow file calls. Each function works only inside a run (the server runs the file's
``workflow(inputs)`` as a DBOS workflow); the journal module that does the work is imported at the
first call, so importing this module costs nothing.

```python
from cao_workflows import approve, assign_step, emit, run_step

def workflow(inputs):
    plan = run_step("planner", f"Plan: {inputs['topic']}")
    parts = assign_step([("developer", f"Do part {i} of: {plan}") for i in (1, 2, 3)])
    if approve("Ship these three parts?"):
        emit("shipped", parts)
    return run_step("reviewer", "Review: " + "\\n".join(parts))
```
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .records import Decision, Step

__all__ = ["Decision", "Step", "approve", "assign_step", "emit", "run_step"]


def run_step(profile: str, prompt: str, provider: str | None = None, *, timeout: float = 1800.0,
             label: str = "", working_directory: str | None = None) -> str:
    """Give ``prompt`` to a fresh agent of ``profile`` (like a handoff) and return its final answer;
    the agent is closed afterwards. Journaled: after a server restart a finished step is not run again,
    and a step in flight waits for the agent it already started.

    :param provider: the agent CLI (the profile's own, else the server's default, when None).
    :param timeout: seconds the agent may work; past it the step fails.
    :param label: the step's name in events and ``cao workflow events`` (the profile when empty).
    :param working_directory: where the agent works (the run's directory when None).
    :raises StepFailed: the agent ended in error, timed out, or its terminal disappeared.
    """
    from .journal import agent_step

    return agent_step(Step(profile=profile, prompt=prompt, provider=provider, timeout=timeout, label=label,
                           working_directory=working_directory))


def assign_step(steps: Iterable[Step | tuple[str, str]], *, limit: int | None = None) -> list[str]:
    """Run steps in parallel (each like :func:`run_step`) and return their answers in the given order.

    At most ``limit`` of them run at once (``CAO_WORKFLOW_CONCURRENCY``, 4, when None), and at most
    ``CAO_WORKFLOW_PROFILE_CONCURRENCY`` (4) agents of one profile across all runs of the server.
    A failed step fails the call with its error once it is the next answer collected.
    """
    from .journal import as_steps, parallel_steps

    return parallel_steps(as_steps(steps), limit)


def approve(question: str, *, timeout: float | None = None, default: bool | None = None) -> Decision:
    """Block the run until a person answers ``question`` (``cao workflow approve RUN [--reject]``, the
    HTTP route or the MCP tool) and return the :class:`Decision` (true when approved).

    A policy may answer instead: with ``timeout`` (seconds), no answer by then means ``default``
    (rejected when None). The wait survives restarts; its clock keeps running while the server is down.
    """
    from .journal import ask

    return ask(question, timeout, default)


def emit(key: str, value: Any) -> None:
    """Publish ``value`` (plain JSON) as the run's output ``key``; readers see it at once in
    ``cao workflow status`` and ``result``, before the run ends. The last value of a key wins."""
    from .journal import publish

    publish(key, value)
