"""``cao agent``: the orchestration tools from the shell, for scripts and for an agent whose MCP server
is gone.

Each verb makes the ``KernelAPI`` call the matching MCP tool makes, over the running cao-server, acting
as the terminal named by ``--as`` or ``CAO_TERMINAL_ID``. Arguments and flags are upstream's. Output is
``key: value`` lines, or one JSON object with ``--json`` (also when stdout is not a terminal, as
upstream). Exit codes: 0 done, 1 failed (the answer says why), 2 bad usage, 75 a handoff job still
running (ask again later), 130 interrupted.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from cao_hookspecs import KernelAPI

ID_VARIABLE = "CAO_TERMINAL_ID"
STILL_RUNNING = 75  # EX_TEMPFAIL: the job exists and is not done; try again later
INTERRUPTED = 130

_AS = click.option("--as", "as_terminal", metavar="TERMINAL_ID", default=None,
                   help=f"Act as this terminal (default: ${ID_VARIABLE}).")
_JSON = click.option("--json", "as_json", is_flag=True, default=False, help="Emit the result as JSON.")


def _caller(as_terminal: str | None, *, required: str | None) -> str | None:
    """The terminal this command acts as; with ``required`` (what needs it) a missing one is an error."""
    from cao_server import validation

    value = as_terminal if as_terminal is not None else os.environ.get(ID_VARIABLE) or None
    source = "--as" if as_terminal is not None else ID_VARIABLE
    if value is None:
        if required:
            raise click.UsageError(f"{ID_VARIABLE} is not set and --as was not given: {required} needs the "
                                   f"terminal you act as (run it inside a cao terminal, or pass --as ID)")
        return None
    if not validation.TERMINAL_ID_RE.match(value):
        raise click.UsageError(f"{source} {value!r} is not a terminal id (8 lowercase hex characters)")
    return value


def _terminal_id(value: str) -> str:
    from cao_server import validation

    if not validation.TERMINAL_ID_RE.match(value):
        raise click.UsageError(f"{value!r} is not a terminal id (8 lowercase hex characters)")
    return value


def _unsupported(**given: Any) -> None:
    """Upstream flags cao's calls do not take yet: refused by name rather than silently ignored."""
    for flag, value in given.items():
        if value:
            raise click.UsageError(f"--{flag.replace('_', '-')} is not supported by this cao")


def _choices(model: str | None, use_worktree: bool) -> dict[str, Any]:
    """The worker choices a verb passes on only when given (an older server's API takes none)."""
    return {**({"model": model} if model else {}), **({"use_worktree": True} if use_worktree else {})}


def _emit(result: dict[str, Any], as_json: bool) -> None:
    if as_json or not sys.stdout.isatty():
        click.echo(json.dumps(result, indent=2))
        return
    for key, value in result.items():
        if key == "success" or value is None:
            continue
        if key in ("output", "last_message"):
            click.echo(f"{key}:")
            click.echo(value)
        else:
            click.echo(f"{key}: {value}")


def _call(work: Callable[[KernelAPI], Awaitable[dict[str, Any]]], subject: dict[str, Any],
          as_json: bool) -> dict[str, Any]:
    """Run ``work`` against the server; cao's errors become a failed answer (exit 1), never a traceback."""
    import asyncio

    from cao_hookspecs.errors import CaoError

    from ._api import connect, settings

    async def session() -> dict[str, Any]:
        api = connect(settings(click.get_current_context(silent=True)))
        try:
            await api.ping()
            return await work(api)
        finally:
            await api.aclose()

    try:
        result = asyncio.run(session())
    except CaoError as exc:
        result = {"success": False, **subject, "error": str(exc).strip() or type(exc).__name__}
    _emit(result, as_json)
    if not result.get("success"):
        raise click.exceptions.Exit(1)
    return result


def _fields(record: Any, names: tuple[str, ...]) -> dict[str, Any]:
    from cao_server.converter import to_json_fields

    return to_json_fields(record, names)


@click.group()
def agent() -> None:
    """Orchestrate other agents from the shell: the MCP tools as commands.

    Acts as the terminal named by --as or CAO_TERMINAL_ID (set in every cao terminal). handoff also works
    with neither (its worker gets a new session); assign and send-message need one. Requires a running
    cao-server.

    \b
    Examples:
      cao agent handoff developer "Add a unit test for parse_args" --timeout 900
      cao agent assign reviewer "Review the diff on this branch"
      cao agent result 6f1c0a2e9b8d4c7fa1e2b3c4d5e6f708   # a handoff job's answer
    """


@agent.command(name="assign")
@click.argument("agent_profile")
@click.argument("message")
@click.option("--working-directory", default=None, hidden=True)
@click.option("--engine", default=None, hidden=True)
@click.option("--model", default=None, help="Model the worker runs on (default: its profile's).")
@click.option("--use-worktree", is_flag=True, default=False,
              help="Run the worker in its own git worktree and branch made from your HEAD.")
@click.option("--description", default=None, hidden=True)
@_AS
@_JSON
def assign_cmd(agent_profile: str, message: str, working_directory: str | None, engine: str | None,
               model: str | None, use_worktree: bool, description: str | None, as_terminal: str | None,
               as_json: bool) -> None:
    """Start a worker on MESSAGE and return at once with its terminal id.

    The worker gets the task with a line asking it to send its results back to your terminal; they
    arrive in your inbox. Delete it with `cao agent cancel --delete ID` when done.
    """
    _unsupported(working_directory=working_directory, engine=engine, description=description)
    caller = _caller(as_terminal, required="assign")
    assert caller is not None

    async def work(api: KernelAPI) -> dict[str, Any]:
        result = await api.assign(caller, agent_profile, message, **_choices(model, use_worktree))
        return _fields(result, ("success", "terminal_id", "message"))

    _call(work, {"terminal_id": None}, as_json)


@agent.command(name="handoff")
@click.argument("agent_profile")
@click.argument("message")
@click.option("--timeout", type=click.IntRange(1, 3600), default=600, show_default=True,
              help="Maximum seconds to wait for the worker to finish.")
@click.option("--no-wait", "no_wait", is_flag=True, default=False,
              help="Return once the worker exists; read its answer later with `cao agent result JOB_ID`.")
@click.option("--working-directory", default=None, hidden=True)
@click.option("--engine", default=None, hidden=True)
@click.option("--model", default=None, help="Model the worker runs on (default: its profile's).")
@click.option("--use-worktree", is_flag=True, default=False,
              help="Run the worker in its own git worktree and branch made from your HEAD.")
@click.option("--description", default=None, hidden=True)
@_AS
@_JSON
def handoff_cmd(agent_profile: str, message: str, timeout: int, no_wait: bool, working_directory: str | None,
                engine: str | None, model: str | None, use_worktree: bool, description: str | None,
                as_terminal: str | None, as_json: bool) -> None:
    """Give MESSAGE to a new AGENT_PROFILE worker, wait for its answer, print it, remove the worker.

    The handoff's job id goes to stderr first: the work goes on if this command is interrupted, and
    `cao agent result JOB_ID` prints its answer later (kept for CAO_HANDOFF_RESULT_DAYS days).

    \b
    Exit codes:
      0    completed (with --no-wait: the worker exists)
      1    failed, errored or timed out
      130  interrupted; the handoff goes on (see its job id)
    """
    import uuid

    _unsupported(working_directory=working_directory, engine=engine, description=description)
    caller = _caller(as_terminal, required=None)
    job_id = uuid.uuid4().hex
    click.echo(f"job_id: {job_id}", err=True)

    async def work(api: KernelAPI) -> dict[str, Any]:
        import asyncio

        running = asyncio.ensure_future(api.handoff(caller, agent_profile, message, timeout=float(timeout),
                                                    job_id=job_id, **_choices(model, use_worktree)))
        if not no_wait:
            result = await running
            return {**_fields(result, ("success", "message", "terminal_id", "output")), "job_id": job_id}
        return await _worker_started(api, job_id, running)

    try:
        _call(work, {"job_id": job_id}, as_json)
    except KeyboardInterrupt:
        click.echo(f"\nInterrupted: the handoff goes on; read its answer with `cao agent result {job_id}`.",
                   err=True)
        sys.exit(INTERRUPTED)


async def _worker_started(api: KernelAPI, job_id: str, running: Any) -> dict[str, Any]:
    """Wait until the job's worker exists (or the job ended), then answer without waiting for more."""
    import asyncio

    from cao_hookspecs.errors import NotFound

    while not running.done():
        try:
            job = await api.get_handoff_result(job_id)
        except NotFound:  # the request has not reached the server yet
            job = None
        if job is not None and (job.terminal_id or job.state != "running"):
            break
        await asyncio.sleep(0.2)
    if running.done():
        result = running.result()  # a refusal raises here, as it would without --no-wait
        return {**_fields(result, ("success", "message", "terminal_id", "output")), "job_id": job_id}
    # The server keeps working once this client goes: the job is detached from its request.
    running.cancel()
    return {"success": True, "pending": True, "job_id": job_id,
            "terminal_id": job.terminal_id if job else None,
            "message": f"Handoff started; read its answer with `cao agent result {job_id}`"}


@agent.command(name="send-message")
@click.argument("message")
@click.option("--to", "receiver_id", default=None,
              help="Receiver's terminal id; omit to reply to the terminal that started yours.")
@_AS
@_JSON
def send_message_cmd(message: str, receiver_id: str | None, as_terminal: str | None, as_json: bool) -> None:
    """Queue MESSAGE in another terminal's inbox; it is typed in when the receiver is ready."""
    caller = _caller(as_terminal, required="send-message")
    assert caller is not None
    if receiver_id is not None:
        _terminal_id(receiver_id)

    async def work(api: KernelAPI) -> dict[str, Any]:
        queued = await api.send_message(caller, receiver_id, message)
        return {"success": True, "message_id": queued.id,
                **_fields(queued, ("sender_id", "receiver_id", "created_at"))}

    _call(work, {"receiver_id": receiver_id}, as_json)


@agent.command(name="status")
@click.argument("terminal_id")
@_JSON
def status_cmd(terminal_id: str, as_json: bool) -> None:
    """Show a terminal's status: idle, processing, completed, waiting_user_answer or error."""
    _terminal_id(terminal_id)

    async def work(api: KernelAPI) -> dict[str, Any]:
        terminal = await api.get_terminal(terminal_id)
        report = await api.get_status(terminal_id)
        return {"success": True, "terminal_id": terminal.id, "status": report.status.value,
                "agent_profile": terminal.agent_profile, "provider": terminal.provider,
                "session_name": terminal.session_name}

    _call(work, {"terminal_id": terminal_id}, as_json)


@agent.command(name="result")
@click.argument("id_")
@_JSON
def result_cmd(id_: str, as_json: bool) -> None:
    """Print a worker's last answer (ID: its terminal id), or a handoff job's outcome (ID: the job id).

    A job still running exits with 75: ask again later.
    """
    from cao_hookspecs.handoff_jobs import JOB_ID_RE

    if JOB_ID_RE.match(id_):
        async def job(api: KernelAPI) -> dict[str, Any]:
            found = await api.get_handoff_result(id_)
            data = _fields(found, ("job_id", "state", "terminal_id", "last_message", "error_message"))
            return {"success": found.state != "error", **data}

        result = _call(job, {"job_id": id_}, as_json)
        if result.get("state") == "running":
            raise click.exceptions.Exit(STILL_RUNNING)
        return
    if _terminal_id_or_none(id_) is None:
        raise click.UsageError(f"{id_!r} is neither a terminal id (8 lowercase hex characters) nor a handoff "
                               f"job id (32)")

    async def last(api: KernelAPI) -> dict[str, Any]:
        return {"success": True, "terminal_id": id_, "output": await api.get_output(id_, "last")}

    _call(last, {"terminal_id": id_}, as_json)


def _terminal_id_or_none(value: str) -> str | None:
    from cao_server import validation

    return value if validation.TERMINAL_ID_RE.match(value) else None


@agent.command(name="cancel")
@click.argument("terminal_id")
@click.option("--delete", "delete_flag", is_flag=True, default=False,
              help="Delete the terminal (as the delete_terminal tool) instead of interrupting its turn.")
@_AS
@_JSON
def cancel_cmd(terminal_id: str, delete_flag: bool, as_terminal: str | None, as_json: bool) -> None:
    """Interrupt a worker's current turn (Ctrl-C), or with --delete remove it.

    Acting as a terminal, you may cancel only workers it started, as with the MCP tools.
    """
    _terminal_id(terminal_id)
    caller = _caller(as_terminal, required=None)

    async def work(api: KernelAPI) -> dict[str, Any]:
        if caller is not None:
            if terminal_id == caller:
                return {"success": False, "terminal_id": terminal_id,
                        "error": f"terminal {terminal_id} is your own terminal; cancel only workers you "
                                 "started"}
            target = await api.get_terminal(terminal_id)
            if target.caller_id != caller:
                starter = f"terminal {target.caller_id}" if target.caller_id else "the user"
                return {"success": False, "terminal_id": terminal_id,
                        "error": f"terminal {terminal_id} was started by {starter}, not by {caller}"}
        if delete_flag:
            await api.delete_terminal(terminal_id)
            return {"success": True, "terminal_id": terminal_id,
                    "message": f"Terminal {terminal_id} deleted"}
        await api.send_keys(terminal_id, "C-c")
        return {"success": True, "terminal_id": terminal_id,
                "message": f"Sent interrupt (C-c) to terminal {terminal_id}"}

    _call(work, {"terminal_id": terminal_id}, as_json)


__all__ = ["agent"]
