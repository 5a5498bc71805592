"""The command line that starts Cursor's CLI (``cursor-agent``) for one terminal, from the profile.

- ``--force``: commands run without asking (an orchestrated agent has nobody to answer). Cursor's
  CLI has no command-line option that limits its tools, so a profile restricting them is refused
  (unless the request says ``yolo``) instead of running with every tool.
- ``--model``: the request's model, else the profile's.
- ``--plugin-dir <runtime>/cursor-plugin`` with ``--approve-mcps``: the profile's MCP servers as a
  plugin in the terminal's runtime folder (its ``mcp.json``), approved at start so no approval question
  blocks the terminal; the user's own ``~/.cursor/mcp.json`` is never written.
- The profile's body as the initial prompt (``cursor-agent [prompt]``), asking the model to
  acknowledge it and wait: upstream CAO found that the CLI's ``--system-prompt`` makes every request
  fail (``unknown option '--system-prompt'`` from Cursor's service, 2026.06.15).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cao_hookspecs import LaunchContext, LaunchPlan
from cao_hookspecs.programs import find_program
from cao_launch_core.environment import environment
from cao_launch_core.json_config import check_server_name, mcp_config, stdio_typed

__all__ = ["BINARY", "BINARY_ENV", "INSTALL_HINT", "PLUGIN_DIR", "launch", "model_endpoint", "resolve_binary"]

BINARY = "cursor-agent"
#: Environment variable naming a program to run instead of ``cursor-agent`` on PATH.
BINARY_ENV = "CAO_CURSOR_CLI_BIN"
INSTALL_HINT = ("curl https://cursor.com/install -fsS | bash (Cursor's installer; npm's 'cursor-agent' is "
                "another program), then run 'cursor-agent login'")
#: The plugin holding the profile's MCP servers, relative to the terminal's runtime folder.
PLUGIN_DIR = "cursor-plugin"
PLUGIN_NAME = "cao-terminal"
ACKNOWLEDGE = ("These instructions hold for this whole session. No task has been given yet: acknowledge "
               "them in one sentence and wait for the task, taking no action.")


def resolve_binary(env: Mapping[str, str]) -> str:
    """The program to run: ``CAO_CURSOR_CLI_BIN`` when set, else ``cursor-agent`` on PATH."""
    return find_program(env, BINARY, BINARY_ENV,
                        missing=f"Cursor's CLI ('{BINARY}') is not on PATH; install it with: {INSTALL_HINT}")


def check_tools(ctx: LaunchContext) -> None:
    """Refuse a tool restriction the CLI cannot be given (it would run with every tool)."""
    allowed = ctx.allowed_tools
    if ctx.yolo or allowed is None or "*" in allowed:
        return
    raise ValueError(f"allowedTools {list(allowed)!r}: Cursor's CLI takes no option that limits its tools, "
                     "so the provider 'cursor_cli' cannot keep the agent to them; allow '*' or use another "
                     "provider")


def plugin_files(servers: Mapping[str, Any]) -> dict[str, str]:
    """The plugin folder's files (manifest and ``mcp.json``), relative to the runtime folder."""
    entries = {check_server_name(name): stdio_typed(entry) for name, entry in servers.items()}
    manifest = {"name": PLUGIN_NAME, "description": "The MCP servers of this cao terminal's agent profile."}
    return {f"{PLUGIN_DIR}/.cursor-plugin/plugin.json": json.dumps(manifest, indent=2) + "\n",
            f"{PLUGIN_DIR}/mcp.json": mcp_config(entries) + "\n"}


def first_message(body: str) -> str:
    """The initial prompt: the profile's body and the request to acknowledge it."""
    return f"{body.strip()}\n\n{ACKNOWLEDGE}" if body.strip() else ""


def launch(ctx: LaunchContext) -> LaunchPlan:
    """The launch plan of one Cursor CLI terminal."""
    check_tools(ctx)
    env = environment(ctx)
    argv = [resolve_binary(env), "--force"]
    if ctx.model:
        if ctx.model.startswith("-"):
            raise ValueError(f"model {ctx.model!r} is not a model name")
        argv += ["--model", ctx.model]
    files: dict[str, str] = {}
    if ctx.mcp_servers:
        files = plugin_files(ctx.mcp_servers)
        argv += ["--plugin-dir", str(Path(ctx.runtime_dir) / PLUGIN_DIR), "--approve-mcps"]
    message = first_message(ctx.profile.system_prompt if ctx.profile else "")
    if message:
        argv.append(message)
    return LaunchPlan(argv=argv, env={}, files=files)


def model_endpoint(env: Mapping[str, str]) -> str | None:
    """None: the CLI talks to Cursor's service, with no documented variable for its address."""
    return None
