"""The command line that starts {{ cookiecutter.display_name }} for one terminal, built from the agent profile.

What the stand-in program (``tests/programs/example_cli.py``) takes, and where each part comes from:

- ``--model <model>``: the model of the request, else of the profile;
- ``--system-prompt-file <runtime>/system-prompt.md``: the profile's body;
- ``--mcp-config <runtime>/mcp.json``: the profile's MCP servers, as the kernel hands them over (each
  entry's ``env`` already carries ``CAO_TERMINAL_ID`` and the server's address: some CLIs start MCP
  servers with a scrubbed environment).

Files go into ``LaunchPlan.files`` (relative to the terminal's private runtime folder): the kernel
writes them before it starts the program, so ``launch`` itself writes nothing.

TODO: map these to the real CLI's flags (or config files, or environment variables), then add what
else it supports: ``ctx.yolo`` (skip permission prompts: an orchestrated agent has nobody to answer
them), ``ctx.allowed_tools`` (cao's tool vocabulary: ``execute_bash``, ``fs_read``, ``fs_write``,
``fs_list``, ``web_fetch``, ``@<mcp server>``, ``*``), a private config folder per terminal so that
the user's own settings are never written, and the kernel's signal command
(``cao_hookspecs.signals.signal_command(ctx.env)``) in the CLI's hooks when it has any (signals.py).
Refuse a profile value the CLI cannot take with a ``ValueError`` naming the profile key; the kernel
reports it to whoever created the terminal.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from cao_hookspecs import LaunchContext, LaunchPlan
from cao_hookspecs.programs import find_program
from cao_launch_core.environment import environment
from cao_launch_core.json_config import mcp_config

__all__ = ["BINARY", "BINARY_ENV", "INSTALL_HINT", "launch", "model_endpoint", "resolve_binary"]

BINARY = "{{ cookiecutter.binary }}"
#: Environment variable naming a program to run instead of ``{{ cookiecutter.binary }}`` on PATH.
BINARY_ENV = "{{ cookiecutter.__binary_env }}"
# TODO: the real install command (e.g. "npm install -g <package>").
INSTALL_HINT = "install {{ cookiecutter.display_name }} so that '{{ cookiecutter.binary }}' is on PATH"
SYSTEM_PROMPT_FILE = "system-prompt.md"
MCP_CONFIG_FILE = "mcp.json"
# TODO: the variable the real CLI reads its model API address from (the stand-in reads this one).
BASE_URL_ENV = "ANTHROPIC_BASE_URL"


def resolve_binary(env: Mapping[str, str]) -> str:
    """The program to run: ``{{ cookiecutter.__binary_env }}`` when set, else ``{{ cookiecutter.binary }}`` on PATH."""
    return find_program(env, BINARY, BINARY_ENV, missing=f"'{BINARY}' is not on PATH: {INSTALL_HINT}")


def launch(ctx: LaunchContext) -> LaunchPlan:
    """The launch plan of one {{ cookiecutter.display_name }} terminal."""
    env = environment(ctx)
    runtime = Path(ctx.runtime_dir)
    argv = [resolve_binary(env)]
    files: dict[str, str] = {}
    if ctx.model:
        argv += ["--model", ctx.model]
    profile = ctx.profile
    if profile is not None and profile.system_prompt.strip():
        files[SYSTEM_PROMPT_FILE] = profile.system_prompt.strip() + "\n"
        argv += ["--system-prompt-file", str(runtime / SYSTEM_PROMPT_FILE)]
    if ctx.mcp_servers:
        files[MCP_CONFIG_FILE] = mcp_config(ctx.mcp_servers)
        argv += ["--mcp-config", str(runtime / MCP_CONFIG_FILE)]
    return LaunchPlan(argv=argv, env={}, files=files)


def model_endpoint(env: Mapping[str, str]) -> str | None:
    """The model API the CLI will call when run with ``env``, or None when it cannot be told.

    Reads variables (and, for a real CLI, its config files) only; never the network, never raises.
    TODO: the real CLI's default address when no variable overrides it.
    """
    url = env.get(BASE_URL_ENV, "").strip()
    return url or None
