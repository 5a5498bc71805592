"""``CAO_MAX_TERMINALS``: a creation past the cap is refused with upstream's 429 before anything exists,
by every route that creates a terminal and by ``cao agent``; racing creations cannot pass it together."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.tmux

CAP = 2


@pytest.fixture
def server_settings() -> dict[str, str]:
    return {"CAO_MAX_TERMINALS": str(CAP)}


def _windows(tmux: Any) -> list[str]:
    listed = tmux.run("list-windows", "-a", "-F", "#{session_name}:#{window_name}", check=False)
    return listed.stdout.split()


def test_creations_past_the_cap_get_429_and_leave_nothing(server, api, make_terminal, tmux, workdir,
                                                           cao_home: Path):
    first = make_terminal(session="capped")
    make_terminal()
    windows = _windows(tmux)
    runtime = sorted(p.name for p in (cao_home / "runtime").iterdir())
    refused = [
        api.post("/sessions", json={"agent_profile": "developer", "working_directory": workdir}),
        api.post("/sessions/cao-capped/terminals", json={"agent_profile": "developer",
                                                          "working_directory": workdir}),
        api.post(f"/terminals/{first['id']}/handoff", json={"agent_profile": "developer", "message": "x"}),
        api.post(f"/terminals/{first['id']}/assign", json={"agent_profile": "developer", "message": "x"}),
    ]
    for response in refused:
        assert response.status_code == 429, response.text
        body = response.json()
        assert body["error"] == "TerminalLimit"
        assert body["detail"].startswith(f"Terminal limit reached: {CAP} live terminal(s)")
        assert "CAO_MAX_TERMINALS is 2" in body["detail"]
    assert _windows(tmux) == windows
    assert sorted(p.name for p in (cao_home / "runtime").iterdir()) == runtime

    from click.testing import CliRunner

    from cao_kernel.cli import cli

    env = {"CAO_HOME_DIR": str(cao_home), "CAO_API_HOST": "127.0.0.1", "CAO_API_PORT": str(server.port),
           "CAO_TERMINAL_ID": first["id"]}
    shell = CliRunner().invoke(cli, ["agent", "assign", "developer", "lint it"], env=env)
    assert shell.exit_code == 1 and "Terminal limit reached" in shell.stdout

    assert api.delete(f"/terminals/{first['id']}").status_code == 200
    make_terminal()  # a slot is free again


def test_racing_creations_cannot_pass_the_cap_together(server, workdir, cao_home: Path):
    from cao_hookspecs import CreateTerminalRequest, TerminalLimit
    from cao_server.api_token import read_token
    from cao_server.client import HttpKernel

    async def race() -> list[Any]:
        async with HttpKernel(server.url, token=read_token(cao_home)) as api:
            request = CreateTerminalRequest(agent_profile="developer", working_directory=workdir)
            return await asyncio.gather(*(api.create_session(request) for _ in range(CAP + 3)),
                                        return_exceptions=True)

    results = asyncio.run(race())
    made = [r for r in results if not isinstance(r, BaseException)]
    assert len(made) == CAP, results
    assert all(isinstance(r, TerminalLimit) for r in results if isinstance(r, BaseException)), results
