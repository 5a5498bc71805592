"""How a profile asks for cao's own MCP server, as upstream's profiles write it.

The MCP plugin matches entries with this (its ``McpServerSpec.matches``), and the kernel uses it to
refuse at once a terminal whose profile asks for cao's tools when no plugin serves them.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import PurePath
from typing import Any

#: The program upstream's profiles name for cao's MCP server.
MCP_SCRIPT = "cao-mcp-server"


def is_cao_mcp_entry(entry: Mapping[str, Any]) -> bool:
    """Whether an ``mcpServers`` entry starts cao's own MCP server, in any of the forms profiles use:
    ``cao-mcp-server`` by name or path, or upstream's ``uvx --from <source> cao-mcp-server``."""
    command = str(entry.get("command") or "")
    raw = entry.get("args")
    args = [str(a) for a in raw] if isinstance(raw, list | tuple) else []
    if PurePath(command).name == MCP_SCRIPT:
        return True
    return PurePath(command).name in ("uvx", "uv") and MCP_SCRIPT in args


__all__ = ["MCP_SCRIPT", "is_cao_mcp_entry"]
