"""The private Codex home of one terminal (``CODEX_HOME`` under the terminal's runtime folder).

Its ``config.toml`` is the user's own Codex config (read, never written), with the profile's
``codexConfig`` merged over it and what cao needs on top: the profile's MCP servers (each carrying
the environment cao-mcp-server needs, since Codex starts MCP servers with a scrubbed environment),
trust for the working folder (no trust dialog), no update check, no shell snapshot (its child
process fights the agent for the terminal under tmux), the profile body as
``developer_instructions``, and, when the kernel offers native signals, its signal command as
``notify`` (see ``signals.py``). Sessions and history Codex writes stay in the private home too.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cao_hookspecs import LaunchContext
from cao_launch_core.user_config import merge, read_config_text

from .signals import notify_command

__all__ = [
    "AUTH_FILE",
    "HOME_DIR",
    "build_config",
    "developer_instructions",
    "mcp_entry",
    "merge",
    "read_toml",
    "user_codex_home",
]

HOME_DIR = "codex-home"
AUTH_FILE = "auth.json"
#: Codex's own defaults are 10 s to start a server and 60 s per tool call; handoff blocks its tool call
#: until the worker finishes, and a Python MCP server may take a few seconds to start on a busy machine.
TOOL_TIMEOUT_SEC = 600.0
STARTUP_TIMEOUT_SEC = 30.0

_SERVER_NAME = re.compile(r"[A-Za-z0-9_-]+")
# Keys Codex reads in an ``[mcp_servers.<name>]`` table; anything else is left out (Codex refuses
# unknown fields under --strict-config, and Claude-style keys such as ``type`` mean nothing to it).
_MCP_KEYS = frozenset({
    "command", "args", "env", "env_vars", "cwd", "url", "bearer_token_env_var", "http_headers",
    "env_http_headers", "startup_timeout_sec", "tool_timeout_sec", "enabled", "required", "enabled_tools",
    "disabled_tools", "default_tools_approval_mode",
})
_RENAMED = {"headers": "http_headers"}


def user_codex_home(environ: Mapping[str, str] | None = None) -> Path:
    """The user's own Codex home: ``$CODEX_HOME``, else ``~/.codex``."""
    environ = os.environ if environ is None else environ
    configured = environ.get("CODEX_HOME")
    return Path(configured).expanduser() if configured else Path.home() / ".codex"


def read_toml(path: Path) -> dict[str, Any]:
    """A TOML file as a dict ({} when it does not exist); a broken one is an error naming it."""
    text = read_config_text(path, "the Codex config")
    if text is None:
        return {}
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"the Codex config {path} is not valid TOML: {exc}") from exc


def _seconds(name: str, field: str, value: Any) -> float:
    # Codex reads these as floats and silently ignores a TOML integer: always write a float.
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ValueError(f"MCP server {name!r}: {field} must be a positive number of seconds, got {value!r}")
    return float(value)


def mcp_entry(name: str, entry: Mapping[str, Any]) -> dict[str, Any]:
    """One profile ``mcpServers`` entry as a Codex ``[mcp_servers.<name>]`` table."""
    if not _SERVER_NAME.fullmatch(name):
        raise ValueError(f"MCP server name {name!r} is not allowed by Codex "
                         "(letters, digits, '_' and '-' only)")
    if not isinstance(entry, Mapping):
        raise ValueError(f"MCP server {name!r}: expected a table of settings, got {type(entry).__name__}")
    table: dict[str, Any] = {}
    for field, value in entry.items():
        field = _RENAMED.get(field, field)
        if field in _MCP_KEYS and value is not None:
            table[field] = value
    command, url = table.get("command"), table.get("url")
    if not (isinstance(command, str) and command) and not (isinstance(url, str) and url):
        raise ValueError(f"MCP server {name!r}: needs a 'command' to run or a 'url' to connect to")
    if "args" in table:
        args = table["args"]
        if isinstance(args, str) or not isinstance(args, list | tuple):
            raise ValueError(f"MCP server {name!r}: 'args' must be a list of strings, got {args!r}")
        table["args"] = [str(arg) for arg in args]
    for field in ("env", "http_headers", "env_http_headers"):
        if field in table:
            if not isinstance(table[field], Mapping):
                raise ValueError(f"MCP server {name!r}: {field!r} must be a table of strings")
            table[field] = {str(k): str(v) for k, v in table[field].items()}
    defaults = (("tool_timeout_sec", TOOL_TIMEOUT_SEC), ("startup_timeout_sec", STARTUP_TIMEOUT_SEC))
    for field, default in defaults:
        table[field] = _seconds(name, field, table.get(field, default))
    # Required: Codex waits for the server before its first turn and fails at start-up when it cannot
    # start, instead of offering the model a tool list without it ("unsupported call" later).
    table.setdefault("required", True)
    if not isinstance(table["required"], bool):
        raise ValueError(f"MCP server {name!r}: 'required' must be true or false, got {table['required']!r}")
    return table


def developer_instructions(ctx: LaunchContext) -> str:
    """The profile body, plus the tool list when the terminal's tools are restricted (Codex itself
    cannot restrict them, so the model is told)."""
    body = (ctx.profile.system_prompt if ctx.profile is not None else "").strip()
    tools = ctx.allowed_tools
    if tools is not None and "*" not in tools:
        listed = ", ".join(tools) if tools else "none"
        note = f"Only use these tools in this session: {listed}. Do not use any other tool."
        body = f"{note}\n\n{body}" if body else note
    return body


def build_config(ctx: LaunchContext, user_config: Mapping[str, Any]) -> dict[str, Any]:
    """The config.toml content (as a dict) for one terminal."""
    profile = ctx.profile
    config = merge(user_config, {})
    if profile is not None and profile.codex_config:
        if not isinstance(profile.codex_config, Mapping):
            raise ValueError(f"agent profile {profile.name!r}: codexConfig must be a table of Codex settings")
        config = merge(config, profile.codex_config)
    servers = {name: mcp_entry(name, entry) for name, entry in ctx.mcp_servers.items()}
    for name in ctx.cao_servers:
        # cao's own tools never wait for an approval (under a Codex profile that asks): a prompt on
        # send_message would hold up the whole delegation. The profile may still say otherwise.
        if name in servers:
            servers[name].setdefault("default_tools_approval_mode", "approve")
    trusted = {str(folder): {"trust_level": "trusted"}
               for folder in dict.fromkeys([ctx.working_directory, os.path.realpath(ctx.working_directory)])}
    ours: dict[str, Any] = {
        "check_for_update_on_startup": False,
        "features": {"shell_snapshot": False},
        "projects": trusted,
    }
    instructions = developer_instructions(ctx)
    if instructions:
        ours["developer_instructions"] = instructions
    notify = notify_command(ctx.env)
    if notify is not None:
        # Codex runs one notify program: in cao's terminal it is the kernel's signal command.
        ours["notify"] = notify
    merged = merge(config, ours)
    if servers:
        # A server of the profile replaces a same-named one of the user's config as a whole.
        existing = merged.get("mcp_servers")
        merged["mcp_servers"] = {**(existing if isinstance(existing, dict) else {}), **servers}
    return merged
