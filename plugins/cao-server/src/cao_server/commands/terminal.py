"""``cao terminal ...``: inspect and drive one terminal by its id."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from cao_hookspecs import KernelAPI, StatusReport, Terminal

INBOX_STATES = ("pending", "delivering", "delivered", "failed", "dead", "uncertain")
MESSAGE_WIDTH = 60


@click.group()
def terminal() -> None:
    """Inspect and drive single terminals (ids are 8 hex characters)."""


@terminal.command("list")
@click.argument("session_name")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def list_terminals(session_name: str, as_json: bool) -> None:
    """List the terminals of SESSION_NAME, oldest (the conductor) first."""
    from . import _api
    from ._render import echo_json, status_of, table, terminal_json

    async def body(api: KernelAPI) -> list[Terminal]:
        _info, terminals = await api.get_session(session_name)
        return terminals

    terminals = _api.run(body)
    if as_json:
        echo_json([terminal_json(t) for t in terminals])
    elif not terminals:
        click.echo(f"No terminals in session '{session_name}'")
    else:
        table([("ID", 10), ("NAME", 24), ("AGENT", 20), ("PROVIDER", 14), ("STATUS", 20)],
              [(t.id, t.name, t.agent_profile, t.provider, status_of(t)) for t in terminals])


@terminal.command()
@click.argument("terminal_id")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def status(terminal_id: str, as_json: bool) -> None:
    """Show TERMINAL_ID's status, the evidence for it, and where it runs."""
    from ..converter import to_json
    from . import _api
    from ._render import echo_json, terminal_json

    async def body(api: KernelAPI) -> tuple[Terminal, StatusReport]:
        return await api.get_terminal(terminal_id), await api.get_status(terminal_id)

    record, report = _api.run(body)
    state = str(getattr(report.status, "value", report.status))
    if as_json:
        echo_json({**terminal_json(record), **to_json(report)})
        return
    click.echo(f"Terminal: {record.id} ({record.name})")
    click.echo(f"Session:  {record.session_name}")
    click.echo(f"Agent:    {record.agent_profile}")
    click.echo(f"Provider: {record.provider}")
    click.echo(f"Status:   {state}" + (f" ({report.evidence})" if report.evidence else ""))
    if record.working_directory:
        click.echo(f"Folder:   {record.working_directory}")
    if record.caller_id:
        click.echo(f"Caller:   {record.caller_id}")
    if record.prompt is not None:
        from ._prompts import prompt_lines

        click.echo("\n".join(prompt_lines(record.prompt)))


@terminal.command()
@click.argument("terminal_id")
@click.argument("option", required=False, type=click.IntRange(1, 99))
@click.option("--text", help="Text to type: after OPTION's keys, or alone at a prompt that takes text.")
@click.option("--prompt", "prompt_id", metavar="PROMPT_ID",
              help="The prompt meant (as shown); refused, with nothing typed, when another is open.")
@click.option("--by", default="person", show_default=True, help="Who answers, for the audit trail.")
@click.option("--json", "as_json", is_flag=True, help="Print the recorded answer as JSON.")
def answer(terminal_id: str, option: int | None, text: str | None, prompt_id: str | None, by: str,
           as_json: bool) -> None:
    """Answer the prompt TERMINAL_ID waits on with option number OPTION (see `cao terminal status`), and/or
    --text. Returns once the prompt has left the screen."""
    from ..converter import to_json
    from . import _api
    from ._render import echo_json

    if option is None and text is None:
        raise click.UsageError("give OPTION (a number from 1), --text, or both")
    event = _api.run(lambda api: api.answer_prompt(terminal_id, option=option, text=text, prompt_id=prompt_id,
                                                   by=by))
    if as_json:
        echo_json(to_json(event))
        return
    label = event.prompt.prompt.option(event.option).label if event.option else ""
    picked = f"option {event.option} ({label})" if event.option else ""
    typed = "text" if event.text is not None else ""
    click.echo(f"✓ Answered prompt {event.prompt.id} with {' and '.join(p for p in (picked, typed) if p)}")


@terminal.command()
@click.argument("terminal_id")
@click.option("--limit", type=click.IntRange(1, 10_000), default=200, show_default=True,
              help="The latest this many events.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def prompts(terminal_id: str, limit: int, as_json: bool) -> None:
    """TERMINAL_ID's prompt audit trail: every prompt, who answered it and how, oldest first (kept after
    the terminal is gone)."""
    from ..converter import to_json
    from . import _api
    from ._prompts import event_line
    from ._render import echo_json

    events = _api.run(lambda api: api.prompt_history(terminal_id, limit=limit))
    if as_json:
        echo_json(to_json(events))
    elif not events:
        click.echo(f"No prompts recorded for terminal {terminal_id}")
    else:
        click.echo("\n".join(event_line(event) for event in events))


@terminal.command()
@click.argument("terminal_id")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def timeline(terminal_id: str, as_json: bool) -> None:
    """When each step of TERMINAL_ID's start and work happened: seconds since its first step, the gap
    from the step before, the step and what is known about it (kept a while after the terminal is gone)."""
    from ..converter import to_json
    from . import _api
    from ._render import echo_json, timeline_lines

    events = _api.run(lambda api: api.get_timeline(terminal_id))
    if as_json:
        echo_json({"terminal_id": terminal_id, "events": to_json(events)})
    else:
        click.echo("\n".join(timeline_lines(events)))


@terminal.command()
@click.argument("terminal_id")
@click.option("--mode", type=click.Choice(["full", "last"]), default="full", show_default=True,
              help="full: the screen and its scrollback; last: the agent's last answer.")
def output(terminal_id: str, mode: str) -> None:
    """Print TERMINAL_ID's output."""
    from . import _api

    text = _api.run(lambda api: api.get_output(terminal_id, mode))
    click.echo(text.rstrip("\n"))


@terminal.command()
@click.argument("terminal_id")
@click.argument("message")
def send(terminal_id: str, message: str) -> None:
    """Type MESSAGE into TERMINAL_ID and submit it (no wait; see `cao session send`)."""
    from . import _api

    _api.run(lambda api: api.send_input(terminal_id, message))
    click.echo(f"Message sent to terminal {terminal_id}")


@terminal.command()
@click.argument("terminal_id")
@click.argument("key")
def key(terminal_id: str, key: str) -> None:
    """Press KEY in TERMINAL_ID (a tmux key name: Enter, Escape, Up, C-c, ...)."""
    from . import _api

    _api.run(lambda api: api.send_keys(terminal_id, key))
    click.echo(f"Sent {key} to terminal {terminal_id}")


@terminal.command("exit")
@click.argument("terminal_id")
def exit_(terminal_id: str) -> None:
    """Ask TERMINAL_ID's agent to quit with its provider's exit command (the terminal stays)."""
    from . import _api

    _api.run(lambda api: api.exit_terminal(terminal_id))
    click.echo(f"Exit command sent to terminal {terminal_id}")


@terminal.command()
@click.argument("terminal_id")
def delete(terminal_id: str) -> None:
    """Stop TERMINAL_ID and its agent, and remove it."""
    from . import _api

    _api.run(lambda api: api.delete_terminal(terminal_id))
    click.echo(f"✓ Deleted terminal {terminal_id}")


@terminal.command()
@click.argument("terminal_id")
@click.option("--state", type=click.Choice(INBOX_STATES), help="Only messages in this state.")
@click.option("--limit", type=click.IntRange(1, 1000), default=10, show_default=True,
              help="At most this many messages, oldest first.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def inbox(terminal_id: str, state: str | None, limit: int, as_json: bool) -> None:
    """List the messages queued for or delivered to TERMINAL_ID."""
    from cao_hookspecs import MessageState

    from . import _api
    from ._render import clock, echo_json, message_json, one_line, table

    wanted = MessageState(state) if state else None
    messages = _api.run(lambda api: api.list_messages(terminal_id, state=wanted, limit=limit))
    if as_json:
        echo_json([message_json(m) for m in messages])
    elif not messages:
        click.echo(f"No messages for terminal {terminal_id}" + (f" in state {state}" if state else ""))
    else:
        table([("ID", 6), ("FROM", 10), ("STATE", 10), ("TIME", 8), ("MESSAGE", MESSAGE_WIDTH)],
              [(m.id, m.sender_id, m.state.value, clock(m.created_at),
                one_line(m.body, MESSAGE_WIDTH)) for m in messages])


@terminal.command()
@click.argument("terminal_id")
@click.option("--json", "as_json", is_flag=True, help="Print the new terminal as JSON.")
def restore(terminal_id: str, as_json: bool) -> None:
    """Start a new agent that continues removed terminal TERMINAL_ID.

    It runs the same profile and provider in the same working directory (in the old session when it still
    exists, else in a new one of that name) and gets the old terminal's saved screen log as its first
    input. Logs are kept `terminal.history_days` days (`cao config`).
    """
    from . import _api
    from ._render import echo_json, terminal_json

    async def body(api: KernelAPI) -> Terminal:
        return await api.restore_terminal(terminal_id)

    record = _api.run(body)
    if as_json:
        echo_json(terminal_json(record))
        return
    click.echo(f"Restored terminal {terminal_id} as terminal {record.id} ({record.name}) "
               f"in session '{record.session_name}'")
    click.echo(f"Agent: {record.agent_profile} | Provider: {record.provider}")
    if record.working_directory:
        click.echo(f"Working directory: {record.working_directory}")
