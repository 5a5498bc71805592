"""``cao mcp-server``: cao's MCP server over stdio, the child process an agent CLI starts.

The agent's identity is ``CAO_TERMINAL_ID`` and the server's address ``CAO_API_HOST``/``CAO_API_PORT``
(all put into the MCP server entry's own ``env`` by cao). Two ways to serve:

- **relay** (the usual case): cao-server answers at that address and knows the terminal, so every
  message goes to the server's own MCP endpoint (``cao_mcp.relay``, standard library only). The agent
  gets its tools without this process loading the MCP SDK, and the relay reports the terminal as
  connected. A server without cao-mcp answers each message with a 404, which the relay explains.
- **local**: anything else (no server, no or a bad terminal id, a terminal the server does not know).
  The MCP SDK serves the tools here; they call cao-server through its HTTP client (``HttpKernel``),
  whose connection opens at the first tool call, and explain each of those problems to the agent.
  Plugin tools are this installation's (``KernelAPI.mcp_tools`` of the command line's kernel, which is
  never started); they too run against the HTTP client.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import click

from .tools import ID_VARIABLE, Caller

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from cao_hookspecs import KernelAPI, McpToolSpec


def explain(client: Any, exc: BaseException) -> str | None:
    """The sentence an agent reads when cao-server cannot be reached (None for any other error)."""
    from cao_server.errors import ServerNotRunning

    if isinstance(exc, ServerNotRunning):
        where = getattr(client, "base_url", None) or "the address in CAO_API_HOST/CAO_API_PORT"
        return (f"cao-server is not running at {where}. Start it with `cao server` (or the `cao-server` "
                f"script), then call this tool again.")
    return None


def build_stdio_server(
    settings: Mapping[str, str], plugin_tools: Mapping[str, McpToolSpec] | None = None,
    kernel: KernelAPI | None = None,
) -> MCPServer:
    """The MCP server for one agent: its caller from ``CAO_TERMINAL_ID`` in ``settings``, its tools run
    against ``kernel`` (default: the HTTP client of the cao-server ``settings`` name; creating it
    sends nothing)."""
    import logging

    from .server import build_server

    # One plain line per record on stderr, which agent CLIs keep as the server's log. (The SDK would
    # otherwise pick a handler that wraps lines at a terminal's width when one library is installed.)
    logging.basicConfig(level=logging.WARNING, format="%(message)s", stream=sys.stderr)
    caller = Caller.parse(settings.get(ID_VARIABLE), source=ID_VARIABLE)
    if kernel is None:
        from cao_server.client import connect

        kernel = connect(settings)
    client = kernel
    return build_server(
        kernel,
        lambda ctx: caller,
        plugin_tools=plugin_tools,
        explain=lambda exc: explain(client, exc),
        template_caller=caller.id,
    )


@click.command("mcp-server")
@click.pass_context
def mcp_server(ctx: click.Context) -> None:
    """Run cao's MCP server over stdio (for agent CLIs).

    Your terminal id comes from CAO_TERMINAL_ID and the cao-server address from CAO_API_HOST and
    CAO_API_PORT (default 127.0.0.1:9889).
    """
    from cao_hookspecs.cli import kernel_from_context

    caller = Caller.parse(os.environ.get(ID_VARIABLE), source=ID_VARIABLE)
    if caller.id is not None:
        from . import relay

        target = relay.find_server(os.environ, caller.id)
        if target is not None:
            status = relay.run(target)
            # Threads may still wait on abandoned requests: leave without joining or finalizing them.
            sys.stderr.flush()
            os._exit(status)
    # stdout carries the protocol only: anything printed while plugins load goes to stderr. (The
    # script may have sent stdout there already while it resolved this command; the protocol needs the
    # real one back.)
    with contextlib.redirect_stdout(sys.stderr):
        installation = kernel_from_context(ctx)
    from cao_server.client import connect

    client = connect(os.environ)
    if sys.__stdout__ is not None:
        sys.stdout = sys.__stdout__
    import anyio

    async def serve() -> None:
        try:
            with contextlib.redirect_stdout(sys.stderr):
                tools = {spec.name: spec for spec in await installation.mcp_tools()}
                server = build_stdio_server(os.environ, tools, kernel=client)
            await server.run_stdio_async()
        finally:
            await client.aclose()

    anyio.run(serve)


__all__ = ["build_stdio_server", "explain", "mcp_server"]
