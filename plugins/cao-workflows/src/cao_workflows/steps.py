"""``POST /terminals/run-step``: one agent step asked for over HTTP, upstream's contract (the server half
of a script's ``cao_workflow.run_step``). cao-server owns the route and answers a call naming no workflow
step as a handoff; the calls whose ``env_vars`` name one come here to be journaled.

A call naming a run and a step (``env_vars``: ``CAO_WORKFLOW_RUN_ID``, ``CAO_WORKFLOW_GENERATION``,
``CAO_WORKFLOW_STEP_ID``) is a DBOS workflow whose id is derived from the two, so the journal answers
the same question asked again: a finished step returns its stored answer (``replayed``) and starts no
agent; a step still running (its agent re-attached by recovery after a server restart) is waited for.
A call naming no step of a run (only a run) is a step of its own, journaled under a fresh id.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import secrets
from collections.abc import Mapping
from typing import Any

import attrs

from cao_hookspecs.errors import NotFound

from . import engine as engines
from .errors import BadRunInput, RunStateConflict, StepFailed, StepTimedOut
from .records import Step

RUN_VARIABLE, GENERATION_VARIABLE, STEP_VARIABLE = (
    "CAO_WORKFLOW_RUN_ID", "CAO_WORKFLOW_GENERATION", "CAO_WORKFLOW_STEP_ID")
ENV_KEY_RE = re.compile(r"[A-Za-z0-9_-]{1,64}")
RECOVERY_POLICIES = frozenset({"idempotent", "reconcile", "manual"})
#: Upstream's default for a step's timeout, and the longest one accepted.
DEFAULT_TIMEOUT, MAX_TIMEOUT = 600.0, 24 * 3600.0
# Upstream's further request fields: accepted so a script written for it runs; only
# ``working_directory`` changes what cao does (a step always gets a fresh worker, closed at the end).
_PASSED_OVER = frozenset({"session_name", "teardown", "caller_id", "allowed_tools", "use_worktree", "model",
                          "engine"})
_KNOWN = frozenset({"provider", "agent", "prompt", "env_vars", "timeout", "recovery", "working_directory",
                    "reuse_terminal_id"}) | _PASSED_OVER
_POLL = 0.25


@attrs.frozen(kw_only=True)
class StepCall:
    """A checked run-step request."""

    provider: str
    agent: str
    prompt: str
    timeout: float = DEFAULT_TIMEOUT
    run_id: str | None = None
    generation: str | None = None
    step_id: str | None = None
    recovery: str | None = None
    working_directory: str | None = None


def parse(body: Mapping[str, Any]) -> StepCall:
    """The request, or ``BadRunInput`` naming the field and the rule it breaks."""
    unknown = sorted(set(body) - _KNOWN)
    if unknown:
        raise BadRunInput(f"unknown run-step field(s): {', '.join(unknown)}")
    text = {name: body.get(name) for name in ("provider", "agent", "prompt")}
    for name, value in text.items():
        if not isinstance(value, str) or not value.strip():
            raise BadRunInput(f"'{name}' is required: non-empty text")
    env = _env(body.get("env_vars"))
    if env and body.get("reuse_terminal_id") is not None:
        raise BadRunInput("'reuse_terminal_id' cannot go with 'env_vars': a workflow step always gets a "
                          "fresh worker")
    if body.get("reuse_terminal_id") is not None:
        raise BadRunInput("'reuse_terminal_id' is not supported: each step gets a fresh worker")
    recovery = body.get("recovery")
    if recovery is not None and recovery not in RECOVERY_POLICIES:
        raise BadRunInput(f"invalid recovery {recovery!r}: one of {', '.join(sorted(RECOVERY_POLICIES))}")
    workdir = body.get("working_directory")
    if workdir is not None and (not isinstance(workdir, str) or "\x00" in workdir):
        raise BadRunInput("'working_directory' must be a path")
    return StepCall(provider=text["provider"], agent=text["agent"], prompt=text["prompt"],
                    timeout=_timeout(body.get("timeout")), run_id=env.get(RUN_VARIABLE),
                    generation=env.get(GENERATION_VARIABLE), step_id=env.get(STEP_VARIABLE),
                    recovery=recovery, working_directory=workdir)


def _env(value: Any) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise BadRunInput("'env_vars' must be an object")
    allowed = (RUN_VARIABLE, GENERATION_VARIABLE, STEP_VARIABLE)
    for key, item in value.items():
        if key not in allowed:
            raise BadRunInput(f"env_vars key {key!r} is not allowed: only {', '.join(allowed)}")
        # The value is not echoed: it was meant for a terminal's environment.
        if not isinstance(item, str) or not ENV_KEY_RE.fullmatch(item):
            raise BadRunInput(f"env_vars {key} must be 1 to 64 letters, digits, '_' or '-'")
    if (RUN_VARIABLE in value) != (GENERATION_VARIABLE in value):
        raise BadRunInput(f"env_vars {RUN_VARIABLE} and {GENERATION_VARIABLE} go together")
    if STEP_VARIABLE in value and RUN_VARIABLE not in value:
        raise BadRunInput(f"env_vars {STEP_VARIABLE} needs {RUN_VARIABLE}")
    return dict(value)


def _timeout(value: Any) -> float:
    if value is None:
        return DEFAULT_TIMEOUT
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= MAX_TIMEOUT:
        raise BadRunInput(f"invalid timeout {value!r}: a number of seconds above 0, at most {MAX_TIMEOUT:g}")
    return float(value)


def journal_id(run_id: str, step_id: str) -> str:
    """The DBOS workflow of a run's step: led by the run id, so cancelling the run stops it too."""
    return f"{run_id}-s{hashlib.sha256(step_id.encode()).hexdigest()[:12]}"


async def run_step(kernel: Any, call: StepCall) -> dict[str, Any]:
    """Run (or replay, or wait for) the step; upstream's answer. Failures raise ``StepFailed`` (502)
    or ``StepTimedOut`` (504) carrying the worker's terminal id."""
    await _check_names(kernel, call)
    await engines.ensure(kernel)
    workdir = call.working_directory
    if call.run_id is not None:
        from cao_server.settings import home_dir

        from .scripts import check_generation

        home = home_dir(getattr(kernel, "settings", None) or {}, kernel)
        assert call.generation is not None
        check_generation(home, call.run_id, call.generation)
        if workdir is None:
            workdir = await _run_directory(kernel, call.run_id)
    label = call.step_id or call.agent
    identity = {RUN_VARIABLE: call.run_id, GENERATION_VARIABLE: call.generation, STEP_VARIABLE: call.step_id}
    step = Step(profile=call.agent, prompt=call.prompt, provider=call.provider, timeout=call.timeout,
                label=label, working_directory=workdir,
                env={key: value for key, value in identity.items() if value is not None})
    if call.run_id is not None and call.step_id is not None:
        wanted = journal_id(call.run_id, call.step_id)
    else:  # not a journaled step of a run: a step of its own
        wanted = f"{call.run_id or 'run-step'}-s{secrets.token_hex(6)}"
    found = await asyncio.to_thread(_status, wanted)
    replayed = found is not None and found.status == "SUCCESS"
    if found is None:
        await asyncio.to_thread(_start, wanted, step)
    else:
        _same_step(found, step, call)
    found = await _settled(wanted)
    if found.status != "SUCCESS":
        await _raise_failure(wanted, found)
    answer = found.output
    return {"terminal_id": answer["terminal_id"], "last_message": answer["last_message"],
            "status": "completed", "replayed": replayed}


async def _check_names(kernel: Any, call: StepCall) -> None:
    providers = {p["name"] for p in await kernel.list_providers()}
    if call.provider not in providers:
        raise BadRunInput(f"unknown provider {call.provider!r}: one of {', '.join(sorted(providers))}")
    try:
        await kernel.get_profile(call.agent)
    except NotFound:
        raise BadRunInput(f"unknown agent profile {call.agent!r}") from None


async def _run_directory(kernel: Any, run_id: str) -> str | None:
    """Where the run's agents work (the directory its run was started from)."""
    from dbos import DBOS

    found = await asyncio.to_thread(DBOS.get_workflow_status, run_id)
    args = (getattr(found, "input", None) or {}).get("args") if found is not None else None
    return getattr(args[0], "working_directory", None) if args else None


def _status(workflow_id: str) -> Any:
    from dbos import DBOS

    return DBOS.get_workflow_status(workflow_id)


def _start(workflow_id: str, step: Step) -> None:
    from dbos import DBOS, SetWorkflowID

    from .journal import script_step_workflow

    with SetWorkflowID(workflow_id):
        DBOS.start_workflow(script_step_workflow, step)


def _same_step(found: Any, step: Step, call: StepCall) -> None:
    """A step key asked again must ask the same thing: a script that changed would otherwise get an
    answer to another question."""
    args = (getattr(found, "input", None) or {}).get("args") or ()
    journaled = args[0] if args and isinstance(args[0], Step) else None
    if journaled is None:
        raise RunStateConflict(f"step {call.step_id!r} of run {call.run_id!r} is journaled as something "
                               f"else than a run-step call")
    changed = [name for name in ("provider", "profile", "prompt")
               if getattr(journaled, name) != getattr(step, name)]
    if changed:
        fields = ", ".join("agent" if name == "profile" else name for name in changed)
        raise RunStateConflict(f"step {call.step_id!r} of run {call.run_id!r} was journaled with another "
                               f"{fields}: the script changed since; give the step a new step_id")


async def _settled(workflow_id: str) -> Any:
    """The step's journal entry once it has ended. Polled, so the request holds no thread while its
    worker works (a blocked thread would also hold up the server's stop)."""
    while True:
        found = await asyncio.to_thread(_status, workflow_id)
        if found is not None and found.status in ("SUCCESS", "ERROR", "CANCELLED",
                                                  "MAX_RECOVERY_ATTEMPTS_EXCEEDED"):
            return found
        await asyncio.sleep(_POLL)


async def _raise_failure(workflow_id: str, found: Any) -> None:
    from dbos import DBOS

    steps = await asyncio.to_thread(DBOS.list_workflow_steps, workflow_id)
    started = next((s.get("output") for s in steps if str(s.get("function_name", "")).startswith("start:")),
                   None)
    terminal_id = started.get("terminal_id") if isinstance(started, dict) else None
    error = found.error
    message = str(error) if error is not None else f"the step ended {found.status.lower()}"
    failure = StepTimedOut(message) if isinstance(error, StepTimedOut) else StepFailed(message)
    failure.terminal_id = terminal_id  # type: ignore[attr-defined]
    raise failure
