"""Fixtures for the Aider provider's tests.

Live tests (marked ``live_cli``) run the real Aider, installed from PyPI once per machine into a virtual
environment on Python 3.11 (``cao_testkit.models.cli``), against a scripted Chat Completions server on
127.0.0.1 (``OPENAI_API_BASE``), on a private tmux server. ``CAO_LIVE_AIDER_VERSION`` picks another release
to try. ``make_kernel`` and ``workdir`` come from ``cao_testkit``, ``cao_server`` (a real server with
cao's MCP tools, for a mock supervisor delegating to Aider) from ``cao_testkit.live_fixtures``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from cao_provider_aider.provider import TESTED_VERSIONS
from cao_testkit.live_fixtures import cao_server  # noqa: F401 (fixture)
from cao_testkit.models.cli import live_version, pypi_cli

#: The model the scripted server serves, in litellm's naming.
MODEL = "openai/scripted"

VERSION = live_version("aider", TESTED_VERSIONS)
AIDER = pypi_cli("aider-chat", VERSION, "aider", python="3.11")
#: Installed in the background once a live test here is selected (cao_testkit.session).
LIVE_CLIS = (AIDER,)


@pytest.fixture(scope="session")
def aider_cli():
    """The real Aider (installed into the per-machine cache on first use; fails if it cannot be)."""
    return AIDER.install()


@pytest.fixture
def model_server() -> Iterator:
    """A scripted Chat Completions API; Aider offers no tools, so every request it sends is a turn."""
    from cao_testkit.models import Script
    from cao_testkit.models.chat import ChatServer

    server = ChatServer(Script(), models=("scripted",), is_turn=lambda conversation: True)
    with server:
        yield server
    server.assert_healthy()


@pytest.fixture
def live_sandbox(tmp_path, model_server, aider_cli, monkeypatch):
    """A sandboxed HOME whose environment points Aider at the scripted server."""
    from cao_testkit.models.cli import make_sandbox

    sandbox = make_sandbox(tmp_path / "sandbox", env={
        "CAO_AIDER_BIN": str(aider_cli.binary), "OPENAI_API_BASE": model_server.base_url,
        "OPENAI_API_KEY": "sk-scripted", "TERM": "xterm-256color"})
    sandbox.apply(monkeypatch)
    return sandbox
