"""Fixtures for the Claude Code provider's tests.

Live tests (marked ``live_cli``) run the real Claude Code, installed from npm once per machine (see
``cao_testkit.models.cli``), against a scripted Anthropic server on 127.0.0.1, in a sandboxed
HOME, on a private tmux server. ``CAO_LIVE_CLAUDE_CODE_VERSION`` picks another release to try.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from cao_provider_claude_code.provider import TESTED_VERSIONS
from cao_testkit.models.cli import npm_cli

PACKAGE = "@anthropic-ai/claude-code"
VERSION_ENV = "CAO_LIVE_CLAUDE_CODE_VERSION"
SCREENS = Path(__file__).parent / "screens"


def live_version() -> str:
    return os.environ.get(VERSION_ENV) or TESTED_VERSIONS[-1]


CLAUDE_CODE = npm_cli(PACKAGE, live_version(), "claude")
#: Installed in the background once a live test here is selected (cao_testkit.session).
LIVE_CLIS = (CLAUDE_CODE,)


@pytest.fixture(scope="session")
def claude_cli():
    """The real Claude Code (installed into the per-machine cache on first use)."""
    return CLAUDE_CODE.install()


@pytest.fixture
def model_server() -> Iterator:
    """A scripted Anthropic Messages API; add turns with ``model_server.script.add(...)``."""
    from cao_testkit.models import Script
    from cao_testkit.models.anthropic import AnthropicServer

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
    from cao_testkit.models.cli import make_sandbox

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

@pytest.fixture
def cao_server(claude_sandbox, cao_home, tmp_path) -> Iterator:
    """A real cao-server with the Claude Code provider, started in the live sandbox's environment.

    Profiles go in ``cao_server.home / "agent-store"`` (write them before creating terminals).
    """
    from cao_testkit.server_process import live_server_plugins, run_cao_server

    plugins = live_server_plugins("claude_code")
    with run_cao_server(cao_home, tmp_path, plugins, keep_env=("CAO_CLAUDE_CODE_BIN",)) as server:
        yield server
