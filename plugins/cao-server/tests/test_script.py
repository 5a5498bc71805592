"""The ``cao-server`` script: ``cao server`` under its own name, found through installed metadata."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from cao_server import script

CAO_SERVER = Path(sys.executable).with_name("cao-server")


def test_cao_server_runs_cao_server_under_its_own_name():
    assert CAO_SERVER.exists(), f"the cao-server script is not installed next to {sys.executable}"
    done = subprocess.run([str(CAO_SERVER), "--help"], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Usage: cao-server server [OPTIONS]")
    assert "Run the cao HTTP server" in done.stdout


def test_without_the_cao_command_line_it_says_what_to_install(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda **select: [])
    with pytest.raises(SystemExit) as exited:
        script.main()
    assert exited.value.code == script.MISSING
    assert "install cao-kernel" in script.MISSING


def test_a_cao_command_line_that_fails_to_load_is_reported(monkeypatch: pytest.MonkeyPatch):
    def load() -> None:
        raise ImportError("no module named 'cao_kernel'")

    monkeypatch.setattr(importlib.metadata, "entry_points", lambda **select: [SimpleNamespace(load=load)])
    with pytest.raises(SystemExit) as exited:
        script.main()
    assert exited.value.code == (
        "cao-server: the cao command line failed to load: ImportError: no module named 'cao_kernel'"
    )
