"""Fixtures for the codex provider's tests: private tmux servers, and the real Codex CLI (installed from
npm once per machine) talking to a scripted Responses API server on 127.0.0.1. ``workdir`` comes from
``cao_testkit``."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cao_hookspecs import AgentProfile
from cao_provider_codex.provider import TESTED_VERSIONS
from cao_testkit.kernels import LiveKernels
from cao_testkit.models.cli import npm_cli

CODEX_PACKAGE = "@openai/codex"
CODEX_VERSION = TESTED_VERSIONS[-1]
#: The variable the scripted provider's ``env_key`` names; Codex sends its value as the bearer token.
KEY_VARIABLE = "CAO_SCRIPTED_OPENAI_KEY"
#: A model name Codex has no metadata for: it keeps it as given (a known name may be migrated).
MODEL = "scripted"
# Its version check runs `codex --version` with CODEX_HOME in a throw-away folder, never ~/.codex.
CODEX = npm_cli(CODEX_PACKAGE, CODEX_VERSION, "codex")
#: Installed in the background once a live test here is selected (cao_testkit.session).
LIVE_CLIS = (CODEX,)


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


class LiveCodex(LiveKernels):
    """One live test's world, with the real Codex on PATH."""

    provider = "codex"

    def profile(self, name: str = "coder", **fields: Any) -> AgentProfile:
        return scripted_profile(self.server.base_url, name, **fields)

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

    with OpenAIServer(models=(MODEL,)) as server:
        sandbox = make_sandbox(tmp_path / "sandbox", env={KEY_VARIABLE: "sk-scripted-" + os.urandom(4).hex()},
                               path=[codex_cli.bin_dir])
        sandbox.apply(monkeypatch)
        yield LiveCodex(server, tmux_socket, cao_home, sandbox)
    server.assert_healthy()


@pytest.fixture
def fake_codex(tmp_path, monkeypatch) -> Path:
    """A stand-in ``codex`` program named by the override variable: these tests never run it."""
    from cao_testkit.launching import noop_program

    program = noop_program(tmp_path / "bin" / "codex")
    monkeypatch.setenv("CAO_CODEX_BIN", str(program))
    return program


@pytest.fixture
def user_home(tmp_path, monkeypatch) -> Path:
    """The user's own Codex home (empty unless a test writes into it); never the real one."""
    home = tmp_path / "user-codex"
    home.mkdir()
    monkeypatch.setenv("CODEX_HOME", str(home))
    return home
