"""Fixtures for the Copilot CLI provider's tests.

Live tests (marked ``live_cli``) run the real Copilot CLI, installed from npm once per machine (see
``cao_kernel.testing.models.cli``), in a sandboxed HOME, on a private tmux server. Copilot CLI uses a
custom model provider when ``COPILOT_PROVIDER_BASE_URL`` is set: here a scripted Anthropic Messages
server on 127.0.0.1, with ``COPILOT_OFFLINE=true`` and an unreachable proxy for everything else, so no
GitHub account is needed and nothing leaves the machine. ``CAO_LIVE_COPILOT_CLI_VERSION`` picks
another release to try.
"""

from __future__ import annotations

import dataclasses
import json
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

from cao_provider_copilot_cli.provider import TESTED_VERSIONS

PACKAGE = "@github/copilot"
VERSION_ENV = "CAO_LIVE_COPILOT_CLI_VERSION"
#: A model Copilot knows (so it applies that model's settings); the scripted server answers for any name.
MODEL = "claude-sonnet-4"
#: Variables that would point Copilot at the user's GitHub account, config folder or permissions.
ACCOUNT_VARS = ("COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN", "GH_HOST", "COPILOT_GH_HOST",
                "COPILOT_HOME", "COPILOT_ALLOW_ALL", "COPILOT_PROVIDER_BEARER_TOKEN",
                "COPILOT_PROVIDER_API_KEY_COMMAND", "COPILOT_PROVIDER_WIRE_API", "COPILOT_PROVIDER_HEADERS")
#: The variables that select the scripted model server (left empty, Copilot has no model to talk to).
PROVIDER_VARS = ("COPILOT_PROVIDER_BASE_URL", "COPILOT_PROVIDER_TYPE", "COPILOT_PROVIDER_API_KEY",
                 "COPILOT_OFFLINE", "COPILOT_MODEL")


def live_version() -> str:
    return os.environ.get(VERSION_ENV) or TESTED_VERSIONS[-1]


def pkg_cache() -> Path:
    """Where Copilot unpacks its bundle (~240 MB, on first start, even for ``--version``): one shared
    folder in the live-CLI cache instead of one per sandbox HOME."""
    from cao_kernel.testing.models.cli import cache_root

    return cache_root() / "copilot-pkg"


@pytest.fixture(scope="session")
def copilot_cli():
    """The real Copilot CLI (installed into the per-machine cache on first use)."""
    from cao_kernel.testing.models.cli import install_npm_cli

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("COPILOT_PKG_CACHE_HOME", str(pkg_cache()))
        return install_npm_cli(PACKAGE, live_version(), "copilot")


@pytest.fixture
def model_server() -> Iterator:
    """A scripted Anthropic Messages API; add turns with ``model_server.script.add(...)``."""
    from cao_kernel.testing.models import Script
    from cao_kernel.testing.models.anthropic import AnthropicServer

    with AnthropicServer(Script()) as server:
        yield server
    server.assert_healthy()


def copilot_env(server, cli) -> dict[str, str]:
    """What a live test's environment needs: the scripted server as model provider, nothing else reachable."""
    from cao_kernel.testing.models.anthropic import FAKE_API_KEY

    return {
        "CAO_COPILOT_CLI_BIN": str(cli.binary),
        "COPILOT_PROVIDER_BASE_URL": server.url,
        "COPILOT_PROVIDER_TYPE": "anthropic",
        "COPILOT_PROVIDER_API_KEY": FAKE_API_KEY,
        "COPILOT_MODEL": MODEL,
        "COPILOT_OFFLINE": "true",
        "COPILOT_PKG_CACHE_HOME": str(pkg_cache()),
        "COPILOT_AUTO_UPDATE": "false",
        "HTTPS_PROXY": "http://127.0.0.1:9",
        "HTTP_PROXY": "http://127.0.0.1:9",
        "NO_PROXY": "127.0.0.1,localhost",
        "TERM": "xterm-256color",
    }


def seed_first_launch(home: Path) -> None:
    """A ``~/.copilot`` that has seen a first launch, as any user's has after their first run (the very
    first start plays an animated banner for several seconds)."""
    folder = home / ".copilot"
    folder.mkdir(parents=True, exist_ok=True)
    seen = {"firstLaunchAt": "2026-01-01T00:00:00.000Z"}
    (folder / "config.json").write_text(json.dumps(seen), encoding="utf-8")


@pytest.fixture
def copilot_sandbox(tmp_path, model_server, copilot_cli, monkeypatch):
    """A sandboxed HOME wired to the scripted server, applied to this test's environment."""
    from cao_kernel.testing.models.cli import make_sandbox

    for name in ACCOUNT_VARS:
        monkeypatch.delenv(name, raising=False)
    sandbox = make_sandbox(tmp_path / "sandbox", env=copilot_env(model_server, copilot_cli))
    sandbox.apply(monkeypatch)
    for name in ACCOUNT_VARS:
        monkeypatch.delenv(name, raising=False)
    seed_first_launch(sandbox.home)
    return sandbox


@pytest.fixture
def signed_out(copilot_sandbox, monkeypatch):
    """The sandbox without a model provider: Copilot would need a GitHub account, and has none."""
    for name in PROVIDER_VARS:
        monkeypatch.delenv(name, raising=False)
    return copilot_sandbox


@pytest.fixture
def make_kernel(tmux_socket, cao_home):
    """Build kernels that run Copilot CLI on the private tmux server."""
    from cao_kernel.kernel import Kernel
    from cao_kernel.plugins import LoadPolicy

    def make(*plugins: str, **settings: str):
        return Kernel(
            policy=LoadPolicy(only=plugins or ("tmux", "copilot_cli", "inbox_sqlite")),
            home=cao_home,
            settings={"CAO_TMUX_SOCKET": tmux_socket, "CAO_DEFAULT_PROVIDER": "copilot_cli", **settings},
        )

    return make


@pytest.fixture
def workdir(copilot_sandbox):
    """The working folder, inside the sandbox's HOME (Copilot shows it as ``~/project``)."""
    folder = copilot_sandbox.home / "project"
    folder.mkdir()
    return str(folder)


# -- a real cao-server (for MCP tools called by the real agent) -------------------------------------

SERVER_PLUGINS = ("tmux", "copilot_cli", "mock_cli", "inbox_sqlite", "server", "mcp")
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


def _pump(stream, sink) -> None:
    for line in stream:
        sink(line.rstrip("\n"))


@pytest.fixture
def cao_server(copilot_sandbox, cao_home, tmp_path) -> Iterator[CaoServer]:
    """A real cao-server with the Copilot CLI provider, started in the live sandbox's environment.

    Profiles go in ``cao_server.home / "agent-store"`` (write them before creating terminals).
    """
    from cao_kernel.testing.tmux import private_tmux_socket

    cao = Path(sys.executable).parent / "cao"
    (Path(cao_home) / "agent-store").mkdir(exist_ok=True)
    with private_tmux_socket() as tmux:
        env = {k: v for k, v in os.environ.items() if not k.startswith("CAO_") or k == "CAO_COPILOT_CLI_BIN"}
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
