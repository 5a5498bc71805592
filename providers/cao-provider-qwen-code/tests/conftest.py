"""Fixtures for the Qwen Code provider's tests.

Live tests (marked ``live_cli``) run the real Qwen Code, installed from npm once per machine (see
``cao_testkit.models.cli``), against a scripted Chat Completions server on 127.0.0.1 (Qwen Code's
OpenAI sign-in, from the ``OPENAI_*`` variables), in a sandboxed HOME, on a private tmux server.
``CAO_LIVE_QWEN_CODE_VERSION`` picks another release to try. ``make_kernel`` and ``workdir`` come from
``cao_testkit``, ``cao_server`` from ``cao_testkit.live_fixtures``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from cao_provider_qwen_code.provider import TESTED_VERSIONS
from cao_testkit.live_fixtures import cao_server  # noqa: F401 (fixture)
from cao_testkit.models.cli import live_version, npm_cli

PACKAGE = "@qwen-code/qwen-code"
#: The model the scripted server serves.
MODEL = "scripted"

QWEN = npm_cli(PACKAGE, live_version("qwen_code", TESTED_VERSIONS), "qwen")
#: Installed in the background once a live test here is selected (cao_testkit.session).
LIVE_CLIS = (QWEN,)


@pytest.fixture(scope="session")
def qwen_cli():
    """The real Qwen Code (installed into the per-machine cache on first use; fails if it cannot be)."""
    return QWEN.install()


@pytest.fixture
def model_server() -> Iterator[object]:
    """A scripted Chat Completions API serving :data:`MODEL`; add turns with ``.script.add(...)``."""
    from cao_testkit.models import Script
    from cao_testkit.models.chat import ChatServer

    with ChatServer(Script(), models=(MODEL,)) as server:
        yield server
    server.assert_healthy()


def qwen_env(server, cli) -> dict[str, str]:
    """What a live test's environment needs: the model server and the installed program."""
    return {**server.client_env(), "OPENAI_MODEL": MODEL, "CAO_QWEN_CODE_BIN": str(cli.binary),
            "TERM": "xterm-256color"}


@pytest.fixture
def live_sandbox(tmp_path, model_server, qwen_cli, monkeypatch):
    """A sandboxed HOME wired to the scripted server, applied to this test's environment."""
    from cao_testkit.models.cli import make_sandbox

    sandbox = make_sandbox(tmp_path / "sandbox", env=qwen_env(model_server, qwen_cli))
    sandbox.apply(monkeypatch)
    return sandbox
