"""Fixtures for the codex provider's tests: private tmux servers, and the real Codex CLI (installed from
npm once per machine) talking to a scripted Responses API server on 127.0.0.1."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from cao_hookspecs import AgentProfile
from cao_provider_codex.provider import TESTED_VERSIONS
from cao_testkit.models.cli import npm_cli

CODEX_PACKAGE = "@openai/codex"
CODEX_VERSION = TESTED_VERSIONS[-1]
#: The variable the scripted provider's ``env_key`` names; Codex sends its value as the bearer token.
KEY_VARIABLE = "CAO_SCRIPTED_OPENAI_KEY"
#: A model name Codex has no metadata for: it keeps it as given (a known name may be migrated).
MODEL = "scripted"
SCREENS = Path(__file__).parent / "screens"
# Its version check runs `codex --version` with CODEX_HOME in a throw-away folder, never ~/.codex.
CODEX = npm_cli(CODEX_PACKAGE, CODEX_VERSION, "codex")
#: Installed in the background once a live test here is selected (cao_testkit.session).
LIVE_CLIS = (CODEX,)


@pytest.fixture
def workdir(tmp_path: Path) -> str:
    folder = tmp_path / "project"
    folder.mkdir()
    return str(folder)


@pytest.fixture(scope="session")
def codex_cli() -> Any:
    """The real Codex CLI of the tested version (installed from npm on first use; fails if it cannot be)."""
    return CODEX.install()


def scripted_profile(base_url: str, name: str = "coder", **fields: Any) -> AgentProfile:
    """A codex profile whose model provider is the scripted server at ``base_url``."""
    codex_config = {
        "model_provider": "scripted",
        "model_providers": {"scripted": {"name": "scripted model server", "base_url": base_url,
                                         "env_key": KEY_VARIABLE, "wire_api": "responses"}},
        **fields.pop("codex_config", {}),
    }
    return AgentProfile(name=name, provider="codex", model=MODEL, codex_config=codex_config, **fields)


class LiveCodex:
    """One live test's world: the scripted model server, a sandboxed environment with the real Codex
    on PATH, and kernels that run it on the test's private tmux server."""

    def __init__(self, server: Any, tmux_socket: str, cao_home: Path) -> None:
        self.server = server
        self.script = server.script
        self.tmux_socket = tmux_socket
        self.cao_home = cao_home

    def profile(self, name: str = "coder", **fields: Any) -> AgentProfile:
        return scripted_profile(self.server.base_url, name, **fields)

    def kernel(self, *plugins: str, **settings: str) -> Any:
        from cao_kernel.kernel import Kernel
        from cao_kernel.plugins import LoadPolicy

        return Kernel(policy=LoadPolicy(only=plugins or ("tmux", "codex", "inbox_sqlite")),
                      home=self.cao_home, settings={"CAO_TMUX_SOCKET": self.tmux_socket, **settings})

    def serve(self, kernel: Any) -> Any:
        """``serve_in_thread(kernel)`` with the kernel's plugin routes mounted the way ``cao server`` mounts
        them: the agents' cao-mcp-server relays to ``/mcp`` and reports in there. Without ``/mcp`` a profile
        with cao's MCP server would wait at its readiness gate until it times out."""
        from cao_testkit.serve import serve_in_thread

        return serve_in_thread(kernel, extra_routes=list(kernel.routes.values()))

    def tmux(self, *args: str) -> str:
        done = subprocess.run(["tmux", "-S", self.tmux_socket, *args], capture_output=True, text=True,
                              check=False)
        return done.stdout


@pytest.fixture
def live_codex(codex_cli: Any, tmux_socket: str, cao_home: Path, tmp_path: Path,
               monkeypatch: pytest.MonkeyPatch) -> Iterator[LiveCodex]:
    """The scripted server (``live_codex.script`` takes turns) and a sandbox where ``codex`` is the
    installed CLI; the user's own Codex home and keys are out of reach."""
    from cao_testkit.models.cli import make_sandbox
    from cao_testkit.models.openai import OpenAIServer

    server = OpenAIServer(models=(MODEL,)).start()
    try:
        sandbox = make_sandbox(tmp_path / "sandbox", env={KEY_VARIABLE: "sk-scripted-" + os.urandom(4).hex()},
                               path=[codex_cli.bin_dir])
        sandbox.apply(monkeypatch)
        yield LiveCodex(server, tmux_socket, cao_home)
    finally:
        server.close()
    server.assert_healthy()


def wait_until(predicate: Callable[[], Any], timeout: float, what: str, interval: float = 0.05) -> Any:
    """Poll ``predicate`` until it returns something truthy (tests only; the kernel itself never polls)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout:g} s")
        time.sleep(interval)


@pytest.fixture
def fake_codex(tmp_path, monkeypatch) -> Path:
    """A stand-in ``codex`` program named by the override variable: these tests never run it."""
    program = tmp_path / "bin" / "codex"
    program.parent.mkdir()
    program.write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    program.chmod(0o755)
    monkeypatch.setenv("CAO_CODEX_BIN", str(program))
    return program
