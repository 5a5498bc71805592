"""``POST /terminals/run-step``: upstream's one-request handoff, and the door for workflow steps.

Upstream's ``cao-mcp-server`` (and its ``cao agent handoff``) hands off with a single JSON request to this
route: ``{provider, agent, prompt, timeout, caller_id, session_name, job_id, ...}``. cao answers it with
``KernelAPI.handoff``, so the worker is made, gated on its MCP connection, asked to exit and removed
exactly as for cao's own handoff, and answers upstream's way: ``{terminal_id, last_message, status:
"completed", replayed: false}``; a worker that failed answers 502, one that ran long 504, each with
``detail: {message, kind, terminal_id}`` (the worker is kept for inspection, as upstream keeps it).
``job_id`` is the handoff's call id: a retry of the same request joins the call instead of starting a
second worker. With ``reuse_terminal_id`` (upstream's ``cao agent handoff`` makes its worker first, to
show its id) the step runs on that terminal and leaves it to its caller.

A request whose ``env_vars`` name a workflow run (upstream's ``CAO_WORKFLOW_*``) is a step of a workflow
script: it goes to the route a plugin registered at this same path (cao-workflows journals it there),
and is refused with a clear 400 when none did. So the route serves both callers, and a handoff needs no
workflow plugin.

Fields cao's handoff cannot honour yet are refused with 400 naming them, never silently dropped.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from cao_hookspecs.errors import AgentFailed, InvalidInput, Timeout
from cao_hookspecs.names import PROFILE_NAME_RE, json_pattern

from . import validation
from .endpoints import ID_PATTERN, TEXT, Call, Context, Endpoint, Reply, worker_choices
from .errors import BadParameter
from .params import Param

if TYPE_CHECKING:
    from cao_hookspecs import DelegationResult, RouteSpec

PATH = "/terminals/run-step"
WORKFLOW_PREFIX = "CAO_WORKFLOW_"
JOB_ID_PATTERN = "^[0-9a-f]{32}$"
RECOVERY = ("idempotent", "reconcile", "manual")
# What the kernel's handoff says when its wait ran out or its worker failed (cao_kernel.orchestration);
# the answer's status and kind follow from it.
TIMED_OUT, ERRORED = "Handoff timed out", "Handoff failed: worker errored"
IDLE_SETTLE = 0.4

PARAMS = (
    Param("provider", required=True, description="the worker's provider; must be the one cao picks: the "
          "profile's, else the caller's"),
    Param("agent", required=True, description="agent profile of the worker",
          rule={"pattern": json_pattern(PROFILE_NAME_RE)}),
    Param("prompt", required=True, max_bytes=validation.MAX_INPUT_BYTES,
          description="the task, at most 1 MiB", rule=TEXT),
    Param("timeout", type="number", default=600.0, description="seconds to wait for the answer (a "
          "handoff: 1 to 3600)", rule={"minimum": 0, "exclusiveMinimum": True}),
    Param("caller_id", pattern=ID_PATTERN, nullable=True,
          description="the supervisor's terminal: the worker joins its session and starts in its folder"),
    Param("session_name", nullable=True, description="the caller's session (upstream sends it); with no "
          "caller_id a handoff starts a session of its own"),
    Param("job_id", pattern=JOB_ID_PATTERN, nullable=True,
          description="upstream's job id (32 lowercase hex): a retry with the same id joins the call"),
    Param("description", nullable=True, description="a note on the worker's job (accepted, not stored)"),
    Param("allowed_tools", type="list", nullable=True,
          description="accepted; cao resolves the worker's tools from its profile and the caller's"),
    Param("teardown", type="boolean", default=True,
          description="must be true: a handoff's worker is removed"),
    Param("env_vars", type="map", body_only=True, nullable=True,
          description="CAO_WORKFLOW_RUN_ID, CAO_WORKFLOW_GENERATION, CAO_WORKFLOW_STEP_ID: a workflow step, "
          "served by the workflow plugin"),
    Param("recovery", enum=RECOVERY, nullable=True, description="a workflow step's recovery policy"),
    Param("working_directory", nullable=True, description="a workflow step's folder (a handoff starts in "
          "its caller's)"),
    Param("reuse_terminal_id", pattern=ID_PATTERN, nullable=True,
          description="run the step on this existing terminal (its caller removes it; teardown is ignored)"),
    Param("use_worktree", type="boolean", default=False,
          description="the worker runs in its own git worktree made from its caller's HEAD (not with "
          "reuse_terminal_id)"),
    Param("model", nullable=True, description="the model the worker runs on instead of its profile's (not "
          "with reuse_terminal_id; 400 where its provider cannot choose one)"),
    Param("engine", nullable=True, description="not supported: refused"),
    Param("claim_id", pattern=JOB_ID_PATTERN, nullable=True, description="not supported: refused"),
)

ANSWER = {
    "type": "object",
    "required": ["terminal_id", "last_message", "status", "replayed"],
    "properties": {
        "terminal_id": {"type": "string", "pattern": ID_PATTERN},
        "last_message": {"type": "string"},
        "status": {"type": "string", "enum": ["completed"]},
        "replayed": {"type": "boolean"},
    },
}


def split_journal(specs: Iterable[RouteSpec]) -> tuple[RouteSpec | None, list[RouteSpec]]:
    """A plugin's route at this path (the workflow step journal), and the other plugin routes."""
    journal, rest = None, []
    for spec in specs:
        methods = {m.upper() for m in spec.methods}
        if journal is None and spec.path == PATH and "POST" in methods and not (spec.asgi or spec.websocket):
            journal = spec
        else:
            rest.append(spec)
    return journal, rest


def _refuse_unsupported(args: dict[str, Any]) -> None:
    problems = []
    if args["teardown"] is False and args["reuse_terminal_id"] is None:
        problems.append("'teardown': false is not supported: a handoff's worker is removed when it answers "
                        "(use assign for a worker that stays)")
    if args["reuse_terminal_id"] is not None:
        for name in ("use_worktree", "model"):
            if args[name]:
                problems.append(f"{name!r} chooses how a worker starts: not with 'reuse_terminal_id', "
                                f"whose worker runs already")
    for name in ("engine", "claim_id"):
        if args[name] not in (None, ""):
            problems.append(f"{name!r} is not supported by this server's handoff")
    if args["working_directory"] is not None:
        problems.append("'working_directory' is not supported for a handoff: the worker starts in its "
                        "caller's folder")
    if problems:
        raise InvalidInput("; ".join(problems))


async def _check_provider(ctx: Context, args: dict[str, Any]) -> None:
    """The provider asked for must be the one cao's handoff will run: a different CLI must not start in
    its place unnoticed."""
    providers = sorted(p["name"] for p in await ctx.kernel.list_providers())
    wanted = args["provider"]
    if wanted not in providers:
        raise InvalidInput(f"unknown provider {wanted!r}: one of {', '.join(providers)}")
    profile = await ctx.kernel.get_profile(validation.profile_name(args["agent"]))
    picked, why = profile.provider, f"profile {args['agent']!r} names it"
    caller = None
    if args["caller_id"] is not None:
        caller = await ctx.kernel.get_terminal(args["caller_id"])
        if picked is None:
            picked, why = caller.provider, f"the caller {caller.id} runs it"
    if picked is not None and picked != wanted:
        raise InvalidInput(f"provider {wanted!r} asked for, but cao's handoff runs {picked!r} ({why})")
    session = args["session_name"]
    if session is not None and caller is None:
        raise InvalidInput("'session_name' needs 'caller_id': a handoff joins its caller's session")
    if session is not None and caller is not None and session != caller.session_name:
        raise InvalidInput(f"session {session!r} is not the caller's ({caller.session_name!r})")


def _failed(status: int, kind: str, message: str, terminal_id: str | None) -> Reply:
    error = "Timeout" if kind == "timeout" else "AgentFailed"
    return Reply(status, {"detail": {"message": message, "kind": kind, "terminal_id": terminal_id},
                          "error": error})


def _answer(result: DelegationResult) -> Any:
    if result.success:
        return {"terminal_id": result.terminal_id, "last_message": result.output or "", "status": "completed",
                "replayed": False}
    if result.message.startswith(TIMED_OUT):
        return _failed(504, "timeout", result.message, result.terminal_id)
    if result.message.startswith(ERRORED):
        return _failed(502, "error", result.message, result.terminal_id)
    # The worker finished but its answer could not be read: upstream's plain 500.
    return Reply(500, {"detail": result.message, "error": "AgentFailed"})


async def run_step(ctx: Context, call: Call) -> Any:
    args = call.args
    if args["env_vars"]:
        return await _workflow_step(ctx, call)
    await _refuse_unknown_fields(call)
    if args["timeout"] <= 0:  # upstream's 422; the handoff's own range (1 to 3600) is a 400 below
        raise BadParameter(f"parameter 'timeout' must be above 0, got {args['timeout']:g}")
    _refuse_unsupported(args)
    if args["reuse_terminal_id"] is not None:
        return await _step_on(ctx, args)
    await _check_provider(ctx, args)
    try:
        result = await ctx.kernel.handoff(args["caller_id"], args["agent"], args["prompt"],
                                          timeout=args["timeout"], call_id=args["job_id"],
                                          **worker_choices(args))
    except Timeout as exc:  # the worker never became ready
        return _failed(504, "timeout", str(exc), None)
    except AgentFailed as exc:  # the worker failed to start
        return _failed(502, "error", str(exc), None)
    return _answer(result)


async def _step_on(ctx: Context, args: dict[str, Any]) -> Any:
    """Upstream's ``cao agent handoff``: the worker was made first (so its id could be shown), and the step
    runs on it. Waits as cao's handoff does; the worker stays (its caller removes it)."""
    from cao_hookspecs import TerminalStatus as S

    terminal = await ctx.kernel.get_terminal(args["reuse_terminal_id"])
    if terminal.provider != args["provider"]:
        raise InvalidInput(f"provider {args['provider']!r} asked for, but terminal {terminal.id} runs "
                           f"{terminal.provider!r}")
    deadline = time.monotonic() + args["timeout"]
    try:
        await ctx.kernel.wait_for_status(terminal.id, {S.IDLE, S.COMPLETED}, _left(deadline))
        await ctx.kernel.send_input(terminal.id, args["prompt"])
        while True:
            report = await ctx.kernel.wait_for_status(terminal.id, {S.IDLE, S.COMPLETED, S.ERROR},
                                                      _left(deadline))
            if report.status == S.ERROR:
                failed = f"Handoff failed: worker errored ({report.evidence})"
                return _failed(502, "error", failed, terminal.id)
            if report.status == S.COMPLETED:
                break
            try:  # idle must hold (some CLIs flash idle mid-turn), as for cao's own handoff
                await ctx.kernel.wait_for_status(terminal.id, {s for s in S if s != S.IDLE},
                                                 min(IDLE_SETTLE, _left(deadline)))
            except Timeout:
                break
    except Timeout:
        return _failed(504, "timeout", f"Handoff timed out after {args['timeout']:g} seconds", terminal.id)
    output = await ctx.kernel.get_output(terminal.id, "last")
    return {"terminal_id": terminal.id, "last_message": output, "status": "completed", "replayed": False}


def _left(deadline: float) -> float:
    return max(0.05, deadline - time.monotonic())


async def _workflow_step(ctx: Context, call: Call) -> Any:
    journal = ctx.step_journal
    if journal is None:
        names = ", ".join(sorted(call.args["env_vars"]))
        raise InvalidInput(f"env_vars ({names}) are only for a workflow script's steps ({WORKFLOW_PREFIX}"
                           "RUN_ID, _GENERATION, _STEP_ID), and this server journals none: install "
                           "cao-workflows")
    # The journal checks the workflow fields itself, reading the body from a request of its own.
    return await journal.endpoint(_replayed(call.request), ctx.kernel)


def _replayed(request: Any) -> Any:
    """A request like ``request`` whose body can be read again (its own stream was read by the server)."""
    from starlette.requests import Request

    raw = request.scope.get("cao.raw_body", b"")
    sent = False

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": raw, "more_body": False}

    return Request(request.scope, receive)


async def _refuse_unknown_fields(call: Call) -> None:
    """Upstream's clients send only the fields above; an unknown one is a mistake worth naming (a typo
    would otherwise run a step without what it meant to ask)."""
    raw = call.request.scope.get("cao.raw_body", b"")  # kept by the body reader
    body = json.loads(raw) if raw.strip() else {}
    unknown = sorted(set(body) - {param.name for param in PARAMS}) if isinstance(body, dict) else []
    if unknown:
        raise BadParameter(f"unknown run-step field(s): {', '.join(unknown)}")


RUN_STEP = Endpoint(
    "POST",
    PATH,
    "run_step",
    "Upstream's handoff in one request (or a workflow script's step)",
    run_step,
    "orchestration",
    params=PARAMS,
    response=ANSWER,
    errors=(400, 403, 404, 413, 422, 500, 502, 504),
    error_schemas={502: "StepFailure", 504: "StepFailure"},
)

__all__ = ["PATH", "RUN_STEP", "split_journal"]
