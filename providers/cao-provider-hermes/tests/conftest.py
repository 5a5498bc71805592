"""Fixtures for the Hermes Agent provider's tests.

Live tests (marked ``live_cli``) run the real Hermes Agent, installed from PyPI with its ``mcp`` extra
once per machine into a virtual environment of its own (``cao_testkit.models.cli.install_pypi_cli``),
against a scripted Chat Completions server on 127.0.0.1 named as a custom provider in the sandboxed
user's ``~/.hermes/config.yaml``, on a private tmux server. ``CAO_LIVE_HERMES_VERSION`` picks another
release to try. ``make_kernel`` and ``workdir`` come from ``cao_testkit``, ``cao_server`` from
``cao_testkit.live_fixtures``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from cao_provider_hermes.provider import TESTED_VERSIONS
from cao_testkit.live_fixtures import cao_server  # noqa: F401 (fixture)
from cao_testkit.models.cli import live_version, pypi_cli

PACKAGE = "hermes-agent"
#: The newest Python on the machine (3.11 at least, as hermes-agent asks).
PYTHON = ">=3.11"
#: The model the scripted server serves.
MODEL = "scripted"

VERSION = live_version("hermes", TESTED_VERSIONS)
HERMES = pypi_cli(PACKAGE, VERSION, "hermes", python=PYTHON, extras=("mcp",))
#: Installed in the background once a live test here is selected (cao_testkit.session).
LIVE_CLIS = (HERMES,)


def user_config(base_url: str) -> str:
    """A user's ``~/.hermes/config.yaml`` with one custom provider: the scripted server."""
    return (f"model:\n  provider: custom\n  default: {MODEL}\n  base_url: {base_url}\n"
            "  api_key: sk-scripted\n")


@pytest.fixture(scope="session")
def hermes_cli():
    """The real Hermes Agent (installed into the per-machine cache on first use; fails if it cannot be)."""
    return HERMES.install()


@pytest.fixture
def model_server() -> Iterator:
    """A scripted Chat Completions API serving the model ``scripted``; checked afterwards (a request with
    no turn left, or a server error, fails the test)."""
    from cao_testkit.models import Script
    from cao_testkit.models.chat import ChatServer

    server = ChatServer(Script(), models=(MODEL,))
    with server:
        yield server
    server.assert_healthy()


@pytest.fixture
def live_sandbox(tmp_path, model_server, hermes_cli, monkeypatch):
    """A sandboxed HOME whose Hermes config names the scripted server, applied to this test's environment."""
    from cao_testkit.models.cli import make_sandbox

    sandbox = make_sandbox(tmp_path / "sandbox", env={"CAO_HERMES_BIN": str(hermes_cli.binary),
                                                      "TERM": "xterm-256color"})
    home = sandbox.home / ".hermes"
    home.mkdir()
    (home / "config.yaml").write_text(user_config(model_server.base_url), encoding="utf-8")
    sandbox.apply(monkeypatch)
    return sandbox
