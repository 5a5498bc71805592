"""Fixtures for the Grok Build provider's tests.

Live tests (marked ``live_cli``) run the real Grok Build, installed from npm once per machine (see
``cao_testkit.models.cli.install_npm_cli``), against a scripted Chat Completions server on 127.0.0.1:
Grok sends its turns there (``GROK_MODELS_BASE_URL``, with any ``XAI_API_KEY``) and its session
title to the Responses route, which the server refuses (Grok carries on without a title). They run
in a sandboxed HOME on a private tmux server. ``CAO_LIVE_GROK_CLI_VERSION`` picks another release to
try. ``tmux_socket``, ``workdir`` and ``cao_home`` come from cao's pytest plugins.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cao_hookspecs import AgentProfile
from cao_provider_grok_cli.provider import NAME, TESTED_VERSIONS
from cao_testkit.kernels import LiveKernels
from cao_testkit.live_fixtures import cao_server  # noqa: F401 (fixture)
from cao_testkit.models.cli import cache_root, live_version, npm_cli

PACKAGE = "@xai-official/grok"
#: The model the scripted server lists (Grok picks the first one listed).
MODEL = "scripted"
VERSION = live_version(NAME, TESTED_VERSIONS)
# The package's install script copies the program into $GROK_HOME/bin and writes a config.toml there
# (~/.grok by default): pointed at a folder of the cache, the install never touches the user's home.
GROK = npm_cli(PACKAGE, VERSION, "grok", env={"GROK_HOME": str(cache_root() / ".grok-npm-install-home")})
#: Installed in the background once a live test here is selected (cao_testkit.session).
LIVE_CLIS = (GROK,)


@pytest.fixture(scope="session")
def grok_cli() -> Any:
    """The real Grok Build of the tested version (installed on first use; fails if it cannot be)."""
    return GROK.install()


def client_env(base_url: str) -> dict[str, str]:
    """What points Grok at the scripted server: its address and a key of no account."""
    return {"GROK_MODELS_BASE_URL": base_url, "XAI_API_KEY": "xai-scripted-" + os.urandom(4).hex(),
            "TERM": "xterm-256color"}


class Live(LiveKernels):
    """One live test's world, with the real Grok Build named by ``CAO_GROK_CLI_BIN``."""

    provider = NAME
    plugins = ("tmux", NAME)

    def profile(self, name: str = "coder", **fields: Any) -> AgentProfile:
        return AgentProfile(name=name, provider=NAME, **fields)


@pytest.fixture
def live(live_sandbox: Any, model_server: Any, tmux_socket: str, cao_home: Path) -> Live:
    """The scripted server (``live.script`` takes turns) and a sandbox where the installed Grok is the
    CLI; the user's own Grok home and keys are out of reach."""
    return Live(model_server, tmux_socket, cao_home, live_sandbox)


@pytest.fixture
def model_server() -> Iterator[Any]:
    """The scripted Chat Completions server the CLI talks to (checked healthy when the test ends)."""
    from cao_testkit.models import Script
    from cao_testkit.models.chat import ChatServer

    with ChatServer(Script(), models=(MODEL,)) as server:
        yield server
    server.assert_healthy()


@pytest.fixture
def live_sandbox(tmp_path: Path, model_server: Any, grok_cli: Any,
                 monkeypatch: pytest.MonkeyPatch) -> Any:
    """A sandboxed HOME whose environment points Grok at ``model_server``, applied to this test."""
    from cao_testkit.models.cli import make_sandbox

    sandbox = make_sandbox(tmp_path / "sandbox", env={**client_env(model_server.base_url),
                                                      "CAO_GROK_CLI_BIN": str(grok_cli.binary)})
    sandbox.apply(monkeypatch)
    return sandbox
