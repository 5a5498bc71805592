"""The command line that starts pi for one terminal, built from the agent profile.

- ``--offline``: pi otherwise downloads helper programs, checks for updates and reports its install at
  start (also ``PI_OFFLINE``, ``PI_SKIP_VERSION_CHECK`` and ``PI_TELEMETRY=0`` in its environment);
- ``--model``: the request's or the profile's model (pi takes ``provider/id`` or a pattern); none
  leaves the user's ``defaultProvider``/``defaultModel``;
- the profile body as ``--append-system-prompt`` with a file of the runtime folder (pi reads a path's
  contents, so a body is never mistaken for a path);
- permissions: pi asks for none (it has no approval system), so every terminal runs as with ``yolo``;
  a profile's ``permissionMode`` is refused by name, since pi could not honour it;
- cao's bridge extension (bridge.ts) with ``-e``: pi has no MCP client, so the bridge starts the
  profile's MCP servers (stdio only; each entry's ``env`` carries cao's terminal id and server address)
  and offers their tools to the model, sends the turn's events to cao (signals.py), and keeps only the
  built-in tools that ``allowed_tools`` names;
- a private ``PI_CODING_AGENT_DIR`` (config.py).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from importlib.resources import files as package_files
from pathlib import Path
from typing import Any

from cao_hookspecs import LaunchContext, LaunchPlan
from cao_hookspecs.allowed_tools import read_allowed_tools
from cao_hookspecs.programs import find_program
from cao_hookspecs.signals import signal_command
from cao_launch_core.environment import environment
from cao_launch_core.json_config import check_server_name, plain
from cao_launch_core.user_config import link_user_files, read_json_object

from .config import AGENT_DIR, AGENT_DIR_ENV, LINKED, private_settings, user_agent_dir

__all__ = ["BINARY", "BINARY_ENV", "BRIDGE_ENV", "INSTALL_HINT", "NATIVE_TOOLS", "bridge_config", "launch",
           "model_endpoint", "resolve_binary", "tool_selection"]

BINARY = "pi"
#: Environment variable naming a program to run instead of ``pi`` on PATH.
BINARY_ENV = "CAO_PI_BIN"
INSTALL_HINT = "npm install -g @mariozechner/pi-coding-agent"
#: The variable that tells the bridge extension where its configuration is.
BRIDGE_ENV = "CAO_PI_BRIDGE"
BRIDGE_FILE = "cao-bridge.ts"
BRIDGE_CONFIG_FILE = "cao-bridge.json"
SYSTEM_PROMPT_FILE = "system-prompt.md"
#: Seconds the bridge waits for an MCP server to list its tools before pi starts without them.
CONNECT_TIMEOUT = 30
#: cao's tool vocabulary -> pi's built-in tools.
NATIVE_TOOLS: dict[str, tuple[str, ...]] = {
    "execute_bash": ("bash",),
    "fs_read": ("read", "grep"),
    "fs_list": ("ls", "find"),
    "fs_write": ("edit", "write"),
}
#: Where pi's built-in providers send requests (pi reads no base-URL variable for them).
_ENDPOINTS = {"anthropic": "https://api.anthropic.com", "openai": "https://api.openai.com/v1",
              "google": "https://generativelanguage.googleapis.com"}
_OFFLINE_ENV = {"PI_OFFLINE": "1", "PI_SKIP_VERSION_CHECK": "1", "PI_TELEMETRY": "0"}


def resolve_binary(env: Mapping[str, str]) -> str:
    """The program to run: ``CAO_PI_BIN`` when set, else ``pi`` on PATH."""
    return find_program(env, BINARY, BINARY_ENV,
                        missing=f"pi ('{BINARY}') is not on PATH; install it with: {INSTALL_HINT}")


def tool_selection(allowed: Sequence[str] | None,
                   mcp_servers: Sequence[str]) -> tuple[list[str] | None, list[str]]:
    """The built-in tools pi keeps (None: pi's own default set) and the MCP servers kept, for cao's
    allowed-tools list.

    None or ``*``: no restriction. ``@builtin`` keeps every built-in tool; ``execute_bash``, ``fs_read``,
    ``fs_list``, ``fs_write`` and ``fs_*`` keep theirs; ``@<server>`` keeps that MCP server (the
    profile's others are left out). Anything else is refused by name: pi has no rule syntax cao could
    pass it on as.
    """
    if allowed is None or "*" in allowed:
        return None, list(mcp_servers)
    read = read_allowed_tools(allowed, NATIVE_TOOLS)
    if read.other:
        raise ValueError(f"allowed tool {read.other[0]!r} is not one pi can be limited to (use "
                         f"{', '.join(sorted(NATIVE_TOOLS))}, fs_*, @builtin, @<server> or *)")
    categories = NATIVE_TOOLS if read.builtin else sorted(read.categories)
    builtins = [tool for cat in categories for tool in NATIVE_TOOLS[cat]]
    return builtins, [name for name in mcp_servers if name in read.servers]


def _stdio(name: str, entry: Any) -> dict[str, Any]:
    server = plain(entry)
    if not isinstance(server, dict) or not server.get("command") or server.get("type", "stdio") != "stdio":
        raise ValueError(f"MCP server {name!r}: pi's bridge starts stdio servers only (an entry with "
                         f"'command'), got {server!r}")
    return {key: server[key] for key in ("command", "args", "env", "cwd") if server.get(key) is not None}


def bridge_config(servers: Mapping[str, Any], signal: Sequence[str] | None,
                  tools: Sequence[str] | None) -> dict[str, Any]:
    """What bridge.ts reads: the MCP servers it starts, the signal command, the built-in tools kept."""
    return {"servers": {check_server_name(name): _stdio(name, entry) for name, entry in servers.items()},
            "signal": list(signal) if signal else None, "tools": list(tools) if tools is not None else None,
            "connect_timeout_ms": CONNECT_TIMEOUT * 1000}


def launch(ctx: LaunchContext) -> LaunchPlan:
    """The launch plan of one pi terminal."""
    env = environment(ctx)
    runtime = Path(ctx.runtime_dir)
    argv = [resolve_binary(env), "--offline"]
    profile = ctx.profile
    if profile is not None and profile.permission_mode and not ctx.yolo:
        raise ValueError(f"permissionMode {profile.permission_mode!r}: pi has no permission modes (it asks "
                         "before no tool call); leave permissionMode out")
    if ctx.model:
        if ctx.model.startswith("-"):
            raise ValueError(f"model {ctx.model!r} is not a model name")
        argv += ["--model", ctx.model]
    files: dict[str, str] = {}
    if profile is not None and profile.system_prompt.strip():
        files[SYSTEM_PROMPT_FILE] = profile.system_prompt.strip() + "\n"
        argv += ["--append-system-prompt", str(runtime / SYSTEM_PROMPT_FILE)]
    builtins, kept = tool_selection(ctx.allowed_tools, list(ctx.mcp_servers))
    config = bridge_config({name: ctx.mcp_servers[name] for name in kept}, signal_command(ctx.env), builtins)
    files[BRIDGE_CONFIG_FILE] = json.dumps(config, indent=2) + "\n"
    files[BRIDGE_FILE] = package_files(__package__).joinpath("bridge.ts").read_text(encoding="utf-8")
    argv += ["-e", str(runtime / BRIDGE_FILE)]
    files[f"{AGENT_DIR}/settings.json"] = json.dumps(private_settings(env), indent=2) + "\n"
    link_user_files(user_agent_dir(env), runtime / AGENT_DIR, LINKED)
    env_added = {AGENT_DIR_ENV: str(runtime / AGENT_DIR), BRIDGE_ENV: str(runtime / BRIDGE_CONFIG_FILE),
                 **_OFFLINE_ENV}
    return LaunchPlan(argv=argv, files=files, env=env_added)


def model_endpoint(env: Mapping[str, str]) -> str | None:
    """The model API pi will call with ``env``: the ``baseUrl`` that the user's ``models.json`` gives the
    default provider (``defaultProvider`` of their settings), else that built-in provider's address.
    None when it cannot be told (no default provider, or one cao does not know)."""
    folder = user_agent_dir(env)
    provider = read_json_object(folder / "settings.json").get("defaultProvider")
    if not isinstance(provider, str):
        return None
    providers = read_json_object(folder / "models.json").get("providers")
    entry = providers.get(provider) if isinstance(providers, dict) else None
    url = entry.get("baseUrl") if isinstance(entry, dict) else None
    return url.strip() if isinstance(url, str) and url.strip() else _ENDPOINTS.get(provider)
