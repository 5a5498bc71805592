"""``cao info``: where cao keeps its files, which server it talks to, and the caller's session.

It works with no server running (it says so): it is the command to run when something is wrong.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

SESSION_PREFIX = "cao-"
DEFAULT_HOME = "~/.aws/cli-agent-orchestrator"


def _home(ctx: click.Context, settings: dict[str, str]) -> Path:
    """The cao home of this invocation's kernel (it reads ``CAO_HOME_DIR`` and applies cao's default)."""
    from cao_hookspecs.cli import kernel_from_context

    try:
        home = getattr(kernel_from_context(ctx), "home", None)
    except RuntimeError:
        home = None
    root = getattr(home, "root", None)
    return Path(root) if root is not None else Path(settings.get("CAO_HOME_DIR") or DEFAULT_HOME).expanduser()


@click.command()
@click.pass_context
def info(ctx: click.Context) -> None:
    """Show the cao home, the server address and whether it answers, and the current cao session.

    The current session is the one of the terminal named by CAO_TERMINAL_ID (set in every agent's
    terminal), else the tmux session this command runs in.
    """
    import asyncio

    from . import _api

    from cao_hookspecs.errors import CaoError

    settings = _api.settings(ctx)
    click.echo(f"cao home: {_home(ctx, settings)}")
    try:
        facts = asyncio.run(_gather(settings))
    except CaoError as exc:  # settings that name no usable server (a malformed port)
        raise click.ClickException(str(exc)) from None
    state = "running" if facts["running"] else "not running; start it with `cao server`"
    click.echo(f"Server: {facts['url']} ({state})")
    session = facts["session"]
    if not session or not session.startswith(SESSION_PREFIX):
        click.echo("Not currently in a CAO session.")
    elif facts["terminals"] is None:
        click.echo(f"Session ID: {session} (Warning: {facts['warning']})")
    else:
        click.echo(f"Session ID: {session}")
        click.echo(f"Active terminals: {facts['terminals']}")


async def _gather(settings: dict[str, str]) -> dict[str, Any]:
    from cao_hookspecs.errors import CaoError, NotFound

    from . import _api
    from ._tmux import current_session

    api = _api.connect(settings)
    facts: dict[str, Any] = {"url": getattr(api, "base_url", ""), "running": False, "session": None,
                             "terminals": None, "warning": "Could not connect to CAO server"}
    try:
        try:
            await api.ping()
            facts["running"] = True
        except _api.server_not_running():
            pass
        terminal_id = os.environ.get("CAO_TERMINAL_ID")
        if facts["running"] and terminal_id:
            try:
                facts["session"] = (await api.get_terminal(terminal_id)).session_name
            except CaoError:
                facts["session"] = None
        if facts["session"] is None:
            facts["session"] = current_session()
        if facts["running"] and (facts["session"] or "").startswith(SESSION_PREFIX):
            try:
                _info, terminals = await api.get_session(facts["session"])
                facts["terminals"] = len(terminals)
            except NotFound:
                facts["warning"] = "Session not found in CAO server"
            except CaoError as exc:
                facts["warning"] = str(exc)
    finally:
        await api.aclose()
    return facts
