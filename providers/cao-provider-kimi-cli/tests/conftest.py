"""Fixtures for the Kimi CLI provider's tests.

Live tests (marked ``live_cli``) run the real Kimi CLI, installed from PyPI once per machine into a
virtual environment of its own (see ``cao_testkit.models.cli.install_pypi_cli``), against a
scripted OpenAI Responses server on 127.0.0.1 (Kimi's ``openai_responses`` provider type), in a
sandboxed HOME whose ``~/.kimi/config.toml`` names that server, on a private tmux server.
``CAO_LIVE_KIMI_CLI_VERSION`` picks another release to try.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from cao_provider_kimi_cli.provider import TESTED_VERSIONS
from cao_testkit.models.cli import pypi_cli

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


KIMI = pypi_cli(PACKAGE, live_version(), "kimi", python=PYTHON, exclude_newer=EXCLUDE_NEWER.get(live_version()))
#: Installed in the background once a live test here is selected (cao_testkit.session); the second is the
#: deprecation stub release that test_live.py installs itself.
LIVE_CLIS = (KIMI, pypi_cli(PACKAGE, "1.52.0", "kimi", python=PYTHON, exclude_newer="2026-09-23"))


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
    from cao_testkit.models.cli import LiveCliUnavailable, find_python

    try:
        find_python(PYTHON)
    except LiveCliUnavailable as exc:
        # kimi-cli cannot be installed on a machine whose only Python is 3.11 (and uv may not download
        # one), so there it is not a CLI this machine can run. CI machines have a newer Python: there a
        # missing one is a failure, never a skip.
        if os.environ.get("CI"):
            raise
        pytest.skip(f"kimi-cli needs Python {PYTHON} and this machine has none: {exc}")
    return KIMI.install()


@pytest.fixture
def model_server() -> Iterator:
    """A scripted OpenAI Responses API; add turns with ``model_server.script.add(...)``."""
    from cao_testkit.models import Script
    from cao_testkit.models.openai import OpenAIServer

    with OpenAIServer(Script(), models=(MODEL,)) as server:
        yield server
    server.assert_healthy()


@pytest.fixture
def kimi_sandbox(tmp_path, model_server, kimi_cli, monkeypatch):
    """A sandboxed HOME whose Kimi config names the scripted server, applied to this test's environment."""
    from cao_testkit.models.cli import make_sandbox

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

@pytest.fixture
def cao_server(kimi_sandbox, cao_home, tmp_path) -> Iterator:
    """A real cao-server with the Kimi CLI provider, started in the live sandbox's environment.

    Profiles go in ``cao_server.home / "agent-store"`` (write them before creating terminals).
    """
    from cao_testkit.server_process import live_server_plugins, run_cao_server

    plugins = live_server_plugins("kimi_cli")
    with run_cao_server(cao_home, tmp_path, plugins, keep_env=("CAO_KIMI_CLI_BIN",)) as server:
        yield server
