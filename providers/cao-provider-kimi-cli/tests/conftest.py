"""Fixtures for the Kimi CLI provider's tests.

Live tests (marked ``live_cli``) run the real Kimi CLI, installed from PyPI once per machine into a
virtual environment of its own (see ``cao_testkit.models.cli.install_pypi_cli``), against a
scripted OpenAI Responses server on 127.0.0.1 (Kimi's ``openai_responses`` provider type), in a
sandboxed HOME whose ``~/.kimi/config.toml`` names that server, on a private tmux server.
``CAO_LIVE_KIMI_CLI_VERSION`` picks another release to try. ``make_kernel`` and ``workdir`` come from
``cao_testkit``, the model server and ``cao_server`` from ``cao_testkit.live_fixtures``.
"""

from __future__ import annotations

import os

import pytest

from cao_provider_kimi_cli.provider import TESTED_VERSIONS
from cao_testkit.live_fixtures import cao_server  # noqa: F401 (fixture)
from cao_testkit.live_fixtures import openai_server as model_server  # noqa: F401 (fixture)
from cao_testkit.models.cli import live_version, pypi_cli

PACKAGE = "kimi-cli"
#: kimi-cli needs Python 3.12 or newer; the kit looks for one on the machine and never downloads one.
PYTHON = ">=3.12"
#: Dependencies resolved as PyPI had them the day after each tested release: kimi-cli pins few of its
#: own, and it is archived, so a later release of one (anthropic 2.x, for one) can break it for good.
EXCLUDE_NEWER = {"1.51.0": "2026-09-22"}
#: The model the scripted server serves.
MODEL = "scripted"


VERSION = live_version("kimi_cli", TESTED_VERSIONS)
KIMI = pypi_cli(PACKAGE, VERSION, "kimi", python=PYTHON, exclude_newer=EXCLUDE_NEWER.get(VERSION))
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
def live_sandbox(tmp_path, model_server, kimi_cli, monkeypatch):  # noqa: F811 (the imported fixture)
    """A sandboxed HOME whose Kimi config names the scripted server, applied to this test's environment."""
    from cao_testkit.models.cli import make_sandbox

    sandbox = make_sandbox(tmp_path / "sandbox", env={"CAO_KIMI_CLI_BIN": str(kimi_cli.binary),
                                                      "TERM": "xterm-256color"})
    share = sandbox.home / ".kimi"
    share.mkdir()
    (share / "config.toml").write_text(user_config(model_server.base_url), encoding="utf-8")
    sandbox.apply(monkeypatch)
    return sandbox
