"""``cao shutdown --all | --session NAME``: delete sessions, their terminals and their agents.

Exit status: 0 when every named session is gone afterwards. ``--session`` naming a session the server
does not know prints upstream's "already removed" line on stderr, as upstream does, but exits 1: the
name may be a typo, and a script must be able to tell. With ``--all`` a session that disappears between
the listing and its deletion was removed by someone else, which is what ``--all`` asked for: exit 0.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from cao_hookspecs import KernelAPI


@click.command()
@click.option("--all", "everything", is_flag=True, help="Shut down every cao session.")
@click.option("--session", "session_name", metavar="NAME", help="Shut down this session.")
@click.pass_context
def shutdown(ctx: click.Context, everything: bool, session_name: str | None) -> None:
    """Delete one session (--session NAME) or every cao session (--all), with their agents."""
    from cao_hookspecs.errors import CaoError, NotFound

    from . import _api

    if everything == bool(session_name):
        raise click.UsageError("give exactly one of --all or --session NAME")
    failures: list[str] = []

    async def body(api: KernelAPI) -> None:
        names = [s.name for s in await api.list_sessions()] if everything else [_full_name(str(session_name))]
        if not names:
            click.echo("No cao sessions found to shutdown")
            return
        for name in names:
            try:
                await api.delete_session(name)
            except NotFound:
                click.echo(f"Session '{name}' already removed (the server has no such session)", err=True)
                if not everything:
                    failures.append(name)
                continue
            except CaoError as exc:
                click.echo(f"Error: session '{name}': {exc}", err=True)
                failures.append(name)
                continue
            click.echo(f"✓ Shutdown session '{name}'")

    _api.run(body, ctx)
    if failures:
        ctx.exit(1)


def _full_name(name: str) -> str:
    """The name the server gives the session: cao adds the ``cao-`` prefix when it is missing."""
    return name if name.startswith("cao-") else f"cao-{name}"
