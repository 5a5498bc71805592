"""Fixtures for the Gemini CLI provider's tests.

Live tests (marked ``live_cli``) run the real Gemini CLI, installed from npm once per machine (see
``cao_testkit.models.cli``), against a scripted Gemini API server on 127.0.0.1, in a sandboxed
HOME, on a private tmux server. ``CAO_LIVE_GEMINI_CLI_VERSION`` picks another release to try.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cao_hookspecs import AgentProfile
from cao_provider_gemini_cli.provider import TESTED_VERSIONS
from cao_testkit.models.cli import npm_cli

PACKAGE = "@google/gemini-cli"
VERSION_ENV = "CAO_LIVE_GEMINI_CLI_VERSION"
#: A model name Gemini CLI knows, so it neither routes nor falls back to another model.
MODEL = "gemini-2.5-pro"
SCREENS = Path(__file__).parent / "screens"


def live_version() -> str:
    return os.environ.get(VERSION_ENV) or TESTED_VERSIONS[-1]


GEMINI = npm_cli(PACKAGE, live_version(), "gemini")
#: Installed in the background once a live test here is selected (cao_testkit.session).
LIVE_CLIS = (GEMINI,)


@pytest.fixture
def workdir(tmp_path: Path) -> str:
    folder = tmp_path / "project"
    folder.mkdir()
    return str(folder)


@pytest.fixture(scope="session")
def gemini_cli() -> Any:
    """The real Gemini CLI of the tested version (installed from npm on first use; fails if it cannot be)."""
    return GEMINI.install()


class LiveGemini:
    """One live test's world: the scripted model server, a sandboxed environment where
    ``CAO_GEMINI_CLI_BIN`` names the installed CLI, and kernels that run it on the private tmux server."""

    def __init__(self, server: Any, sandbox: Any, tmux_socket: str, cao_home: Path) -> None:
        self.server = server
        self.script = server.script
        self.sandbox = sandbox
        self.tmux_socket = tmux_socket
        self.cao_home = cao_home

    def profile(self, name: str = "coder", **fields: Any) -> AgentProfile:
        fields.setdefault("system_prompt", "You are a careful developer.")
        fields.setdefault("model", MODEL)
        return AgentProfile(name=name, provider="gemini_cli", **fields)

    def kernel(self, *plugins: str, **settings: str) -> Any:
        from cao_kernel.kernel import Kernel
        from cao_kernel.plugins import LoadPolicy

        return Kernel(policy=LoadPolicy(only=plugins or ("tmux", "gemini_cli", "inbox_sqlite")),
                      home=self.cao_home, settings={"CAO_TMUX_SOCKET": self.tmux_socket, **settings})


@pytest.fixture
def live_gemini(gemini_cli: Any, tmux_socket: str, cao_home: Path, tmp_path: Path,
                monkeypatch: pytest.MonkeyPatch) -> Iterator[LiveGemini]:
    """The scripted Gemini API (``live_gemini.script`` takes turns) and a sandbox where the installed
    CLI runs; the user's own Gemini home and keys are out of reach."""
    from cao_testkit.models import Script
    from cao_testkit.models.cli import make_sandbox
    from cao_testkit.models.gemini import GeminiServer

    server = GeminiServer(Script(), models=(MODEL,)).start()
    try:
        sandbox = make_sandbox(tmp_path / "sandbox", env={
            **server.client_env(), "CAO_GEMINI_CLI_BIN": str(gemini_cli.binary), "TERM": "xterm-256color",
        })
        sandbox.apply(monkeypatch)
        yield LiveGemini(server, sandbox, tmux_socket, cao_home)
    finally:
        server.close()
    server.assert_healthy()


# -- a real cao-server (for MCP tools called by the real agent) -------------------------------------

@pytest.fixture
def model_server(live_gemini):
    """The scripted Gemini API server the live CLI talks to."""
    return live_gemini.server


@pytest.fixture
def cao_server(live_gemini, cao_home, tmp_path) -> Iterator:
    """A real cao-server with the Gemini CLI provider, started in the live sandbox's environment."""
    from cao_testkit.server_process import live_server_plugins, run_cao_server

    plugins = live_server_plugins("gemini_cli")
    with run_cao_server(cao_home, tmp_path, plugins, keep_env=("CAO_GEMINI_CLI_BIN",)) as server:
        yield server
