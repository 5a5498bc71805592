"""Entry point of cao-mcp (thin: the mcp SDK is imported only when a server runs)."""

from __future__ import annotations

import sys
from typing import Any

from cao_hookspecs import CommandSpec, RouteSpec, hookimpl


def _load_command() -> Any:
    from .stdio import mcp_server

    return mcp_server


def _http_app(kernel: Any) -> Any:
    from .http import create_app

    return create_app(kernel)


@hookimpl
def cao_register_commands() -> list[CommandSpec]:
    return [CommandSpec(name="mcp-server", load=_load_command,
                        help="Run cao's MCP server over stdio (for agent CLIs).")]


@hookimpl
def cao_register_routes() -> list[RouteSpec]:
    return [RouteSpec(
        name="mcp", path="/mcp", endpoint=_http_app, asgi=True, methods=("GET", "POST", "DELETE"),
        description="cao's MCP tools over streamable HTTP (stateless); the caller's terminal id goes in the "
                    "X-CAO-Terminal-Id header.",
    )]


@hookimpl
def cao_shutdown(kernel: Any) -> None:
    # Only a server that mounted the endpoint has imported the module; nothing to stop otherwise.
    http = sys.modules.get("cao_mcp.http")
    if http is not None:
        http.stop_apps(kernel)
