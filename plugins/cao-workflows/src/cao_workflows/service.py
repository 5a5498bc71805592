"""What the routes and MCP tools do, in one place: validate, submit, inspect, wait for, cancel, resume
and answer runs. Every call into DBOS goes through ``asyncio.to_thread`` (its sync API refuses a thread
with a running loop, and its async API replaces the loop's default executor)."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from cao_hookspecs.errors import NotFound

from . import engine as engines
from . import names
from .errors import RunNotFound, RunStateConflict, WorkflowFileError
from .records import RunSpec
from .source import WorkflowSource, classify

T = TypeVar("T")

#: DBOS's statuses as a person reads them.
STATES = {"PENDING": "running", "ENQUEUED": "queued", "DELAYED": "queued", "SUCCESS": "completed",
          "ERROR": "failed", "MAX_RECOVERY_ATTEMPTS_EXCEEDED": "failed", "CANCELLED": "cancelled"}
FINAL_STATES = frozenset({"completed", "failed", "cancelled"})
_WAIT_POLL = 0.25


async def _dbos(kernel: Any, call: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    await engines.ensure(kernel)
    return await asyncio.to_thread(call, *args, **kwargs)


async def validate(kernel: Any, source: WorkflowSource) -> dict[str, Any]:
    """Check the code and the profiles it names; a summary, or ``WorkflowFileError``."""
    tier, uses = classify(source)
    for use in uses:
        try:
            await kernel.get_profile(use.profile)
        except NotFound:
            raise WorkflowFileError(f"workflow file {source.path!r} line {use.line}: unknown agent profile "
                                    f"{use.profile!r}") from None
    return {"ok": True, "name": source.name, "path": source.path, "digest": source.digest, "tier": tier,
            "profiles": sorted({use.profile for use in uses})}


async def submit(kernel: Any, source: WorkflowSource, inputs: Mapping[str, Any] | None = None, *,
                 run_id: str | None = None, working_directory: str | None = None) -> dict[str, Any]:
    """Validate and start a run; its status at once. A ``run_id`` that already names a run of the same
    workflow returns that run (a retried submit starts nothing twice)."""
    tier = (await validate(kernel, source))["tier"]
    checked = names.check_inputs(dict(inputs or {}))
    wanted = names.run_id(run_id) if run_id is not None else names.new_run_id(source.name)
    engine = await engines.ensure(kernel)
    from dbos import DBOS, SetWorkflowID

    from .journal import run_workflow

    existing = await asyncio.to_thread(DBOS.get_workflow_status, wanted)
    if existing is not None:
        if _name(existing) != source.name:
            raise RunStateConflict(f"run id {wanted!r} is taken by a run of workflow {_name(existing)!r}")
        return _status(existing)
    spec = RunSpec(source=source, inputs=checked, working_directory=working_directory, tier=tier)

    def start() -> None:
        with SetWorkflowID(wanted):
            DBOS.start_workflow(run_workflow, spec)

    await asyncio.to_thread(start)
    from .activity import report

    report(engine.kernel, "workflow.run", {"run_id": wanted, "name": source.name, "state": "submitted",
                                           "summary": f"{source.name} submitted"})
    return await status(kernel, wanted)


async def list_runs(kernel: Any, *, state: str | None = None, limit: int = 50) -> list[dict[str, Any]]:
    """Runs, newest first (parallel steps' child workflows are not runs)."""
    if state is not None and state not in set(STATES.values()):
        raise names.BadRunInput(f"invalid state {state!r}: one of {', '.join(sorted(set(STATES.values())))}")
    if limit < 1 or limit > 1000:
        raise names.BadRunInput(f"invalid limit {limit}: 1 to 1000")
    if not engines.database_path(kernel).exists():
        return []  # no journal: nothing ever ran, and DBOS need not start to say so
    from dbos import DBOS

    from .journal import RUN_WORKFLOW

    wanted = [k for k, v in STATES.items() if v == state] if state else None
    found = await _dbos(kernel, DBOS.list_workflows, name=RUN_WORKFLOW, status=wanted, limit=limit,
                        sort_desc=True, load_output=False)
    return [_status(item, brief=True) for item in found]


async def status(kernel: Any, run_id: str) -> dict[str, Any]:
    """A run's state, outputs and open question."""
    from dbos import DBOS

    found = await _get(kernel, run_id)
    record = _status(found)
    events = await _dbos(kernel, DBOS.get_all_events, found.workflow_id)
    record["outputs"] = _outputs(events)
    approval = events.get("approval")
    record["approval"] = approval
    if record["state"] == "running" and approval:
        record["state"] = "waiting"
    return record


async def events(kernel: Any, run_id: str) -> list[dict[str, Any]]:
    """The run's journaled steps in order, parallel steps' own steps included after their parent's."""
    from dbos import DBOS

    found = await _get(kernel, run_id)
    steps = await _dbos(kernel, DBOS.list_workflow_steps, found.workflow_id)
    listed: list[dict[str, Any]] = []
    for step in steps:
        listed.append(_event(found.workflow_id, step))
        child = step.get("child_workflow_id")
        if child:
            for inner in await _dbos(kernel, DBOS.list_workflow_steps, child):
                listed.append(_event(child, inner))
    for child in await _script_steps(kernel, found):
        for inner in await _dbos(kernel, DBOS.list_workflow_steps, child):
            listed.append(_event(child, inner))
    return [{"seq": n, **event} for n, event in enumerate(listed, 1)]


async def _script_steps(kernel: Any, found: Any) -> list[str]:
    """A script run's steps (journaled apart from the run, under ids led by its own), oldest first."""
    spec = _spec(found)
    if spec is None or getattr(spec, "tier", "function") != "script":
        return []
    from dbos import DBOS

    from .journal import SCRIPT_STEP_WORKFLOW

    prefix = found.workflow_id + "-s"
    children = await _dbos(kernel, DBOS.list_workflows, name=SCRIPT_STEP_WORKFLOW, workflow_id_prefix=prefix,
                           load_input=False, load_output=False)
    # The prefix alone would also match a run whose own id extends this one's.
    ours = [c for c in children if re.fullmatch(r"[0-9a-f]{12}", c.workflow_id[len(prefix):])]
    return [c.workflow_id for c in sorted(ours, key=lambda c: c.created_at or 0)]


async def result(kernel: Any, run_id: str) -> dict[str, Any]:
    """A finished run's result and outputs; ``RunStateConflict`` while it runs."""
    record = await status(kernel, run_id)
    if record["state"] not in FINAL_STATES:
        raise RunStateConflict(f"run {run_id} is {record['state']}; its result exists once it ends "
                               f"(cao workflow wait {run_id})")
    return {k: record.get(k) for k in ("run_id", "name", "state", "result", "error", "outputs")}


async def wait(kernel: Any, run_id: str, timeout: float = 600.0) -> dict[str, Any]:
    """The run's status once it ends, or at ``timeout`` seconds (then still ``running``/``waiting``)."""
    deadline = time.monotonic() + timeout
    while True:
        record = await status(kernel, run_id)
        if record["state"] in FINAL_STATES or time.monotonic() >= deadline:
            return record
        await asyncio.sleep(_WAIT_POLL)


async def cancel(kernel: Any, run_id: str) -> dict[str, Any]:
    """Cancel a run and its parallel steps; their agents are closed within seconds."""
    from dbos import DBOS

    found = await _get(kernel, run_id)
    if STATES.get(found.status) in FINAL_STATES:
        raise RunStateConflict(f"run {run_id} has already ended ({STATES[found.status]})")
    engine = await engines.ensure(kernel)
    engine.cancelled.add(found.workflow_id)
    await _dbos(kernel, DBOS.cancel_workflow, found.workflow_id, cancel_children=True)
    return await status(kernel, run_id)


async def resume(kernel: Any, run_id: str) -> dict[str, Any]:
    """Run a cancelled or failed run again from its first unfinished step (finished steps are not run
    again). A pending run resumes by itself at server start; resuming it is refused."""
    from dbos import DBOS

    found = await _get(kernel, run_id)
    state = STATES.get(found.status)
    if state not in ("cancelled", "failed"):
        raise RunStateConflict(f"run {run_id} is {state}; only a cancelled or failed run can be resumed")
    engine = await engines.ensure(kernel)
    engine.cancelled.discard(found.workflow_id)
    await _dbos(kernel, DBOS.resume_workflow, found.workflow_id)
    return await status(kernel, run_id)


async def answer(kernel: Any, run_id: str, *, approved: bool, note: str = "", by: str = "") -> dict[str, Any]:
    """Answer the question the run waits on (``approve(...)`` in its code)."""
    from dbos import DBOS

    record = await status(kernel, run_id)
    if record["state"] != "waiting":
        raise RunStateConflict(f"run {run_id} asks no question now (it is {record['state']})")
    if len(note) > 4000:
        raise names.BadRunInput("an approval note is at most 4000 characters")
    await _dbos(kernel, DBOS.send, run_id, {"approved": approved, "note": note, "by": by}, "approval")
    return {**record, "answered": {"approved": approved, "note": note, "by": by}}


# -- records -----------------------------------------------------------------------------------------

async def _get(kernel: Any, run_id: str) -> Any:
    from dbos import DBOS

    checked = names.run_id(run_id)
    if not engines.database_path(kernel).exists():
        raise RunNotFound(f"no workflow run {checked!r} (no workflow has run on this server)")
    found = await _dbos(kernel, DBOS.get_workflow_status, checked)
    from .journal import RUN_WORKFLOW

    if found is None or found.name != RUN_WORKFLOW:
        raise RunNotFound(f"no workflow run {checked!r}")
    return found


def _name(found: Any) -> str:
    spec = _spec(found)
    return spec.source.name if spec is not None else "?"


def _spec(found: Any) -> RunSpec | None:
    inputs = getattr(found, "input", None) or {}
    args = inputs.get("args") if isinstance(inputs, dict) else None
    return args[0] if args and isinstance(args[0], RunSpec) else None


def _status(found: Any, *, brief: bool = False) -> dict[str, Any]:
    spec = _spec(found)
    record: dict[str, Any] = {
        "run_id": found.workflow_id,
        "name": spec.source.name if spec else "?",
        "state": STATES.get(found.status, str(found.status).lower()),
        "created_at": (found.created_at or 0) / 1000,
        "updated_at": (found.updated_at or 0) / 1000,
    }
    if brief:
        return record
    record.update(path=spec.source.path if spec else None, digest=spec.source.digest if spec else None,
                  inputs=dict(spec.inputs) if spec else {}, result=found.output,
                  error=f"{type(found.error).__name__}: {found.error}" if found.error is not None else None)
    return record


def _outputs(events: Mapping[str, Any]) -> dict[str, Any]:
    from .journal import OUTPUT_PREFIX

    return {key[len(OUTPUT_PREFIX):]: value for key, value in events.items() if key.startswith(OUTPUT_PREFIX)}


def _event(workflow_id: str, step: Mapping[str, Any]) -> dict[str, Any]:
    started, ended = step.get("started_at_epoch_ms"), step.get("completed_at_epoch_ms")
    error = step.get("error")
    output = step.get("output")
    return {
        "workflow_id": workflow_id,
        "step": step.get("function_id"),
        "name": step.get("function_name"),
        "state": "failed" if error is not None else "completed" if ended else "running",
        "started_at": started / 1000 if started else None,
        "completed_at": ended / 1000 if ended else None,
        "output": output if isinstance(output, str | int | float | bool | dict | list) or output is None
        else repr(output),
        "error": str(error) if error is not None else None,
        "child": step.get("child_workflow_id"),
    }
