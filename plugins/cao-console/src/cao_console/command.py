"""``cao console``: the click command. Textual is imported only once the terminal UI starts, so
``cao console --help`` and ``cao console --web`` stay as quick as every other command."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from cao_hookspecs import KernelAPI


@click.command()
@click.option("--web", is_flag=True, help="Print a one-time login link to the web console instead.")
@click.option("--session", "session_name", metavar="NAME", help="Show only this session.")
@click.pass_context
def console(ctx: click.Context, web: bool, session_name: str | None) -> None:
    """Watch and steer the team in a terminal UI: the team tree with live statuses, the selected
    terminal's screen, input, prompt answers, stopping, and tmux attach.

    The server is the one every cao command talks to (CAO_API_HOST, CAO_API_PORT, the token in the cao
    home), on this machine or another.
    """
    from cao_hookspecs.names import SESSION_PREFIX
    from cao_server.commands import _api

    from .server import ConsoleServer, connect

    settings = _api.settings(ctx)
    if session_name and not session_name.startswith(SESSION_PREFIX):
        session_name = SESSION_PREFIX + session_name  # as the kernel names it, for the events' filter too

    def on(call: Any) -> Any:
        async def body(api: KernelAPI) -> Any:
            return await call(ConsoleServer(api, settings))  # type: ignore[arg-type]

        return _api.run(body, ctx)

    if web:
        link = on(lambda server: server.login_link())
        click.echo(link)
        return
    # Read before the screen is taken: a server that is down is one line on stderr, and the first
    # frame already shows the team.
    team = on(lambda server: server.team(session_name))
    from .app import ConsoleApp

    ConsoleApp(connect(settings), team=team, session=session_name).run()
