"""The profile's MCP servers as a MiniMax Code plugin in the terminal's private data folder.

MiniMax Code loads MCP servers from plugins: a folder under ``<data>/plugins/`` with a manifest
(``.minimax-plugin/plugin.json``) naming a servers file (``servers.mcp.json``). Facts from upstream
CAO's MiniMax Code provider, which writes the same layout:

- server names are lowercase words joined by ``.``, ``_`` or ``-``;
- a stdio server's command must be a bare program name found on ``PATH``, so an absolute path becomes
  its name plus its folder first on that server's ``PATH``;
- URL servers are ``streamable-http`` (cao's ``http``) or ``sse``;
- the tool-call timeout is raised to 600 s, since ``handoff`` holds its call until the worker ends.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any

from cao_launch_core.json_config import plain

__all__ = ["PLUGIN", "plugin_files", "plugin_servers"]

PLUGIN = "cao-terminal"
TIMEOUT_MS = 600_000
_NAME = re.compile(r"^[a-z][a-z0-9]*(?:[._-][a-z0-9]+)*$")
_URL_TYPES = {"http": "streamable-http", "streamable-http": "streamable-http", "sse": "sse"}


def _stdio(name: str, entry: Mapping[str, Any], path: str) -> dict[str, Any]:
    command = str(entry["command"])
    env = {str(k): str(v) for k, v in (entry.get("env") or {}).items()}
    program = PurePosixPath(command)
    if program.is_absolute():
        command = program.name
        env["PATH"] = os.pathsep.join(part for part in (str(program.parent), env.get("PATH", path)) if part)
    elif "/" in command:
        raise ValueError(f"MCP server {name!r}: command {command!r} must be a program name or an "
                         "absolute path")
    return {"type": "stdio", "command": command, "args": [str(a) for a in entry.get("args") or []],
            "env": env, "timeout": TIMEOUT_MS}


def plugin_servers(servers: Mapping[str, Any], *, path: str = "") -> dict[str, dict[str, Any]]:
    """The ``mcpServers`` of the plugin's servers file for cao's entries; ``path`` is the PATH the
    CLI runs with (kept after a server's own folder)."""
    out: dict[str, dict[str, Any]] = {}
    for name, raw in servers.items():
        if not _NAME.match(name):
            raise ValueError(f"MCP server name {name!r}: MiniMax Code takes lowercase words joined by "
                             "'.', '_' or '-'")
        entry = plain(raw)
        if not isinstance(entry, dict):
            raise ValueError(  # noqa: TRY004 - a bad profile value, reported as such
                f"MCP server {name!r} must be a mapping, got {type(raw).__name__}")
        if entry.get("command"):
            out[name] = _stdio(name, entry, path)
            continue
        kind = str(entry.get("type") or "http")
        if not entry.get("url") or kind not in _URL_TYPES:
            raise ValueError(f"MCP server {name!r} needs a command, or a url with type http or sse")
        out[name] = {"type": _URL_TYPES[kind], "url": str(entry["url"]),
                     "headers": {str(k): str(v) for k, v in (entry.get("headers") or {}).items()},
                     "timeout": TIMEOUT_MS}
    return out


def plugin_files(data_dir: str, servers: Mapping[str, Any], *, path: str = "") -> dict[str, str]:
    """The plugin's files, relative to the runtime folder; none without servers."""
    if not servers:
        return {}
    root = f"{data_dir}/plugins/{PLUGIN}"
    manifest = {"schemaVersion": 1, "name": PLUGIN, "displayName": "cao terminal", "version": "1.0.0",
                "description": "The MCP servers of this cao terminal's agent profile.",
                "mcpServers": ["servers.mcp.json"], "skills": [], "apps": []}
    listing = {"schemaVersion": 1, "mcpServers": plugin_servers(servers, path=path)}
    return {f"{root}/.minimax-plugin/plugin.json": json.dumps(manifest, indent=2) + "\n",
            f"{root}/servers.mcp.json": json.dumps(listing, indent=2) + "\n"}
