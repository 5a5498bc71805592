"""Fixtures for the Copilot CLI provider's tests.

Live tests (marked ``live_cli``) run the real Copilot CLI, installed from npm once per machine (see
``cao_testkit.models.cli``), in a sandboxed HOME, on a private tmux server. Copilot CLI uses a
custom model provider when ``COPILOT_PROVIDER_BASE_URL`` is set: here a scripted Anthropic Messages
server on 127.0.0.1, with ``COPILOT_OFFLINE=true`` and an unreachable proxy for everything else, so no
GitHub account is needed and nothing leaves the machine. ``CAO_LIVE_COPILOT_CLI_VERSION`` picks
another release to try.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from cao_provider_copilot_cli.provider import TESTED_VERSIONS
from cao_testkit.models.cli import cache_root, npm_cli

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
    return cache_root() / "copilot-pkg"


COPILOT = npm_cli(PACKAGE, live_version(), "copilot", env={"COPILOT_PKG_CACHE_HOME": str(pkg_cache())})
#: Installed in the background once a live test here is selected (cao_testkit.session).
LIVE_CLIS = (COPILOT,)


@pytest.fixture(scope="session")
def copilot_cli():
    """The real Copilot CLI (installed into the per-machine cache on first use)."""
    return COPILOT.install()


@pytest.fixture
def model_server() -> Iterator:
    """A scripted Anthropic Messages API; add turns with ``model_server.script.add(...)``."""
    from cao_testkit.models import Script
    from cao_testkit.models.anthropic import AnthropicServer

    with AnthropicServer(Script()) as server:
        yield server
    server.assert_healthy()


def copilot_env(server, cli) -> dict[str, str]:
    """What a live test's environment needs: the scripted server as model provider, nothing else reachable."""
    from cao_testkit.models.anthropic import FAKE_API_KEY

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
    from cao_testkit.models.cli import make_sandbox

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

@pytest.fixture
def cao_server(copilot_sandbox, cao_home, tmp_path) -> Iterator:
    """A real cao-server with the Copilot CLI provider, started in the live sandbox's environment.

    Profiles go in ``cao_server.home / "agent-store"`` (write them before creating terminals).
    """
    from cao_testkit.server_process import live_server_plugins, run_cao_server

    plugins = live_server_plugins("copilot_cli")
    with run_cao_server(cao_home, tmp_path, plugins, keep_env=("CAO_COPILOT_CLI_BIN",)) as server:
        yield server
