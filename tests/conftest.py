"""Fixtures for kernel tests that run real agents in real tmux (a private server per test)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest


@pytest.fixture
def tmux_socket(tmp_path_factory: pytest.TempPathFactory):
    """A private tmux socket path; the server on it is killed after the test."""
    if shutil.which("tmux") is None:
        pytest.fail("tmux is not installed (scripts/bootstrap.sh installs it)")
    # Short folder: unix socket paths are limited to ~100 bytes.
    folder = Path(os.environ.get("TMPDIR", "/tmp")) / f"cao-t{os.getpid()}-{os.urandom(3).hex()}"
    folder.mkdir(mode=0o700)
    socket = folder / "tmux.sock"
    yield str(socket)
    subprocess.run(["tmux", "-S", str(socket), "kill-server"], capture_output=True, check=False)
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def make_kernel(tmux_socket, cao_home, tmp_path):
    """Build kernels that run mock agents on the private tmux server."""
    from cao_kernel.kernel import Kernel
    from cao_kernel.plugins import LoadPolicy

    def make(*plugins: str, **settings: str):
        return Kernel(
            policy=LoadPolicy(only=plugins or ("tmux", "mock_cli", "inbox_sqlite")),
            home=cao_home,
            settings={"CAO_TMUX_SOCKET": tmux_socket, "CAO_DEFAULT_PROVIDER": "mock_cli", **settings},
        )

    return make


@pytest.fixture
def workdir(tmp_path):
    d = tmp_path / "project"
    d.mkdir()
    return str(d)
