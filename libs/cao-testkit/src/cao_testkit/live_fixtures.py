"""Fixtures a provider's live tests import into their ``conftest.py``, under the names the tests use::

    from cao_testkit.live_fixtures import anthropic_server as model_server  # noqa: F401 (fixture)
    from cao_testkit.live_fixtures import cao_server  # noqa: F401 (fixture)

- ``anthropic_server``, ``openai_server``: a scripted model server for one test (the Messages API; the
  Responses API knowing the model ``scripted``), started empty (add turns with ``.script.add(...)``) and
  checked afterwards: a request with no turn left, or a server error, fails the test.
- ``cao_server``: a real ``cao server`` subprocess (:func:`cao_testkit.server_process.run_live_server`)
  loading the ``kernel_provider`` (see :mod:`cao_testkit.kernels`), started after the package's
  ``live_sandbox`` fixture has applied the sandbox, so the server's agents run the installed CLI
  against the scripted server. Profiles go in ``cao_server.home / "agent-store"`` (write them before
  creating terminals).

They are not fixtures of the ``cao_testkit`` plugin itself: a package opts in to each, by name.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from .models.script import ScriptedServer
    from .server_process import CaoServer

__all__ = ["anthropic_server", "cao_server", "openai_server"]


def _checked(server: ScriptedServer) -> Iterator[ScriptedServer]:
    with server:
        yield server
    server.assert_healthy()


@pytest.fixture
def anthropic_server() -> Iterator[ScriptedServer]:
    """A scripted Anthropic Messages API; add turns with ``model_server.script.add(...)``."""
    from .models.anthropic import AnthropicServer
    from .models.script import Script

    yield from _checked(AnthropicServer(Script()))


@pytest.fixture
def openai_server() -> Iterator[ScriptedServer]:
    """A scripted OpenAI Responses API serving the model ``scripted``; add turns with
    ``model_server.script.add(...)``."""
    from .models.openai import OpenAIServer
    from .models.script import Script

    yield from _checked(OpenAIServer(Script(), models=("scripted",)))


@pytest.fixture
def cao_server(live_sandbox: Any, kernel_provider: str, cao_home: Path,
               tmp_path: Path) -> Iterator[CaoServer]:
    """A real cao-server with the provider under test, started in the live sandbox's environment."""
    from cao_kernel.testing.conformance import load_provider

    from .server_process import run_live_server

    # The server drops cao's settings from the environment it inherits, but for the one naming the CLI.
    binary_env = load_provider(kernel_provider, kernel_provider).binary_env
    kept = [binary_env] if binary_env else []
    with run_live_server(cao_home, tmp_path, kernel_provider, kept) as server:
        yield server
