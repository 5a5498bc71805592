"""The MCP client side of mock_cli: the servers of its ``--mcp-config`` file.

A behaviour's ``turn.call(tool, **args)`` lands here. cao's own server was connected at start-up
(``mcp_pipe``) and is used as it is. Every other server is started (stdio) or reached (``url``) the first
time a tool is looked up, through the mcp SDK's own client, and the connection is kept until the program
exits. The SDK takes most of a second to import, so nothing here imports it before such a tool is called.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Mapping
from typing import Any

from .mcp_config import read_config
from .mcp_pipe import ConnectError, PipeClient, file_safe


class ToolError(Exception):
    """A tool call that did not succeed: the server reported an error, or no server offers the tool."""


class _Server:
    """One configured server. Its connection lives in a task of its own, because the SDK's client
    must be closed by the task that opened it; callers in other tasks share the open client."""

    def __init__(self, name: str, entry: Mapping[str, Any], log_path: str) -> None:
        self.name = name
        self.entry = entry
        self.log_path = log_path
        self.client: Any = None
        self.tools: set[str] | None = None
        self._ready: asyncio.Future[None] | None = None
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def connect(self) -> None:
        if self._ready is None:
            self._ready = asyncio.get_running_loop().create_future()
            self._task = asyncio.ensure_future(self._hold())
        await asyncio.shield(self._ready)

    async def _hold(self) -> None:
        assert self._ready is not None
        try:
            try:
                from mcp import Client
            except ImportError:
                raise ToolError("calling MCP tools needs the mcp package: pip install "
                                "'cao-provider-mock[mcp]'") from None

            # The server's stderr goes to a log file: on the terminal it would corrupt the agent's screen.
            with open(self.log_path, "a", encoding="utf-8") as errlog:
                target: Any
                if self.entry.get("url"):
                    target = str(self.entry["url"])
                else:
                    from mcp.client.stdio import StdioServerParameters, stdio_client

                    params = StdioServerParameters(
                        command=str(self.entry["command"]),
                        args=[str(a) for a in self.entry.get("args") or []],
                        env={str(k): str(v) for k, v in (self.entry.get("env") or {}).items()},
                        cwd=self.entry.get("cwd") or None,
                    )
                    # Any async context manager yielding the streams is a transport to the SDK's client.
                    target = stdio_client(params, errlog=errlog)
                async with Client(target) as client:
                    self.client = client
                    listed = await client.list_tools()
                    self.tools = {tool.name for tool in listed.tools}
                    self._ready.set_result(None)
                    await self._stop.wait()
        except BaseException as exc:  # reported to every caller waiting to connect
            if not self._ready.done():
                if isinstance(exc, ToolError):
                    self._ready.set_exception(exc)
                    return
                leaf = _first_leaf(exc)
                detail = str(leaf).strip() or type(leaf).__name__
                self._ready.set_exception(ToolError(
                    f"cannot connect to MCP server {self.name!r}: {detail} (its log: {self.log_path})"
                ))
            if isinstance(exc, asyncio.CancelledError):
                raise
        finally:
            self.client = None

    async def call(self, tool: str, arguments: Mapping[str, Any]) -> tuple[list[str], Any, bool]:
        """The tool's text items, structured content and error flag."""
        result = await self.client.call_tool(tool, dict(arguments))
        texts = [item.text for item in result.content if getattr(item, "type", None) == "text"]
        return texts, result.structured_content, bool(result.is_error)

    async def aclose(self) -> None:
        self._stop.set()
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)


class _PipeServer:
    """cao's server, connected at start-up by ``mcp_pipe`` (the program closes it when it exits)."""

    def __init__(self, client: PipeClient) -> None:
        self.name = client.name
        self.client = client
        self.tools: set[str] | None = None

    @property
    def connecting(self) -> bool:
        return not self.client.ready.done()

    async def connect(self) -> None:
        # Never waits: until the handshake is done an agent's model simply has no such tools.
        if self.connecting:
            self.tools = set()
            return
        try:
            self.tools = self.client.ready.result()
        except ConnectError as exc:
            raise ToolError(str(exc)) from None

    async def call(self, tool: str, arguments: Mapping[str, Any]) -> tuple[list[str], Any, bool]:
        try:
            result = await asyncio.wrap_future(self.client.call_tool(tool, arguments))
        except ConnectError as exc:
            raise ToolError(f"{tool} failed: {exc}") from None
        content = result.get("content") if isinstance(result.get("content"), list) else []
        texts = [str(item.get("text", "")) for item in content
                 if isinstance(item, dict) and item.get("type") == "text"]
        return texts, result.get("structuredContent"), bool(result.get("isError"))

    async def aclose(self) -> None:
        pass


class McpConnections:
    """The servers of one config file: cao's as connected at start-up, each other one connected the first
    time a tool needs it."""

    def __init__(self, servers: Mapping[str, Mapping[str, Any]], log_dir: str,
                 connected: Mapping[str, PipeClient] | None = None) -> None:
        connected = connected or {}
        self._servers: list[Any] = [
            _PipeServer(connected[name]) if name in connected
            else _Server(name, entry, os.path.join(log_dir, f"mcp-{file_safe(name)}.log"))
            for name, entry in servers.items()
        ]

    @classmethod
    def from_file(cls, path: str | None, connected: Mapping[str, PipeClient] | None = None) -> McpConnections:
        if path is None:
            return cls({}, ".")
        return cls(read_config(path), os.path.dirname(os.path.abspath(path)), connected)

    async def call(self, tool: str, arguments: Mapping[str, Any]) -> Any:
        """Call ``tool`` on the first server (in config order) that offers it; return its result.

        The result is the tool's JSON value when its text is JSON, else the text. A result flagged as
        an error raises ``ToolError`` with the server's message.
        """
        server = await self._server_for(tool)
        texts, structured, is_error = await server.call(tool, arguments)
        if is_error:
            raise ToolError(f"{tool} failed: {_reason(texts, structured)}")
        if not texts:
            return structured
        values = [_json_or_text(text) for text in texts]
        return values[0] if len(values) == 1 else values

    async def _server_for(self, tool: str) -> _Server:
        if not self._servers:
            raise ToolError(f"cannot call {tool!r}: this agent has no MCP servers (its profile has no "
                            "mcpServers, so mock_cli got no --mcp-config)")
        offered: list[str] = []
        connecting: list[str] = []
        for server in self._servers:
            await server.connect()
            assert server.tools is not None
            if tool in server.tools:
                return server
            offered.extend(sorted(server.tools))
            if getattr(server, "connecting", False):
                connecting.append(server.name)
        if connecting:
            names = ", ".join(map(repr, connecting))
            raise ToolError(f"No such tool available: {tool} (MCP server {names} is still connecting)")
        raise ToolError(f"no MCP server of this agent offers the tool {tool!r} "
                        f"(offered: {', '.join(offered) or 'none'})")

    async def aclose(self) -> None:
        await asyncio.gather(*(server.aclose() for server in self._servers), return_exceptions=True)


def _reason(texts: list[str], structured: Any) -> str:
    # cao's tools report a failure as JSON with a "message" or "error"; others as plain text.
    data = structured if isinstance(structured, dict) else _json_or_text(" ".join(texts))
    if isinstance(data, dict) and isinstance(data.get("message") or data.get("error"), str):
        return str(data.get("message") or data.get("error"))
    return " ".join(texts).strip() or "the server gave no reason"


def _first_leaf(exc: BaseException) -> BaseException:
    # The SDK's task groups wrap the real failure (a missing program, a server that exited) in groups.
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _json_or_text(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


