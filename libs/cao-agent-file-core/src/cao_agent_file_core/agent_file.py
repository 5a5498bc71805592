"""The agent file cao writes for one terminal, and where it goes.

``kiro-cli chat --agent NAME`` and ``q chat --agent NAME`` take an agent *name*, never a path, and find
it only in the project's agent folder or in the user's global one (``ChatCli.agent_dir``; no
environment variable moves it). cao therefore writes one cao-named file per terminal into the user's
global agent folder, never into the project: ``cao-<profile>-<terminal id>.json``, created atomically
(a hidden temporary file in the same folder, renamed into place) and readable by the user alone. The
launch command removes it when the CLI exits (see ``launch.py``). A copy is also handed to the kernel
for the terminal's runtime folder, where it can be inspected; the CLI does not read that copy.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cao_hookspecs import LaunchContext
from cao_hookspecs.names import PROFILE_NAME_RE, TERMINAL_ID_RE
from cao_launch_core.json_config import plain

from .cli import ChatCli
from .tools import agent_tools

__all__ = ["CAO_MCP_TIMEOUT_MS", "agent_config", "agent_folder", "agent_name", "dumps", "write_atomically"]

#: Both CLIs stop waiting for an MCP tool call after the entry's ``timeout`` (milliseconds, default
#: 120 s); ``handoff`` blocks its call until the worker has finished, so cao's own server gets 20 minutes.
CAO_MCP_TIMEOUT_MS = 1_200_000

_SERVER = re.compile(r"^[A-Za-z0-9_.-]{1,64}\Z")


def agent_name(ctx: LaunchContext, cli: ChatCli) -> str:
    """``cao-<profile>-<terminal id>``: unique per terminal (each carries its own terminal id in its MCP
    servers' environment) and safe as a file name. Anything else in the profile name is refused."""
    profile = ctx.profile.name if ctx.profile is not None else ctx.terminal.agent_profile
    if not isinstance(profile, str) or not PROFILE_NAME_RE.match(profile):
        raise ValueError(f"agent profile name {profile!r} cannot name a {cli.short} agent file: use 1-64 letters, "
                         "digits, '_' or '-'")
    if not TERMINAL_ID_RE.match(ctx.terminal.id):
        raise ValueError(f"terminal id {ctx.terminal.id!r} is not 8 lowercase hex characters")
    return f"cao-{profile}-{ctx.terminal.id}"


def agent_folder(env: Mapping[str, str], cli: ChatCli) -> Path:
    """The CLI's global agent folder under the HOME it will run with."""
    home = env.get("HOME") or str(Path.home())
    return Path(home).expanduser().joinpath(*cli.agent_dir)


def _is_cao_server(entry: Mapping[str, Any]) -> bool:
    command = Path(str(entry.get("command") or "")).name
    args = [str(a) for a in entry.get("args") or []]
    return command == "cao-mcp-server" or "cao-mcp-server" in args or args[-3:] == ["-m", "cao_kernel", "mcp-server"]


def _mcp_servers(servers: Mapping[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for name, entry in servers.items():
        if not isinstance(name, str) or not _SERVER.match(name):
            raise ValueError(f"MCP server name {name!r}: use 1-64 letters, digits, '_', '.' or '-'")
        if not isinstance(entry, Mapping):
            raise ValueError(f"MCP server {name!r}: its entry must be a mapping, got {type(entry).__name__}")
        server = plain(entry)
        if _is_cao_server(server):
            server.setdefault("timeout", CAO_MCP_TIMEOUT_MS)
        result[name] = server
    return result


def _prompt(ctx: LaunchContext) -> str:
    profile = ctx.profile
    if profile is None:
        return ""
    parts = [profile.system_prompt.strip()]
    if profile.prompt and profile.prompt.strip():
        parts.append(profile.prompt.strip())
    return "\n\n".join(part for part in parts if part)


def agent_config(ctx: LaunchContext, name: str, cli: ChatCli) -> dict[str, Any]:
    """The agent file's content: prompt (profile body, then the profile's ``prompt``), MCP servers with
    the environment the kernel put in each entry, tools from the allowed-tools list, and the profile's
    pass-through fields (upstream's ``useLegacyMcpJson`` goes under ``cli.legacy_mcp_json_key``: Kiro
    calls it ``includeMcpJson``)."""
    profile = ctx.profile
    tools = agent_tools(ctx.allowed_tools, profile.tools if profile else None, cli=cli.short)
    description = (profile.description.strip() if profile and profile.description else "") or \
        f"cao agent for terminal {ctx.terminal.id}"
    config: dict[str, Any] = {"name": name, "description": description}
    prompt = _prompt(ctx)
    if prompt:
        config["prompt"] = prompt
    config["mcpServers"] = _mcp_servers(ctx.mcp_servers)
    config["tools"] = tools
    config["allowedTools"] = list(tools)
    if profile is not None:
        for key, value in (("toolAliases", profile.tool_aliases), ("toolsSettings", profile.tools_settings),
                           ("resources", profile.resources), ("hooks", profile.hooks),
                           (cli.legacy_mcp_json_key, profile.use_legacy_mcp_json)):
            if value is not None:
                config[key] = plain(value)
    return config


def write_atomically(path: Path, content: str) -> None:
    """Write ``content`` to ``path`` so that a reader sees the old file or the whole new one, never part:
    a hidden temporary file in the same folder (not a ``.json``, so the CLI never loads it), made
    readable by the user only, flushed to disk, then renamed over ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=".cao-", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(content)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, 0o600)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except FileNotFoundError:
            pass
        raise


def dumps(config: Mapping[str, Any]) -> str:
    """The agent file's text (indented JSON, non-ASCII kept as is)."""
    return json.dumps(config, indent=2, ensure_ascii=False) + "\n"
