"""Fixtures for the {{ cookiecutter.display_name }} provider's tests.

The live tests run the CLI the way cao runs it: a kernel with this provider and the tmux backend, on
a private tmux server, in a throw-away HOME, against a scripted model server on 127.0.0.1
(``cao_testkit.models``). Three fixtures make that world, as in cao's own providers:

- ``model_server``: the scripted model API the CLI talks to. **Choose it here**, for the API the CLI
  speaks;
- ``live_sandbox``: a HOME without the user's keys and settings, whose environment points the CLI at
  ``model_server`` and names the program to run (``{{ cookiecutter.__binary_env }}``);
- ``live``: both, with kernels that run this provider (``cao_testkit.kernels.LiveKernels``).

``cao_server`` (a real ``cao server`` in a subprocess, running this provider in the sandbox) comes from
``cao_testkit.live_fixtures``; ``cao_home`` from cao's pytest plugin, ``tmux_socket`` and ``workdir``
from its test kit's (``-p cao_kernel.testing -p cao_testkit`` in pyproject.toml).

TODO (real CLI): ``cli_bin`` puts the stand-in program ``tests/programs/example_cli.py`` on PATH as
``{{ cookiecutter.binary }}``. Install the real CLI instead: declare it with ``cao_testkit.models.cli``'s
``npm_cli`` (or ``pypi_cli``, with ``extras`` when a feature the tests use needs them) and list it in
``LIVE_CLIS`` (installed once per machine, in the background; a failure is loud), have the session
fixture return ``CLI.install()`` and ``live_sandbox`` name its ``binary``, serve the model API it
speaks, and mark the live tests ``live_cli``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cao_hookspecs import AgentProfile
from cao_testkit.kernels import LiveKernels
from cao_testkit.live_fixtures import cao_server  # noqa: F401 (fixture)
from {{ cookiecutter.__module }}.launch import BINARY, BINARY_ENV
from {{ cookiecutter.__module }}.provider import NAME

EXAMPLE_CLI = Path(__file__).parent / "programs" / "example_cli.py"
#: The model the OpenAI-style servers list (Chat Completions, Responses); the CLI's config names it.
MODEL = "scripted"


@pytest.fixture(scope="session")
def cli_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding the CLI as ``{{ cookiecutter.binary }}``: the stand-in program, run by this Python."""
    from cao_testkit.models.cli import stand_in

    folder = tmp_path_factory.mktemp("cli-bin")
    stand_in(folder, BINARY, EXAMPLE_CLI)
    return folder


@pytest.fixture
def model_server() -> Iterator[Any]:
    """The scripted model API the CLI talks to; add turns with ``.script.add(...)``. A request no turn
    was left for, or a server error, fails the test when it ends."""
    from cao_testkit.models import Script

    # Choose the model server here. TODO (real CLI): the API it speaks. The stand-in speaks Anthropic's
    # Messages API. The others, the first two serving MODEL at ``server.base_url``:
    #   Chat Completions: ChatServer(Script(), models=(MODEL,)), from cao_testkit.models.chat
    #   Responses: OpenAIServer(Script(), models=(MODEL,)), from cao_testkit.models.openai
    #   Gemini: GeminiServer(Script()), from cao_testkit.models.gemini
    # cao_testkit.live_fixtures also offers anthropic_server and openai_server, imported as model_server.
    from cao_testkit.models.anthropic import AnthropicServer

    with AnthropicServer(Script()) as server:
        yield server
    server.assert_healthy()


def client_env(server: Any) -> dict[str, str]:
    """What points the CLI at ``server``: its address and a key of no account.

    TODO (real CLI): the variables (or a config file the sandbox's HOME holds) the CLI reads; the
    servers' ``client_env()`` gives the usual ones (``ANTHROPIC_*``; ``OPENAI_*`` for Chat Completions).
    """
    return server.client_env()


@pytest.fixture
def live_sandbox(tmp_path: Path, model_server: Any, cli_bin: Path,
                 monkeypatch: pytest.MonkeyPatch) -> Any:
    """A sandboxed HOME where ``{{ cookiecutter.binary }}`` is the CLI under test, pointed at ``model_server``,
    applied to this test's environment (the user's own configuration and keys are out of reach)."""
    from cao_testkit.models.cli import make_sandbox

    # The variable naming the program is the one environment setting cao_server passes on to its agents.
    env = {**client_env(model_server), BINARY_ENV: str(cli_bin / BINARY)}
    sandbox = make_sandbox(tmp_path / "sandbox", env=env, path=[cli_bin])
    sandbox.apply(monkeypatch)
    return sandbox


class Live(LiveKernels):
    """One live test's world, with the CLI of the sandbox; its kernels load tmux and this provider."""

    provider = NAME
    plugins = ("tmux", NAME)

    def profile(self, name: str = "coder", **fields: Any) -> AgentProfile:
        return AgentProfile(name=name, provider=NAME, **fields)


@pytest.fixture
def live(live_sandbox: Any, model_server: Any, tmux_socket: str, cao_home: Path) -> Live:
    """The scripted server (``live.script`` takes turns) and kernels running the sandbox's CLI."""
    return Live(model_server, tmux_socket, cao_home, live_sandbox)
