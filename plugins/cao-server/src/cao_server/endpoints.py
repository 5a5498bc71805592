"""The built-in routes: upstream's paths, parameters, answers and status codes, plus cao's orchestration
routes. Each route is one ``Endpoint`` record; ``app`` mounts them and ``openapi`` describes them.

A handler gets the server context (kernel and settings) and the parsed call, and returns JSON-ready
data (sent with the endpoint's status) or a ``Reply`` for a different status.
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from cao_hookspecs import CreateTerminalRequest, MessageState, NotFound, StatusReport, Terminal, TerminalStatus
from cao_hookspecs.activity import ACTIVITY_KIND, MAX_ACTIVITY_BYTES
from cao_hookspecs.errors import CaoError, InvalidInput, PluginError
from cao_hookspecs.handoff_jobs import JOB_ID_PATTERN, job_id_problem
from cao_hookspecs.names import (
    BLANK_CHARS,
    CALL_ID_PATTERN,
    KEY_RE,
    MAX_ANSWER_CHARS,
    MODEL_RE,
    PROFILE_NAME_RE,
    PROMPT_ID_PATTERN,
    SESSION_ARG_RE,
    TERMINAL_ID_PATTERN,
    TEXT_RE,
    json_pattern,
)

from . import validation, wire
from .converter import to_json
from .errors import BadParameter, NotSupported
from .params import Param
from .schemas import MESSAGE_STATES, ORCHESTRATION_TYPES, PROMPT_POLICY, STATUSES, array_of, ref

if TYPE_CHECKING:
    from starlette.requests import Request

    from .settings import ServerSettings

ID_PATTERN = TERMINAL_ID_PATTERN
MESSAGE_ID_RE = re.compile(r"^[1-9][0-9]{0,17}\Z")
# The sender recorded for an initial message given at creation (no terminal sent it).
USER_SENDER = "user"


@dataclasses.dataclass(frozen=True)
class Context:
    """What handlers share: the kernel behind the server and the server's settings."""

    kernel: Any
    settings: ServerSettings
    # terminal id -> id of the initial message it was created with, for upstream's `initial_delivery`.
    initial: dict[str, int] = dataclasses.field(default_factory=dict)
    # The event hub (``cao_server.events.EventHub``), when the kernel publishes events.
    events: Any = None
    # A plugin's route at ``POST /terminals/run-step``: it serves the calls naming a workflow step.
    step_journal: Any = None


@dataclasses.dataclass(frozen=True)
class Call:
    """One parsed request: checked path values, parameters, and the raw request for anything else."""

    path: dict[str, str]
    args: dict[str, Any]
    request: Request


@dataclasses.dataclass(frozen=True)
class Reply:
    status: int
    data: Any


Handler = Callable[[Context, Call], Awaitable[Any]]


@dataclasses.dataclass(frozen=True)
class Endpoint:
    """A built-in route. ``errors`` lists the error statuses it may answer, for the OpenAPI document."""

    method: str
    path: str
    name: str
    summary: str
    handler: Handler
    tag: str
    params: tuple[Param, ...] = ()
    status: int = 200
    response: dict[str, Any] = dataclasses.field(default_factory=lambda: ref("Success"))
    errors: tuple[int, ...] = ()
    #: What a success answers with, for the document (a handler returning text returns a ``Response``).
    media_type: str = "application/json"
    # An error status whose body is not the plain ``Error`` shape, by status: the schema's name.
    error_schemas: dict[int, str] = dataclasses.field(default_factory=dict)


# The steps an MCP client may report with its connection, as Unix times (see KernelAPI.mcp_connected).
MCP_STAGES = {"started": "when the MCP server process started",
              "asked": "when the agent asked it to initialize", "initialized": "when it answered initialize",
              "listed": "when it handed back the last list the agent asked for"}

ACTIVITY_KIND_RULE = f"^{ACTIVITY_KIND.pattern}$"

# Who answered a prompt: one line, not blank.
BY_PATTERN = f"^[{BLANK_CHARS}]*[^{BLANK_CHARS}\\x00-\\x1f][^\\x00-\\x1f]*$"

# -- parameters used by several routes -------------------------------------------------------------

# Rules the kernel or a handler checks (a 400), stated in the document for clients and fuzzers.
TEXT = {"pattern": json_pattern(TEXT_RE)}


# install_profile's rule: around blanks, an https URL (any case) or a profile name.
INSTALL_SOURCE = {
    "pattern": f"^[{BLANK_CHARS}]*(?:[Hh][Tt][Tt][Pp][Ss]://[\\s\\S]*|{json_pattern(PROFILE_NAME_RE)[1:-1]})"
               f"[{BLANK_CHARS}]*$"
}


def _or_empty(rule: re.Pattern[str]) -> dict[str, str]:
    # For fields where an empty value means "the default" (the profile's model, a generated name).
    return {"pattern": f"^(?:{json_pattern(rule)[1:-1]})?$"}


AGENT_PROFILE = Param("agent_profile", required=True, description="agent profile name",
                      rule={"pattern": json_pattern(PROFILE_NAME_RE)})
PROVIDER = Param(
    "provider", description="provider (agent CLI); default: the profile's, else CAO_DEFAULT_PROVIDER"
)
WORKDIR = Param("working_directory", description="folder the agent starts in (must exist; not a system root)")
ALLOWED_TOOLS = Param("allowed_tools", type="list", description="tools the agent may use")
MODEL = Param("model", description="model override, letters/digits/._:/- up to 128",
              rule=_or_empty(MODEL_RE))
YOLO = Param("yolo", type="boolean", default=False, description="let the agent skip its permission prompts")
WAIT_READY = Param(
    "wait_ready", type="boolean", default=True, description="answer only once the agent is ready for input"
)
ENV_VARS = Param("env_vars", type="map", body_only=True, description="extra environment for the terminal")
INITIAL_MESSAGE = Param(
    "initial_message",
    max_bytes=validation.MAX_INPUT_BYTES,
    description="queued for the agent; the call then answers without waiting for it",
    rule=TEXT,
)
MESSAGE = Param(
    "message", required=True, max_bytes=validation.MAX_INPUT_BYTES, description="text, at most 1 MiB",
    rule=TEXT,
)
IDEMPOTENCY_KEY = Param("idempotency_key", description="a retried send with the same key queues nothing new")
CALL_ID = Param(
    "call_id",
    pattern=CALL_ID_PATTERN,
    description="a retry with the same id (same caller) joins or resumes the call, across server restarts",
)
USE_WORKTREE = Param(
    "use_worktree", type="boolean", default=False,
    description="run the agent in its own git worktree and branch, made from the HEAD of the repository "
                "holding its working directory (400 when that folder is not in a git repository)",
)
WORKTREE_CHANGES = Param(
    "worktree_changes", type="boolean", default=False,
    description="with use_worktree: copy the uncommitted changes (staged, unstaged, untracked files) of "
                "that checkout into the worktree",
)
JOB_ID = Param(
    "job_id",
    pattern=JOB_ID_PATTERN,
    description="32 lowercase hex chosen by the caller: the handoff then runs to its end even if the caller "
                "stops waiting, its outcome kept under this id for GET /handoff-results/{job_id}",
)
HANDOFF_TIMEOUT = Param(
    "timeout",
    type="number",
    default=600.0,
    minimum=1,
    maximum=3600,
    description="seconds to wait for the worker's answer",
)


def _creation_request(args: dict[str, Any], **fields: Any) -> CreateTerminalRequest:
    # The route's own parameters (initial message, waiting) are not the request's fields and stay out.
    return wire.creation_from_json({**args, **fields})


async def _with_reports(kernel: Any, terminals: list[Terminal]) -> list[dict[str, Any]]:
    async def one(terminal: Terminal) -> dict[str, Any]:
        try:
            report: StatusReport | None = await kernel.get_status(terminal.id)
        except NotFound:  # deleted between the listing and this read
            report = None
        return wire.terminal_json(terminal, report)

    from .terminal_routes import with_labels

    return await with_labels(kernel, list(await asyncio.gather(*(one(t) for t in terminals))))


async def _queue_initial(
    ctx: Context, terminal: Terminal, text: str | None, *, rollback: Callable[[], Awaitable[Any]]
) -> None:
    if text is None:
        return
    try:
        message = await ctx.kernel.send_message(USER_SENDER, terminal.id, text)
        ctx.initial[terminal.id] = message.id
    except BaseException:
        # The message is part of the request: without it the terminal must not stay behind.
        await rollback()
        raise


# -- health ----------------------------------------------------------------------------------------


async def health(ctx: Context, call: Call) -> Any:
    from . import __version__

    return {
        "status": "ok",
        "service": "cli-agent-orchestrator",
        "version": __version__,
        "terminal_backend": ctx.settings.terminal_backend,
        "components": {"cao": "ok"},
    }


# -- sessions --------------------------------------------------------------------------------------


async def create_session(ctx: Context, call: Call) -> Any:
    args = call.args
    initial = args["initial_message"]
    if initial is not None and not initial.strip():
        raise InvalidInput("initial_message must not be empty")
    request = _creation_request(args, session_name=args["session_name"])
    terminal = await ctx.kernel.create_session(request, wait_ready=args["wait_ready"] and initial is None)
    await _queue_initial(
        ctx, terminal, initial, rollback=lambda: ctx.kernel.delete_session(terminal.session_name)
    )
    return Reply(201, _with_initial(ctx, wire.terminal_json(terminal)))


async def list_sessions(ctx: Context, call: Call) -> Any:
    sessions = await ctx.kernel.list_sessions()
    members = await asyncio.gather(*(ctx.kernel.list_terminals(info.name) for info in sessions))
    return [wire.session_json(info, terms) for info, terms in zip(sessions, members, strict=True)]


async def get_session(ctx: Context, call: Call) -> Any:
    info, terminals = await ctx.kernel.get_session(call.path["session_name"])
    return {
        "session": wire.session_json(info, terminals),
        "terminals": await _with_reports(ctx.kernel, terminals),
    }


async def delete_session(ctx: Context, call: Call) -> Any:
    deleted = await ctx.kernel.delete_session(call.path["session_name"])
    for terminal_id in deleted:
        ctx.initial.pop(terminal_id, None)
    return {"success": True, "deleted": list(deleted), "errors": []}


async def create_terminal(ctx: Context, call: Call) -> Any:
    args = call.args
    initial = args["initial_message"]
    if initial is not None and not initial.strip():
        raise InvalidInput("initial_message must not be empty")
    wait = args["wait_ready"] and not args["defer_init"] and initial is None
    request = _creation_request(args, session_name=call.path["session_name"], caller_id=args["caller_id"])
    terminal = await ctx.kernel.create_terminal(request, wait_ready=wait)
    await _queue_initial(ctx, terminal, initial, rollback=lambda: ctx.kernel.delete_terminal(terminal.id))
    return Reply(201, _with_initial(ctx, wire.terminal_json(terminal)))


def _with_initial(ctx: Context, data: dict[str, Any]) -> dict[str, Any]:
    if data["id"] in ctx.initial:
        data["initial_delivery"] = {"state": "pending"}
    return data


async def list_terminals(ctx: Context, call: Call) -> Any:
    return await _with_reports(ctx.kernel, await ctx.kernel.list_terminals(call.path["session_name"]))


# -- terminals -------------------------------------------------------------------------------------


async def get_terminal(ctx: Context, call: Call) -> Any:
    terminal_id = call.path["terminal_id"]
    terminal = await ctx.kernel.get_terminal(terminal_id)
    data = wire.terminal_json(terminal, await ctx.kernel.get_status(terminal_id))
    from .terminal_routes import with_labels

    await with_labels(ctx.kernel, [data])
    delivery = await _initial_delivery(ctx, terminal_id)
    if delivery is not None:
        data["initial_delivery"] = delivery
    return data


async def _initial_delivery(ctx: Context, terminal_id: str) -> dict[str, Any] | None:
    """Upstream's ``initial_delivery`` for a terminal created with an initial message: ``pending`` until
    it was typed in, then ``delivered``, or ``failed`` with the reason. Upstream's own ``cao launch``
    waits on it before it follows the task."""
    message_id = ctx.initial.get(terminal_id)
    if message_id is None:
        return None
    for message in await ctx.kernel.list_messages(terminal_id, limit=1000):
        if message.id != message_id:
            continue
        if message.state == MessageState.DELIVERED:
            return {"state": "delivered"}
        if message.state in (MessageState.DEAD, MessageState.FAILED):
            return {"state": "failed", "kind": "undeliverable", "message": message.last_error or "not delivered"}
        return {"state": "pending"}
    return {"state": "pending"}


async def delete_terminal(ctx: Context, call: Call) -> Any:
    await ctx.kernel.delete_terminal(call.path["terminal_id"])
    ctx.initial.pop(call.path["terminal_id"], None)
    return {"success": True}


async def send_input(ctx: Context, call: Call) -> Any:
    # sender_id and orchestration_type are upstream's; they are checked, and the text is typed as given.
    await ctx.kernel.send_input(call.path["terminal_id"], call.args["message"])
    return {"success": True}


async def send_key(ctx: Context, call: Call) -> Any:
    await ctx.kernel.send_keys(call.path["terminal_id"], validation.key(call.args["key"]))
    return {"success": True}


async def get_output(ctx: Context, call: Call) -> Any:
    mode = call.args["mode"]
    return {"output": await ctx.kernel.get_output(call.path["terminal_id"], mode), "mode": mode}


async def exit_terminal(ctx: Context, call: Call) -> Any:
    await ctx.kernel.exit_terminal(call.path["terminal_id"])
    return {"success": True}


async def working_directory(ctx: Context, call: Call) -> Any:
    return {"working_directory": await ctx.kernel.working_directory(call.path["terminal_id"])}


async def mcp_connected(ctx: Context, call: Call) -> Any:
    stages = {name: call.args[name] for name in MCP_STAGES if call.args[name] is not None}
    await ctx.kernel.mcp_connected(call.path["terminal_id"], stages or None)
    return {"success": True}


async def get_timeline(ctx: Context, call: Call) -> Any:
    terminal_id = call.path["terminal_id"]
    return {"terminal_id": terminal_id, "events": to_json(await ctx.kernel.get_timeline(terminal_id))}


async def get_status(ctx: Context, call: Call) -> Any:
    terminal_id = call.path["terminal_id"]
    return wire.report_json(terminal_id, await ctx.kernel.get_status(terminal_id))


async def wait_status(ctx: Context, call: Call) -> Any:
    from cao_hookspecs import TerminalStatus

    terminal_id = call.path["terminal_id"]
    wanted = [TerminalStatus(s) for s in call.args["status"]]
    if not wanted:
        raise InvalidInput("name at least one status to wait for")
    report = await ctx.kernel.wait_for_status(terminal_id, wanted, call.args["timeout"])
    return wire.report_json(terminal_id, report)


# -- inbox and orchestration -----------------------------------------------------------------------


def _idempotency(args: dict[str, Any]) -> dict[str, Any]:
    key = args.get("idempotency_key")
    return {} if key is None else {"idempotency_key": key}


def _queued(message: Any) -> dict[str, Any]:
    return {"success": True, "message_id": message.id, **wire.message_json(message)}


async def post_inbox(ctx: Context, call: Call) -> Any:
    args = call.args
    message = await ctx.kernel.send_message(
        args["sender_id"], call.path["terminal_id"], args["message"], **_idempotency(args)
    )
    return _queued(message)


async def retry_message(ctx: Context, call: Call) -> Any:
    return wire.message_json(await ctx.kernel.retry_message(int(call.path["message_id"])))


async def cancel_message(ctx: Context, call: Call) -> Any:
    return wire.message_json(await ctx.kernel.cancel_message(int(call.path["message_id"])))


async def attach_command(ctx: Context, call: Call) -> Any:
    return {"argv": await ctx.kernel.attach_command(call.path["terminal_id"])}


async def restore_terminal(ctx: Context, call: Call) -> Any:
    return Reply(201, wire.terminal_json(await ctx.kernel.restore_terminal(call.path["terminal_id"])))


async def team(ctx: Context, call: Call) -> Any:
    """Every session with its terminals, each with its status report, what it waits for and the
    delegation that started it: what a console needs to draw the team at once."""
    kernel, wanted = ctx.kernel, call.args["session"]
    sessions = await kernel.list_sessions()
    if wanted:
        name = validation.session_filter(wanted)
        sessions = [info for info in sessions if info.name == name]
    delegations = ctx.events.delegations() if ctx.events is not None else {}
    members = await asyncio.gather(*(_members(kernel, info.name) for info in sessions))
    rows = []
    for info, terminals in zip(sessions, members, strict=True):
        teammates = await asyncio.gather(*(_teammate(kernel, t, delegations) for t in terminals))
        rows.append({**wire.session_json(info), "terminals": [t for t in teammates if t is not None]})
    return {"at": time.time(), "sessions": rows}


async def _members(kernel: Any, session: str) -> list[Terminal]:
    try:
        return list(await kernel.list_terminals(session))
    except NotFound:  # removed between the listing and this read
        return []


async def _teammate(kernel: Any, terminal: Terminal, delegations: dict[str, dict[str, Any]]) -> Any:
    try:
        report = await kernel.get_status(terminal.id)
        pending = await kernel.list_messages(terminal.id, state=MessageState.PENDING, limit=1000)
    except NotFound:
        return None
    waiting: list[dict[str, Any]] = [
        {"kind": entry["kind"], "worker_id": worker, "since": entry["started_at"]}
        for worker, entry in delegations.items()
        if entry["caller_id"] == terminal.id and entry["kind"] == "handoff"
    ]
    if pending:
        waiting.append({"kind": "messages", "count": len(pending)})
    if report.status is TerminalStatus.WAITING_USER_ANSWER:
        waiting.append({"kind": "prompt", "since": report.since})
    return {
        **wire.terminal_json(terminal, report),
        "evidence": report.evidence,
        "since": report.since,
        "pending_messages": len(pending),
        "delegation": delegations.get(terminal.id),
        "waiting_for": waiting,
    }


async def report_activity(ctx: Context, call: Call) -> Any:
    return to_json(await ctx.kernel.report_activity(call.args["kind"], call.args["data"]))


async def events_history(ctx: Context, call: Call) -> Any:
    from starlette.responses import Response

    if ctx.events is None:
        raise NotSupported("this server's kernel does not publish events")
    session = validation.session_filter(call.args["session"]) if call.args["session"] else None
    return Response(ctx.events.history(session, call.args["limit"]), media_type="application/json")


async def plugins(ctx: Context, call: Call) -> Any:
    records = getattr(ctx.kernel, "plugin_records", None)
    if records is None:
        raise NotSupported("this server's kernel does not list its plugins")
    return [to_json(record) for record in records()]


async def list_inbox(ctx: Context, call: Call) -> Any:
    state = call.args["status"]
    if state is not None and state not in MESSAGE_STATES:
        raise InvalidInput(f"invalid message status {state!r}: use one of {', '.join(MESSAGE_STATES)}")
    messages = await ctx.kernel.list_messages(call.path["terminal_id"], state=state, limit=call.args["limit"])
    return [wire.message_json(m) for m in messages]


async def send_message(ctx: Context, call: Call) -> Any:
    args = call.args
    message = await ctx.kernel.send_message(
        call.path["terminal_id"], args["receiver_id"], args["message"], **_idempotency(args)
    )
    return _queued(message)


async def handoff(ctx: Context, call: Call) -> Any:
    args = call.args
    caller = call.path.get("terminal_id", args.get("caller_id"))
    job = {"job_id": args["job_id"]} if args.get("job_id") is not None else {}
    result = await ctx.kernel.handoff(caller, args["agent_profile"], args["message"], timeout=args["timeout"],
                                      call_id=args.get("call_id"), **worker_choices(args), **job)
    return wire.delegation_json(result)


def worker_choices(args: dict[str, Any]) -> dict[str, Any]:
    """The model and worktree a delegation asks for, as keyword arguments of ``KernelAPI.handoff`` or
    ``assign``. Passed only when asked for, so a kernel API without them (an embedding app's) still
    serves."""
    return {**({"model": args["model"]} if args.get("model") else {}),
            **{name: True for name in ("use_worktree", "worktree_changes") if args.get(name)}}


async def get_handoff_result(ctx: Context, call: Call) -> Any:
    return to_json(await ctx.kernel.get_handoff_result(call.path["job_id"]))


async def assign(ctx: Context, call: Call) -> Any:
    args = call.args
    result = await ctx.kernel.assign(call.path["terminal_id"], args["agent_profile"], args["message"],
                                     **worker_choices(args))
    return wire.delegation_json(result)


async def answer(ctx: Context, call: Call) -> Any:
    args, terminal_id = call.args, call.path["terminal_id"]
    if args["option"] is None and args["text"] is None:
        if args["answer"] is None:
            raise InvalidInput("give 'option' (a number from 1), 'text', or upstream's 'answer'")
        event = await ctx.kernel.answer_user_prompt(terminal_id, args["answer"], prompt_id=args["prompt_id"],
                                                    as_terminal=args["as_terminal"])
    else:
        event = await ctx.kernel.answer_prompt(terminal_id, option=args["option"], text=args["text"],
                                               prompt_id=args["prompt_id"], by=args["by"] or "person",
                                               as_terminal=args["as_terminal"])
    return {"success": True, "event": to_json(event) if event is not None else None}


async def get_prompt(ctx: Context, call: Call) -> Any:
    terminal = await ctx.kernel.get_terminal(call.path["terminal_id"])
    return {"terminal_id": terminal.id, "status": terminal.status.value,
            "prompt": to_json(terminal.prompt) if terminal.prompt is not None else None}


async def prompt_history(ctx: Context, call: Call) -> Any:
    return to_json(await ctx.kernel.prompt_history(call.path["terminal_id"], limit=call.args["limit"]))


async def get_prompt_policy(ctx: Context, call: Call) -> Any:
    name = call.path["session_name"]
    return {"session_name": name, "policy": await ctx.kernel.get_prompt_policy(name)}


async def set_prompt_policy(ctx: Context, call: Call) -> Any:
    name = call.path["session_name"]
    await ctx.kernel.set_prompt_policy(name, call.args["policy"])
    return {"session_name": name, "policy": await ctx.kernel.get_prompt_policy(name)}


async def delete_prompt_policy(ctx: Context, call: Call) -> Any:
    name = call.path["session_name"]
    await ctx.kernel.set_prompt_policy(name, None)
    return {"session_name": name, "policy": None}


# -- profiles and providers ------------------------------------------------------------------------


async def list_profiles(ctx: Context, call: Call) -> Any:
    return [{**wire.profile_json(p), "loadable": True} for p in await ctx.kernel.list_profiles()]


async def get_profile(ctx: Context, call: Call) -> Any:
    return wire.profile_json(await ctx.kernel.get_profile(call.path["name"]))


async def install_profile(ctx: Context, call: Call) -> Any:
    args = call.args
    source = args["source"].strip()
    # Over HTTP only names and https URLs: a path would let a caller make the server read its files.
    if not (source.lower().startswith("https://") or validation.PROFILE_NAME_RE.match(source)):
        raise InvalidInput(f"cannot install {source!r} over HTTP: give a profile name or an https:// URL")
    install = getattr(ctx.kernel, "install_profile", None)
    if install is None:
        raise NotSupported("this server's kernel cannot install profiles")
    env = [f"{k}={v}" for k, v in (args["env_vars"] or {}).items()]
    result = await install(source, provider=args["provider"], env=env)
    name = getattr(result, "name", None) or source
    return {
        "success": True,
        "message": f"Installed agent profile {name!r}",
        "agent_name": name,
        "agent_file": getattr(result, "store_file", None),
        "context_file": getattr(result, "context_file", None),
        "unresolved_vars": list(getattr(result, "unresolved_vars", ()) or ()),
        "source_kind": getattr(result, "source_kind", None),
        "provider": getattr(result, "provider", None),
    }


async def list_providers(ctx: Context, call: Call) -> Any:
    return to_json(await ctx.kernel.list_providers())


# -- plugin MCP tools ------------------------------------------------------------------------------


async def list_mcp_tools(ctx: Context, call: Call) -> Any:
    return to_json(await ctx.kernel.mcp_tools())


async def call_mcp_tool(ctx: Context, call: Call) -> Any:
    """Run a plugin's MCP tool as the terminal in the path (the caller its factory is given)."""
    name = call.path["tool"]
    spec = next((s for s in await ctx.kernel.mcp_tools() if s.name == name), None)
    if spec is None:
        raise NotFound(f"no plugin MCP tool {name!r}")
    try:
        result = spec.factory(ctx.kernel, call.path["terminal_id"])(**call.args["arguments"])
        if asyncio.iscoroutine(result) or isinstance(result, asyncio.Future):
            result = await result
    except CaoError:
        raise
    except TypeError as exc:
        raise InvalidInput(f"MCP tool {name!r}: {exc}") from exc
    except Exception as exc:  # noqa: BLE001 - the tool's own failure, told to its caller
        raise PluginError(str(exc) or type(exc).__name__) from exc
    return {"result": to_json(result)}


# -- the table -------------------------------------------------------------------------------------

T = "/terminals/{terminal_id}"
S = "/sessions/{session_name}"
ID_ERRORS = (404, 422)
CALLER_ID = Param("caller_id", pattern=ID_PATTERN, description="terminal that starts the worker (8 hex)")

ENDPOINTS: tuple[Endpoint, ...] = (
    Endpoint(
        "GET",
        "/health",
        "health",
        "Liveness and the terminal backend in use",
        health,
        "server",
        response=ref("Health"),
    ),
    Endpoint(
        "POST",
        "/sessions",
        "create_session",
        "Create a session with one agent terminal",
        create_session,
        "sessions",
        status=201,
        response=ref("Terminal"),
        errors=(400, 403, 404, 409, 413, 422, 502, 504, 429),
        params=(
            AGENT_PROFILE,
            Param("session_name", description="name; 'cao-' is added when missing",
                  rule=_or_empty(SESSION_ARG_RE)),
            PROVIDER,
            WORKDIR,
            ALLOWED_TOOLS,
            MODEL,
            YOLO,
            WAIT_READY,
            ENV_VARS,
            INITIAL_MESSAGE,
            USE_WORKTREE,
            WORKTREE_CHANGES,
        ),
    ),
    Endpoint(
        "GET",
        "/sessions",
        "list_sessions",
        "List cao sessions",
        list_sessions,
        "sessions",
        response=array_of("Session"),
    ),
    Endpoint(
        "GET",
        S,
        "get_session",
        "A session and its terminals",
        get_session,
        "sessions",
        response=ref("SessionDetail"),
        errors=(400, 404),
    ),
    Endpoint(
        "DELETE",
        S,
        "delete_session",
        "Delete a session and every terminal in it",
        delete_session,
        "sessions",
        response=ref("SessionDeleted"),
        errors=(400, 404),
    ),
    Endpoint(
        "POST",
        S + "/terminals",
        "create_terminal",
        "Add an agent terminal to a session",
        create_terminal,
        "sessions",
        status=201,
        response=ref("Terminal"),
        errors=(400, 403, 404, 409, 413, 422, 502, 504, 429),
        params=(
            AGENT_PROFILE,
            PROVIDER,
            WORKDIR,
            ALLOWED_TOOLS,
            CALLER_ID,
            Param(
                "defer_init",
                type="boolean",
                default=False,
                description="answer at once; the agent starts in the background",
            ),
            MODEL,
            YOLO,
            WAIT_READY,
            ENV_VARS,
            INITIAL_MESSAGE,
            USE_WORKTREE,
            WORKTREE_CHANGES,
        ),
    ),
    Endpoint(
        "GET",
        S + "/terminals",
        "list_terminals",
        "Terminals of a session, oldest first",
        list_terminals,
        "sessions",
        response=array_of("Terminal"),
        errors=(400,),
    ),
    Endpoint(
        "GET",
        T,
        "get_terminal",
        "A terminal with its live status",
        get_terminal,
        "terminals",
        response=ref("Terminal"),
        errors=ID_ERRORS,
    ),
    Endpoint(
        "DELETE",
        T,
        "delete_terminal",
        "Stop a terminal and everything running in it",
        delete_terminal,
        "terminals",
        errors=ID_ERRORS,
    ),
    Endpoint(
        "POST",
        T + "/input",
        "send_input",
        "Type text into a terminal and submit it",
        send_input,
        "terminals",
        errors=(*ID_ERRORS, 400, 409, 413),
        params=(
            MESSAGE,
            Param("sender_id", description="who sends it (upstream's; informational)"),
            Param("orchestration_type", enum=ORCHESTRATION_TYPES, description="upstream's; informational"),
        ),
    ),
    Endpoint(
        "POST",
        T + "/key",
        "send_key",
        "Press one key (tmux key name) without Enter",
        send_key,
        "terminals",
        errors=(*ID_ERRORS, 400, 409),
        params=(Param("key", required=True, description="Enter, Escape, Up, C-c, ...",
                      rule={"pattern": json_pattern(KEY_RE)}),),
    ),
    Endpoint(
        "GET",
        T + "/output",
        "get_output",
        "Screen with scrollback, or the agent's last answer",
        get_output,
        "terminals",
        response=ref("Output"),
        errors=(*ID_ERRORS, 409),
        params=(
            Param(
                "mode",
                default="full",
                enum=("full", "last"),
                description="full: screen and scrollback; last: the agent's final answer",
            ),
        ),
    ),
    Endpoint(
        "POST",
        T + "/exit",
        "exit_terminal",
        "Ask the agent CLI to quit",
        exit_terminal,
        "terminals",
        errors=(*ID_ERRORS, 409),
    ),
    Endpoint(
        "POST",
        T + "/mcp-connected",
        "mcp_connected",
        "Report that the agent's MCP client has connected to cao's tools (opens its readiness gate)",
        mcp_connected,
        "terminals",
        errors=ID_ERRORS,
        params=tuple(Param(name, type="number", nullable=True, minimum=0, body_only=True, description=what)
                     for name, what in MCP_STAGES.items()),
    ),
    Endpoint(
        "GET",
        T + "/timeline",
        "get_timeline",
        "When each step of the terminal's start and work happened (kept a while after it is gone)",
        get_timeline,
        "terminals",
        response=ref("Timeline"),
        errors=ID_ERRORS,
    ),
    Endpoint(
        "GET",
        T + "/working-directory",
        "working_directory",
        "The live working directory",
        working_directory,
        "terminals",
        response=ref("WorkingDirectory"),
        errors=ID_ERRORS,
    ),
    Endpoint(
        "GET",
        T + "/status",
        "get_status",
        "Status, the evidence for it, and since when",
        get_status,
        "terminals",
        response=ref("StatusReport"),
        errors=ID_ERRORS,
    ),
    Endpoint(
        "GET",
        T + "/wait",
        "wait_status",
        "Long-poll until the terminal reaches one of the statuses",
        wait_status,
        "terminals",
        response=ref("StatusReport"),
        errors=(*ID_ERRORS, 400, 502, 504),
        params=(
            Param(
                "status",
                type="list",
                default=["completed", "idle"],
                enum=STATUSES,
                description="statuses to wait for",
            ),
            Param(
                "timeout",
                type="number",
                default=60.0,
                minimum=0,
                maximum=3600,
                description="seconds; 504 when they pass first",
            ),
        ),
    ),
    Endpoint(
        "POST",
        T + "/inbox/messages",
        "post_inbox",
        "Queue a message for this terminal",
        post_inbox,
        "inbox",
        response=ref("MessageQueued"),
        errors=(*ID_ERRORS, 400, 403, 409, 413),
        params=(
            Param("sender_id", required=True, description="who sends it (any text)"),
            MESSAGE,
            IDEMPOTENCY_KEY,
        ),
    ),
    Endpoint(
        "GET",
        T + "/inbox/messages",
        "list_inbox",
        "Messages for this terminal, oldest first",
        list_inbox,
        "inbox",
        response=array_of("Message"),
        errors=(400, 422),
        params=(
            Param("limit", type="integer", default=10, minimum=1, maximum=1000),
            Param("status", description="only messages in this state", rule={"enum": list(MESSAGE_STATES)}),
        ),
    ),
    Endpoint(
        "POST",
        "/messages/{message_id}/retry",
        "retry_message",
        "Put a dead, failed or uncertain message back in line, due now (an operator's retry)",
        retry_message,
        "inbox",
        response=ref("Message"),
        errors=(404, 409, 422),
    ),
    Endpoint(
        "POST",
        "/messages/{message_id}/cancel",
        "cancel_message",
        "Cancel a pending message: it becomes dead and its sender is told",
        cancel_message,
        "inbox",
        response=ref("Message"),
        errors=(404, 409, 422),
    ),
    Endpoint(
        "GET",
        "/team",
        "team",
        "Every session's terminals with status, evidence, what each waits for and who started it",
        team,
        "sessions",
        response={"type": "object"},
        errors=(400,),
        params=(Param("session", description="only this session", rule=_or_empty(SESSION_ARG_RE)),),
    ),
    Endpoint(
        "GET",
        "/events/history",
        "events_history",
        "The most recent events, oldest first (at most 2,000 and 8 MiB kept)",
        events_history,
        "server",
        response={"type": "array", "items": {"type": "object"}},
        errors=(400, 501),
        params=(
            Param("session", description="only this session's events", rule=_or_empty(SESSION_ARG_RE)),
            Param("limit", type="integer", default=500, minimum=1, maximum=2000),
        ),
    ),
    Endpoint(
        "POST",
        "/activity",
        "report_activity",
        "Tell the event stream what a plugin's own work did (a flow fired, a workflow step ended)",
        report_activity,
        "server",
        status=201,
        response=ref("Activity"),
        errors=(400, 413),
        params=(
            Param("kind", required=True, body_only=True, max_bytes=200, rule={"pattern": ACTIVITY_KIND_RULE},
                  description="what happened, dotted and led by its area: `workflow.step`"),
            Param("data", type="object", body_only=True, max_bytes=MAX_ACTIVITY_BYTES,
                  description="a JSON object: by convention run_id, state, summary, session_name"),
        ),
    ),
    Endpoint(
        "GET",
        "/plugins",
        "list_plugins",
        "The server's plugins: name, distribution, version, hooks, status and error (as `cao plugins`)",
        plugins,
        "server",
        response={"type": "array", "items": {"type": "object"}},
        errors=(501,),
    ),
    Endpoint(
        "GET",
        T + "/attach-command",
        "attach_command",
        "The command that attaches a viewer to this terminal on the server's machine",
        attach_command,
        "terminals",
        response={"type": "object", "properties": {"argv": {"type": "array", "items": {"type": "string"}}}},
        errors=(*ID_ERRORS, 501),
    ),
    Endpoint(
        "POST",
        T + "/restore",
        "restore_terminal",
        "Start a new agent continuing a removed terminal (same profile, provider and folder), given its "
        "saved screen log",
        restore_terminal,
        "terminals",
        status=201,
        response=ref("Terminal"),
        errors=(*ID_ERRORS, 409, 502, 504),
    ),
    Endpoint(
        "POST",
        T + "/send_message",
        "send_message",
        "Send a message from this terminal",
        send_message,
        "orchestration",
        response=ref("MessageQueued"),
        errors=(*ID_ERRORS, 400, 403, 413),
        params=(
            Param(
                "receiver_id",
                pattern=ID_PATTERN,
                nullable=True,
                description="receiver; default: the terminal that created the sender",
            ),
            MESSAGE,
            IDEMPOTENCY_KEY,
        ),
    ),
    Endpoint(
        "POST",
        T + "/handoff",
        "handoff",
        "Run a worker on a task and wait for its answer",
        handoff,
        "orchestration",
        response=ref("DelegationResult"),
        errors=(*ID_ERRORS, 400, 403, 413, 502, 504, 429),
        params=(AGENT_PROFILE, MESSAGE, HANDOFF_TIMEOUT, CALL_ID, MODEL, USE_WORKTREE, WORKTREE_CHANGES,
                JOB_ID),
    ),
    Endpoint(
        "POST",
        "/handoff",
        "handoff_from_user",
        "Handoff with no calling terminal (a new session)",
        handoff,
        "orchestration",
        response=ref("DelegationResult"),
        errors=(400, 403, 404, 413, 422, 502, 504, 429),
        params=(
            Param("caller_id", pattern=ID_PATTERN, nullable=True, description="calling terminal, if any"),
            AGENT_PROFILE,
            MESSAGE,
            HANDOFF_TIMEOUT,
            CALL_ID,
            MODEL,
            USE_WORKTREE,
            WORKTREE_CHANGES,
            JOB_ID,
        ),
    ),
    Endpoint(
        "GET",
        "/handoff-results/{job_id}",
        "get_handoff_result",
        "The state and answer of a handoff started with a job id (kept CAO_HANDOFF_RESULT_DAYS days)",
        get_handoff_result,
        "orchestration",
        response=ref("HandoffResult"),
        errors=(404, 422),
    ),
    Endpoint(
        "POST",
        T + "/assign",
        "assign",
        "Start a worker on a task and return at once",
        assign,
        "orchestration",
        response=ref("DelegationResult"),
        errors=(*ID_ERRORS, 400, 403, 413, 429),
        params=(AGENT_PROFILE, MESSAGE, MODEL, USE_WORKTREE, WORKTREE_CHANGES),
    ),
    Endpoint(
        "POST",
        T + "/answer",
        "answer",
        "Answer the prompt the agent is waiting on",
        answer,
        "prompts",
        response=ref("PromptAnswered"),
        errors=(*ID_ERRORS, 400, 403, 409, 413, 504),
        params=(
            Param("answer", max_bytes=validation.MAX_INPUT_BYTES, rule={**TEXT, "maxLength": MAX_ANSWER_CHARS},
                  description="upstream's answer: an option's number, key or label, or text (ignored when "
                              "option or text is given)"),
            Param("option", type="integer", minimum=1, maximum=99, description="the option to pick, from 1"),
            Param("text", max_bytes=validation.MAX_INPUT_BYTES, rule={**TEXT, "maxLength": MAX_ANSWER_CHARS},
                  description="text typed after the option's keys (an option or prompt that takes text)"),
            Param("prompt_id", pattern=PROMPT_ID_PATTERN,
                  description="the prompt meant: refused with 409, nothing typed, when another is open"),
            Param("as_terminal", pattern=ID_PATTERN,
                  description="a supervisor answering for a worker it started (checked, and policies apply)"),
            Param("by", default="person", rule={"maxLength": 200, "pattern": BY_PATTERN},
                  description="who answers, for the audit trail"),
        ),
    ),
    Endpoint(
        "GET",
        T + "/prompt",
        "get_prompt",
        "The prompt the agent waits on, or null",
        get_prompt,
        "prompts",
        response=ref("OpenPromptAnswer"),
        errors=ID_ERRORS,
    ),
    Endpoint(
        "GET",
        T + "/prompts",
        "prompt_history",
        "The terminal's prompt audit trail, oldest first",
        prompt_history,
        "prompts",
        response=array_of("PromptEvent"),
        errors=ID_ERRORS,
        params=(Param("limit", type="integer", default=200, minimum=1, maximum=10_000,
                      description="the latest this many events"),),
    ),
    Endpoint(
        "GET",
        "/sessions/{session_name}/prompt-policy",
        "get_prompt_policy",
        "The session's prompt policy, or null",
        get_prompt_policy,
        "prompts",
        response=ref("PromptPolicyAnswer"),
        errors=(400,),
    ),
    Endpoint(
        "PUT",
        "/sessions/{session_name}/prompt-policy",
        "set_prompt_policy",
        "Set the session's prompt policy",
        set_prompt_policy,
        "prompts",
        response=ref("PromptPolicyAnswer"),
        errors=(400, 413),
        params=(Param("policy", type="object", required=True, body_only=True, rule=PROMPT_POLICY,
                      description="rules, timeout, on_timeout, supervisor (see the prompts guide)"),),
    ),
    Endpoint(
        "DELETE",
        "/sessions/{session_name}/prompt-policy",
        "delete_prompt_policy",
        "Remove the session's prompt policy",
        delete_prompt_policy,
        "prompts",
        response=ref("PromptPolicyAnswer"),
        errors=(400,),
    ),
    Endpoint(
        "GET",
        "/agents/profiles",
        "list_profiles",
        "Every loadable agent profile",
        list_profiles,
        "profiles",
        response=array_of("ProfileSummary"),
    ),
    Endpoint(
        "GET",
        "/agents/profiles/{name}",
        "get_profile",
        "One parsed agent profile",
        get_profile,
        "profiles",
        response=ref("AgentProfile"),
        errors=(400, 404),
    ),
    Endpoint(
        "POST",
        "/agents/profiles/install",
        "install_profile",
        "Install a profile from a name or https URL",
        install_profile,
        "profiles",
        response=ref("InstallResult"),
        errors=(400, 404, 422, 501),
        params=(
            Param("source", required=True, description="profile name or https:// URL", rule=INSTALL_SOURCE),
            Param("provider", description="provider to record for it"),
            Param(
                "env_vars",
                type="map",
                body_only=True,
                description="values for the profile's ${VAR} placeholders",
            ),
        ),
    ),
    Endpoint(
        "GET",
        "/agents/providers",
        "list_providers",
        "Installed providers",
        list_providers,
        "profiles",
        response=array_of("Provider"),
    ),
    Endpoint(
        "GET",
        "/mcp-tools",
        "list_mcp_tools",
        "MCP tools plugins add to cao's own",
        list_mcp_tools,
        "orchestration",
        response=array_of("McpTool"),
    ),
    Endpoint(
        "POST",
        T + "/mcp-tools/{tool}",
        "call_mcp_tool",
        "Run a plugin's MCP tool as this terminal",
        call_mcp_tool,
        "orchestration",
        response=ref("McpToolResult"),
        errors=(*ID_ERRORS, 400, 413, 500),
        params=(Param("arguments", type="object", default={}, body_only=True,
                      description="the tool's arguments by name"),),
    ),
)


def check_path(path: dict[str, str]) -> dict[str, str]:
    """Check path values by name: terminal ids and message ids (422), session and profile names (400)."""
    if "message_id" in path and not MESSAGE_ID_RE.match(path["message_id"]):
        raise BadParameter(f"invalid message id {path['message_id']!r}: a positive integer")
    if "terminal_id" in path:
        validation.terminal_id(path["terminal_id"])
    if "session_name" in path:
        validation.session_name(path["session_name"])
    if "name" in path:
        validation.profile_name(path["name"])
    if "job_id" in path and job_id_problem(path["job_id"]) is not None:
        raise BadParameter(str(job_id_problem(path["job_id"])))
    return path


# Upstream's further routes live in modules of their own (they import this one, hence the late import);
# first, so their static paths come before the `{name}` routes that would otherwise take them.
from .profile_routes import PROFILE_ENDPOINTS  # noqa: E402
from .run_step import RUN_STEP  # noqa: E402
from .terminal_routes import TERMINAL_ENDPOINTS  # noqa: E402

ENDPOINTS = (*PROFILE_ENDPOINTS, *TERMINAL_ENDPOINTS, *ENDPOINTS, RUN_STEP)

__all__ = ["Call", "Context", "ENDPOINTS", "Endpoint", "Reply", "check_path"]
