"""Fixtures for the Claude Code provider's tests.

Live tests (marked ``live_cli``) run the real Claude Code, installed from npm once per machine (see
``cao_testkit.models.cli``), against a scripted Anthropic server on 127.0.0.1, in a sandboxed
HOME, on a private tmux server. ``CAO_LIVE_CLAUDE_CODE_VERSION`` picks another release to try.
``make_kernel`` and ``workdir`` come from ``cao_testkit``, the model server and ``cao_server`` from
``cao_testkit.live_fixtures``.
"""

from __future__ import annotations

import pytest

from cao_provider_claude_code.provider import TESTED_VERSIONS
from cao_testkit.live_fixtures import anthropic_server as model_server  # noqa: F401 (fixture)
from cao_testkit.live_fixtures import cao_server  # noqa: F401 (fixture)
from cao_testkit.models.cli import live_version, npm_cli

PACKAGE = "@anthropic-ai/claude-code"


CLAUDE_CODE = npm_cli(PACKAGE, live_version("claude_code", TESTED_VERSIONS), "claude")
#: Installed in the background once a live test here is selected (cao_testkit.session).
LIVE_CLIS = (CLAUDE_CODE,)


@pytest.fixture(scope="session")
def claude_cli():
    """The real Claude Code (installed into the per-machine cache on first use)."""
    return CLAUDE_CODE.install()


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
def live_sandbox(tmp_path, model_server, claude_cli, monkeypatch):  # noqa: F811 (the imported fixture)
    """A sandboxed HOME wired to the scripted server, applied to this test's environment."""
    from cao_testkit.models.cli import make_sandbox

    sandbox = make_sandbox(tmp_path / "sandbox", env=claude_env(model_server, claude_cli))
    sandbox.apply(monkeypatch)
    return sandbox
