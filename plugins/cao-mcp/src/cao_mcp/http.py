"""cao's MCP server over streamable HTTP, mounted by cao-server at ``/mcp``.

The tools run against the server's own kernel. Each request names its agent's terminal in the
``X-CAO-Terminal-Id`` header. The transport is stateless (every POST stands alone), so any number of
agents share one endpoint and a server restart breaks no session.

cao-server guards the whole app (Host allow-list, Origin check, API token), so the SDK's own
DNS-rebinding check is left off here rather than applied twice with different rules. The app reads every
POST body itself, bounded by the server's body limit (``cao_server.validation.MAX_BODY_BYTES``, 8 MiB):
a declared length over it is a 413 before a byte is read, a chunked body is cut off with a 413 once it
passes it.

A successful ``tools/list`` naming a terminal is that terminal's MCP client reporting in: the app tells the
kernel (``mcp_connected``), which opens the terminal's readiness gate. cao-mcp-server's relay marks its
requests with ``X-CAO-Relay`` and reports in itself, later: only once the agent has been handed the
tool list (and the other lists it asked for at the same time), since an agent CLI counts a server as
connected only after it has read those answers.
"""

from __future__ import annotations

import asyncio
import json
import logging
import weakref
from typing import TYPE_CHECKING, Any

from cao_server.asgi import BodyTooLarge, ClientLeft, StatusWatch, read_body
from cao_server.security import send_error
from cao_server.validation import MAX_BODY_BYTES

from .tools import (
    ID_HEADER,
    RELAY_HEADER,
    SECRET_HEADER,
    SECRET_VARIABLE,
    TERMINAL_ID_RE,
    Caller,
    context_header,
    header_value,
)

if TYPE_CHECKING:
    from starlette.types import Receive, Scope, Send

    from cao_hookspecs import KernelAPI

log = logging.getLogger("cao_mcp")

# Apps by the kernel they serve, so the kernel's shutdown stops them (cao_shutdown in plugin.py).
_APPS: weakref.WeakKeyDictionary[Any, weakref.WeakSet[McpHttpApp]] = weakref.WeakKeyDictionary()


def caller_from_context(ctx: Any) -> Caller:
    """The caller named by the request's ``X-CAO-Terminal-Id`` header."""
    return Caller.parse(context_header(ctx, ID_HEADER), source=ID_HEADER)


async def _build_server(kernel: KernelAPI) -> Any:
    from mcp.server.transport_security import TransportSecuritySettings

    from .server import build_server

    plugin_tools = {spec.name: spec for spec in await kernel.mcp_tools()}
    root = logging.getLogger()
    saved = (list(root.handlers), root.level)
    try:
        server = build_server(kernel, caller_from_context, plugin_tools=plugin_tools)
        options: dict[str, Any] = {
            "stateless_http": True,
            "transport_security": TransportSecuritySettings(enable_dns_rebinding_protection=False),
            # The app reads the body first, bounded by the server's own limit; the SDK's check (its
            # default is 4 MiB) must not refuse a message the server takes.
            "max_request_body_size": MAX_BODY_BYTES,
        }
        try:
            server.streamable_http_app(**options)
        except TypeError:  # an SDK from before its own body limit
            del options["max_request_body_size"]
            server.streamable_http_app(**options)
    finally:
        # MCPServer configures the root logger for a standalone process; the host server owns logging.
        root.handlers[:] = saved[0]
        root.setLevel(saved[1])
    return server


class McpHttpApp:
    """ASGI app serving cao's MCP tools over streamable HTTP against ``kernel``.

    It starts its MCP session manager on the first request (a host that forwards ASGI lifespan events
    starts and stops it with the host instead), and stops it on ``aclose()``, on the lifespan shutdown
    event, or when the kernel shuts down.
    """

    def __init__(self, kernel: KernelAPI) -> None:
        self.kernel = kernel
        # Built on start: the plugins' tools come from the kernel, a coroutine away.
        self.server: Any = None
        self._manager: Any = None
        self._runner: asyncio.Task[None] | None = None
        self._ready: asyncio.Event | None = None
        self._stop: asyncio.Event | None = None
        self._lock: asyncio.Lock | None = None
        try:
            _APPS.setdefault(kernel, weakref.WeakSet()).add(self)
        except TypeError:  # a kernel that cannot be weakly referenced simply is not tracked
            pass

    @property
    def running(self) -> bool:
        """Whether the session manager is up and serving requests."""
        if self._runner is None or self._runner.done() or self._ready is None or self._stop is None:
            return False
        return self._ready.is_set() and not self._stop.is_set()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        if self._stop is not None and self._stop.is_set():
            await _unavailable(send)
            return
        await self.start()
        terminal_id = _terminal_header(scope)
        if terminal_id is not None and not await self._proven(terminal_id, scope):
            await _refused_identity(send, terminal_id)
            return
        if scope.get("method") != "POST":
            await self._manager.handle_request(scope, receive, send)
            return
        # Read here, bounded, rather than by the SDK: the body is needed below, and a client that
        # leaves half-way is its own business, not a server error with a traceback.
        try:
            body = await read_body(scope, receive, MAX_BODY_BYTES)
        except BodyTooLarge as exc:
            # Closing: the rest of the body is never read, so the connection cannot serve another request.
            await send_error(send, 413, str(exc), "TooLarge", headers=[("connection", "close")])
            return
        except ClientLeft:
            log.debug("an MCP client disconnected before its request body ended")
            return
        watch = StatusWatch(send)
        await self._manager.handle_request(scope, _replay(body, receive), watch)
        if terminal_id is None or watch.status != 200 or _has_header(scope, RELAY_HEADER):
            return
        if _lists_tools(body):
            await self._report_connected(terminal_id)

    async def _proven(self, terminal_id: str, scope: Scope) -> bool:
        """Whether the request proves it comes from ``terminal_id`` (its MCP entry's secret), where the
        kernel can tell: an in-process kernel; a client kernel (no secrets to compare) cannot."""
        verify = getattr(self.kernel, "verify_terminal_secret", None)
        if verify is None:
            return True
        return bool(await verify(terminal_id, _scope_header(scope, SECRET_HEADER)))

    async def _report_connected(self, terminal_id: str) -> None:
        from cao_hookspecs.errors import CaoError

        try:
            await self.kernel.mcp_connected(terminal_id)
        except CaoError as exc:  # an id the kernel does not know: its tools already said so
            log.debug("MCP client of %s listed the tools: %s", terminal_id, exc)

    async def start(self) -> None:
        """Start the session manager (idempotent)."""
        if self._ready is not None and self._ready.is_set():
            return
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self._runner is not None:
                if self._runner.done():
                    raise RuntimeError("cao's MCP endpoint was stopped")
                return
            if self.server is None:
                self.server = await _build_server(self.kernel)
                self._manager = self.server.session_manager
            self._ready, self._stop = asyncio.Event(), asyncio.Event()
            self._runner = asyncio.ensure_future(self._run(self._ready, self._stop))
            waiter = asyncio.ensure_future(self._ready.wait())
            await asyncio.wait({waiter, self._runner}, return_when=asyncio.FIRST_COMPLETED)
            waiter.cancel()
            if self._runner.done():
                self._runner.result()  # raises what stopped it

    async def _run(self, ready: asyncio.Event, stop: asyncio.Event) -> None:
        # The session manager's task group must be entered and left by one task: this one.
        async with self._manager.run():
            ready.set()
            await stop.wait()

    def stop(self) -> None:
        """Ask the session manager to stop (from the event loop's thread); in-flight calls are cancelled."""
        if self._stop is not None:
            self._stop.set()

    async def aclose(self) -> None:
        """Stop the session manager and wait until it has."""
        self.stop()
        if self._runner is not None:
            await asyncio.gather(self._runner, return_exceptions=True)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    await self.start()
                except Exception as exc:  # noqa: BLE001 - reported to the host as the protocol asks
                    await send({"type": "lifespan.startup.failed", "message": str(exc)})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return


def _scope_header(scope: Scope, name: str) -> str | None:
    """The first value of header ``name`` in an ASGI scope, or None."""
    wanted = name.lower().encode("latin-1")
    values = (value for key, value in scope.get("headers") or () if key.lower() == wanted)
    found = next(values, None)
    return None if found is None else found.decode("latin-1")


def _has_header(scope: Scope, name: str) -> bool:
    return _scope_header(scope, name) is not None


def _terminal_header(scope: Scope) -> str | None:
    text = _scope_header(scope, ID_HEADER)
    return text if text is not None and TERMINAL_ID_RE.fullmatch(text) else None


def _replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that hands over ``body`` (already read) first, then passes on later events."""
    pending = [{"type": "http.request", "body": body, "more_body": False}]

    async def replay() -> Any:
        if pending:
            return pending.pop(0)
        return await receive()

    return replay


def _lists_tools(body: bytes) -> bool:
    """Whether a JSON-RPC body holds a ``tools/list`` request."""
    if b"tools/list" not in body:
        return False
    try:
        data = json.loads(body)
    except ValueError:
        return False
    messages = data if isinstance(data, list) else [data]
    return any(isinstance(m, dict) and m.get("method") == "tools/list" for m in messages)


async def _refused_identity(send: Send, terminal_id: str) -> None:
    detail = (f"the request names terminal {terminal_id} in {ID_HEADER} but does not prove it: send the "
              f"secret cao gave that terminal's MCP server ({SECRET_VARIABLE}) in {SECRET_HEADER}")
    body = json.dumps({"detail": detail, "error": "Forbidden"}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 403, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _unavailable(send: Send) -> None:
    body = json.dumps({"detail": "cao's MCP endpoint is shutting down", "error": "ServerNotRunning"}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 503, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def create_app(kernel: KernelAPI) -> McpHttpApp:
    """The ``RouteSpec`` factory: the ASGI app cao-server mounts at ``/mcp``."""
    return McpHttpApp(kernel)


def stop_apps(kernel: Any) -> None:
    """Stop every MCP app serving ``kernel`` (called when the kernel shuts down)."""
    try:
        apps = list(_APPS.get(kernel) or ())
    except TypeError:
        return
    for app in apps:
        app.stop()


__all__ = ["McpHttpApp", "caller_from_context", "create_app", "header_value", "stop_apps"]
