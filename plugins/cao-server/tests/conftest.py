"""Fixtures for cao-server tests: a real uvicorn on 127.0.0.1 (port 0) over a real kernel running mock
agents in a private tmux server, a client that checks answers against the OpenAPI document, and
helpers to run ``cao server`` as a subprocess. ``workdir`` comes from ``cao_testkit``."""

from __future__ import annotations

import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest

PLUGINS = ("tmux", "mock_cli", "inbox_sqlite", "mcp")
READY_LINE = re.compile(r"^cao-server listening on (http://\S+):(\d+)$")


@pytest.fixture
def tmux() -> Iterator[Any]:
    """A private tmux server (killed after the test)."""
    from cao_testkit.tmux import private_tmux_socket

    with private_tmux_socket() as private:
        yield private


@pytest.fixture
def server_settings() -> dict[str, str]:
    """Extra kernel settings for the ``server`` fixture (override with parametrize or in a test module)."""
    return {}


@pytest.fixture
def make_kernel(tmux: Any, cao_home: Path) -> Any:
    """``make_kernel(**settings)``: a kernel (not started) on the private tmux server with mock agents."""
    from cao_testkit.kernels import build_kernel

    return lambda **settings: build_kernel(cao_home, tmux.socket_path, *PLUGINS, **settings)


@pytest.fixture
def server(tmux: Any, cao_home: Path, server_settings: dict[str, str]) -> Iterator[Any]:
    """A real server in a thread over a real kernel; ``server.kernel`` is that kernel."""
    from cao_testkit.kernels import build_kernel
    from cao_testkit.serve import serve_in_thread

    kernel = build_kernel(cao_home, tmux.socket_path, *PLUGINS, **server_settings)
    with serve_in_thread(kernel) as running:
        running.kernel = kernel  # type: ignore[attr-defined]
        yield running


@pytest.fixture
def api(server: Any) -> Iterator[Any]:
    """A synchronous client whose every answer is checked against the server's OpenAPI document."""
    from cao_testkit.openapi import ApiClient

    client = ApiClient(server)
    yield client
    client.close()


@pytest.fixture
def make_terminal(api: Any, workdir: str) -> Any:
    """``make_terminal(session=None, **params) -> dict``: create a session with one idle mock agent."""

    def make(session: str | None = None, profile: str = "developer", **params: Any) -> dict[str, Any]:
        body = {"agent_profile": profile, "working_directory": workdir, **params}
        if session is not None:
            body["session_name"] = session
        response = api.post("/sessions", json=body)
        assert response.status_code == 201, response.text
        return response.json()

    return make


@pytest.fixture
def poll() -> Any:
    """``poll(predicate)``: wait until ``predicate()`` is truthy, for up to 10 s."""
    from cao_testkit.waiting import wait_until

    return partial(wait_until, timeout=10.0)


# -- `cao server` as a subprocess ------------------------------------------------------------------


class ServerProcess:
    """A ``cao server`` subprocess; ``url`` is set once it printed its listening line."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            argv,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.stderr: list[str] = []
        self.url: str | None = None
        self.port: int | None = None
        self.pumps = [
            threading.Thread(target=self._pump, args=(self.proc.stdout, self.lines.put), daemon=True),
            threading.Thread(target=self._pump, args=(self.proc.stderr, self.stderr.append), daemon=True),
        ]
        for pump in self.pumps:
            pump.start()

    @staticmethod
    def _pump(stream: Any, sink: Any) -> None:
        for line in stream:
            sink(line.rstrip("\n"))

    def wait_ready(self, timeout: float = 20.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=0.05)
            except queue.Empty:
                if self.proc.poll() is not None:
                    break
                continue
            match = READY_LINE.match(line)
            if match:
                self.url, self.port = f"{match.group(1)}:{match.group(2)}", int(match.group(2))
                return self.url
        self.stop()
        raise AssertionError(
            f"cao server did not start (exit {self.proc.returncode}):\n" + "\n".join(self.stderr)
        )

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 15.0) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self._drain()
        return self.proc.returncode

    def _drain(self) -> None:
        for pump in self.pumps:
            pump.join(5)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None and not stream.closed:
                stream.close()

    def stderr_text(self) -> str:
        """Everything the server wrote to stderr so far (all of it once it has exited)."""
        if self.proc.poll() is not None:
            self._drain()
        else:
            time.sleep(0.05)
        return "\n".join(self.stderr)


def cao_script(name: str = "cao") -> str:
    script = os.path.join(os.path.dirname(sys.executable), name)
    if not os.path.exists(script):
        found = shutil.which(name)
        assert found, f"the {name} script is not installed"
        script = found
    return script


@pytest.fixture
def spawn_server(tmux: Any, cao_home: Path) -> Iterator[Any]:
    """``spawn_server(*args, script="cao", **env) -> ServerProcess``: ``cao server ARGS`` with a private
    home, the private tmux server and mock agents; stopped after the test."""
    started: list[ServerProcess] = []

    def spawn(*args: str, script: str = "cao", **extra_env: str) -> ServerProcess:
        env = {k: v for k, v in os.environ.items() if not k.startswith("CAO_")}
        env.update(
            {
                "CAO_HOME_DIR": str(cao_home),
                "CAO_DEFAULT_PROVIDER": "mock_cli",
                "CAO_LOAD_PLUGINS": ",".join(PLUGINS + ("server",)),
                **tmux.settings,
                **extra_env,
            }
        )
        argv = [cao_script(script)] + (["server"] if script == "cao" else []) + list(args)
        process = ServerProcess(argv, env)
        started.append(process)
        return process

    yield spawn
    for process in started:
        process.stop()
