"""The HTTP routes, at upstream's paths. Each reads its request, calls :mod:`cao_workflows.service`
and returns JSON; a ``CaoError`` becomes its HTTP status with the message."""

from __future__ import annotations

import json
from typing import Any

from cao_hookspecs import RouteSpec

from . import names, service
from .source import WorkflowSource, read_file

#: The longest a blocking call (run, wait) holds a request.
MAX_WAIT = 3600.0


async def _body(request: Any) -> dict[str, Any]:
    raw = await request.body()
    if not raw:
        return {}
    try:
        data = json.loads(raw)
    except ValueError:
        raise names.BadRunInput("the request body is not JSON") from None
    if not isinstance(data, dict):
        raise names.BadRunInput("the request body must be a JSON object")
    return data


def source_from(body: dict[str, Any]) -> WorkflowSource:
    """The workflow a request names: its text (``source`` and ``name``, as the CLI sends it, so a
    server on another machine runs the caller's file), or a ``path`` the server reads."""
    text, path = body.get("source"), body.get("path")
    if text is not None:
        if not isinstance(text, str):
            raise names.BadRunInput("'source' must be the workflow file's text")
        name = names.workflow_name(body.get("name"))
        return WorkflowSource(name=name, path=str(path or f"<{name}>"), text=text)
    if not isinstance(path, str):
        raise names.BadRunInput("name the workflow: 'path' (a file the server reads) or 'source' and 'name'")
    base = body.get("working_directory")
    return read_file(path, base=base if isinstance(base, str) else None)


def _seconds(value: Any, default: float) -> float:
    if value is None:
        return default
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        raise names.BadRunInput(f"invalid timeout {value!r}: a number of seconds") from None
    if not 0 <= seconds <= MAX_WAIT:
        raise names.BadRunInput(f"invalid timeout {seconds:g}: 0 to {MAX_WAIT:g} seconds")
    return seconds


async def validate(request: Any, kernel: Any) -> Any:
    return await service.validate(kernel, source_from(await _body(request)))


async def _submit(request: Any, kernel: Any) -> dict[str, Any]:
    body = await _body(request)
    workdir = body.get("working_directory")
    return await service.submit(kernel, source_from(body), body.get("inputs"), run_id=body.get("run_id"),
                                working_directory=workdir if isinstance(workdir, str) else None)


async def submit(request: Any, kernel: Any) -> Any:
    from starlette.responses import JSONResponse

    record = await _submit(request, kernel)
    links = {k: f"/workflows/runs/{record['run_id']}{tail}" for k, tail in
             (("self", ""), ("events", "/events"), ("result", "/result"))}
    return JSONResponse({**record, "links": links}, status_code=202)


async def run(request: Any, kernel: Any) -> Any:
    timeout = _seconds(request.query_params.get("timeout"), 600.0)
    record = await _submit(request, kernel)
    return await service.wait(kernel, record["run_id"], timeout)


async def runs(request: Any, kernel: Any) -> Any:
    raw = request.query_params.get("limit", "50")
    try:
        limit = int(raw)
    except ValueError:
        raise names.BadRunInput(f"invalid limit {raw!r}: a whole number") from None
    return await service.list_runs(kernel, state=request.query_params.get("state"), limit=limit)


async def status(request: Any, kernel: Any) -> Any:
    return await service.status(kernel, request.path_params["run_id"])


async def events(request: Any, kernel: Any) -> Any:
    return await service.events(kernel, request.path_params["run_id"])


async def result(request: Any, kernel: Any) -> Any:
    return await service.result(kernel, request.path_params["run_id"])


async def wait(request: Any, kernel: Any) -> Any:
    timeout = _seconds(request.query_params.get("timeout"), 600.0)
    return await service.wait(kernel, request.path_params["run_id"], timeout)


async def cancel(request: Any, kernel: Any) -> Any:
    return await service.cancel(kernel, request.path_params["run_id"])


async def resume(request: Any, kernel: Any) -> Any:
    return await service.resume(kernel, request.path_params["run_id"])


async def approve(request: Any, kernel: Any) -> Any:
    body = await _body(request)
    approved = body.get("approved", True)
    note = body.get("note") or ""
    if not isinstance(approved, bool) or not isinstance(note, str):
        raise names.BadRunInput("'approved' must be true or false and 'note' text")
    by = body.get("by") if isinstance(body.get("by"), str) else "http"
    return await service.answer(kernel, request.path_params["run_id"], approved=approved, note=note,
                                by=str(by)[:32])


async def run_step(request: Any, kernel: Any) -> Any:
    """Upstream's run-step route; a failed worker answers 502 (crashed) or 504 (ran long) with
    ``detail: {message, kind, terminal_id}``, as upstream's does."""
    from starlette.responses import JSONResponse

    from . import steps
    from .errors import StepFailed, StepTimedOut

    call = steps.parse(await _body(request))
    try:
        return await steps.run_step(kernel, call)
    except StepFailed as exc:
        kind = "timeout" if isinstance(exc, StepTimedOut) else "error"
        detail = {"message": str(exc), "kind": kind, "terminal_id": getattr(exc, "terminal_id", None)}
        return JSONResponse({"detail": detail, "error": type(exc).__name__}, status_code=exc.http_status)


def route_specs() -> list[RouteSpec]:
    run_path = "/workflows/runs/{run_id}"
    table = [
        ("workflows_validate", "/workflows/validate", validate, "POST", "Check a workflow file"),
        ("workflows_runs", "/workflows/runs", runs, "GET", "List workflow runs, newest first"),
        ("workflows_run", "/workflows/runs", run, "POST", "Start a run and wait for it to end"),
        ("workflows_submit", "/workflows/runs:submit", submit, "POST", "Start a run; answer at once"),
        ("workflows_status", run_path, status, "GET", "A run's state, outputs and open question"),
        ("workflows_events", run_path + "/events", events, "GET", "A run's journaled steps"),
        ("workflows_result", run_path + "/result", result, "GET", "A finished run's result"),
        ("workflows_wait", run_path + "/wait", wait, "GET", "Wait until a run ends"),
        ("workflows_cancel", run_path + "/cancel", cancel, "POST", "Cancel a run"),
        ("workflows_resume", run_path + "/resume", resume, "POST", "Resume a cancelled or failed run"),
        ("workflows_approve", run_path + "/approve", approve, "POST", "Answer the question a run asks"),
        ("workflows_run_step", "/terminals/run-step", run_step, "POST",
         "Journal one agent step of a workflow script (cao-server hands it the run-step calls whose "
         "env_vars name a workflow step)"),
    ]
    return [RouteSpec(name=name, path=path, endpoint=endpoint, methods=(method,), description=text)
            for name, path, endpoint, method, text in table]
