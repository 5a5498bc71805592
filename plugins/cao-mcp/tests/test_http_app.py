"""The streamable HTTP app on its own: served by a real uvicorn in this process over a real kernel that
has no terminal backend (so every orchestration call fails with the kernel's own explanation), through
the SDK's streamable HTTP client."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx2

import cao_mcp.plugin
from cao_mcp.http import McpHttpApp


@contextlib.asynccontextmanager
async def serve(app: Any) -> AsyncIterator[str]:
    """``app`` on 127.0.0.1 (any free port) with ASGI lifespan events; yields its base URL."""
    import uvicorn

    config = uvicorn.Config(app, host="127.0.0.1", port=0, lifespan="on", http="h11", ws="none",
                            log_level="warning", loop="asyncio")
    server = uvicorn.Server(config)
    task = asyncio.ensure_future(server.serve())
    while not server.started:
        if task.done():
            task.result()
        await asyncio.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task


async def call(url: str, terminal_id: str | None, tool: str, arguments: dict[str, Any]) -> tuple[bool, Any]:
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    headers = {"x-cao-terminal-id": terminal_id} if terminal_id else {}
    async with httpx2.AsyncClient(headers=headers) as http:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            result = await client.call_tool(tool, arguments)
    return bool(result.is_error), json.loads(result.content[0].text)


async def test_app_runs_with_the_hosts_lifespan(kernel: Any) -> None:
    app = McpHttpApp(kernel)
    async with serve(app) as url:
        assert app.running
        error, data = await call(url, "0badc0de", "handoff", {"agent_profile": "developer", "message": "x"})
        assert error and "no terminal backend 'tmux' is installed" in data["message"]
        error, data = await call(url, None, "send_message", {"message": "x"})
        assert error and "no X-CAO-Terminal-Id header" in data["error"]
    assert not app.running


async def test_kernel_shutdown_stops_the_endpoint(kernel: Any, register_plugin: Any) -> None:
    """Mounted without lifespan events, the app starts on its first request and stops with the kernel
    (the plugin's ``cao_shutdown``)."""
    from starlette.applications import Starlette
    from starlette.routing import Route

    with register_plugin(kernel, cao_mcp.plugin):
        spec = kernel.routes["mcp"]
        assert spec.asgi and spec.path == "/mcp"
        app = spec.endpoint(kernel)
        host = Starlette(routes=[Route("/mcp", app)])  # a host that does not forward lifespan events
        async with serve(host) as url:
            assert not app.running
            task = {"agent_profile": "x", "message": "y"}
            error, data = await call(f"{url}/mcp", "0badc0de", "assign", task)
            assert error and data["success"] is False
            assert app.running
            kernel.hooks.shutdown(kernel)
            await asyncio.wait_for(app.aclose(), 10)
            assert not app.running
            async with httpx2.AsyncClient() as http:
                refused = await http.post(f"{url}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
            assert refused.status_code == 503 and "shutting down" in refused.json()["detail"]
