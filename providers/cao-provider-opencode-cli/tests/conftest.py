"""Fixtures for the OpenCode provider's tests.

Live tests (marked ``live_cli``) run the real OpenCode, installed from npm once per machine (see
``cao_testkit.models.cli``), against a scripted Anthropic server on 127.0.0.1: the sandboxed
user's own OpenCode config points OpenCode's ``anthropic`` provider at it, as a user would point it at
a gateway. They run in a sandboxed HOME on a private tmux server. ``CAO_LIVE_OPENCODE_CLI_VERSION``
picks another release to try. ``make_kernel`` and ``workdir`` come from ``cao_testkit``, the model
server and ``cao_server`` from ``cao_testkit.live_fixtures``.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any

import pytest

from cao_provider_opencode_cli.provider import PACKAGE, TESTED_VERSIONS
from cao_testkit.live_fixtures import anthropic_server as model_server  # noqa: F401 (fixture)
from cao_testkit.live_fixtures import cao_server  # noqa: F401 (fixture)
from cao_testkit.models.cli import live_version, npm_cli

MODEL = "anthropic/claude-sonnet-4-5"


OPENCODE = npm_cli(PACKAGE, live_version("opencode_cli", TESTED_VERSIONS), "opencode")
#: Installed in the background once a live test here is selected (cao_testkit.session).
LIVE_CLIS = (OPENCODE,)


@pytest.fixture(scope="session")
def opencode_cli():
    """The real OpenCode (installed into the per-machine cache on first use)."""
    return OPENCODE.install()


def user_config(server: Any, **extra: Any) -> dict[str, Any]:
    """The sandboxed user's ``~/.config/opencode/opencode.json``: OpenCode's ``anthropic`` provider at
    the scripted server."""
    from cao_testkit.models.anthropic import FAKE_API_KEY

    return {
        "$schema": "https://opencode.ai/config.json",
        "model": MODEL,
        "provider": {"anthropic": {"options": {"baseURL": server.url + "/v1", "apiKey": FAKE_API_KEY}}},
        **extra,
    }


def opencode_env(cli: Any) -> dict[str, str]:
    """What a live test's environment needs besides the sandboxed HOME."""
    return {
        "CAO_OPENCODE_CLI_BIN": str(cli.binary),
        # models.dev is out of reach offline; OpenCode's bundled model list is enough.
        "OPENCODE_DISABLE_MODELS_FETCH": "1",
        "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
        "TERM": "xterm-256color",
    }


@dataclasses.dataclass
class OpencodeSandbox:
    """A sandboxed HOME whose user config points OpenCode at the scripted server."""

    home: Path
    env: dict[str, str]
    server: Any

    @property
    def config_file(self) -> Path:
        return self.home / ".config" / "opencode" / "opencode.json"

    def write_user_config(self, content: dict[str, Any] | str) -> None:
        self.config_file.parent.mkdir(parents=True, exist_ok=True)
        text = content if isinstance(content, str) else json.dumps(content, indent=2)
        self.config_file.write_text(text, encoding="utf-8")


@pytest.fixture
def live_sandbox(tmp_path, model_server, opencode_cli, monkeypatch) -> OpencodeSandbox:  # noqa: F811
    """The sandbox, applied to this test's environment (the user's own OpenCode settings left out)."""
    from cao_testkit.models.cli import make_sandbox

    wanted = opencode_env(opencode_cli)
    sandbox = make_sandbox(tmp_path / "sandbox", env=wanted)
    for name in list(os.environ):
        if name.startswith("OPENCODE_") and name not in wanted:
            monkeypatch.delenv(name)
    sandbox.apply(monkeypatch)
    result = OpencodeSandbox(home=sandbox.home, env=dict(sandbox.env), server=model_server)
    result.write_user_config(user_config(model_server))
    return result
