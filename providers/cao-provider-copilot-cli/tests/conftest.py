"""Fixtures for the Copilot CLI provider's tests.

Live tests (marked ``live_cli``) run the real Copilot CLI, installed from npm once per machine (see
``cao_testkit.models.cli``), in a sandboxed HOME, on a private tmux server. Copilot CLI uses a
custom model provider when ``COPILOT_PROVIDER_BASE_URL`` is set: here a scripted Anthropic Messages
server on 127.0.0.1, with ``COPILOT_OFFLINE=true`` and an unreachable proxy for everything else, so no
GitHub account is needed and nothing leaves the machine. ``CAO_LIVE_COPILOT_CLI_VERSION`` picks
another release to try. ``make_kernel`` comes from ``cao_testkit``, the model server and ``cao_server``
from ``cao_testkit.live_fixtures``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cao_provider_copilot_cli.provider import TESTED_VERSIONS
from cao_testkit.live_fixtures import anthropic_server as model_server  # noqa: F401 (fixture)
from cao_testkit.live_fixtures import cao_server  # noqa: F401 (fixture)
from cao_testkit.models.cli import cache_root, live_version, npm_cli

PACKAGE = "@github/copilot"
#: A model Copilot knows (so it applies that model's settings); the scripted server answers for any name.
MODEL = "claude-sonnet-4"
#: Variables that would point Copilot at the user's GitHub account, config folder or permissions.
ACCOUNT_VARS = ("COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN", "GH_HOST", "COPILOT_GH_HOST",
                "COPILOT_HOME", "COPILOT_ALLOW_ALL", "COPILOT_PROVIDER_BEARER_TOKEN",
                "COPILOT_PROVIDER_API_KEY_COMMAND", "COPILOT_PROVIDER_WIRE_API", "COPILOT_PROVIDER_HEADERS")
#: The variables that select the scripted model server (left empty, Copilot has no model to talk to).
PROVIDER_VARS = ("COPILOT_PROVIDER_BASE_URL", "COPILOT_PROVIDER_TYPE", "COPILOT_PROVIDER_API_KEY",
                 "COPILOT_OFFLINE", "COPILOT_MODEL")


def pkg_cache() -> Path:
    """Where Copilot unpacks its bundle (~240 MB, on first start, even for ``--version``): one shared
    folder in the live-CLI cache instead of one per sandbox HOME."""
    return cache_root() / "copilot-pkg"


COPILOT = npm_cli(PACKAGE, live_version("copilot_cli", TESTED_VERSIONS), "copilot",
                  env={"COPILOT_PKG_CACHE_HOME": str(pkg_cache())})
#: Installed in the background once a live test here is selected (cao_testkit.session).
LIVE_CLIS = (COPILOT,)


@pytest.fixture(scope="session")
def copilot_cli():
    """The real Copilot CLI (installed into the per-machine cache on first use)."""
    return COPILOT.install()


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
def live_sandbox(tmp_path, model_server, copilot_cli, monkeypatch):  # noqa: F811 (the imported fixture)
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
def signed_out(live_sandbox, monkeypatch):
    """The sandbox without a model provider: Copilot would need a GitHub account, and has none."""
    for name in PROVIDER_VARS:
        monkeypatch.delenv(name, raising=False)
    return live_sandbox


@pytest.fixture
def workdir(live_sandbox):
    """The working folder, inside the sandbox's HOME (Copilot shows it as ``~/project``)."""
    folder = live_sandbox.home / "project"
    folder.mkdir()
    return str(folder)
