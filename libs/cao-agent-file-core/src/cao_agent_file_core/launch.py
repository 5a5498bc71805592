"""The command line that starts ``<cli> chat`` for one terminal, and the agent file it names.

::

    /bin/sh -c <remove the agent file on exit> <agent file> \\
        <program> chat --trust-all-tools [<provider flags>] [--model M] --agent cao-<profile>-<terminal id>

- ``--trust-all-tools``: an orchestrated agent has nobody to answer the CLI's tool prompts (upstream
  CAO starts both CLIs the same way). What the agent may use is limited by the agent file's ``tools``
  instead, which cao fills from the terminal's allowed tools (``tools.py``).
- ``--model``: the model the terminal was asked for (request, else profile).
- ``--agent``: the agent file cao writes into the user's agent folder (``agent_file.py``).

The small ``sh`` wrapper deletes that file when the CLI exits for any reason short of SIGKILL (its
traps run after the CLI has ended, so the CLI keeps the terminal and its own signal handling).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from cao_hookspecs import LaunchContext, LaunchPlan
from cao_hookspecs.programs import find_program

from .agent_file import agent_config, agent_folder, agent_name, dumps, write_atomically
from .cli import ChatCli

__all__ = ["CLEANUP_SCRIPT", "chat_plan", "resolve_binary"]

# $0 is the agent file, "$@" the CLI's argv. Traps with a command (not '') are reset in the child, so
# the CLI handles its own signals; HUP and TERM end the shell only after the CLI has ended, through the
# EXIT trap.
CLEANUP_SCRIPT = 'trap \'rm -f -- "$0"\' EXIT; trap "exit 129" HUP; trap "exit 143" TERM; trap : INT; "$@"'
_SHELL = "/bin/sh"
_MODEL = re.compile(r"^[A-Za-z0-9._:/][A-Za-z0-9._:/-]{0,127}\Z")


def resolve_binary(env: Mapping[str, str], cli: ChatCli) -> str:
    """The CLI's program: ``cli.binary_env`` when set, else ``cli.binary`` on PATH; a clear error naming
    what to install otherwise."""
    return find_program(env, cli.binary, cli.binary_env, missing=(
        f"{cli.title} ('{cli.binary}') is not on PATH, so {cli.distribution} cannot start it. "
        f"{cli.install_hint} Or set {cli.binary_env} to the program to run."))


def chat_plan(ctx: LaunchContext, cli: ChatCli, program: str, env: Mapping[str, str],
              flags: Sequence[str] = ()) -> LaunchPlan:
    """Launch plan for one terminal running ``program`` (see ``resolve_binary``) with ``flags`` after
    ``--trust-all-tools``. Everything is checked before the agent file is written, so a refused profile
    leaves nothing behind."""
    name = agent_name(ctx, cli)
    if ctx.model is not None and not _MODEL.match(ctx.model):
        raise ValueError(f"model {ctx.model!r}: use letters, digits and . _ : / - (at most 128, not starting with -)")
    content = dumps(agent_config(ctx, name, cli))
    path = agent_folder(env, cli) / f"{name}.json"
    argv = [_SHELL, "-c", CLEANUP_SCRIPT, str(path), program, "chat", "--trust-all-tools", *flags]
    if ctx.model:
        argv += ["--model", ctx.model]
    argv += ["--agent", name]
    write_atomically(path, content)
    return LaunchPlan(argv=argv, files={cli.runtime_copy: content})
