"""cao's built-in MCP tools, written against a ``KernelAPI`` and the calling agent's terminal id.

Nothing here imports the MCP SDK: ``cao_mcp.server`` turns these coroutines into MCP tools. Every tool
returns a :class:`ToolResult` (upstream's JSON shape plus whether it is an error) and never raises for
a failure an agent can act on: the result names the problem and what to do about it.

The kernel appends upstream's protocol lines (the assign callback line, the send_message sender line)
itself, idempotently, so the tools pass messages through untouched.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from cao_hookspecs.errors import CaoError, Conflict, NotFound

from .wire import (
    CALL_HEADER,
    ID_HEADER,
    ID_VARIABLE,
    RELAY_HEADER,
    SECRET_HEADER,
    SECRET_VARIABLE,
    TERMINAL_ID_RE,
)

if TYPE_CHECKING:
    from cao_hookspecs import KernelAPI

MAX_TIMEOUT = 3600
BUILTIN_NAMES = ("handoff", "assign", "send_message", "delete_terminal", "answer_user_prompt",
                 "get_handoff_result")
HANDOFF_REPLY_SETTING = "CAO_MCP_HANDOFF_REPLY_AFTER"
DEFAULT_HANDOFF_REPLY = 540.0

SERVER_INSTRUCTIONS = (
    "cao runs agents in terminals and lets them delegate to each other. handoff gives a task to a new "
    "worker and waits for its answer; assign starts a worker and returns at once (its results arrive "
    "later in your inbox as a new message, so end your turn to receive them and never sleep-poll); "
    "send_message queues a message for another terminal, typed in when it is idle; delete_terminal "
    "removes workers you no longer need."
)


def header_value(headers: Mapping[str, str] | None, name: str) -> str | None:
    """A header by name, case-insensitively, from whatever mapping the transport hands over."""
    if not headers:
        return None
    value = headers.get(name)
    if value is None:
        value = headers.get(name.lower())
    if value is None:
        wanted = name.lower()
        value = next((v for k, v in headers.items() if k.lower() == wanted), None)
    return value


def context_header(ctx: Any, name: str) -> str | None:
    """A header of the HTTP request behind an MCP request context (None on stdio)."""
    headers = None
    if ctx is not None:
        try:
            headers = ctx.headers
        except ValueError:  # no request behind this context
            headers = None
    return header_value(headers, name)


@dataclasses.dataclass(frozen=True)
class Caller:
    """Who is calling: the terminal id, or None with ``problem`` saying why it is unknown.

    ``malformed`` marks a value that was given but is not a terminal id: unlike a missing one it is never
    silently ignored, not even by handoff (which works without a caller).
    """

    id: str | None
    problem: str | None = None
    source: str = ID_VARIABLE
    malformed: bool = False

    @classmethod
    def parse(cls, value: str | None, *, source: str = ID_VARIABLE) -> Caller:
        """Read a terminal id as the environment or a request header gives it (None: not given)."""
        if value is None or not value.strip():
            if source == ID_HEADER:
                problem = (f"the request has no {ID_HEADER} header, so cao does not know which terminal you "
                           f"are; configure your MCP client to send your terminal id in it")
                return cls(None, problem, source)
            return cls(None, f"{source} is not set, so cao does not know which terminal you are; this MCP "
                             f"server must be started by cao inside a cao terminal", source)
        if not TERMINAL_ID_RE.fullmatch(value):
            return cls(None, f"{source} {value!r} is invalid: expected 8 lowercase hex characters "
                             f"(the id cao gave your terminal)", source, malformed=True)
        return cls(value, None, source)


@dataclasses.dataclass(frozen=True)
class ToolEnv:
    """What a tool call runs against: the kernel, the caller, and how to explain an unreachable server."""

    kernel: KernelAPI
    caller: Caller
    #: Turns an exception into the sentence an agent reads; None means "not one we know".
    explain: Callable[[BaseException], str | None] = lambda exc: None
    #: The call's id, when its sender will retry it after a lost connection (the relay's handoffs).
    call_id: str | None = None


@dataclasses.dataclass(frozen=True)
class ToolResult:
    """A tool's answer: upstream's JSON object and whether it reports a failure."""

    data: dict[str, Any]
    ok: bool = True


@dataclasses.dataclass(frozen=True)
class BuiltinTool:
    """One built-in tool: its coroutine ``run(env, **arguments)``, description and parameter help."""

    name: str
    run: Callable[..., Awaitable[ToolResult]]
    description: str
    params: dict[str, str]


def _failure(text: str) -> ToolResult:
    return ToolResult({"success": False, "message": text}, ok=False)


def _answerable(env: ToolEnv, exc: BaseException) -> bool:
    """Whether a failed call is one to tell the agent about (anything else is a bug, raised)."""
    return isinstance(exc, CaoError) or env.explain(exc) is not None


def _explain(env: ToolEnv, exc: BaseException) -> str:
    known = env.explain(exc)
    if known is not None:
        return known
    return str(exc).strip() or type(exc).__name__


async def _unknown_profile(env: ToolEnv, agent_profile: str, exc: NotFound) -> str | None:
    """The 'no such profile' message with the profiles that do exist, or None if the profile exists
    (the NotFound was about something else, such as the caller's terminal)."""
    try:
        await env.kernel.get_profile(agent_profile)
    except NotFound:
        pass
    except CaoError:
        return None
    else:
        return None
    try:
        names = ", ".join(p.name for p in await env.kernel.list_profiles()) or "none installed"
    except CaoError:
        names = "see `cao profile list`"
    return f"unknown agent profile {agent_profile!r} (available: {names}). {str(exc).splitlines()[0]}"


def _caller_gone(env: ToolEnv, exc: NotFound) -> str | None:
    caller = env.caller.id
    if caller is not None and caller in str(exc):
        return (f"your terminal {caller} ({env.caller.source}) is not known to the cao server; it may have "
                f"been deleted or the server restarted without it")
    return None


async def _delegation_error(env: ToolEnv, agent_profile: str, exc: BaseException) -> str:
    if isinstance(exc, NotFound):
        text = _caller_gone(env, exc) or await _unknown_profile(env, agent_profile, exc)
        if text is not None:
            return text
    return _explain(env, exc)


def _fields(record: Any, names: tuple[str, ...]) -> dict[str, Any]:
    """Upstream's tool answers hold a few fields of a record: these, as cao's HTTP API writes them."""
    from cao_server.converter import to_json_fields

    return to_json_fields(record, names)


# -- worktrees (handoff and assign) ----------------------------------------------------------------

USE_WORKTREE_HELP = (
    "Run the worker in its own git worktree on a new branch made from your current commit, so it cannot "
    "disturb your files or other workers. Kept and named to you when the worker leaves commits or "
    "changes in it; removed with the worker otherwise."
)
WORKTREE_CHANGES_HELP = "With use_worktree: copy your uncommitted changes into the worker's worktree."


def _worktree_args(use_worktree: bool, worktree_changes: bool) -> dict[str, bool]:
    # Passed only when asked for: a kernel API without worktrees (an older server) still serves the call.
    return {name: True for name, wanted in (("use_worktree", use_worktree),
                                             ("worktree_changes", worktree_changes)) if wanted}


def _worktree_of(result: Any) -> dict[str, str]:
    """The worktree the result names (a kept one for handoff), as extra keys of upstream's answer."""
    return {name: value for name in ("worktree_branch", "worktree_path")
            if (value := getattr(result, name, None))}


# -- handoff ---------------------------------------------------------------------------------------


async def handoff(env: ToolEnv, agent_profile: str, message: str, timeout: int = 600,
                  model: str | None = None, use_worktree: bool = False,
                  worktree_changes: bool = False) -> ToolResult:
    """Start a worker, give it the task, wait for its final answer and remove it."""

    def failed(text: str, terminal_id: str | None = None) -> ToolResult:
        return ToolResult({"success": False, "message": f"Handoff failed: {text}", "output": None,
                           "terminal_id": terminal_id}, ok=False)

    if env.caller.malformed:
        return failed(str(env.caller.problem))
    if not 1 <= timeout <= MAX_TIMEOUT:
        return failed(f"timeout must be between 1 and {MAX_TIMEOUT} seconds, got {timeout}")
    import asyncio
    import uuid

    job_id = uuid.uuid4().hex
    call = {} if env.call_id is None else {"call_id": env.call_id}
    if model:
        call["model"] = model
    call.update(_worktree_args(use_worktree, worktree_changes))
    running = asyncio.ensure_future(env.kernel.handoff(env.caller.id, agent_profile, message,
                                                       timeout=float(timeout), job_id=job_id, **call))
    # Read even when nobody waits any more, so a late failure is not reported as never retrieved.
    running.add_done_callback(lambda done: done.cancelled() or done.exception())
    try:
        result = await asyncio.wait_for(asyncio.shield(running), handoff_reply_after())
    except TimeoutError:
        # The agent's MCP client would give up soon: answer now with the job id, the work goes on.
        return ToolResult({
            "success": False, "pending": True, "job_id": job_id, "output": None, "terminal_id": None,
            "message": (f"Handoff still running after {handoff_reply_after():g} seconds; the worker goes on "
                        f"and its answer is kept. Read it with the get_handoff_result tool, job_id={job_id} "
                        f"(state running: not done yet; call again later)."),
        })
    except Exception as exc:
        if not _answerable(env, exc):
            raise
        return failed(await _delegation_error(env, agent_profile, exc))
    data = _fields(result, ("success", "message", "output", "terminal_id"))
    return ToolResult({**data, **_worktree_of(result)}, ok=bool(result.success))


def handoff_reply_after() -> float:
    """Seconds a handoff tool call waits before it answers with a job id instead (``HANDOFF_REPLY_SETTING``,
    in the server's environment): below the common 600-second limit agents' MCP clients put on one call."""
    import os

    raw = os.environ.get(HANDOFF_REPLY_SETTING, "")
    try:
        value = float(raw) if raw.strip() else DEFAULT_HANDOFF_REPLY
    except ValueError:
        value = DEFAULT_HANDOFF_REPLY
    return value if 0 < value <= MAX_TIMEOUT else DEFAULT_HANDOFF_REPLY


HANDOFF = BuiltinTool(
    name="handoff",
    run=handoff,
    description=(
        "Give a task to a new worker agent and wait for its answer. cao starts a worker with the agent "
        "profile, sends it the message, blocks until the worker finishes, returns the worker's final reply "
        "in `output` and removes the worker. Use it when you need the result before you can go on. For "
        "work that can run while you continue (or several tasks in parallel), use assign instead. On a "
        "timeout or a worker error the worker is kept and its `terminal_id` returned: inspect it, or "
        "delete it with delete_terminal. A worker still busy when this call has waited as long as it may "
        "gives `pending: true` and a `job_id`: the worker goes on, and get_handoff_result reads its answer."
    ),
    params={
        "agent_profile": "Name of the worker's agent profile, e.g. developer or reviewer.",
        "message": "The complete task for the worker: everything it needs to know, self-contained.",
        "timeout": f"Seconds to wait for the worker's answer (1 to {MAX_TIMEOUT}).",
        "model": "Optional: the model the worker runs on instead of its profile's (its CLI's name for it).",
        "use_worktree": USE_WORKTREE_HELP,
        "worktree_changes": WORKTREE_CHANGES_HELP,
    },
)


# -- get_handoff_result ----------------------------------------------------------------------------


async def get_handoff_result(env: ToolEnv, job_id: str) -> ToolResult:
    """The state and answer of a handoff that answered with a job id (``pending``)."""
    from cao_hookspecs.handoff_jobs import job_id_problem

    problem = job_id_problem(job_id)
    if problem is not None:
        return _failure(problem)
    try:
        job = await env.kernel.get_handoff_result(job_id)
    except Exception as exc:
        if not _answerable(env, exc):
            raise
        if isinstance(exc, NotFound):
            return _failure(f"No handoff result found for job_id {job_id}: it was never started on this "
                            f"cao-server, or it is older than its keeping time")
        return _failure(f"Failed to retrieve handoff result: {_explain(env, exc)}")
    fields = _fields(job, ("state", "terminal_id", "last_message", "error_message"))
    return ToolResult({"success": True, **fields})


GET_HANDOFF_RESULT = BuiltinTool(
    name="get_handoff_result",
    run=get_handoff_result,
    description=(
        "Read the outcome of a handoff that answered pending=true with a job_id (it ran longer than one tool "
        "call may wait). `state` is running (not done yet: end your turn or do other work, then ask again), "
        "completed (the worker's answer is in `last_message`) or error (`error_message` says why)."
    ),
    params={"job_id": "The job_id the pending handoff returned (32 hex characters)."},
)


# -- assign ----------------------------------------------------------------------------------------


async def assign(env: ToolEnv, agent_profile: str, message: str, model: str | None = None,
                 use_worktree: bool = False, worktree_changes: bool = False) -> ToolResult:
    """Start a worker on a task and return at once with its terminal id."""

    def failed(text: str) -> ToolResult:
        return ToolResult({"success": False, "terminal_id": None, "message": f"Assignment failed: {text}"},
                          ok=False)

    if env.caller.id is None:
        return failed(f"{env.caller.problem}. assign needs it so the worker can send its results back to you")
    try:
        result = await env.kernel.assign(env.caller.id, agent_profile, message,
                                         **({"model": model} if model else {}),
                                         **_worktree_args(use_worktree, worktree_changes))
    except Exception as exc:
        if not _answerable(env, exc):
            raise
        return failed(await _delegation_error(env, agent_profile, exc))
    data = _fields(result, ("success", "terminal_id", "message"))
    return ToolResult({**data, **_worktree_of(result)}, ok=bool(result.success))


ASSIGN = BuiltinTool(
    name="assign",
    run=assign,
    description=(
        "Start a worker agent on a task and return at once with its `terminal_id`, without waiting. The "
        "task reaches the worker as soon as it is ready, with a line asking it to send its results back "
        "to your terminal. The results arrive later in your inbox, typed into your terminal as a new "
        "message: end your turn to receive them, and never sleep or poll to wait for them. Assign "
        "several workers to run tasks in parallel, and delete each one with delete_terminal when you no "
        "longer need it. Use handoff instead when you need the answer before you can go on."
    ),
    params={
        "agent_profile": "Name of the worker's agent profile, e.g. developer or reviewer.",
        "message": "The complete task for the worker: everything it needs to know, self-contained.",
        "model": "Optional: the model the worker runs on instead of its profile's (its CLI's name for it).",
        "use_worktree": USE_WORKTREE_HELP,
        "worktree_changes": WORKTREE_CHANGES_HELP,
    },
)


# -- send_message ----------------------------------------------------------------------------------


async def send_message(env: ToolEnv, message: str, receiver_id: str | None = None) -> ToolResult:
    """Queue a message in another terminal's inbox (default receiver: the caller's own caller)."""

    def failed(text: str) -> ToolResult:
        return ToolResult({"success": False, "error": text}, ok=False)

    if env.caller.id is None:
        return failed(f"{env.caller.problem}. send_message needs it to sign the message as yours")
    if receiver_id is not None and not receiver_id.strip():
        receiver_id = None
    if receiver_id is not None and not TERMINAL_ID_RE.fullmatch(receiver_id):
        return failed(f"invalid receiver_id {receiver_id!r}: expected a terminal id of 8 lowercase hex "
                      f"characters, as handoff and assign return it")
    try:
        queued = await env.kernel.send_message(env.caller.id, receiver_id, message)
    except Exception as exc:
        if not _answerable(env, exc):
            raise
        if isinstance(exc, NotFound) and receiver_id is not None and receiver_id in str(exc):
            return failed(f"receiver terminal {receiver_id} not found: it does not exist or was deleted")
        if isinstance(exc, NotFound):
            return failed(_caller_gone(env, exc) or _explain(env, exc))
        return failed(_explain(env, exc))
    return ToolResult({"success": True, "message_id": queued.id,
                       **_fields(queued, ("sender_id", "receiver_id", "created_at"))})


SEND_MESSAGE = BuiltinTool(
    name="send_message",
    run=send_message,
    description=(
        "Send a message to another agent's terminal. It is queued in the receiver's inbox and typed into "
        "its terminal as soon as the receiver is idle, never while it is busy, so this returns at once. "
        "Leave receiver_id empty to reply to the agent that assigned you your task. Use it to report the "
        "results of an assigned task, or to give more work to a worker you assigned. Your terminal id is "
        "added to the message so the receiver can answer you."
    ),
    params={
        "message": "The message text.",
        "receiver_id": "Terminal id of the receiver; empty means the agent that assigned you your task.",
    },
)


# -- delete_terminal -------------------------------------------------------------------------------


async def delete_terminal(env: ToolEnv, terminal_id: str) -> ToolResult:
    """Stop a terminal and its agent."""
    if not TERMINAL_ID_RE.fullmatch(terminal_id):
        return _failure(f"invalid terminal_id {terminal_id!r}: expected 8 lowercase hex characters")
    if terminal_id == env.caller.id:
        return _failure(f"terminal {terminal_id} is your own terminal; delete only workers you started")
    try:
        if env.caller.id is not None:
            # An agent deletes only the workers it started: never its supervisor, a peer or the user's.
            target = await env.kernel.get_terminal(terminal_id)
            if target.caller_id != env.caller.id:
                starter = f"terminal {target.caller_id}" if target.caller_id else "the user"
                return _failure(f"terminal {terminal_id} was started by {starter}, not by you; delete only "
                                f"workers you started")
        await env.kernel.delete_terminal(terminal_id)
    except Exception as exc:
        if not _answerable(env, exc):
            raise
        if isinstance(exc, NotFound):
            return _failure(f"Terminal {terminal_id} not found: it does not exist or was already deleted")
        if isinstance(exc, Conflict):
            return _failure(f"Terminal {terminal_id} could not be deleted yet (cleanup pending): {exc}")
        return _failure(_explain(env, exc))
    return ToolResult({"success": True, "message": f"Terminal {terminal_id} deleted successfully"})


DELETE_TERMINAL = BuiltinTool(
    name="delete_terminal",
    run=delete_terminal,
    description=(
        "Delete a terminal and stop the agent running in it. Delete the workers you started with assign "
        "once you have their results and no longer need them (handoff removes its worker by itself), and "
        "a worker kept after a failed handoff once you have looked at it. You can delete only workers you "
        "started: not your own terminal, your supervisor or any other agent's."
    ),
    params={"terminal_id": "Id of the terminal to delete (8 lowercase hex characters)."},
)


# -- answer_user_prompt ----------------------------------------------------------------------------


async def answer_user_prompt(env: ToolEnv, terminal_id: str, answer: str,
                             prompt_id: str | None = None) -> ToolResult:
    """Answer the prompt a worker waits on, as its supervisor (the kernel checks that the caller started
    the worker and that the policies let supervisors answer)."""
    if not TERMINAL_ID_RE.fullmatch(terminal_id):
        return _failure(f"invalid terminal_id {terminal_id!r}: expected 8 lowercase hex characters")
    if env.caller.id is None:
        return _failure(f"{env.caller.problem}. answer_user_prompt needs it to check that you started the "
                        "worker")
    if prompt_id is not None and not prompt_id.strip():
        prompt_id = None
    try:
        event = await env.kernel.answer_user_prompt(terminal_id, answer, prompt_id=prompt_id,
                                                    as_terminal=env.caller.id)
    except Exception as exc:
        if not _answerable(env, exc):
            raise
        if isinstance(exc, NotFound):
            return _failure(f"Terminal {terminal_id} not found: it does not exist or was deleted")
        return _failure(_explain(env, exc))
    if event is None:
        return ToolResult({"success": True, "message": f"Answer typed into terminal {terminal_id}"})
    prompt = event.prompt
    picked = f"option {event.option} ({prompt.prompt.option(event.option).label})" if event.option else "text"
    return ToolResult({"success": True, "prompt_id": prompt.id,
                       "message": f"Answered prompt {prompt.id} of terminal {terminal_id} with {picked}"})


ANSWER_USER_PROMPT = BuiltinTool(
    name="answer_user_prompt",
    run=answer_user_prompt,
    description=(
        "Answer the prompt a worker you started is showing (a permission, a question, a menu) while it "
        "waits for user input (status waiting_user_answer). Pick an option by its number or label, or give "
        "text for a prompt that takes text. Name the prompt (prompt_id, from the message that told you "
        "about it) so that an answer meant for one prompt never lands on the next. Policies may keep some "
        "prompts for a person."
    ),
    params={
        "terminal_id": "Id of the worker's terminal.",
        "answer": "The option's number or label, or text (at most 4000 characters).",
        "prompt_id": "The prompt meant (<terminal id>-<n>); refused when another prompt is open.",
    },
)

BUILTIN_TOOLS: tuple[BuiltinTool, ...] = (HANDOFF, ASSIGN, SEND_MESSAGE, DELETE_TERMINAL, ANSWER_USER_PROMPT,
                                          GET_HANDOFF_RESULT)

__all__ = [
    "BUILTIN_NAMES",
    "BUILTIN_TOOLS",
    "BuiltinTool",
    "CALL_HEADER",
    "Caller",
    "ID_HEADER",
    "ID_VARIABLE",
    "RELAY_HEADER",
    "SECRET_HEADER",
    "SECRET_VARIABLE",
    "SERVER_INSTRUCTIONS",
    "ToolEnv",
    "ToolResult",
    "answer_user_prompt",
    "assign",
    "delete_terminal",
    "get_handoff_result",
    "handoff",
    "send_message",
]
