"""Fixtures for the Aider provider's tests.

The live tests run the CLI the way cao runs it: a kernel with this provider and the tmux backend, on
a private tmux server, in a throw-away HOME, against a scripted model server on 127.0.0.1
(``cao_testkit.models``). The ``cao_home`` fixture comes from cao's pytest plugin, ``tmux_socket`` and
``workdir`` from its test kit's (``-p cao_kernel.testing -p cao_testkit`` in pyproject.toml).

TODO (real CLI): ``cli_bin`` puts the stand-in program ``tests/programs/example_cli.py`` on PATH as
``aider``. Install the real CLI instead: declare it with ``cao_testkit.models.cli``'s
``npm_cli`` (or ``pypi_cli``, with ``extras`` when a feature the tests use needs them) and list it in
``LIVE_CLIS`` (installed once per machine, in the background; a failure is loud), serve the model API it
speaks, and mark the live tests ``live_cli``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cao_hookspecs import AgentProfile
from cao_testkit.kernels import LiveKernels
from cao_provider_aider.launch import BINARY
from cao_provider_aider.provider import NAME

EXAMPLE_CLI = Path(__file__).parent / "programs" / "example_cli.py"


@pytest.fixture(scope="session")
def cli_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding the CLI as ``aider``: the stand-in program, run by this Python."""
    from cao_testkit.models.cli import stand_in

    folder = tmp_path_factory.mktemp("cli-bin")
    stand_in(folder, BINARY, EXAMPLE_CLI)
    return folder


class Live(LiveKernels):
    """One live test's world, with the CLI on PATH; its kernels load tmux and this provider."""

    provider = NAME
    plugins = ("tmux", NAME)

    def profile(self, name: str = "coder", **fields: Any) -> AgentProfile:
        return AgentProfile(name=name, provider=NAME, **fields)


@pytest.fixture
def live(cli_bin: Path, tmux_socket: str, cao_home: Path, tmp_path: Path,
         monkeypatch: pytest.MonkeyPatch) -> Iterator[Live]:
    """The scripted server (``live.script`` takes turns) and a sandbox where ``aider`` is the CLI;
    the user's own configuration and keys are out of reach."""
    from cao_testkit.models import Script
    from cao_testkit.models.anthropic import AnthropicServer
    from cao_testkit.models.cli import make_sandbox

    with AnthropicServer(Script()) as server:
        sandbox = make_sandbox(tmp_path / "sandbox", env=server.client_env(), path=[cli_bin])
        sandbox.apply(monkeypatch)
        yield Live(server, tmux_socket, cao_home, sandbox)
    server.assert_healthy()
