"""``cao server`` / ``cao-server`` as real subprocesses: address propagation, token file, wildcard binds,
start-up errors, signals and logs."""

from __future__ import annotations

import signal
import socket
import stat

import httpx
import pytest
from cao_server.api_token import read_token, token_path

pytestmark = pytest.mark.tmux


def _http(url: str, token: str | None = None) -> httpx.Client:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.Client(base_url=url, headers=headers, trust_env=False, timeout=30)


def _environ(pid: int) -> dict[str, str]:
    with open(f"/proc/{pid}/environ", "rb") as f:
        pairs = [item.split(b"=", 1) for item in f.read().split(b"\0") if b"=" in item]
    return {k.decode(): v.decode(errors="replace") for k, v in pairs}


def test_port_zero_is_resolved_and_given_to_terminals(spawn_server, tmux, cao_home, workdir):
    process = spawn_server("--port", "0")
    url = process.wait_ready()
    assert url == f"http://127.0.0.1:{process.port}" and process.port > 0
    assert stat.S_IMODE(token_path(cao_home).stat().st_mode) == 0o600
    with _http(url) as anonymous:
        # Loopback too: any local user could otherwise drive the owner's agents.
        assert anonymous.get("/health").json()["status"] == "ok"
        refused = anonymous.post("/sessions",
                                 params={"agent_profile": "developer", "working_directory": workdir})
        assert refused.status_code == 401 and "api-token" in refused.json()["detail"]
        assert anonymous.get("/sessions").status_code == 401
    with _http(url, read_token(cao_home)) as http:
        term = http.post(
            "/sessions",
            params={"agent_profile": "developer", "session_name": "addr", "working_directory": workdir},
        )
        assert term.status_code == 201, term.text
        tid = term.json()["id"]
    pane_pid = int(tmux.run("list-panes", "-t", "cao-addr", "-F", "#{pane_pid}").stdout.split()[0])
    env = _environ(pane_pid)
    # The agent (and any MCP server it starts) calls back to the real address, not the default 9889.
    assert env["CAO_API_PORT"] == str(process.port) and env["CAO_API_HOST"] == "127.0.0.1"
    assert env["CAO_TERMINAL_ID"] == tid
    # uvicorn shuts down gracefully, then exits by the signal it got (the conventional status).
    assert process.stop() == -signal.SIGTERM
    assert "Application shutdown complete" in process.stderr_text()
    assert "cao-addr" in tmux.run("list-sessions", "-F", "#{session_name}").stdout  # terminals outlive it

    again = spawn_server("--port", "0", script="cao-server")
    with _http(again.wait_ready(), read_token(cao_home)) as http:
        adopted = http.get(f"/terminals/{tid}")
        assert adopted.status_code == 200 and adopted.json()["session_name"] == "cao-addr"
    assert again.stop(signal.SIGINT) == 0  # Ctrl-C: graceful, and a normal exit
    assert "cao-server stopped" in again.stderr_text()


def test_port_and_host_settings_are_the_defaults(spawn_server):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        free = probe.getsockname()[1]
    process = spawn_server(CAO_API_PORT=str(free), CAO_API_HOST="localhost")
    assert process.wait_ready() == f"http://localhost:{free}"
    with _http(process.url) as http:
        assert http.get("/health").status_code == 200


def test_wildcard_bind_warns_and_requires_the_token(spawn_server, cao_home, workdir):
    process = spawn_server("--host", "0.0.0.0", "--port", "0")
    url = process.wait_ready()
    assert url.startswith("http://0.0.0.0:")
    assert "reachable from other machines" in process.stderr_text()
    token = read_token(cao_home)
    assert token
    loopback = f"http://127.0.0.1:{process.port}"
    with _http(loopback) as anonymous:
        assert anonymous.get("/sessions").status_code == 401
        assert anonymous.get("/health").status_code == 200
    with _http(loopback, token) as http:
        assert http.get("/sessions").json() == []


def test_a_loopback_server_can_be_opened_as_upstream_is_only_when_asked(spawn_server, cao_home):
    process = spawn_server("--port", "0", CAO_REQUIRE_TOKEN="0")
    with _http(process.wait_ready()) as anonymous:
        assert anonymous.get("/sessions").json() == []
    process.stop()
    wide = spawn_server("--host", "0.0.0.0", "--port", "0", CAO_REQUIRE_TOKEN="0")
    wide.wait_ready()
    with _http(f"http://127.0.0.1:{wide.port}") as anonymous:
        assert anonymous.get("/sessions").status_code == 401  # never off loopback


def test_startup_errors_are_clear_and_leave_nothing_running(spawn_server):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        taken = busy.getsockname()[1]
        process = spawn_server("--port", str(taken))
        assert process.proc.wait(20) != 0
        assert f"cannot listen on http://127.0.0.1:{taken}" in process.stderr_text()
    bad_env = spawn_server(CAO_API_PORT="ninety")
    assert bad_env.proc.wait(20) != 0
    assert "CAO_API_PORT must be a port number" in bad_env.stderr_text()
    bad_host = spawn_server("--host", "no-such-host.invalid", "--port", "0")
    assert bad_host.proc.wait(20) != 0
    assert "cannot listen on 'no-such-host.invalid'" in bad_host.stderr_text()
    bad_port = spawn_server("--port", "70000")
    assert bad_port.proc.wait(20) == 2


def test_server_log_has_access_lines_but_no_message_text(spawn_server, cao_home, workdir):
    process = spawn_server("--port", "0", "--log-level", "debug")
    with _http(process.wait_ready(), read_token(cao_home)) as http:
        tid = http.post(
            "/sessions", params={"agent_profile": "developer", "working_directory": workdir}
        ).json()["id"]
        marker = "private-text-4b1d"
        assert http.post(f"/terminals/{tid}/input", params={"message": f"{marker} query"}).status_code == 200
        assert http.post(f"/terminals/{tid}/input", json={"message": f"{marker} body"}).status_code == 200
        assert http.get(f"/terminals/{tid}/wait", params={"status": "completed"}).status_code == 200
        # A path carrying a line break and an escape sequence cannot forge a log line or reach a terminal.
        http.get("/sessions/x%0aINFO:%20forged%20line%1b[2J")
    process.stop()
    log = process.stderr_text()
    assert f"POST /terminals/{tid}/input 200" in log
    assert marker not in log
    assert not any(line.startswith("INFO: forged") for line in log.splitlines()) and "\x1b" not in log
    assert "/sessions/x\\x0aINFO: forged line\\x1b[2J 4" in log


def test_a_cao_home_open_to_others_is_made_private_when_the_server_starts(spawn_server, cao_home):
    cao_home.chmod(0o755)
    process = spawn_server("--port", "0")
    process.wait_ready()
    assert stat.S_IMODE(cao_home.stat().st_mode) == 0o700
    assert "open to other users" in process.stderr_text()
