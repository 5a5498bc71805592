"""Fixtures for kernel tests that run real agents in real tmux (a private server per test: the
``tmux_socket`` fixture of ``cao_testkit``)."""

from __future__ import annotations

import pytest


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
