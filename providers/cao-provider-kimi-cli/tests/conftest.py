"""Fixtures for the Kimi CLI provider's tests.

Live tests (marked ``live_cli``) run the real Kimi CLI, installed from PyPI once per machine into a
virtual environment of its own (see ``cao_kernel.testing.models.cli.install_pypi_cli``), against a
scripted OpenAI Responses server on 127.0.0.1 (Kimi's ``openai_responses`` provider type), in a
sandboxed HOME whose ``~/.kimi/config.toml`` names that server, on a private tmux server.
``CAO_LIVE_KIMI_CLI_VERSION`` picks another release to try.
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

from cao_provider_kimi_cli.provider import TESTED_VERSIONS

PACKAGE = "kimi-cli"
VERSION_ENV = "CAO_LIVE_KIMI_CLI_VERSION"
#: kimi-cli needs Python 3.12 or newer; the kit looks for one on the machine and never downloads one.
PYTHON = ">=3.12"
#: Dependencies resolved as PyPI had them the day after each tested release: kimi-cli pins few of its
#: own, and it is archived, so a later release of one (anthropic 2.x, for one) can break it for good.
EXCLUDE_NEWER = {"1.51.0": "2026-09-22"}
MODEL = "scripted"


def live_version() -> str:
    return os.environ.get(VERSION_ENV) or TESTED_VERSIONS[-1]


def user_config(base_url: str, api_key: str = "sk-scripted-key") -> str:
    """A user's ``~/.kimi/config.toml`` with one model on the scripted server (and no telemetry)."""
    return (
        f'default_model = "{MODEL}"\n'
        "telemetry = false\n\n"
        f"[providers.{MODEL}]\n"
        'type = "openai_responses"\n'
        f'base_url = "{base_url}"\n'
        f'api_key = "{api_key}"\n\n'
        f"[models.{MODEL}]\n"
        f'provider = "{MODEL}"\n'
        f'model = "{MODEL}"\n'
        "max_context_size = 200000\n"
    )


@pytest.fixture(scope="session")
def kimi_cli():
    """The real Kimi CLI (installed into the per-machine cache on first use; fails if it cannot be)."""
    from cao_kernel.testing.models.cli import LiveCliUnavailable, find_python, install_pypi_cli

    version = live_version()
    try:
        find_python(PYTHON)
    except LiveCliUnavailable as exc:
        # kimi-cli cannot be installed on a machine whose only Python is 3.11 (and uv may not download
        # one), so there it is not a CLI this machine can run. CI machines have a newer Python: there a
        # missing one is a failure, never a skip.
        if os.environ.get("CI"):
            raise
        pytest.skip(f"kimi-cli needs Python {PYTHON} and this machine has none: {exc}")
    return install_pypi_cli(PACKAGE, version, "kimi", python=PYTHON, exclude_newer=EXCLUDE_NEWER.get(version))


@pytest.fixture
def model_server() -> Iterator:
    """A scripted OpenAI Responses API; add turns with ``model_server.script.add(...)``."""
    from cao_kernel.testing.models import Script
    from cao_kernel.testing.models.openai import OpenAIServer

    with OpenAIServer(Script(), models=(MODEL,)) as server:
        yield server
    server.assert_healthy()


@pytest.fixture
def kimi_sandbox(tmp_path, model_server, kimi_cli, monkeypatch):
    """A sandboxed HOME whose Kimi config names the scripted server, applied to this test's environment."""
    from cao_kernel.testing.models.cli import make_sandbox

    sandbox = make_sandbox(tmp_path / "sandbox", env={"CAO_KIMI_CLI_BIN": str(kimi_cli.binary),
                                                      "TERM": "xterm-256color"})
    share = sandbox.home / ".kimi"
    share.mkdir()
    (share / "config.toml").write_text(user_config(model_server.base_url), encoding="utf-8")
    sandbox.apply(monkeypatch)
    return sandbox


@pytest.fixture
def make_kernel(tmux_socket, cao_home):
    """Build kernels that run Kimi CLI on the private tmux server."""
    from cao_kernel.kernel import Kernel
    from cao_kernel.plugins import LoadPolicy

    def make(*plugins: str, **settings: str):
        return Kernel(
            policy=LoadPolicy(only=plugins or ("tmux", "kimi_cli", "inbox_sqlite")),
            home=cao_home,
            settings={"CAO_TMUX_SOCKET": tmux_socket, "CAO_DEFAULT_PROVIDER": "kimi_cli", **settings},
        )

    return make


@pytest.fixture
def workdir(tmp_path):
    folder = tmp_path / "project"
    folder.mkdir()
    return str(folder)


# -- a real cao-server (for MCP tools called by the real agent) -------------------------------------

SERVER_PLUGINS = ("tmux", "kimi_cli", "mock_cli", "inbox_sqlite", "server", "mcp")
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
def cao_server(kimi_sandbox, cao_home, tmp_path) -> Iterator[CaoServer]:
    """A real cao-server with the Kimi CLI provider, started in the live sandbox's environment.

    Profiles go in ``cao_server.home / "agent-store"`` (write them before creating terminals).
    """
    from cao_kernel.testing.tmux import private_tmux_socket

    cao = Path(sys.executable).parent / "cao"
    (Path(cao_home) / "agent-store").mkdir(exist_ok=True)
    with private_tmux_socket() as tmux:
        env = {k: v for k, v in os.environ.items() if not k.startswith("CAO_") or k == "CAO_KIMI_CLI_BIN"}
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
