"""The shared machinery runs through both providers: ``case`` is parametrized over Kiro CLI and Q CLI,
and each ``ProviderCase`` says what its provider calls things and where it puts them."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest

RECORDER = """#!/bin/sh
printf '%s\\n' "$@" > "$ARGS_FILE"
if [ -n "$SLEEP_FOR" ]; then exec sleep "$SLEEP_FOR"; fi
exit "${EXIT_WITH:-0}"
"""


@dataclass(frozen=True)
class ProviderCase:
    """A provider under test, with what the shared tests need to know about its CLI."""

    #: The provider's name (its entry point in group ``cao``).
    name: str
    #: The provider's package (``cao_provider_<name>``).
    package: str
    #: The program's file name.
    binary: str
    #: The agent folder, relative to HOME.
    agent_dir: tuple[str, ...]
    #: The short name refusals use ("not a Kiro tool name").
    short: str
    #: Where the profile's ``use_legacy_mcp_json`` goes in the agent file.
    legacy_mcp_json_key: str
    #: Texts the error about a missing program must hold (beyond the ``*_BIN`` variable).
    missing_words: tuple[str, ...]

    @property
    def launch(self) -> ModuleType:
        return importlib.import_module(f"{self.package}.launch")

    @property
    def binary_env(self) -> str:
        return self.launch.BINARY_ENV

    @property
    def runtime_copy(self) -> str:
        return self.launch.RUNTIME_COPY

    def agents(self, home: Path) -> Path:
        return home.joinpath(*self.agent_dir)


KIRO = ProviderCase(
    name="kiro_cli", package="cao_provider_kiro_cli", binary="kiro-cli", agent_dir=(".kiro", "agents"),
    short="Kiro", legacy_mcp_json_key="includeMcpJson",
    missing_words=("Kiro CLI ('kiro-cli') is not on PATH, so cao-provider-kiro-cli cannot start it.",
                   "curl -fsSL https://cli.kiro.dev/install | bash", "unrelated"),
)
Q = ProviderCase(
    name="q_cli", package="cao_provider_q_cli", binary="q", agent_dir=(".aws", "amazonq", "cli-agents"),
    short="Q", legacy_mcp_json_key="useLegacyMcpJson",
    missing_words=("Amazon Q Developer CLI ('q') is not on PATH, so cao-provider-q-cli cannot start it.",
                   "installer", "command-line-installing.html", "not published on npm, PyPI or Debian"),
)
CASES = {c.name: c for c in (KIRO, Q)}


@pytest.fixture(scope="session", params=list(CASES))
def case(request) -> ProviderCase:
    """Each provider in turn; a test about one of them says so with
    ``@pytest.mark.parametrize("case", ["kiro_cli"], indirect=True)``."""
    return CASES[request.param]


@pytest.fixture
def home(case, tmp_path, monkeypatch):
    """A user machine: an empty HOME, and the provider's ``*_BIN`` variable naming an executable file
    standing in for the CLI where only its exit matters (the wrapper's clean-up): it records the
    arguments it got, then exits with the status given in $EXIT_WITH, or sleeps when told to."""
    home = tmp_path / "home"
    home.mkdir()
    program = tmp_path / "bin" / case.binary
    program.parent.mkdir()
    program.write_text(RECORDER)
    program.chmod(0o755)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv(case.binary_env, str(program))
    return home
