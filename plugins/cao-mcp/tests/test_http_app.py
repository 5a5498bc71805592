"""The streamable HTTP app on its own: served by a real uvicorn in this process over a real kernel that
has no terminal backend (so every orchestration call fails with the kernel's own explanation), through
the SDK's streamable HTTP client."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import pytest

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


# -- request bodies: bounded while they arrive, and a client that leaves is not a server error --------

INIT = {"jsonrpc": "2.0", "id": 1, "method": "ping"}


@contextlib.asynccontextmanager
async def _raw(url: str, head: str) -> AsyncIterator[tuple[asyncio.StreamReader, asyncio.StreamWriter]]:
    """A connection that has sent ``head``; closed on the way out, so the server can stop."""
    host, port = url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    try:
        writer.write(head.encode("latin-1"))
        await writer.drain()
        yield reader, writer
    finally:
        writer.close()


def _head(length: str | None, terminal_id: str | None) -> str:
    lines = ["POST /mcp HTTP/1.1", "Host: 127.0.0.1", "Content-Type: application/json",
             "Accept: application/json, text/event-stream"]
    lines.append(f"Content-Length: {length}" if length is not None else "Transfer-Encoding: chunked")
    if terminal_id is not None:
        lines.append(f"X-CAO-Terminal-Id: {terminal_id}")
    return "\r\n".join(lines) + "\r\n\r\n"


async def test_a_declared_oversized_body_is_refused_before_it_is_sent(kernel: Any) -> None:
    """With a terminal header the app read the body itself, whole, before any check (800 MB: 1.6 GB)."""
    async with serve(McpHttpApp(kernel)) as url:
        async with _raw(url, _head(str(800 * 1024 * 1024), "0badc0de")) as (reader, _):
            status = await asyncio.wait_for(reader.readline(), 5)
            rest = await asyncio.wait_for(reader.read(), 5)
    assert b" 413 " in status and b"limit is 8388608" in rest, (status, rest)


async def test_a_chunked_body_is_cut_off_once_it_passes_the_limit(kernel: Any) -> None:
    chunk = b"x" * (256 * 1024)
    async with serve(McpHttpApp(kernel)) as url:
        async with _raw(url, _head(None, "0badc0de")) as (reader, writer):
            answer = asyncio.ensure_future(reader.readline())
            sent = 0
            with contextlib.suppress(ConnectionError):
                # Before: the whole body was buffered; 64 MiB went in with no answer.
                while not answer.done() and sent < 64 * 1024 * 1024:
                    writer.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    await writer.drain()
                    sent += len(chunk)
                    await asyncio.sleep(0)
            status = await asyncio.wait_for(answer, 5)
    assert b" 413 " in status, status
    assert sent < 16 * 1024 * 1024, sent


async def test_a_body_at_the_limit_still_reaches_the_tools(kernel: Any) -> None:
    async with serve(McpHttpApp(kernel)) as url:
        async with httpx2.AsyncClient() as http:
            # The largest message a tool takes, escaped at its worst (\u00XX per byte), is under the limit.
            message = "\x01" * (1024 * 1024)
            body = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                               "params": {"name": "send_message", "arguments": {"receiver_id": "0badc0de",
                                                                                "message": message}}})
            assert len(body) > 6 * 1024 * 1024
            answer = await http.post(f"{url}/mcp", content=body, headers={
                "x-cao-terminal-id": "0badc0de", "content-type": "application/json",
                "accept": "application/json, text/event-stream"})
    assert answer.status_code == 200, answer.text[:300]


@pytest.mark.parametrize("terminal_id", ["0badc0de", None])
async def test_a_client_leaving_mid_body_is_no_server_error(
    kernel: Any, terminal_id: Any, caplog: Any
) -> None:
    caplog.set_level(logging.DEBUG)
    async with serve(McpHttpApp(kernel)) as url:
        async with _raw(url, _head("1000", terminal_id) + '{"jsonrpc": "2.0", '):
            await asyncio.sleep(0.2)
        await asyncio.sleep(0.3)
    # Before: the SDK's "Error handling POST request" with a ClientDisconnect traceback, and a 500.
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING], caplog.text
    assert any("disconnected" in r.getMessage() for r in caplog.records), caplog.text
