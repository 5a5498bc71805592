"""Entry point of cao-mcp (thin: the mcp SDK is imported only when a server runs)."""

from __future__ import annotations

import sys
from typing import Any

from cao_hookspecs import CommandSpec, McpServerSpec, RouteSpec, hookimpl

from .entry import REPORT_ROUTE


def _load_command() -> Any:
    from .stdio import mcp_server

    return mcp_server


def _http_app(kernel: Any) -> Any:
    if _warming is not None:
        _warming.join()  # one thread imports the SDK at a time
    from .http import create_app

    return create_app(kernel)


@hookimpl
def cao_register_commands() -> list[CommandSpec]:
    return [CommandSpec(name="mcp-server", load=_load_command,
                        help="Run cao's MCP server over stdio (for agent CLIs).")]


@hookimpl
def cao_register_routes() -> list[RouteSpec]:
    return [RouteSpec(
        name=REPORT_ROUTE, path="/mcp", endpoint=_http_app, asgi=True, methods=("GET", "POST", "DELETE"),
        description="cao's MCP tools over streamable HTTP (stateless); the caller's terminal id goes in the "
                    "X-CAO-Terminal-Id header.",
    )]


@hookimpl
def cao_register_mcp_servers() -> list[McpServerSpec]:
    from .entry import mcp_server_spec

    return [mcp_server_spec()]


_warming: Any = None


def warm_up() -> None:
    """Import what the ``/mcp`` endpoint needs in a background thread (once per process).

    The MCP SDK takes most of a second to import. A server pays that on its first ``/mcp`` request, unless
    it was loaded while the agent that sends it was still starting: called when a terminal is about to be
    created.
    """
    global _warming
    if _warming is not None or "mcp.server.mcpserver" in sys.modules:
        return
    import threading

    def load() -> None:
        try:
            from . import http, server  # noqa: F401
            from mcp.server.streamable_http_manager import StreamableHTTPSessionManager  # noqa: F401
            from mcp.server.transport_security import TransportSecuritySettings  # noqa: F401
        except Exception as exc:  # noqa: BLE001 - the first request imports again and reports it
            import logging

            logging.getLogger("cao_mcp").debug("warming up the MCP endpoint failed: %s", exc)

    _warming = threading.Thread(target=load, name="cao-mcp-warm-up", daemon=True)
    _warming.start()


@hookimpl
def cao_before_terminal_create(request: Any) -> None:
    # A kernel is about to start an agent, whose MCP client will call /mcp as soon as it is up: the
    # earliest moment to start loading it. The request is left as it is.
    warm_up()


# Kernels that no server serves, by id: the endpoint each started (cao_server.embedded).
_endpoints: dict[int, Any] = {}


@hookimpl
def cao_startup(kernel: Any) -> None:
    # A kernel run inside another program has no cao-server: its agents' MCP servers would find nothing
    # to call. Serve it cao-server's own app on a private loopback port (a served kernel gets none).
    from cao_server.embedded import serve_embedded

    endpoint = serve_embedded(kernel)
    if endpoint is not None:
        _endpoints[id(kernel)] = endpoint


@hookimpl
def cao_shutdown(kernel: Any) -> Any:
    # Only a server that mounted the endpoint has imported the module; nothing to stop otherwise.
    http = sys.modules.get("cao_mcp.http")
    if http is not None:
        http.stop_apps(kernel)
    endpoint = _endpoints.pop(id(kernel), None)
    return endpoint.stop() if endpoint is not None else None
