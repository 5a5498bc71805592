"""Behaviours calling MCP tools through the mcp SDK's real stdio client, against a real server process."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cao_provider_mock.contract import BEHAVIOUR_ERROR_PREFIX
from cao_testkit.processes import pid_alive

PROGRAMS = Path(__file__).parent / "programs"
PROMPT = "\u276f ".encode()


class PipedAgent:
    """mock_cli with pipes, driven one input at a time."""

    def __init__(self, *args: str, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen([os.path.join(os.path.dirname(sys.executable), "mock_cli"), *args],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        self.buffer = b""
        self.read_turn()

    def read_turn(self, timeout: float = 20.0) -> str:
        """Output up to the next prompt."""
        deadline = time.monotonic() + timeout
        assert self.proc.stdout is not None
        while PROMPT not in self.buffer:
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"no prompt within {timeout}s; output so far: {self.buffer!r}"
            if select.select([self.proc.stdout], [], [], remaining)[0]:
                chunk = os.read(self.proc.stdout.fileno(), 65536)
                assert chunk, f"mock_cli ended; output: {self.buffer!r}"
                self.buffer += chunk
        turn, _, self.buffer = self.buffer.partition(PROMPT)
        return turn.decode()

    def ask(self, line: str) -> str:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()
        return self.read_turn()

    def close(self) -> int:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        try:
            self.proc.stdin.write(b"/exit\n")
            self.proc.stdin.close()
        except BrokenPipeError:
            pass
        code = self.proc.wait(timeout=10)
        self.proc.stdout.close()
        return code


@pytest.fixture
def agent_with_tools(tmp_path):
    """Start mock_cli running the test behaviour with the tool server in its MCP config."""
    agents: list[PipedAgent] = []
    starts = tmp_path / "starts"

    def start(servers: dict | None = None) -> PipedAgent:
        config = tmp_path / "rt" / "mcp.json"
        config.parent.mkdir(exist_ok=True)
        servers = servers or {"tools": {
            "command": sys.executable, "args": [str(PROGRAMS / "tool_server.py")],
            # Agent CLIs may start servers with a scrubbed environment: what the server needs is here.
            "env": {"CAO_TERMINAL_ID": "0123abcd", "TOOL_SERVER_STARTS": str(starts)},
        }}
        config.write_text(json.dumps({"mcpServers": servers}))
        env = {k: v for k, v in os.environ.items() if k != "CAO_TERMINAL_ID"}
        env["CAO_MOCK_BEHAVIOUR_PATH"] = str(PROGRAMS)
        agent = PipedAgent("--behaviour", "behaviours_for_tests:scripted", "--mcp-config", str(config), env=env)
        agents.append(agent)
        return agent

    yield start
    for agent in agents:
        if agent.proc.poll() is None:
            agent.proc.kill()
            agent.proc.wait()
        for stream in (agent.proc.stdin, agent.proc.stdout):
            if stream is not None and not stream.closed:
                stream.close()


def test_server_starts_on_the_first_call_and_is_kept_for_the_agents_life(agent_with_tools, tmp_path):
    agent = agent_with_tools()
    starts = tmp_path / "starts"
    assert agent.ask("sdk") == "> MOCK: mcp imported: False\n"
    assert not starts.exists()  # no tool called yet: no server started

    first = agent.ask("add")
    lines = first.splitlines()
    assert lines[0] == "\u23fa add(a=2, b=3)"
    assert lines[1].startswith('  \u23bf {"sum": 5, "pid": ')
    pid = int(starts.read_text().split()[0])
    # The terminal id reached the server through the config's env, not the agent's own environment.
    assert lines[2] == f"> MOCK: sum 5 from pid {pid} for terminal 0123abcd"
    assert agent.ask("add").splitlines()[-1] == lines[2]
    assert agent.ask("shout quiet please").splitlines()[-1] == "> MOCK: QUIET PLEASE"
    assert starts.read_text().split() == [str(pid)]  # one server for every turn
    assert agent.ask("sdk") == "> MOCK: mcp imported: True\n"

    assert agent.close() == 0
    deadline = time.monotonic() + 5
    while pid_alive(pid):
        assert time.monotonic() < deadline, "the MCP server outlived its agent"
        time.sleep(0.05)
    assert (tmp_path / "rt" / "mcp-tools.log").exists()  # its stderr went to a file, not the screen


def test_tool_errors_reach_the_behaviour_and_unknown_tools_fail_the_turn(agent_with_tools):
    agent = agent_with_tools()
    refused = agent.ask("refuse")
    assert refused.splitlines()[-1].startswith("> MOCK: caught: refuse failed: ")
    assert "  \u23bf failed: refuse failed:" in refused
    missing = agent.ask("missing").splitlines()[-1]
    assert missing == (f"{BEHAVIOUR_ERROR_PREFIX}ToolError: no MCP server of this agent offers the tool "
                       "'no_such_tool' (offered: add, refuse, send_message, shout, wait)")
    assert agent.ask("add").splitlines()[-1].startswith("> MOCK: sum 5")  # the agent goes on
    assert agent.close() == 0


def test_the_worker_behaviour_reports_an_assigned_task_with_send_message(spawn_pty, tmp_path):
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"tools": {
        "command": sys.executable, "args": [str(PROGRAMS / "tool_server.py")]}}}))
    agent = spawn_pty("--behaviour", "worker", "--mcp-config", str(config))
    agent.expect(PROMPT)
    callback = ("[Assigned by terminal 0a1b2c3d. When done, send results back to terminal 0a1b2c3d "
                "using send_message]")
    agent.send(f"\x1b[200~count the files\n\n{callback}\x1b[201~\r".encode())
    turn = agent.expect(b"> MOCK: Sent the result to terminal 0a1b2c3d.\r\n" + PROMPT, timeout=30).decode()
    assert "\u23fa send_message(receiver_id='0a1b2c3d', message='Done: count the files')" in turn
    assert '"receiver_id": "0a1b2c3d", "body": "Done: count the files"' in turn
    agent.send(b"/exit\r")
    assert agent.wait(timeout=10) == 0


def test_a_server_that_cannot_start_is_a_clear_turn_failure(agent_with_tools, tmp_path):
    agent = agent_with_tools({"broken": {"command": str(tmp_path / "no-such-program")}})
    failed = agent.ask("add").splitlines()[-1]
    assert failed.startswith(f"{BEHAVIOUR_ERROR_PREFIX}ToolError: cannot connect to MCP server 'broken': ")
    assert "mcp-broken.log" in failed
    assert agent.close() == 0
