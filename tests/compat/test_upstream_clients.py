"""Upstream CAO 2.5.4's own programs against a real cao-server, as clients only: its ``cao`` CLI and its
``cao-mcp-server`` (driven over stdio by an MCP client standing in for a supervisor agent) get the
answers they would get from upstream's own server.

Upstream's clients send cao's API token because ``CAO_AUTH_LOCAL_TOKEN`` holds it: they send that
variable as ``Authorization: Bearer`` to their own server's address. Without it they are refused (401).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from cao_testkit.upstream import upstream_env

pytestmark = [pytest.mark.tmux, pytest.mark.slow]


def _cao(upstream: Any, server: Any, home: Path, *args: str, token: bool = True,
         timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = upstream_env(server.url, server.token if token else None, home)
    return subprocess.run([str(upstream.cao), *args], env=env, cwd=server.work, capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL, check=False)


def _poll(check: Any, timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.2)


def test_upstream_cli_launches_lists_sends_and_shuts_down(upstream, cao_server, http, upstream_home):
    launched = _cao(upstream, cao_server, upstream_home, "launch", "--agents", "developer", "--provider",
                    "mock_cli", "--headless", "--session-name", "upcli", "hello from upstream")
    assert launched.returncode == 0, launched.stdout + launched.stderr
    assert "cao-upcli" in launched.stdout and "hello from upstream" in launched.stdout

    listed = _cao(upstream, cao_server, upstream_home, "session", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    rows = {row["session"]: row for row in json.loads(listed.stdout)}
    conductor = rows["cao-upcli"]["conductor"]
    assert conductor["agent_profile"] == "developer" and conductor["provider"] == "mock_cli"
    assert rows["cao-upcli"]["terminal_count"] == 1

    status = _cao(upstream, cao_server, upstream_home, "session", "status", "cao-upcli", "--json")
    assert status.returncode == 0, status.stderr
    shown = json.loads(status.stdout)["conductor"]
    assert shown["id"] == conductor["id"] and shown["status"] in ("idle", "completed")
    assert "hello from upstream" in shown["last_output"]

    sent = _cao(upstream, cao_server, upstream_home, "session", "send", "cao-upcli", "second message")
    assert sent.returncode == 0, sent.stdout + sent.stderr
    assert "second message" in sent.stdout

    down = _cao(upstream, cao_server, upstream_home, "shutdown", "--session", "cao-upcli")
    assert down.returncode == 0, down.stdout + down.stderr
    assert "cao-upcli" in down.stdout
    assert all(s["name"] != "cao-upcli" for s in http.get("/sessions").json())


def test_a_profile_installed_by_upstreams_cli_is_launched_by_cao(upstream, cao_server, http, upstream_home,
                                                               tmp_path):
    # Upstream's `cao install` writes the shared home's local store (it never asks the server); both read
    # <home>/agent-store/<name>.md, so a profile installed by either is served by cao.
    (upstream_home / ".aws").mkdir()
    (upstream_home / ".aws" / "cli-agent-orchestrator").symlink_to(cao_server.home)
    source = tmp_path / "upreviewer.md"
    source.write_text("---\nname: upreviewer\ndescription: Reviews what it is given\n"
                      "provider: mock_cli\n---\nYou review what you are given.\n", encoding="utf-8")
    installed = _cao(upstream, cao_server, upstream_home, "install", str(source))
    assert installed.returncode == 0 and "installed successfully" in installed.stdout, installed.stderr
    profile = http.get("/agents/profiles/upreviewer")
    assert profile.status_code == 200, profile.text
    launched = _cao(upstream, cao_server, upstream_home, "launch", "--agents", "upreviewer", "--headless",
                    "--session-name", "upinst", "look at this")
    assert launched.returncode == 0, launched.stdout + launched.stderr
    assert "look at this" in launched.stdout
    down = _cao(upstream, cao_server, upstream_home, "shutdown", "--session", "cao-upinst")
    assert down.returncode == 0, down.stdout + down.stderr


def test_upstream_cli_without_the_token_is_refused(upstream, cao_server, upstream_home):
    listed = _cao(upstream, cao_server, upstream_home, "session", "list", "--json", token=False)
    assert listed.returncode != 0
    assert "401" in listed.stdout + listed.stderr


async def _mcp_calls(upstream: Any, env: dict[str, str], calls: list[tuple[str, dict[str, Any]]],
                     timeout: float = 90) -> list[dict[str, Any]]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=str(upstream.mcp_server), args=[], env=env)
    answers = []
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        for name, arguments in calls:
            result = await asyncio.wait_for(session.call_tool(name, arguments), timeout)
            assert not result.is_error, result.content
            answers.append(json.loads(result.content[0].text))
    return answers


def test_upstream_mcp_server_hands_off_assigns_and_sends(upstream, cao_server, http, upstream_home):
    made = http.post("/sessions", json={"agent_profile": "developer", "provider": "mock_cli",
                                        "session_name": "upmcp", "working_directory": str(cao_server.work)})
    assert made.status_code == 201, made.text
    sup = made.json()["id"]
    env = upstream_env(cao_server.url, cao_server.token, upstream_home, CAO_TERMINAL_ID=sup)

    handed, assigned = asyncio.run(_mcp_calls(upstream, env, [
        ("handoff", {"agent_profile": "developer", "message": "count the modules", "timeout": 60}),
        ("assign", {"agent_profile": "developer", "message": "analyse part A"}),
    ]))
    # handoff: the worker's answer, and the worker removed.
    assert handed["success"] is True, handed
    assert handed["output"] == "count the modules"
    assert handed["message"].startswith("Successfully handed off to developer (mock_cli)")
    gone = handed["terminal_id"]
    assert _poll(lambda: http.get(f"/terminals/{gone}").status_code == 404)

    # assign: the worker is made at once, recorded with its caller, and gets the task with the callback line.
    assert assigned["success"] is True, assigned
    worker = assigned["terminal_id"]
    assert http.get(f"/terminals/{worker}").json()["caller_id"] == sup
    callback = (f"[Assigned by terminal {sup}. When done, send results back to terminal {sup} "
                "using send_message]")
    assert _poll(lambda: callback in http.get(f"/terminals/{worker}/output").json()["output"]), \
        http.get(f"/terminals/{worker}/output").json()["output"]

    # The worker's send_message without a receiver goes to its caller, queued and then delivered.
    worker_env = upstream_env(cao_server.url, cao_server.token, upstream_home, CAO_TERMINAL_ID=worker)
    (sent,) = asyncio.run(_mcp_calls(upstream, worker_env, [("send_message", {"message": "results: 42"})]))
    assert sent["success"] is True and sent["receiver_id"] == sup and sent["sender_id"] == worker, sent
    assert isinstance(sent["message_id"], int)
    assert _poll(lambda: "results: 42" in http.get(f"/terminals/{sup}/output").json()["output"])
    delivered = http.get(f"/terminals/{sup}/inbox/messages", params={"status": "delivered"}).json()
    assert any(m["id"] == sent["message_id"] for m in delivered), delivered
    http.delete("/sessions/cao-upmcp")


def test_upstream_mcp_handoff_reports_a_worker_that_ran_long(upstream, cao_server, http, upstream_home):
    made = http.post("/sessions", json={"agent_profile": "developer", "provider": "mock_cli",
                                        "session_name": "upslow", "working_directory": str(cao_server.work)})
    sup = made.json()["id"]
    env = upstream_env(cao_server.url, cao_server.token, upstream_home, CAO_TERMINAL_ID=sup)
    (slow,) = asyncio.run(_mcp_calls(upstream, env, [
        ("handoff", {"agent_profile": "developer", "message": "__mock_sleep_5", "timeout": 1})]))
    assert slow["success"] is False and slow["message"] == "Handoff timed out after 1 seconds", slow
    assert slow["terminal_id"] and http.get(f"/terminals/{slow['terminal_id']}").status_code == 200
    http.delete("/sessions/cao-upslow")


def test_upstream_mcp_handoff_without_the_token_fails_cleanly(upstream, cao_server, http, upstream_home):
    made = http.post("/sessions", json={"agent_profile": "developer", "provider": "mock_cli",
                                        "session_name": "upnotoken",
                                        "working_directory": str(cao_server.work)})
    sup = made.json()["id"]
    env = upstream_env(cao_server.url, None, upstream_home, CAO_TERMINAL_ID=sup)
    (refused,) = asyncio.run(_mcp_calls(upstream, env, [
        ("handoff", {"agent_profile": "developer", "message": "x", "timeout": 10})]))
    assert refused["success"] is False and "401" in refused["message"], refused
    assert [t["id"] for t in http.get("/sessions/cao-upnotoken/terminals").json()] == [sup]
    http.delete("/sessions/cao-upnotoken")


def test_upstream_agent_verbs_act_as_the_terminal_they_run_in(upstream, cao_server, http, upstream_home):
    made = http.post("/sessions", json={"agent_profile": "developer", "provider": "mock_cli",
                                        "session_name": "upverbs", "working_directory": str(cao_server.work)})
    sup = made.json()["id"]
    env = upstream_env(cao_server.url, cao_server.token, upstream_home, CAO_TERMINAL_ID=sup)

    def agent(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(upstream.cao), "agent", *args], env=env, cwd=cao_server.work,
                              capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
                              check=False)

    handed = agent("handoff", "developer", "list the open issues", "--timeout", "60", "--json")
    assert handed.returncode == 0, handed.stdout + handed.stderr
    result = json.loads(handed.stdout)
    assert result["success"] is True and result["output"] == "list the open issues", result

    assigned = agent("assign", "developer", "look at part B", "--json")
    assert assigned.returncode == 0, assigned.stdout + assigned.stderr
    worker = json.loads(assigned.stdout)["terminal_id"]
    status = agent("status", worker, "--json")
    assert status.returncode == 0, status.stdout + status.stderr
    assert json.loads(status.stdout)["terminal_id"] == worker

    sent = agent("send-message", "--to", worker, "one more thing", "--json")
    assert sent.returncode == 0, sent.stdout + sent.stderr
    assert _poll(lambda: "one more thing" in http.get(f"/terminals/{worker}/output").json()["output"])
    http.delete("/sessions/cao-upverbs")
