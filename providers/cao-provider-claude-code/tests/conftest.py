"""Fixtures for the Claude Code provider's tests.

Live tests (marked ``live_cli``) run the real Claude Code, installed from npm once per machine (see
``cao_kernel.testing.models.cli``), against a scripted Anthropic server on 127.0.0.1, in a sandboxed
HOME, on a private tmux server. ``CAO_LIVE_CLAUDE_CODE_VERSION`` picks another release to try.
"""

from __future__ import annotations

import dataclasses
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cao_provider_claude_code.provider import TESTED_VERSIONS

PACKAGE = "@anthropic-ai/claude-code"
VERSION_ENV = "CAO_LIVE_CLAUDE_CODE_VERSION"
SCREENS = Path(__file__).parent / "screens"


def live_version() -> str:
    return os.environ.get(VERSION_ENV) or TESTED_VERSIONS[-1]


@pytest.fixture(scope="session")
def claude_cli():
    """The real Claude Code (installed into the per-machine cache on first use)."""
    from cao_kernel.testing.models.cli import install_npm_cli

    return install_npm_cli(PACKAGE, live_version(), "claude")


@pytest.fixture
def model_server() -> Iterator:
    """A scripted Anthropic Messages API; add turns with ``model_server.script.add(...)``."""
    from cao_kernel.testing.models import Script
    from cao_kernel.testing.models.anthropic import AnthropicServer

    with AnthropicServer(Script()) as server:
        yield server
    server.assert_healthy()


def claude_env(server, cli) -> dict[str, str]:
    """What a live test's environment needs: the model server, the installed program, no updates."""
    return {
        **server.client_env(),
        "CAO_CLAUDE_CODE_BIN": str(cli.binary),
        # Tests run as root on CI machines; Claude Code accepts bypass mode there only in a sandbox.
        "IS_SANDBOX": "1",
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "TERM": "xterm-256color",
    }


@pytest.fixture
def claude_sandbox(tmp_path, model_server, claude_cli, monkeypatch):
    """A sandboxed HOME wired to the scripted server, applied to this test's environment."""
    from cao_kernel.testing.models.cli import make_sandbox

    sandbox = make_sandbox(tmp_path / "sandbox", env=claude_env(model_server, claude_cli))
    sandbox.apply(monkeypatch)
    return sandbox


@pytest.fixture
def make_kernel(tmux_socket, cao_home):
    """Build kernels that run Claude Code on the private tmux server."""
    from cao_kernel.kernel import Kernel
    from cao_kernel.plugins import LoadPolicy

    def make(*plugins: str, **settings: str):
        return Kernel(
            policy=LoadPolicy(only=plugins or ("tmux", "claude_code", "inbox_sqlite")),
            home=cao_home,
            settings={"CAO_TMUX_SOCKET": tmux_socket, "CAO_DEFAULT_PROVIDER": "claude_code", **settings},
        )

    return make


@pytest.fixture
def workdir(tmp_path):
    d = tmp_path / "project"
    d.mkdir()
    return str(d)


# -- a real cao-server (for MCP tools called by the real agent) -------------------------------------

SERVER_PLUGINS = ("tmux", "claude_code", "mock_cli", "inbox_sqlite", "server", "mcp")
_READY_LINE = re.compile(r"cao-server listening on (http://\S+):(\d+)")


@dataclasses.dataclass
class CaoServer:
    """A ``cao server --port 0`` subprocess on a private home and tmux socket."""

    proc: subprocess.Popen[str]
    url: str
    home: Path
    stderr: list[str]

    def client(self):
        """A ``KernelAPI`` over HTTP for this server (use it from one event loop)."""
        from cao_server.client import HttpKernel

        return HttpKernel(self.url)


def _pump(stream, sink) -> None:  # noqa: ANN001
    for line in stream:
        sink(line.rstrip("\n"))


@pytest.fixture
def cao_server(claude_sandbox, cao_home, tmp_path) -> Iterator[CaoServer]:
    """A real cao-server with the Claude Code provider, started in the live sandbox's environment.

    Profiles go in ``cao_server.home / "agent-store"`` (write them before creating terminals).
    """
    from cao_kernel.testing.tmux import private_tmux_socket

    cao = Path(sys.executable).parent / "cao"
    (Path(cao_home) / "agent-store").mkdir(exist_ok=True)
    with private_tmux_socket() as tmux:
        env = {k: v for k, v in os.environ.items() if not k.startswith("CAO_") or k == "CAO_CLAUDE_CODE_BIN"}
        env.update({"CAO_HOME_DIR": str(cao_home), "TMUX_TMPDIR": tmux.tmpdir,
                    "CAO_LOAD_PLUGINS": ",".join(SERVER_PLUGINS), **tmux.settings})
        proc = subprocess.Popen([str(cao), "server", "--port", "0", "--log-level", "warning"], env=env,
                                cwd=tmp_path, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, start_new_session=True)
        lines: queue.Queue[str] = queue.Queue()
        stderr: list[str] = []
        pumps = [threading.Thread(target=_pump, args=(proc.stdout, lines.put), daemon=True),
                 threading.Thread(target=_pump, args=(proc.stderr, stderr.append), daemon=True)]
        for pump in pumps:
            pump.start()
        try:
            deadline = time.monotonic() + 30
            url = None
            while url is None and time.monotonic() < deadline and proc.poll() is None:
                try:
                    found = _READY_LINE.match(lines.get(timeout=0.05))
                except queue.Empty:
                    continue
                if found:
                    url = f"{found.group(1)}:{found.group(2)}"
            if url is None:
                raise AssertionError("cao server did not start:\n" + "\n".join(stderr))
            yield CaoServer(proc=proc, url=url, home=Path(cao_home), stderr=stderr)
        finally:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(15)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(5)
            for pump in pumps:
                pump.join(5)
            for stream in (proc.stdout, proc.stderr):
                if stream is not None:
                    stream.close()
