"""Fixtures for the Cursor CLI provider's tests: a stand-in ``cursor-agent`` program on PATH for the launch
tests (nothing runs it; the real CLI is not installable here, see the README)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cao_provider_cursor_cli.launch import BINARY


@pytest.fixture(scope="session")
def cli_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding an executable named ``cursor-agent``."""
    folder = tmp_path_factory.mktemp("cli-bin")
    program = folder / BINARY
    program.write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    program.chmod(0o755)
    return folder
