"""Fixtures for the Oh My Pi provider's tests.

Live tests (marked ``live_cli``) run the real Oh My Pi, installed from npm with Bun beside it once per
machine (see ``cao_testkit.models.cli``), against a scripted Chat Completions server on 127.0.0.1,
declared as a model provider in the sandboxed user's ``~/.omp/agent/models.yml``, in a sandboxed HOME,
on a private tmux server. ``CAO_LIVE_OMP_VERSION`` picks another release to try. ``make_kernel`` and
``workdir`` come from ``cao_testkit``, ``cao_server`` from ``cao_testkit.live_fixtures``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from cao_provider_omp.provider import TESTED_VERSIONS
from cao_testkit.live_fixtures import cao_server  # noqa: F401 (fixture)
from cao_testkit.models.cli import live_version, npm_cli

PACKAGE = "@oh-my-pi/pi-coding-agent"
#: Oh My Pi is a Bun program (``#!/usr/bin/env bun``): Bun from npm is installed beside it.
BUN = "bun@1.4.5"
#: The provider and model the scripted server is declared as.
MODEL = "scripted/scripted-model"

OMP = npm_cli(PACKAGE, live_version("omp", TESTED_VERSIONS), "omp", with_packages=[BUN])
#: Installed in the background once a live test here is selected (cao_testkit.session).
LIVE_CLIS = (OMP,)


@pytest.fixture(scope="session")
def omp_cli():
    """The real Oh My Pi (installed into the per-machine cache on first use; fails if it cannot be)."""
    return OMP.install()


@pytest.fixture
def model_server() -> Iterator[object]:
    """A scripted Chat Completions API; add turns with ``.script.add(...)``."""
    from cao_testkit.models import Script
    from cao_testkit.models.chat import ChatServer

    with ChatServer(Script(), models=("scripted-model",)) as server:
        yield server
    server.assert_healthy()


def models_yml(base_url: str) -> str:
    """A user's ``models.yml`` declaring the scripted server as provider ``scripted``."""
    return ("providers:\n  scripted:\n"
            f"    baseUrl: {base_url}\n    api: openai-completions\n    apiKey: sk-scripted\n"
            "    models:\n      - id: scripted-model\n        name: Scripted Model\n")


@pytest.fixture
def live_sandbox(tmp_path, model_server, omp_cli, monkeypatch):
    """A sandboxed HOME whose Oh My Pi knows the scripted server, with ``omp`` and ``bun`` on PATH,
    applied to this test's environment."""
    from cao_testkit.models.cli import make_sandbox

    sandbox = make_sandbox(tmp_path / "sandbox", path=[omp_cli.bin_dir],
                           env={"CAO_OMP_BIN": str(omp_cli.binary), "TERM": "xterm-256color"})
    agent = sandbox.home / ".omp" / "agent"
    agent.mkdir(parents=True)
    (agent / "models.yml").write_text(models_yml(model_server.base_url), encoding="utf-8")
    sandbox.apply(monkeypatch)
    return sandbox
