"""mock_cli's connection to cao's own MCP server, opened at start-up like a real agent CLI's.

Agent CLIs start their MCP servers when they start, not when the model first calls a tool, and cao gives
an agent its task only once that connection has listed cao's tools (its readiness gate). mock_cli does the
same for the ``cao-mcp-server`` entry of its ``--mcp-config``: right after the prompt is shown (or
``--mcp-delay-ms`` later, like a server that is slow to start) it starts the server and runs the MCP
handshake (``initialize``, ``notifications/initialized``, ``tools/list``) in a background thread.
Behaviours then call cao's tools over this connection; until it is ready the tools do not exist for
them, as for a real agent ("No such tool available").

This is a small MCP client over the server's pipes, written with the standard library alone: a mock agent
must start in milliseconds, and the MCP SDK takes most of a second to import. (Other servers of the config
are still reached through the SDK's client on first use; see ``mcp_client``.)
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping
from concurrent.futures import Future
from typing import Any

PROTOCOL_VERSION = "2025-06-18"
CAO_SERVER = "cao-mcp-server"


class ConnectError(Exception):
    """The server could not be started or did not complete the handshake; the message says why."""


def is_cao_server(entry: Mapping[str, Any]) -> bool:
    """Whether a config entry starts cao's own MCP server: ``cao-mcp-server`` by name or path (as cao
    writes it), through ``uvx``/``uv``, or as ``python -m cao_kernel mcp-server``."""
    command = os.path.basename(str(entry.get("command") or ""))
    args = [str(a) for a in entry.get("args") or []]
    if command == CAO_SERVER:
        return True
    if command in ("uvx", "uv"):
        return CAO_SERVER in args
    return args[:3] == ["-m", "cao_kernel", "mcp-server"]


class PipeClient:
    """One server process and its MCP session. ``ready`` holds the tool names once the handshake is done,
    or a ``ConnectError``."""

    def __init__(self, name: str, entry: Mapping[str, Any], log_path: str) -> None:
        self.name = name
        self.entry = entry
        self.log_path = log_path
        self.ready: Future[set[str]] = Future()
        self._proc: Any = None
        self._lock = threading.Lock()  # the request table
        self._write_lock = threading.Lock()  # whole messages on the server's stdin
        self._next_id = 0
        self._waiting: dict[int, Future[dict[str, Any]]] = {}
        self._closed = False

    def start(self, delay: float = 0.0) -> None:
        """Start the server and the handshake in a background thread, ``delay`` seconds from now;
        returns at once."""
        threading.Thread(target=self._connect, args=(delay,), name=f"mcp-{self.name}", daemon=True).start()

    def _connect(self, delay: float) -> None:
        import subprocess
        import time

        if delay > 0:
            time.sleep(delay)
        if self._closed:
            return
        try:
            with open(self.log_path, "a", encoding="utf-8") as errlog:
                env = {**os.environ, **{str(k): str(v) for k, v in (self.entry.get("env") or {}).items()}}
                self._proc = subprocess.Popen(
                    [str(self.entry["command"]), *[str(a) for a in self.entry.get("args") or []]],
                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errlog, env=env,
                    cwd=self.entry.get("cwd") or None, start_new_session=True,
                )
            threading.Thread(target=self._read, name=f"mcp-{self.name}-reader", daemon=True).start()
            self.request("initialize", {"protocolVersion": PROTOCOL_VERSION, "capabilities": {},
                                        "clientInfo": {"name": "mock_cli", "version": "0"}}).result()
            self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            listed = self.request("tools/list", {}).result()
            tools = {tool.get("name") for tool in listed.get("tools") or [] if isinstance(tool, dict)}
        except BaseException as exc:  # noqa: BLE001 - reported to whoever needs the connection
            detail = str(exc).strip() or type(exc).__name__
            self._settle(error=ConnectError(
                f"cannot connect to MCP server {self.name!r}: {detail} (its log: {self.log_path})"))
            self.close(0.5)
            return
        self._settle(tools={t for t in tools if isinstance(t, str)})

    def _settle(self, tools: set[str] | None = None, error: BaseException | None = None) -> None:
        # Under the lock: the program may close the connection while the handshake ends.
        with self._lock:
            if self.ready.done():
                return
            if error is not None:
                self.ready.set_exception(error)
            else:
                self.ready.set_result(tools or set())

    def request(self, method: str, params: Mapping[str, Any]) -> Future[dict[str, Any]]:
        """Send a request; the future holds its result, or raises ``ConnectError`` with the error."""
        future: Future[dict[str, Any]] = Future()
        with self._lock:
            if self._closed:
                future.set_exception(ConnectError(f"MCP server {self.name!r} is closed"))
                return future
            self._next_id += 1
            request_id = self._next_id
            self._waiting[request_id] = future
        try:
            self._send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": dict(params)})
        except OSError as exc:
            self._fail_all(f"MCP server {self.name!r} is gone ({exc})")
        return future

    def call_tool(self, tool: str, arguments: Mapping[str, Any]) -> Future[dict[str, Any]]:
        return self.request("tools/call", {"name": tool, "arguments": dict(arguments)})

    def _send(self, message: Mapping[str, Any]) -> None:
        data = json.dumps(message, ensure_ascii=False).encode("utf-8") + b"\n"
        with self._write_lock:
            stdin = self._proc.stdin
            stdin.write(data)
            stdin.flush()

    def _read(self) -> None:
        stdout = self._proc.stdout
        for line in stdout:
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if not isinstance(message, dict):
                continue
            if "method" in message:
                if message.get("id") is not None:  # the server asks us something; we offer nothing
                    answer: dict[str, Any] = {"result": {}} if message["method"] == "ping" else {
                        "error": {"code": -32601, "message": f"mock_cli does not handle {message['method']}"}}
                    try:
                        self._send({"jsonrpc": "2.0", "id": message["id"], **answer})
                    except OSError:
                        break
                continue
            with self._lock:
                future = self._waiting.pop(message.get("id"), None)  # type: ignore[arg-type]
            if future is None:
                continue
            if isinstance(message.get("error"), dict):
                future.set_exception(ConnectError(str(message["error"].get("message") or message["error"])))
            else:
                future.set_result(message.get("result") or {})
        code = self._proc.poll()
        self._fail_all(f"MCP server {self.name!r} exited" + (f" with status {code}" if code else ""))

    def _fail_all(self, reason: str) -> None:
        with self._lock:
            waiting, self._waiting = self._waiting, {}
        for future in waiting.values():
            if not future.done():
                future.set_exception(ConnectError(reason))

    def close(self, timeout: float = 2.0) -> None:
        """Close the server's stdin (it exits) and wait for it a little."""
        with self._lock:
            self._closed = True
        self._settle(error=ConnectError(f"MCP server {self.name!r} was closed while connecting"))
        proc = self._proc
        if proc is None:
            return
        try:
            proc.stdin.close()
        except OSError:
            pass
        try:
            proc.wait(timeout)
        except Exception:  # noqa: BLE001 - it ignores EOF: stop it
            proc.kill()


def connect_cao_servers(servers: Mapping[str, Mapping[str, Any]], log_dir: str,
                        delay: float = 0.0) -> dict[str, PipeClient]:
    """Start the handshake with every cao server of a config (normally one), ``delay`` seconds from now;
    returns them by name."""
    clients = {}
    for name, entry in servers.items():
        if is_cao_server(entry):
            client = PipeClient(name, entry, os.path.join(log_dir, f"mcp-{file_safe(name)}.log"))
            client.start(delay)
            clients[name] = client
    return clients


def file_safe(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name) or "server"


__all__ = ["ConnectError", "PipeClient", "connect_cao_servers", "is_cao_server"]
