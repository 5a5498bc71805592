"""The compatibility suite's fixtures: upstream CAO's released package (installed from PyPI once per
machine, :mod:`cao_testkit.upstream`) and one real ``cao server`` (uvicorn on 127.0.0.1, tmux on a
private socket, mock agents) shared by the module's tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

PLUGINS = ("tmux", "mock_cli", "inbox_sqlite", "server", "mcp")


@pytest.fixture(scope="session")
def upstream() -> Any:
    from cao_testkit.upstream import install_upstream

    return install_upstream()


@pytest.fixture(scope="module")
def cao_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from cao_testkit.server_process import run_cao_server

    home = tmp_path_factory.mktemp("cao-home")
    work = tmp_path_factory.mktemp("work")
    with run_cao_server(home, work, PLUGINS) as server:
        server.work = work  # type: ignore[attr-defined]
        yield server


@pytest.fixture
def http(cao_server: Any) -> Iterator[Any]:
    import httpx

    with httpx.Client(base_url=cao_server.url, headers=cao_server.headers, timeout=60) as client:
        yield client


@pytest.fixture
def upstream_home(tmp_path: Path) -> Path:
    home = tmp_path / "upstream-home"
    home.mkdir()
    return home
