"""Fixtures for the Gemini CLI provider's tests.

Live tests (marked ``live_cli``) run the real Gemini CLI, installed from npm once per machine (see
``cao_testkit.models.cli``), against a scripted Gemini API server on 127.0.0.1, in a sandboxed
HOME, on a private tmux server. ``CAO_LIVE_GEMINI_CLI_VERSION`` picks another release to try.
``make_kernel`` and ``workdir`` come from ``cao_testkit``, ``cao_server`` from
``cao_testkit.live_fixtures``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cao_hookspecs import AgentProfile
from cao_provider_gemini_cli.provider import TESTED_VERSIONS
from cao_testkit.kernels import LiveKernels
from cao_testkit.live_fixtures import cao_server  # noqa: F401 (fixture)
from cao_testkit.models.cli import live_version, npm_cli

PACKAGE = "@google/gemini-cli"
#: A model name Gemini CLI knows, so it neither routes nor falls back to another model.
MODEL = "gemini-2.5-pro"


GEMINI = npm_cli(PACKAGE, live_version("gemini_cli", TESTED_VERSIONS), "gemini")
#: Installed in the background once a live test here is selected (cao_testkit.session).
LIVE_CLIS = (GEMINI,)



@pytest.fixture(scope="session")
def gemini_cli() -> Any:
    """The real Gemini CLI of the tested version (installed from npm on first use; fails if it cannot be)."""
    return GEMINI.install()


class LiveGemini(LiveKernels):
    """One live test's world, where ``CAO_GEMINI_CLI_BIN`` names the installed CLI."""

    provider = "gemini_cli"

    def profile(self, name: str = "coder", **fields: Any) -> AgentProfile:
        fields.setdefault("system_prompt", "You are a careful developer.")
        fields.setdefault("model", MODEL)
        return AgentProfile(name=name, provider="gemini_cli", **fields)


@pytest.fixture
def live_gemini(gemini_cli: Any, tmux_socket: str, cao_home: Path, tmp_path: Path,
                monkeypatch: pytest.MonkeyPatch) -> Iterator[LiveGemini]:
    """The scripted Gemini API (``live_gemini.script`` takes turns) and a sandbox where the installed
    CLI runs; the user's own Gemini home and keys are out of reach."""
    from cao_testkit.models import Script
    from cao_testkit.models.cli import make_sandbox
    from cao_testkit.models.gemini import GeminiServer

    with GeminiServer(Script(), models=(MODEL,)) as server:
        sandbox = make_sandbox(tmp_path / "sandbox", env={
            **server.client_env(), "CAO_GEMINI_CLI_BIN": str(gemini_cli.binary), "TERM": "xterm-256color",
        })
        sandbox.apply(monkeypatch)
        yield LiveGemini(server, tmux_socket, cao_home, sandbox)
    server.assert_healthy()


# -- a real cao-server (for MCP tools called by the real agent) -------------------------------------

@pytest.fixture
def model_server(live_gemini):
    """The scripted Gemini API server the live CLI talks to."""
    return live_gemini.server


@pytest.fixture
def live_sandbox(live_gemini):
    """The sandbox ``cao_server`` starts in."""
    return live_gemini.sandbox
