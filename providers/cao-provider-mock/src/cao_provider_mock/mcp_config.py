"""Reading mock_cli's ``--mcp-config`` file (checked at start-up, so only small stdlib modules here)."""

from __future__ import annotations

import json
from typing import Any


class ConfigError(ValueError):
    """The ``--mcp-config`` file cannot be used; the message names the file and the problem."""


def read_config(path: str) -> dict[str, dict[str, Any]]:
    """The ``mcpServers`` of a JSON config file (``{"mcpServers": {name: entry}}``), checked.

    An entry runs a program (``command``, optional ``args``, ``env``, ``cwd``) or names a streamable
    HTTP endpoint (``url``).
    """
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except OSError as exc:
        raise ConfigError(f"cannot read MCP config {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise ConfigError(f"MCP config {path} is not valid JSON: {exc}") from None
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        raise ConfigError(f"MCP config {path} has no 'mcpServers' object")
    checked: dict[str, dict[str, Any]] = {}
    for name, entry in servers.items():
        where = f"MCP config {path}: server {name!r}"
        if not isinstance(entry, dict):
            raise ConfigError(f"{where} is not an object")
        if not isinstance(entry.get("command") or entry.get("url"), str):
            raise ConfigError(f"{where} needs a 'command' (a program to start) or a 'url'")
        args = entry.get("args") or []
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise ConfigError(f"{where}: 'args' must be a list of strings")
        env = entry.get("env") or {}
        if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
            raise ConfigError(f"{where}: 'env' must map names to strings")
        checked[name] = entry
    return checked
