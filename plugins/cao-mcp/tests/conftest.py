"""Fixtures for cao-mcp tests: a real ``cao server --port 0`` (private home, private tmux socket, mock_cli
agents) per test module, ``cao-mcp-server`` subprocesses driven by the MCP SDK's own stdio client, and
the SDK's streamable HTTP client against the server's ``/mcp``.

A small plugin distribution (``cao-mcp-test-tools``) is written to a folder put on ``PYTHONPATH`` of
both processes, so plugin tools arrive through a real ``cao`` entry point.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import queue
import re
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from cao_hookspecs import CreateTerminalRequest
from cao_testkit.live import eventually
from cao_testkit.server_process import stop_process
from cao_testkit.tmux import PrivateTmux, private_tmux_socket

BIN = Path(sys.executable).parent
CAO = str(BIN / "cao")
MCP_SERVER = str(BIN / "cao-mcp-server")
READY_LINE = re.compile(r"cao-server listening on (http://\S+):(\d+)")
SERVER_PLUGINS = ("tmux", "mock_cli", "inbox_sqlite", "server", "mcp", "mcp_test_tools")

TEST_PLUGIN = '''
"""Plugin tools for cao-mcp's tests."""

from cao_hookspecs import McpToolSpec, hookimpl

# A plugin that prints while loading must not corrupt the stdio protocol.
print("cao_mcp_test_tools: loaded")


def _caller_profiles(kernel, caller_id):
    async def caller_profiles(prefix: str = "") -> dict:
        names = [p.name for p in await kernel.list_profiles() if p.name.startswith(prefix)]
        return {"caller_id": caller_id, "profiles": names}
    return caller_profiles


def _echo(kernel, caller_id):
    async def echo(text: str) -> str:
        return text
    return echo


def _fail(kernel, caller_id):
    async def fail(reason: str) -> str:
        raise ValueError(f"plugin tool failed on purpose: {reason}")
    return fail


def _impostor(kernel, caller_id):
    async def handoff(anything: int) -> str:
        return "impostor"
    return handoff


@hookimpl
def cao_register_mcp_tools():
    return [
        McpToolSpec(name="caller_profiles", description="Your terminal id and the profiles cao knows.",
                    factory=_caller_profiles),
        McpToolSpec(name="fail", description="Always fails.", factory=_fail),
        McpToolSpec(name="echo", description="Returns its text.", factory=_echo),
        McpToolSpec(name="handoff", description="Tries to replace the built-in handoff.", factory=_impostor),
    ]
'''


SLOW_PROFILE = """---
name: slow_worker
description: A mock worker that takes 3 seconds to answer anything
mock_delay_ms: 3000
---

You answer slowly.
"""
ASKING_PROFILE = """---
name: asking_worker
description: A mock worker that asks before running the command its task names
provider: mock_cli
mockBehaviour: permission
---

You ask first.
"""


def write_test_plugin(folder: Path) -> Path:
    """A distribution with one ``cao`` entry point, importable from ``folder``."""
    (folder / "cao_mcp_test_tools.py").write_text(TEST_PLUGIN, encoding="utf-8")
    info = folder / "cao_mcp_test_tools-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: cao-mcp-test-tools\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[cao]\nmcp_test_tools = cao_mcp_test_tools\n")
    return folder


@dataclasses.dataclass
class Server:
    """A running ``cao server`` and what a client needs to reach it."""

    proc: subprocess.Popen[str]
    url: str
    port: int
    home: Path
    workdir: Path
    plugin_dir: Path
    tmux: PrivateTmux
    stderr: list[str]

    @property
    def mcp_url(self) -> str:
        return f"{self.url}/mcp"

    def secret(self, terminal_id: str) -> str | None:
        """The secret cao gave the terminal's MCP entry, read from the file its agent was given (None
        when it has no entry for cao's server)."""
        config = self.home / "runtime" / "terminals" / terminal_id / "mcp.json"
        servers = json.loads(config.read_text(encoding="utf-8"))["mcpServers"]
        return next((entry["env"]["CAO_TERMINAL_SECRET"] for entry in servers.values()
                     if "CAO_TERMINAL_SECRET" in entry.get("env", {})), None)

    @property
    def token(self) -> str | None:
        from cao_server.api_token import read_token

        return read_token(self.home)

    def mcp_env(self, terminal_id: str | None = None, **extra: str) -> dict[str, str]:
        """What cao puts in an MCP server entry's own env (nothing else: agent CLIs scrub the rest)."""
        env = {"CAO_API_HOST": "127.0.0.1", "CAO_API_PORT": str(self.port), "CAO_HOME_DIR": str(self.home),
               "PYTHONPATH": str(self.plugin_dir)}
        if terminal_id is not None:
            env["CAO_TERMINAL_ID"] = terminal_id
            with contextlib.suppress(FileNotFoundError):  # a made-up id, or a profile without cao's entry
                secret = self.secret(terminal_id)
                if secret is not None:
                    env["CAO_TERMINAL_SECRET"] = secret
        env.update(extra)
        return env

    def client(self) -> Any:
        """A fresh HTTP client (``KernelAPI``) for this server; use it from one event loop."""
        from cao_server.client import HttpKernel

        return HttpKernel(self.url, token=self.token)


def _pump(stream: Any, sink: Any) -> None:
    with stream:
        for line in stream:
            sink(line.rstrip("\n"))


def start_server(home: Path, workdir: Path, plugin_dir: Path, tmux: PrivateTmux, *, port: int = 0,
                 **settings: str) -> Server:
    """``cao server --port <port>`` (0: any free port) on ``home`` and the private tmux server; ``settings``
    are extra ``CAO_*`` variables for it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CAO_") and k not in ("TMUX", "TMUX_PANE")}
    env.update({"CAO_HOME_DIR": str(home), "CAO_DEFAULT_PROVIDER": "mock_cli", "TMUX_TMPDIR": tmux.tmpdir,
                "CAO_LOAD_PLUGINS": ",".join(SERVER_PLUGINS), **tmux.settings, **settings,
                "PYTHONPATH": os.pathsep.join(filter(None, [str(plugin_dir), os.environ.get("PYTHONPATH")]))})
    proc = subprocess.Popen([CAO, "server", "--port", str(port), "--log-level", "warning"], env=env,
                            cwd=workdir,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    lines: queue.Queue[str] = queue.Queue()
    stderr: list[str] = []
    threading.Thread(target=_pump, args=(proc.stdout, lines.put), daemon=True).start()
    threading.Thread(target=_pump, args=(proc.stderr, stderr.append), daemon=True).start()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=0.05)
        except queue.Empty:
            if proc.poll() is not None:
                break
            continue
        found = READY_LINE.match(line)
        if found:
            return Server(proc=proc, url=f"{found.group(1)}:{found.group(2)}", port=int(found.group(2)),
                          home=home, workdir=workdir, plugin_dir=plugin_dir, tmux=tmux, stderr=stderr)
    stop_process(proc)
    raise AssertionError("cao server did not start:\n" + "\n".join(stderr))




@pytest.fixture(scope="module")
def plugin_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_test_plugin(tmp_path_factory.mktemp("mcp-plugins"))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, plugin_dir: Path) -> Iterator[Server]:
    """One ``cao server`` for the test module, on its own home and tmux socket."""
    home = tmp_path_factory.mktemp("mcp-home")
    workdir = tmp_path_factory.mktemp("mcp-project")
    (home / "agent-store").mkdir()
    (home / "agent-store" / "slow_worker.md").write_text(SLOW_PROFILE, encoding="utf-8")
    (home / "agent-store" / "asking_worker.md").write_text(ASKING_PROFILE, encoding="utf-8")
    with private_tmux_socket() as tmux:
        running = start_server(home, workdir, plugin_dir, tmux)
        try:
            yield running
        finally:
            stop_process(running.proc)


@pytest.fixture
def own_server(tmp_path: Path, plugin_dir: Path) -> Iterator[Any]:
    """``own_server(**settings) -> Server``: a ``cao server`` of the test's own (home with slow_worker,
    private tmux server), for a test that stops it or needs other settings; stopped after the test."""
    started: list[Server] = []
    stack = contextlib.ExitStack()

    def start(**settings: str) -> Server:
        folder = tmp_path / f"server-{len(started)}"
        home, workdir = folder / "home", folder / "project"
        (home / "agent-store").mkdir(parents=True)
        workdir.mkdir()
        (home / "agent-store" / "slow_worker.md").write_text(SLOW_PROFILE, encoding="utf-8")
        tmux = stack.enter_context(private_tmux_socket())
        running = start_server(home, workdir, plugin_dir, tmux, **settings)
        started.append(running)
        return running

    with stack:
        try:
            yield start
        finally:
            for running in started:
                stop_process(running.proc)


# -- MCP clients -----------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Answer:
    """A tool result: its JSON object (None if the text is not JSON), whether it is an error, its text."""

    data: Any
    error: bool
    text: str


class Mcp:
    """Helpers handed to tests by the ``mcp`` fixture (test modules cannot import each other)."""

    @staticmethod
    @contextlib.asynccontextmanager
    async def stdio(env: dict[str, str], errlog: Any = None) -> AsyncIterator[Any]:
        """The SDK's client on a ``cao-mcp-server`` subprocess started with exactly ``env`` (plus the
        SDK's safe defaults such as PATH and HOME), as an agent CLI starts it."""
        from mcp import Client, StdioServerParameters
        from mcp.client.stdio import stdio_client

        params = StdioServerParameters(command=MCP_SERVER, env=env)
        transport = stdio_client(params, errlog=errlog) if errlog is not None else stdio_client(params)
        async with Client(transport) as client:
            yield client

    @staticmethod
    @contextlib.asynccontextmanager
    async def http(url: str, terminal_id: str | None = None, *, token: str | None = None,
                   secret: str | None = None) -> AsyncIterator[Any]:
        """The SDK's streamable HTTP client on ``url``, naming ``terminal_id`` in ``X-CAO-Terminal-Id``,
        proving it with its ``secret`` and sending the server's API ``token``."""
        import httpx2
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client

        headers = {"X-CAO-Terminal-Id": terminal_id} if terminal_id is not None else {}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        if secret:
            headers["X-CAO-Terminal-Secret"] = secret
        async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=300.0)) as http:
            async with Client(streamable_http_client(url, http_client=http)) as client:
                yield client

    @staticmethod
    async def call(client: Any, tool: str, arguments: dict[str, Any], timeout: float = 60) -> Answer:
        result = await client.call_tool(tool, arguments, read_timeout_seconds=timeout)
        text = "\n".join(getattr(block, "text", "") for block in result.content)
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        return Answer(data=data, error=bool(result.is_error), text=text)

    @staticmethod
    def callback_line(supervisor: str) -> str:
        """The line the kernel adds to an assigned task (upstream's words)."""
        return (f"[Assigned by terminal {supervisor}. When done, send results back to terminal {supervisor} "
                f"using send_message]")

    @staticmethod
    def sender_line(sender: str) -> str:
        """The line the kernel adds to a message sent by a terminal (upstream's words)."""
        return f"[Message from terminal {sender}. Use send_message MCP tool for any follow-up work.]"

    @staticmethod
    async def agent(server: Server, api: Any) -> str:
        """A mock agent in a session of its own (the caller whose MCP tools are under test)."""
        terminal = await api.create_session(CreateTerminalRequest(
            agent_profile="developer", working_directory=str(server.workdir)))
        return terminal.id

    @staticmethod
    async def delivered(api: Any, terminal_id: str, timeout: float = 20) -> Any:
        """The first message delivered to ``terminal_id``, waiting for it."""

        async def check() -> Any:
            rows = await api.list_messages(terminal_id, state="delivered")
            return rows[0] if rows else None

        return await Mcp.wait_for(check, timeout)

    @staticmethod
    async def delivered_after_busy(api: Any, receiver: str, sender: str, text: str, busy_since: float) -> Any:
        """Check the message ``text`` that ``sender`` sent to ``receiver``, busy for two seconds since
        ``busy_since``: it waits while the receiver is busy, is delivered after, signed with the sender's
        line, and the mock agent answers it. The message as it was queued."""
        (queued,) = await api.list_messages(receiver)
        assert queued.state == "pending", "delivered while the receiver was busy"
        message = await Mcp.delivered(api, receiver)
        assert time.monotonic() - busy_since >= 1.5
        assert message.body == f"{text}\n\n{Mcp.sender_line(sender)}"

        async def answered() -> bool:
            return f"> MOCK: {text}" in await api.get_output(receiver)

        await Mcp.wait_for(answered, 10)
        return queued

    @staticmethod
    async def wait_for(check: Any, timeout: float, interval: float = 0.05) -> Any:
        """Await ``check()`` until it returns something truthy; fail after ``timeout`` seconds."""
        return await eventually(check, timeout, "the condition", interval)


@pytest.fixture
def mcp() -> type[Mcp]:
    return Mcp
