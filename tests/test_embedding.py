"""A kernel embedded in another program runs the main job: its agents reach cao's MCP tools on an
endpoint the kernel serves itself, started and stopped with it; without any MCP surface a profile that
asks for cao's tools is refused at once; and examples/embed_team.py prints the team's report."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from cao_server.api_token import read_token

from cao_hookspecs import CreateTerminalRequest, NotSupported
from cao_testkit.leftovers import left_behind

pytestmark = pytest.mark.tmux

ROOT = Path(__file__).resolve().parents[1]


async def test_an_embedded_kernel_serves_its_agents_cao_tools_itself(make_kernel, workdir, cao_home):
    async with make_kernel("tmux", "mock_cli", "inbox_sqlite", "mcp") as kernel:
        port = int(kernel.settings["CAO_API_PORT"])
        supervisor = await kernel.create_session(CreateTerminalRequest(
            agent_profile="developer", working_directory=workdir))  # asks for cao's MCP tools
        steps = [step.name for step in await kernel.get_timeline(supervisor.id)]
        assert "tools_listed" in steps and "gate_open" in steps, steps  # its MCP server reached cao
        result = await kernel.handoff(supervisor.id, "developer", "__mock_sleep_0.1", timeout=30)
        assert result.success and result.output == "slept 0.1s", result
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", trust_env=False) as http:
            assert (await http.get("/sessions")).status_code == 401  # the owner's token, as a server's
            token = read_token(str(cao_home))
            allowed = await http.get("/sessions", headers={"Authorization": f"Bearer {token}"})
            assert token and allowed.status_code == 200
    with pytest.raises(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
        pass  # closed with the kernel


async def test_without_an_mcp_surface_a_profile_asking_for_cao_tools_is_refused_at_once(make_kernel, workdir):
    async with make_kernel() as kernel:  # tmux, the mock agent, the inbox: no MCP plugin
        started = time.monotonic()
        with pytest.raises(NotSupported) as refused:
            await kernel.create_session(CreateTerminalRequest(
                agent_profile="developer", session_name="nomcp", working_directory=workdir))
        assert time.monotonic() - started < 1.0
        message = str(refused.value)
        assert "profile 'developer' asks for cao's MCP tools" in message and "install cao-mcp" in message
        assert "cao_mcp.plugin" in message
        assert await kernel.list_sessions() == []  # nothing half-created


def test_the_embed_team_example_prints_the_report_and_leaves_nothing(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CAO_", "TMUX"))}
    env["TMPDIR"] = str(tmp_path)
    started = time.monotonic()
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "embed_team.py")], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=60, check=False)
    took = time.monotonic() - started
    assert done.returncode == 0, done.stdout + done.stderr
    first, _, report = done.stdout.partition("\n")
    assert first.startswith("the team has started (supervisor ")
    assert "cao's tools at http://127.0.0.1:" in first
    expected = (ROOT / "tests/fixtures/examples/assign_report.txt").read_text(encoding="utf-8")
    assert report.strip() == expected.strip()
    assert took < 15, took
    assert left_behind([str(tmp_path)]) == []
    assert list(tmp_path.iterdir()) == []  # its scratch folder is gone too
