"""cao's MCP server in mock_cli's config is connected at start-up, like an agent CLI's MCP servers, over
mock_cli's own pipe client; until then its tools do not exist for a behaviour. A stand-in named
``cao-mcp-server`` (the tests' tool server behind that name) plays cao's server, so no cao-server runs."""

from __future__ import annotations

import json
import stat
import sys
import time
from pathlib import Path

import pytest

from cao_provider_mock.contract import BEHAVIOUR_ERROR_PREFIX
from cao_provider_mock.mcp_pipe import is_cao_server
from cao_testkit.processes import pid_alive

PROGRAMS = Path(__file__).parent / "programs"
PROMPT = "\u276f ".encode()


@pytest.fixture
def cao_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """``cao_config() -> (config path, starts file)``: a config whose ``cao`` entry starts a program
    named cao-mcp-server (the test tool server)."""
    monkeypatch.setenv("CAO_MOCK_BEHAVIOUR_PATH", str(PROGRAMS))
    program = tmp_path / "bin" / "cao-mcp-server"
    program.parent.mkdir()
    program.write_text(f"#!/bin/sh\nexec {sys.executable} {PROGRAMS / 'tool_server.py'}\n", encoding="utf-8")
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    starts = tmp_path / "starts"

    def make() -> tuple[str, Path]:
        config = tmp_path / "rt" / "mcp.json"
        config.parent.mkdir(exist_ok=True)
        config.write_text(json.dumps({"mcpServers": {"cao": {
            "command": str(program), "args": [], "env": {"CAO_TERMINAL_ID": "0123abcd",
                                                          "TOOL_SERVER_STARTS": str(starts)}}}}))
        return str(config), starts

    return make


def _wait_for(path: Path, timeout: float = 20.0) -> str:
    deadline = time.monotonic() + timeout
    while not (path.exists() and path.read_text().strip()):
        assert time.monotonic() < deadline, f"{path} never written"
        time.sleep(0.05)
    return path.read_text()


def ask(agent, text: str, timeout: float = 30.0) -> str:
    agent.send(text.encode() + b"\r")
    return agent.expect(PROMPT, timeout=timeout).decode()


def test_caos_server_starts_with_the_agent_and_serves_its_tools(spawn_pty, cao_config) -> None:
    config, starts = cao_config()
    agent = spawn_pty("--behaviour", "behaviours_for_tests:scripted", "--mcp-config", config)
    agent.expect(PROMPT)
    pid = int(_wait_for(starts).split()[0])  # no input yet: started with the agent
    deadline = time.monotonic() + 30
    while "sum 5" not in (turn := ask(agent, "add")):
        assert "still connecting" in turn, turn
        assert time.monotonic() < deadline, "the handshake never finished"
        time.sleep(0.2)
    assert f"sum 5 from pid {pid} for terminal 0123abcd" in turn
    assert "QUIET PLEASE" in ask(agent, "shout quiet please")
    assert "mcp imported: False" in ask(agent, "sdk")  # the pipe client needs no SDK
    assert starts.read_text().split() == [str(pid)]
    agent.send(b"/exit\r")
    assert agent.wait(timeout=10) == 0
    deadline = time.monotonic() + 5
    while pid_alive(pid):
        assert time.monotonic() < deadline, "cao's MCP server outlived its agent"
        time.sleep(0.05)


def test_a_tool_called_before_the_connection_is_not_available_yet(spawn_pty, cao_config) -> None:
    config, starts = cao_config()
    agent = spawn_pty("--behaviour", "behaviours_for_tests:scripted", "--mcp-config", config,
                      "--mcp-delay-ms", "3000")
    agent.expect(PROMPT)
    early = ask(agent, "add")
    assert (f"{BEHAVIOUR_ERROR_PREFIX}ToolError: No such tool available: add (MCP server 'cao' is still "
            f"connecting)") in early
    assert not starts.exists()  # the delay holds the server back
    _wait_for(starts)
    deadline = time.monotonic() + 30
    while "sum 5" not in ask(agent, "add"):
        assert time.monotonic() < deadline, "the handshake never finished"
        time.sleep(0.2)


def test_the_plain_mock_connects_too_and_checks_its_config(spawn_pty, cao_config, run_piped,
                                                           tmp_path) -> None:
    config, starts = cao_config()
    agent = spawn_pty("--mcp-config", config)
    agent.expect(PROMPT)
    _wait_for(starts)
    assert "> MOCK: hello" in ask(agent, "hello")

    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    done = run_piped(b"", "--mcp-config", str(broken))
    assert done.returncode == 2 and f"MCP config {broken} is not valid JSON" in done.stderr.decode()
    done = run_piped(b"", "--mcp-delay-ms", "soon")
    assert done.returncode == 2
    assert "--mcp-delay-ms needs a whole number of milliseconds" in done.stderr.decode()


@pytest.mark.parametrize(("entry", "cao"), [
    ({"command": "cao-mcp-server"}, True),
    ({"command": "/venv/bin/cao-mcp-server", "args": []}, True),
    ({"command": "uvx", "args": ["--from", "git+https://example.org/cao", "cao-mcp-server"]}, True),
    ({"command": "/usr/bin/python3", "args": ["-m", "cao_kernel", "mcp-server"]}, True),
    ({"command": "python", "args": ["tool_server.py"]}, False),
    ({"command": "uvx", "args": ["other-server"]}, False),
    ({"url": "http://127.0.0.1:9889/mcp"}, False),
])
def test_which_entries_are_caos_server(entry: dict, cao: bool) -> None:
    assert is_cao_server(entry) is cao
