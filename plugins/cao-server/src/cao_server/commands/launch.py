"""``cao launch``: start a session with one agent, optionally give it a task, and show it or wait."""

from __future__ import annotations

import os
import shlex
import sys
from typing import TYPE_CHECKING, Any

import click
from cao_hookspecs import CreateTerminalRequest

from ._waiting import DEFAULT_TIMEOUT

if TYPE_CHECKING:
    from cao_hookspecs import KernelAPI

# The offline mock agent runs no tools, so there is nothing for the user to approve.
NO_APPROVAL_PROVIDERS = frozenset({"mock_cli"})


@click.command()
@click.argument("message", required=False)
@click.option("--agents", "agent", required=True, metavar="NAME", help="Agent profile to start.")
@click.option("--provider", help="Agent CLI to run it with (default: the profile's, else the server's).")
@click.option("--session-name", help="Session name; 'cao-' is added when missing (default: generated).")
@click.option("--headless", is_flag=True, help="Do not attach to the session.")
@click.option("--model", help="Model the agent runs on (default: the profile's, else the CLI's own).")
@click.option("--yolo", is_flag=True, help="Let the agent use every tool without asking; skips the prompt.")
@click.option(
    "--working-directory",
    type=click.Path(exists=True, file_okay=False, resolve_path=True),
    help="Folder the agent works in (default: the current folder).",
)
@click.option("--async", "run_async", is_flag=True, help="With --headless and MESSAGE: return once sent.")
@click.option("--env", "env_items", multiple=True, metavar="KEY=VALUE",
              help="Environment variable for the agent (repeatable).")
@click.option("--allowed-tools", multiple=True, metavar="TOOL", help="Tool the agent may use (repeatable).")
@click.option("--auto-approve", is_flag=True, help="Do not ask before starting the agent with its tools.")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=DEFAULT_TIMEOUT,
              show_default=True, metavar="SECONDS", help="How long to wait for the answer (headless).")
@click.option("--use-worktree", is_flag=True,
              help="Run the agent in its own git worktree and branch, made from the current commit.")
@click.option("--worktree-changes", is_flag=True,
              help="With --use-worktree: copy the uncommitted changes into the worktree.")
@click.pass_context
def launch(
    ctx: click.Context,
    message: str | None,
    agent: str,
    provider: str | None,
    session_name: str | None,
    headless: bool,
    model: str | None,
    yolo: bool,
    working_directory: str | None,
    run_async: bool,
    env_items: tuple[str, ...],
    allowed_tools: tuple[str, ...],
    auto_approve: bool,
    timeout: float,
    use_worktree: bool,
    worktree_changes: bool,
) -> None:
    """Start a session running agent profile NAME, and give it MESSAGE if one is given.

    Headless with MESSAGE, wait for the agent's answer and print it (--async: return at once).
    Otherwise type MESSAGE in and attach to the session in tmux; when not run from a terminal, print
    how to attach.
    """
    from . import _api
    from ._envvars import parse_env

    env = parse_env(env_items)
    if worktree_changes and not use_worktree:
        raise click.UsageError("--worktree-changes needs --use-worktree")
    workdir = working_directory or os.path.realpath(os.getcwd())
    settings = _api.settings(ctx)
    outcome: dict[str, Any] = {}

    async def body(api: KernelAPI) -> None:
        if not (auto_approve or yolo):
            await _confirm(api, agent, provider, workdir, allowed_tools, settings)
        from ._waiting import progress

        async with progress(f"starting {agent}"):
            terminal = await api.create_session(CreateTerminalRequest(
                agent_profile=agent, provider=provider, session_name=session_name, working_directory=workdir,
                allowed_tools=list(allowed_tools) or None, model=model or None, yolo=yolo, env=env,
                use_worktree=use_worktree, worktree_changes=worktree_changes))
        click.echo(f"Session created: {terminal.session_name}")
        click.echo(f"Terminal created: {terminal.name}")
        if terminal.worktree_branch:
            click.echo(f"Worktree: {terminal.worktree_path} (branch {terminal.worktree_branch})")
        outcome["terminal"] = terminal
        if message is None:
            return
        await api.send_input(terminal.id, message)
        if not headless:
            click.echo(f"Message sent to {terminal.name}.")
        elif run_async:
            click.echo(f"Message sent to {terminal.name}. Running in background.")
        else:
            from ._waiting import wait_and_print

            outcome["interrupted"] = await wait_and_print(api, terminal, timeout)

    _api.run(body, ctx)
    if outcome.get("interrupted"):
        ctx.exit(130)
    if not headless:
        _attach(outcome["terminal"].session_name, settings)


async def _confirm(
    api: KernelAPI, agent: str, provider: str | None, workdir: str, allowed_tools: tuple[str, ...],
    settings: dict[str, str],
) -> None:
    """Say what is about to run with which tools, and ask; the offline mock agent needs no approval."""
    if provider in NO_APPROVAL_PROVIDERS:
        return
    profile = await api.get_profile(agent)
    # Without a provider from the command line or the profile, the server picks its default, which this
    # side knows only when it shares the setting.
    chosen = provider or profile.provider or settings.get("CAO_DEFAULT_PROVIDER")
    if chosen in NO_APPROVAL_PROVIDERS:
        return
    tools = list(allowed_tools) or None
    if tools is None and profile.allowed_tools is not None:
        tools = list(profile.allowed_tools)
    click.echo(f"Agent {agent} will run with {chosen or 'the server default provider'} in {workdir}")
    if tools is None:
        click.echo("Allowed tools: the provider's defaults for this profile")
    else:
        click.echo(f"Allowed tools: {', '.join(tools) if tools else 'none'}")
    click.confirm("Proceed?", default=True, abort=True)


def _attach(session: str, settings: dict[str, str]) -> None:
    """Hand this process over to tmux showing ``session``, or say how to when there is no terminal."""
    from ._tmux import attach_argv

    argv = attach_argv(session, settings)
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        click.echo(f"Attach with: {shlex.join([os.path.basename(argv[0]), *argv[1:]])}")
        return
    env = dict(os.environ)
    if "switch-client" not in argv:
        # An attach from inside another tmux server is a deliberate nesting: tmux wants TMUX unset.
        env.pop("TMUX", None)
    sys.stdout.flush()
    os.execvpe(argv[0], argv, env)
