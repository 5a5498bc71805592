"""Workflow scripts: a ``.py`` file whose top-level code calls ``run_step`` (or ``step``) for each agent
step and ``emit_output`` for its result, run by ``cao workflow run SCRIPT.py`` as a process of its own.

Standard library only, and nothing of cao: the script talks to the server over HTTP, like any client.

```python
from cao_workflow import emit_output, get_inputs, run_step

topic = get_inputs().get("topic", "tides")
notes = run_step("mock_cli", "analyst", f"Look at {topic}")
emit_output({"notes": notes.output})
```

Each step is journaled by the server under the run and the step's key (``step_id``, else ``call-N`` in
call order): when the run's script is started again after a server restart, a step that already
finished answers from the journal (``replayed`` true) and starts no agent.
"""

from __future__ import annotations

import json
import os
from typing import Any

from . import _wire
from .errors import ShimError, ShimHTTPError, ShimIdentityError, ShimTransportError
from .handle import StepHandle

__all__ = ["ShimError", "ShimHTTPError", "ShimIdentityError", "ShimTransportError", "StepHandle",
           "emit_output", "get_inputs", "run_step", "step"]

OUTPUT_PREFIX = "CAO_WORKFLOW_OUTPUT:"
INPUTS_VARIABLE = "CAO_WORKFLOW_INPUTS"
RECOVERY_POLICIES = frozenset({"idempotent", "reconcile", "manual"})


def run_step(provider: str, agent: str, prompt: str, *, step_id: str | None = None,
             timeout: float | None = None, **opts: Any) -> StepHandle:
    """Give ``prompt`` to a fresh ``agent`` on ``provider``, wait for its answer, return the step.

    :param step_id: the step's key in the run's journal (``call-N`` in call order when None; name
        steps called from several threads, their order is not stable).
    :param timeout: seconds the worker may take (the server's default, 600, when None).
    :param opts: further fields of the run-step request (``working_directory``, ``model``, ...).
    :raises ShimHTTPError: the server refused the step or the worker failed (502) or ran long (504).
    """
    return _call("run_step", provider, agent, prompt, step_id, timeout, None, opts)


def step(provider: str, agent: str, prompt: str, *, recovery: str, step_id: str | None = None,
         timeout: float | None = None, **opts: Any) -> StepHandle:
    """:func:`run_step`, declaring what running the step again would mean: ``recovery`` is one of
    ``idempotent``, ``reconcile`` or ``manual`` (exactly)."""
    if recovery not in RECOVERY_POLICIES:
        raise ShimError(f"recovery={recovery!r} is not one of {', '.join(sorted(RECOVERY_POLICIES))}")
    return _call("step", provider, agent, prompt, step_id, timeout, recovery, opts)


def _call(surface: str, provider: str, agent: str, prompt: str, step_id: str | None,
          timeout: float | None, recovery: str | None, opts: dict[str, Any]) -> StepHandle:
    run_id, generation, url = _wire.identity(surface)
    if "reuse_terminal_id" in opts:
        # A journaled step always gets a fresh worker; the server would refuse the pair anyway.
        raise ShimError(f"{surface}() cannot reuse a terminal: each step gets a fresh worker")
    key = step_id if step_id is not None else _wire.next_call_key()
    body: dict[str, Any] = {
        "provider": provider, "agent": agent, "prompt": prompt,
        "env_vars": {_wire.RUN_VARIABLE: run_id, _wire.GENERATION_VARIABLE: generation,
                     _wire.STEP_VARIABLE: key},
    }
    if timeout is not None:
        body["timeout"] = timeout
    if recovery is not None:
        body["recovery"] = recovery
    body.update(opts)
    answer = _wire.post_step(url, body, timeout)
    try:
        return StepHandle(step_id=key, terminal_id=answer["terminal_id"], output=answer["last_message"],
                          status=answer["status"], replayed=answer["replayed"])
    except KeyError as exc:
        raise ShimTransportError(f"run-step answered without {exc.args[0]!r}") from None


def emit_output(value: Any) -> None:
    """Print ``value`` as the run's result (one ``CAO_WORKFLOW_OUTPUT:<json>`` line; the last one
    printed wins, and only when the script exits 0)."""
    print(OUTPUT_PREFIX + json.dumps(value), flush=True)


def get_inputs() -> dict[str, Any]:
    """The run's inputs (``{}`` when it has none); ``ShimError`` when they are not a JSON object."""
    raw = os.environ.get(INPUTS_VARIABLE)
    if not raw:
        return {}
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise ShimError(f"{INPUTS_VARIABLE} is not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise ShimError(f"{INPUTS_VARIABLE} is not a JSON object")
    return value
