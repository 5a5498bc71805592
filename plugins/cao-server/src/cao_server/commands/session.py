"""``cao session list|status|send``: sessions seen through their conductor (their oldest terminal)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from ._waiting import DEFAULT_TIMEOUT

if TYPE_CHECKING:
    from cao_hookspecs import KernelAPI, Terminal

# Lines of the last answer ``session status`` shows before summarising the rest, as upstream.
STATUS_LINES = 20


@click.group()
def session() -> None:
    """List sessions, show a session's status, send a message to its conductor."""


async def _conductor(api: KernelAPI, session_name: str) -> tuple[Terminal, list[Terminal]]:
    """The session's oldest terminal (its conductor) and all its terminals, oldest first."""
    _info, terminals = await api.get_session(session_name)
    if not terminals:
        raise click.ClickException(f"No terminals found for session '{session_name}'")
    return terminals[0], terminals


@session.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def list_sessions(as_json: bool) -> None:
    """List the cao sessions with their conductor and its status."""
    from cao_hookspecs.errors import NotFound

    from . import _api
    from ._render import echo_json, table, terminal_summary

    async def body(api: KernelAPI) -> list[tuple[str, Terminal | None, int]]:
        rows = []
        for info in await api.list_sessions():
            try:
                terminals = await api.list_terminals(info.name)
            except NotFound:  # removed while we were listing
                continue
            rows.append((info.name, terminals[0] if terminals else None, len(terminals)))
        return rows

    rows = _api.run(body)
    if as_json:
        echo_json([
            {"session": name, "conductor": terminal_summary(conductor) if conductor else None,
             "terminal_count": count}
            for name, conductor, count in rows
        ])
        return
    if not rows:
        click.echo("No active sessions")
        return
    table(
        [("SESSION", 25), ("CONDUCTOR", 12), ("STATUS", 15), ("TERMINALS", 10)],
        [(name, c.id if c else None, terminal_summary(c)["status"] if c else None, count)
         for name, c, count in rows],
    )


@session.command()
@click.argument("session_name")
@click.option("--terminal", "terminal_id", metavar="ID", help="Show this terminal instead of the conductor.")
@click.option("--workers", is_flag=True, help="Also list the session's other terminals.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def status(session_name: str, terminal_id: str | None, workers: bool, as_json: bool) -> None:
    """Show the status and last answer of SESSION_NAME's conductor (or of one terminal)."""
    from cao_hookspecs.errors import CaoError

    from . import _api
    from ._render import echo_json, status_of, table, terminal_summary

    async def body(api: KernelAPI) -> tuple[Terminal, list[Terminal], str | None]:
        if terminal_id:
            target, others = await api.get_terminal(terminal_id), []
        else:
            target, terminals = await _conductor(api, session_name)
            others = terminals[1:]
        try:
            last: str | None = await api.get_output(target.id, "last")
        except CaoError:  # no answer on screen yet
            last = None
        return target, others, last

    target, others, last = _api.run(body)
    show_workers = workers and not terminal_id
    waiting = [t.prompt for t in (target, *others) if t.prompt is not None]
    if as_json:
        from ..converter import to_json

        result: dict[str, Any] = {"session": session_name,
                                  "conductor": {**terminal_summary(target), "last_output": last}}
        if waiting:  # upstream's shape otherwise
            result["prompts"] = [to_json(prompt) for prompt in waiting]
        if show_workers:
            result["workers"] = [terminal_summary(t) for t in others]
        echo_json(result)
        return
    click.echo(f"Session:  {session_name}")
    click.echo(f"Terminal: {target.id}")
    click.echo(f"Agent:    {target.agent_profile}")
    click.echo(f"Provider: {target.provider}")
    click.echo(f"Status:   {status_of(target)}")
    if last:
        lines = last.splitlines()
        click.echo("\nLast response:")
        click.echo("\n".join(lines[:STATUS_LINES]))
        if len(lines) > STATUS_LINES:
            click.echo(f"... ({len(lines) - STATUS_LINES} more lines)")
    else:
        click.echo("\nNo last response available")
    if show_workers:
        if others:
            click.echo("")
            table([("ID", 12), ("AGENT", 20), ("PROVIDER", 15), ("STATUS", 15)],
                  [(t.id, t.agent_profile, t.provider, status_of(t)) for t in others])
        else:
            click.echo("\nNo worker terminals")
    if waiting:
        from ._prompts import prompt_lines

        for prompt in waiting:
            click.echo(f"\nTerminal {prompt.terminal_id} waits on a prompt:")
            click.echo("\n".join(prompt_lines(prompt)))


@session.command()
@click.argument("session_name")
@click.argument("policy_file", required=False, type=click.Path(exists=True, dir_okay=False))
@click.option("--clear", is_flag=True, help="Remove the session's prompt policy.")
def policy(session_name: str, policy_file: str | None, clear: bool) -> None:
    """Show SESSION_NAME's prompt policy, set it from POLICY_FILE (YAML: rules, timeout, on_timeout,
    supervisor), or --clear it. It applies to the session's terminals before their profiles' policies."""
    import yaml

    from . import _api

    if clear and policy_file:
        raise click.UsageError("give POLICY_FILE or --clear, not both")
    if policy_file:
        try:
            with open(policy_file, encoding="utf-8") as file:
                data = yaml.safe_load(file)
        except yaml.YAMLError as exc:
            raise click.ClickException(f"{policy_file} is not valid YAML: {exc}") from None
        _api.run(lambda api: api.set_prompt_policy(session_name, data))
        click.echo(f"✓ Prompt policy of session {session_name} set from {policy_file}")
    elif clear:
        _api.run(lambda api: api.set_prompt_policy(session_name, None))
        click.echo(f"✓ Prompt policy of session {session_name} removed")
    else:
        current = _api.run(lambda api: api.get_prompt_policy(session_name))
        click.echo(yaml.safe_dump(dict(current), sort_keys=False).rstrip() if current
                   else f"No prompt policy for session {session_name}")


@session.command()
@click.argument("session_name")
@click.argument("message")
@click.option("--terminal", "terminal_id", metavar="ID", help="Send to this terminal of the session.")
@click.option("--async", "run_async", is_flag=True, help="Return once the message is sent.")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=DEFAULT_TIMEOUT,
              show_default=True, metavar="SECONDS", help="How long to wait for the answer.")
@click.pass_context
def send(
    ctx: click.Context, session_name: str, message: str, terminal_id: str | None, run_async: bool,
    timeout: float,
) -> None:
    """Send MESSAGE to SESSION_NAME's conductor (or one terminal) and print the answer.

    Refused while the target is busy. Ctrl-C stops waiting, prints what the agent answered so far and
    exits with status 130; the agent keeps working.
    """
    from cao_hookspecs import TerminalStatus

    from . import _api
    from ._waiting import wait_and_print

    outcome: dict[str, bool] = {}

    async def body(api: KernelAPI) -> None:
        conductor, terminals = await _conductor(api, session_name)
        if terminal_id is None:
            target = conductor
        else:
            found = [t for t in terminals if t.id == terminal_id]
            if not found:
                raise click.ClickException(f"terminal {terminal_id} is not in session '{session_name}'")
            target = found[0]
        current = TerminalStatus((await api.get_status(target.id)).status)
        if not current.ready:
            raise click.ClickException(
                f"Terminal {target.id} is currently {current.value}. Wait for it to finish before sending."
            )
        await api.send_input(target.id, message)
        if run_async:
            click.echo(f"Message sent to terminal {target.id}")
            return
        outcome["interrupted"] = await wait_and_print(api, target, timeout)

    _api.run(body, ctx)
    if outcome.get("interrupted"):
        ctx.exit(130)
