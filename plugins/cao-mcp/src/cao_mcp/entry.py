"""cao's MCP server as profiles ask for it and as this installation starts it: the plugin's
``McpServerSpec``, which the kernel uses to rewrite profile entries and to gate new terminals."""

from __future__ import annotations

import sys
from pathlib import Path

from cao_hookspecs import McpServerSpec
from cao_hookspecs.mcp_entry import MCP_SCRIPT as SCRIPT
from cao_hookspecs.mcp_entry import is_cao_mcp_entry

#: The route (``RouteSpec.name``) through which agents' MCP clients report in: cao's ``/mcp``.
REPORT_ROUTE = "mcp"
#: Where an agent's MCP server calls cao-server: the address the server plugin puts in these settings.
SERVER_ADDRESS_SETTINGS = ("CAO_API_HOST", "CAO_API_PORT")


def cao_mcp_command() -> tuple[str, tuple[str, ...]]:
    """The command that runs this installation's MCP server, independent of PATH."""
    script = Path(sys.executable).parent / SCRIPT
    if script.exists():
        return str(script), ()
    return sys.executable, ("-m", "cao_mcp")


def mcp_server_spec() -> McpServerSpec:
    return McpServerSpec(
        name="cao", matches=is_cao_mcp_entry, command=cao_mcp_command, env_settings=SERVER_ADDRESS_SETTINGS,
        report_route=REPORT_ROUTE,
        description="cao's own tools (handoff, assign, send_message...) for the agent in each terminal",
    )


__all__ = ["REPORT_ROUTE", "SCRIPT", "cao_mcp_command", "is_cao_mcp_entry", "mcp_server_spec"]
