"""The durable part: the DBOS workflows a run consists of, and what the workflow API does inside one.

Imported only by :mod:`cao_workflows.engine` when it launches DBOS (it imports DBOS). Each agent step is
two checkpoints: ``start`` (create the agent's session under a name derived from the run and the step,
type the prompt, journal the terminal id) and ``await`` (wait for the answer, read it, close the
session). A server killed during ``await`` resumes there: the journaled terminal is still running (the
server re-adopts it at start), so the step waits for the same agent instead of starting another. A
server killed inside ``start`` runs it again, and the session name finds the agent it may already have
started.
"""

from __future__ import annotations

import contextvars
import hashlib
import json
import time
from collections.abc import Iterable, Sequence
from typing import Any

from dbos import DBOS
from dbos._error import DBOSWorkflowCancelledError

from cao_hookspecs import CreateTerminalRequest
from cao_hookspecs.errors import NotFound, Timeout
from cao_hookspecs.types import TerminalStatus

from . import source as sources
from .activity import summary
from .engine import current
from .errors import BadRunInput, StepFailed, StepTimedOut
from .records import Decision, RunSpec, Step

RUN_WORKFLOW = "cao.workflow"
STEP_WORKFLOW = "cao.workflow.step"
SCRIPT_STEP_WORKFLOW = "cao.workflow.script-step"
APPROVAL_EVENT = "approval"
APPROVAL_TOPIC = "approval"
OUTPUT_PREFIX = "out:"
# recv needs a finite timeout; a month is "until someone answers" for any run a person watches.
_FOREVER = 30 * 24 * 3600.0
# How long one wait on the kernel lasts before the step checks whether its run was cancelled.
_WAIT_SLICE = 5.0
# How long a script that failed while the server stopped waits for the engine to hear of the stop.
_SHUTDOWN_WAIT = 15.0

_run: contextvars.ContextVar[RunSpec | None] = contextvars.ContextVar("cao_workflow_run", default=None)


# -- the workflows -------------------------------------------------------------------------------------

@DBOS.workflow(name=RUN_WORKFLOW)
def run_workflow(spec: RunSpec) -> Any:
    """A run: load the journaled code and call its ``workflow(inputs)``."""
    engine = current()
    run_id = DBOS.workflow_id
    data = {"run_id": run_id, "name": spec.source.name}
    engine.report("workflow.run", {**data, "state": "running", "summary": f"{spec.source.name} running"})
    token = _run.set(spec)
    try:
        if getattr(spec, "tier", sources.FUNCTION_TIER) == sources.SCRIPT_TIER:
            # One step for the whole script: after a crash it runs again (a new attempt), and the steps
            # the script had finished answer from their own journal.
            result = DBOS.run_step({"name": "script"}, _script, spec)
        else:
            entry = sources.load(spec.source)
            result = entry(dict(spec.inputs))
        _check_json(result, "the workflow's return value")
    except Exception as exc:
        failure = summary(f"{type(exc).__name__}: {exc}")
        engine.report("workflow.run", {**data, "state": "failed", "summary": failure})
        raise
    finally:
        _run.reset(token)
    engine.report("workflow.run", {**data, "state": "completed", "summary": summary(str(result))})
    return result


@DBOS.workflow(name=STEP_WORKFLOW)
def step_workflow(step: Step) -> str:
    """One parallel step (``assign_step``), a child run on its profile's queue."""
    return agent_step(step)


@DBOS.workflow(name=SCRIPT_STEP_WORKFLOW)
def script_step_workflow(step: Step) -> dict[str, str]:
    """One step a script asked for over HTTP (``cao_workflow.run_step``): the same two checkpoints as
    :func:`agent_step`, answering with the worker's terminal as well."""
    started = DBOS.run_step({"name": f"start:{step.name}"}, _start, step)
    answer = DBOS.run_step({"name": f"await:{step.name}"}, _await, step, started)
    return {"terminal_id": started["terminal_id"], "last_message": answer}


# -- the API inside a run ------------------------------------------------------------------------------

def agent_step(step: Step) -> str:
    """``run_step``: start the agent (checkpoint), then wait for its answer (checkpoint)."""
    _require_run_or_child()
    spec = _run.get()
    if step.working_directory is None and spec is not None:
        step = Step(profile=step.profile, prompt=step.prompt, provider=step.provider, timeout=step.timeout,
                    label=step.label, working_directory=spec.working_directory)
    started = DBOS.run_step({"name": f"start:{step.name}"}, _start, step)
    return DBOS.run_step({"name": f"await:{step.name}"}, _await, step, started)


def parallel_steps(steps: Sequence[Step], limit: int | None) -> list[str]:
    """``assign_step``: each step a child workflow on its profile's queue (the per-profile limit), at
    most ``limit`` of this run's in flight at once (the per-workflow limit); answers in order."""
    engine = current()
    window = limit if limit is not None else engine.run_limit()
    if window < 1:
        raise BadRunInput(f"invalid limit {limit}: at least 1 step must run at a time")
    spec = _run.get()
    results: list[str | None] = [None] * len(steps)
    inflight: list[tuple[int, Any]] = []
    following = 0
    while following < len(steps) or inflight:
        while following < len(steps) and len(inflight) < window:
            step = steps[following]
            if step.working_directory is None and spec is not None:
                step = Step(profile=step.profile, prompt=step.prompt, provider=step.provider,
                            timeout=step.timeout, label=step.label, working_directory=spec.working_directory)
            handle = DBOS.enqueue_workflow(engine.queue(step.profile), step_workflow, step)
            inflight.append((following, handle))
            following += 1
        done = DBOS.wait_first([handle for _, handle in inflight])
        for position, (index, handle) in enumerate(inflight):
            if handle.workflow_id == done.workflow_id:
                results[index] = handle.get_result()
                del inflight[position]
                break
    return [r if r is not None else "" for r in results]


def ask(question: str, timeout: float | None, default: bool | None) -> Decision:
    """``approve``: publish the question, block until an answer arrives (or the policy's timeout)."""
    _require_run()
    if not isinstance(question, str) or not question.strip():
        raise BadRunInput("approve() needs a question (non-empty text)")
    run_id = DBOS.workflow_id
    DBOS.set_event(APPROVAL_EVENT, {"question": question, "asked_at": time.time()})
    DBOS.run_step({"name": "approval:asked"}, _report_asked, run_id, question)
    answer = DBOS.recv(APPROVAL_TOPIC, timeout_seconds=_FOREVER if timeout is None else float(timeout))
    if answer is None:
        approved = bool(default) if default is not None else False
        decision = Decision(approved=approved, by="policy",
                            note=f"no answer within {timeout} s" if timeout is not None else "no answer")
    else:
        decision = Decision(approved=bool(answer.get("approved")), note=str(answer.get("note") or ""),
                            by=str(answer.get("by") or ""))
    DBOS.set_event(APPROVAL_EVENT, None)
    DBOS.run_step({"name": "approval:answered"}, _report_answered, run_id, question, decision)
    return decision


def publish(key: str, value: Any) -> None:
    """``emit``: make ``value`` readable as the run's output ``key`` (the last value wins)."""
    _require_run()
    if not isinstance(key, str) or not key or len(key) > 64:
        raise BadRunInput(f"invalid output key {key!r}: 1 to 64 characters")
    _check_json(value, f"output {key!r}")
    DBOS.set_event(OUTPUT_PREFIX + key, value)


# -- steps -------------------------------------------------------------------------------------------

def session_for(run_id: str, step_id: int) -> str:
    """The session a step's agent runs in: derived from the run and the step's place in it, so a
    repeated ``start`` finds the agent the first attempt started."""
    digest = hashlib.sha256(f"{run_id}:{step_id}".encode()).hexdigest()[:12]
    return f"cao-wf-{digest}"


def _start(step: Step) -> dict[str, str]:
    engine = current()
    kernel = engine.kernel
    run_id, step_id = DBOS.workflow_id, DBOS.step_id
    assert run_id is not None and step_id is not None
    session = session_for(run_id, step_id)
    terminal = _existing(session)
    if terminal is None:
        request = CreateTerminalRequest(agent_profile=step.profile, provider=step.provider,
                                        session_name=session, working_directory=step.working_directory,
                                        env=dict(getattr(step, "env", None) or {}))
        terminal = engine.call(lambda: kernel.create_session(request))
        engine.call(lambda: kernel.send_input(terminal.id, step.prompt))
    elif engine.call(lambda: kernel.get_status(terminal.id)).status == TerminalStatus.IDLE:
        # Started before the crash but never given its task.
        engine.call(lambda: kernel.send_input(terminal.id, step.prompt))
    engine.report("workflow.step", {
        "run_id": _root(run_id), "step": step.name, "state": "started", "name": step.name,
        "terminal_id": terminal.id, "session_name": session,
        "summary": summary(f"{step.profile} started: {step.prompt}")})
    return {"session": session, "terminal_id": terminal.id}


def _script(spec: RunSpec) -> Any:
    from cao_server.settings import advertised_host, base_url, home_dir

    from . import scripts
    from .engine import ServerStopping

    engine = current()
    run_id = DBOS.workflow_id
    assert run_id is not None
    settings = getattr(engine.kernel, "settings", None) or {}
    home = home_dir(settings, engine.kernel)
    url = base_url(advertised_host(str(settings.get("CAO_API_HOST") or "127.0.0.1")),
                   settings.get("CAO_API_PORT") or 9889)

    def should_stop() -> None:
        if engine.stopping.is_set():
            raise ServerStopping()  # the folder stays: the next start kills what is left, then goes on
        if _cancelled(run_id):
            scripts.finish(home, run_id)
            raise DBOSWorkflowCancelledError(f"workflow {run_id} was cancelled")

    def settle(code: int) -> None:
        should_stop()
        if code != 0 and not _serving(url):
            # The script failed because the server is going down: its listener closes, and its open
            # requests are cut, seconds before the engine hears of the stop. The run is interrupted,
            # not failed; the next start runs the script again.
            engine.stopping.wait(_SHUTDOWN_WAIT)
            should_stop()

    limit = engine.settings.get("CAO_WORKFLOW_SCRIPT_TIMEOUT")
    try:
        output = scripts.run(home=home, run_id=run_id, text=spec.source.text, inputs=spec.inputs,
                             base_url=url, working_directory=spec.working_directory,
                             timeout=float(limit) if limit else scripts.DEFAULT_TIMEOUT,
                             should_stop=should_stop, settle=settle)
    except Exception:
        scripts.finish(home, run_id)
        raise
    scripts.finish(home, run_id)
    return output


def _serving(url: str) -> bool:
    """Whether the server still takes connections at ``url``."""
    import socket
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    try:
        socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 80), timeout=1).close()
    except OSError:
        return False
    return True


def _existing(session: str) -> Any:
    engine = current()
    try:
        _info, terminals = engine.call(lambda: engine.kernel.get_session(session))
    except NotFound:
        return None
    return terminals[0] if terminals else None


def _await(step: Step, started: dict[str, str]) -> str:
    engine = current()
    kernel = engine.kernel
    run_id = DBOS.workflow_id
    assert run_id is not None
    terminal_id, session = started["terminal_id"], started["session"]
    deadline = time.monotonic() + step.timeout
    wanted = (TerminalStatus.COMPLETED, TerminalStatus.ERROR)
    while True:
        if _cancelled(run_id):
            _close(session)
            raise DBOSWorkflowCancelledError(f"workflow {run_id} was cancelled")
        left = deadline - time.monotonic()
        if left <= 0:
            _close(session)
            raise StepTimedOut(f"step {step.name!r}: agent {step.profile!r} (terminal {terminal_id}) gave "
                               f"no answer within {step.timeout:g} s")
        try:
            report = engine.call(lambda: kernel.wait_for_status(terminal_id, wanted, min(_WAIT_SLICE, left)))
        except Timeout:
            continue
        except NotFound:
            raise StepFailed(f"step {step.name!r}: the terminal of agent {step.profile!r} ({terminal_id}) is "
                             f"gone before it answered") from None
        break
    if report.status == TerminalStatus.ERROR:
        _close(session)
        raise StepFailed(f"step {step.name!r}: agent {step.profile!r} (terminal {terminal_id}) ended in "
                         f"error")
    answer = engine.call(lambda: kernel.get_output(terminal_id, "last"))
    _close(session)
    engine.report("workflow.step", {
        "run_id": _root(run_id), "step": step.name, "state": "completed", "name": step.name,
        "terminal_id": terminal_id, "summary": summary(answer)})
    return answer


def _close(session: str) -> None:
    engine = current()
    try:
        engine.call(lambda: engine.kernel.delete_session(session))
    except NotFound:
        pass


def _cancelled(run_id: str) -> bool:
    cancelled = current().cancelled
    return run_id in cancelled or any(run_id.startswith(parent + "-") for parent in cancelled)


def _root(run_id: str) -> str:
    """The run a step belongs to: the run itself, or the parent of a parallel step's child workflow
    (children are ``<run>-<n>``)."""
    return run_id if _run.get() is not None else run_id.rsplit("-", 1)[0]


def _report_asked(run_id: str, question: str) -> None:
    current().report("workflow.approval", {"run_id": run_id, "state": "waiting", "step": "approval",
                                           "summary": summary(question)})


def _report_answered(run_id: str, question: str, decision: Decision) -> None:
    state = "approved" if decision.approved else "rejected"
    current().report("workflow.approval", {"run_id": run_id, "state": state, "step": "approval",
                                           "summary": summary(f"{state} by {decision.by or 'someone'}: "
                                                              f"{decision.note or question}")})


def _require_run() -> None:
    if _run.get() is None:
        raise RuntimeError("this cao_workflows call works only inside a running workflow (or in parallel "
                           "steps, run_step)")


def _require_run_or_child() -> None:
    if DBOS.workflow_id is None:
        raise RuntimeError("run_step works only inside a running workflow")


def _check_json(value: Any, what: str) -> None:
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise BadRunInput(f"{what} must be plain JSON (text, numbers, lists, objects): {exc}") from None


def as_steps(items: Iterable[Any]) -> list[Step]:
    """``assign_step``'s argument: ``Step`` records or ``(profile, prompt)`` pairs."""
    steps: list[Step] = []
    for item in items:
        if isinstance(item, Step):
            steps.append(item)
        elif isinstance(item, tuple | list) and len(item) == 2:
            steps.append(Step(profile=str(item[0]), prompt=str(item[1])))
        else:
            raise BadRunInput(f"a parallel step must be a Step or a (profile, prompt) pair, got {item!r}")
    return steps
