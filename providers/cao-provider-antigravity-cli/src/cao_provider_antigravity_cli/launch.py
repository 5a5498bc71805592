"""The command line and private home that start Antigravity CLI (``agy``) for one terminal.

- ``--dangerously-skip-permissions``: an orchestrated agent has nobody to answer tool prompts.
  Antigravity CLI has no option that limits its tools, so a profile restricting them is refused
  (unless the request says ``yolo``) instead of running with every tool.
- ``--model``: the request's model, else the profile's (the names ``agy models`` prints, such as
  ``Gemini 3.5 Flash (High)``).
- ``-i`` (``--prompt-interactive``): the profile's body as the first message, asking the model to
  acknowledge it and wait; Antigravity CLI takes no system-prompt option.
- A private ``HOME`` (``home.py``): Antigravity CLI reads its MCP servers only from
  ``~/.gemini/config/mcp_config.json``, with no option or variable pointing elsewhere, so the terminal
  runs with a home of its own whose entries link to the user's, except that one file.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cao_hookspecs import LaunchContext, LaunchPlan
from cao_hookspecs.programs import find_program
from cao_launch_core.environment import environment
from cao_launch_core.json_config import check_server_name, mcp_config, plain

from .home import HOME_DIR, MCP_CONFIG, mirror_home

__all__ = ["BINARY", "BINARY_ENV", "INSTALL_HINT", "launch", "mcp_servers", "model_endpoint",
           "resolve_binary"]

BINARY = "agy"
#: Environment variable naming a program to run instead of ``agy`` on PATH.
BINARY_ENV = "CAO_ANTIGRAVITY_CLI_BIN"
INSTALL_HINT = ("curl -fsSL https://antigravity.google/cli/install.sh | bash (Google's installer; not on "
                "npm or PyPI), then run 'agy' once to sign in")
ACKNOWLEDGE = ("---\nAcknowledge these instructions in one sentence, then wait for a task: take no action "
               "and use no tool until you are given one.")


def resolve_binary(env: Mapping[str, str]) -> str:
    """The program to run: ``CAO_ANTIGRAVITY_CLI_BIN`` when set, else ``agy`` on PATH."""
    return find_program(env, BINARY, BINARY_ENV,
                        missing=f"Antigravity CLI ('{BINARY}') is not on PATH; install it with: "
                                f"{INSTALL_HINT}")


def check_tools(ctx: LaunchContext) -> None:
    """Refuse a tool restriction Antigravity CLI cannot enforce (it would run with every tool)."""
    allowed = ctx.allowed_tools
    if ctx.yolo or allowed is None or "*" in allowed:
        return
    raise ValueError(f"allowedTools {list(allowed)!r}: Antigravity CLI has no option that limits its tools, "
                     "so the provider 'antigravity_cli' cannot keep the agent to them; allow '*' or use "
                     "another provider")


def mcp_servers(servers: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """cao's MCP entries as Antigravity CLI's: local programs (``command``, ``args``, ``env``) only,
    the one form upstream CAO's provider and the public guides show."""
    entries: dict[str, dict[str, Any]] = {}
    for name, raw in servers.items():
        check_server_name(name)
        entry = plain(raw)
        if not isinstance(entry, dict) or not entry.get("command"):
            raise ValueError(f"MCP server {name!r}: Antigravity CLI's provider takes servers that run a "
                             "command (stdio) only")
        entries[name] = {key: entry[key] for key in ("command", "args", "env") if key in entry}
    return entries


def first_message(body: str) -> str:
    """The message ``-i`` starts the session with: the profile's body and the request to wait."""
    return f"{body.strip()}\n\n{ACKNOWLEDGE}" if body.strip() else ""


def launch(ctx: LaunchContext) -> LaunchPlan:
    """The launch plan of one Antigravity CLI terminal."""
    check_tools(ctx)
    env = environment(ctx)
    argv = [resolve_binary(env), "--dangerously-skip-permissions"]
    if ctx.model:
        if ctx.model.startswith("-"):
            raise ValueError(f"model {ctx.model!r} is not a model name")
        argv += ["--model", ctx.model]
    message = first_message(ctx.profile.system_prompt if ctx.profile else "")
    if message:
        argv += ["-i", message]
    home = Path(ctx.runtime_dir) / HOME_DIR
    mirror_home(Path(env.get("HOME") or Path.home()), home)
    files = {f"{HOME_DIR}/{MCP_CONFIG}": mcp_config(mcp_servers(ctx.mcp_servers)) + "\n"}
    return LaunchPlan(argv=argv, env={"HOME": str(home)}, files=files)


def model_endpoint(env: Mapping[str, str]) -> str | None:
    """None: Antigravity CLI talks to Google's service of the signed-in account, with no documented
    variable for its address."""
    return None
