"""Fixtures for the pi provider's tests.

Live tests (marked ``live_cli``) run the real pi, installed from npm once per machine (see
``cao_testkit.models.cli``), against a scripted Chat Completions server on 127.0.0.1, named in the
sandboxed user's ``~/.pi/agent/models.json`` and made their default provider, on a private tmux server.
``CAO_LIVE_PI_VERSION`` picks another release to try. ``make_kernel`` and ``workdir`` come from
``cao_testkit``, ``cao_server`` from ``cao_testkit.live_fixtures``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from cao_provider_pi.provider import TESTED_VERSIONS
from cao_testkit.live_fixtures import cao_server  # noqa: F401 (fixture)
from cao_testkit.models.cli import live_version, npm_cli

PACKAGE = "@mariozechner/pi-coding-agent"
#: The model the scripted server serves, under a provider of the same name.
MODEL = "scripted"

PI = npm_cli(PACKAGE, live_version("pi", TESTED_VERSIONS), "pi")
#: Installed in the background once a live test here is selected (cao_testkit.session).
LIVE_CLIS = (PI,)


@pytest.fixture(scope="session")
def pi_cli():
    """The real pi (installed into the per-machine cache on first use; fails if it cannot be)."""
    return PI.install()


@pytest.fixture
def model_server() -> Iterator[object]:
    """A scripted Chat Completions API serving :data:`MODEL`; add turns with ``.script.add(...)``."""
    from cao_testkit.models import Script
    from cao_testkit.models.chat import ChatServer

    with ChatServer(Script(), models=(MODEL,)) as server:
        yield server
    server.assert_healthy()


def write_user_config(agent_dir: Path, base_url: str) -> None:
    """A user's pi set up for the scripted server: its models.json and default model."""
    agent_dir.mkdir(parents=True, exist_ok=True)
    models = {"providers": {MODEL: {"baseUrl": base_url, "api": "openai-completions",
                                    "apiKey": "sk-scripted-key", "models": [{"id": MODEL}]}}}
    (agent_dir / "models.json").write_text(json.dumps(models, indent=2), encoding="utf-8")
    settings = {"defaultProvider": MODEL, "defaultModel": MODEL}
    (agent_dir / "settings.json").write_text(json.dumps(settings, indent=2), encoding="utf-8")


@pytest.fixture
def live_sandbox(tmp_path, model_server, pi_cli, monkeypatch):
    """A sandboxed HOME whose pi uses the scripted server, applied to this test's environment."""
    from cao_testkit.models.cli import make_sandbox

    sandbox = make_sandbox(tmp_path / "sandbox", env={"CAO_PI_BIN": str(pi_cli.binary),
                                                      "TERM": "xterm-256color"})
    write_user_config(sandbox.home / ".pi" / "agent", model_server.base_url)
    sandbox.apply(monkeypatch)
    return sandbox
