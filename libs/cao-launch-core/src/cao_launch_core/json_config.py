"""Profile values as JSON, and the ``mcpServers`` file most agent CLIs read.

The records of the contract hold read-only mappings and tuples (a frozen record must not be changed
through a value it holds); a config file wants plain dicts and lists. ``ctx.mcp_servers`` already
carry cao's terminal id and server address in each entry's ``env``, so they are passed on as they are.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from cao_hookspecs.allowed_tools import MCP_SERVER_NAME

__all__ = ["check_server_name", "mcp_config", "plain", "stdio_typed"]


def plain(value: Any) -> Any:
    """A JSON-ready copy of ``value``: mappings become dicts with string keys, lists and tuples become
    lists, at any depth; anything else is kept as it is."""
    if isinstance(value, Mapping):
        return {str(key): plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    return value


def stdio_typed(entry: Any) -> Any:
    """``entry`` as plain JSON (:func:`plain`), with ``"type": "stdio"`` added when it runs a
    ``command`` and names no type: how Claude-style ``mcpServers`` files mark a local server."""
    server = plain(entry)
    if isinstance(server, dict) and "command" in server and "type" not in server:
        server["type"] = "stdio"
    return server


def check_server_name(name: str) -> str:
    """``name`` when it can name an MCP server in a CLI's config (``MCP_SERVER_NAME``).

    :raises ValueError: naming the server otherwise.
    """
    if not MCP_SERVER_NAME.match(name):
        raise ValueError(f"MCP server name {name!r} must be 1-64 letters, digits, '_', '-' or '.'")
    return name


def mcp_config(servers: Mapping[str, Any]) -> str:
    """The text of a ``{"mcpServers": {<name>: <entry>}}`` file (indented JSON) holding ``servers``."""
    return json.dumps({"mcpServers": plain(servers)}, indent=2)
