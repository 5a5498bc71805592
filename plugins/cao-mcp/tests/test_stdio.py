"""``cao-mcp-server`` over stdio, end to end: the SDK's stdio client starts the real script with the
environment cao gives an agent's MCP server, and the tools drive mock_cli agents through a real
``cao server`` (one per module, private home and tmux socket)."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import tempfile
import time
from typing import Any

import pytest
from cao_hookspecs import CreateTerminalRequest

pytestmark = pytest.mark.tmux

BUILTINS = {"handoff", "assign", "send_message", "delete_terminal", "answer_user_prompt",
            "get_handoff_result"}
ID = re.compile(r"^[0-9a-f]{8}$")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def test_list_tools(server: Any, mcp: Any) -> None:
    async with mcp.stdio(server.mcp_env("0badc0de")) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert BUILTINS <= set(listed)
    handoff = listed["handoff"]
    assert handoff.input_schema["required"] == ["agent_profile", "message"]
    assert handoff.input_schema["properties"]["timeout"]["default"] == 600
    assert "wait" in handoff.description and "assign" in handoff.description
    assign = listed["assign"].description
    assert "inbox" in assign and "end your turn" in assign and "never sleep or poll" in assign
    assert "idle" in listed["send_message"].description
    assert listed["send_message"].input_schema["required"] == ["message"]
    assert "no longer need" in listed["delete_terminal"].description


async def test_handoff_returns_the_workers_answer(server: Any, mcp: Any) -> None:
    async with server.client() as api:
        own = await mcp.agent(server, api)
        async with mcp.stdio(server.mcp_env(own)) as client:
            answer = await mcp.call(client, "handoff", {"agent_profile": "developer",
                                                        "message": "summarise the README in one line"})
        assert not answer.error, answer.text
        assert answer.data["success"] is True
        assert answer.data["output"] == "summarise the README in one line"
        assert "Successfully handed off to developer (mock_cli)" in answer.data["message"]
        worker = answer.data["terminal_id"]
        assert ID.match(worker) and worker != own
        # A handoff worker is removed once its answer is read (while the answer goes back).
        from cao_hookspecs import NotFound
        from cao_testkit.waiting import eventually

        async def removed() -> bool:
            try:
                await api.get_terminal(worker)
            except NotFound:
                return True
            return False

        await eventually(removed, 10, "the handoff's worker was never removed", interval=0.02)


async def test_parallel_handoffs_from_one_agent(server: Any, mcp: Any) -> None:
    """Agent CLIs issue tool calls in parallel: each handoff gets its own worker and its own answer."""
    import asyncio

    async with server.client() as api:
        own = await mcp.agent(server, api)
        async with mcp.stdio(server.mcp_env(own)) as client:
            tasks = [f"part {n} of the review" for n in range(3)]
            calls = [mcp.call(client, "handoff", {"agent_profile": "developer", "message": task})
                     for task in tasks]
            answers = await asyncio.gather(*calls)
    assert [a.data["output"] for a in answers] == tasks
    assert len({a.data["terminal_id"] for a in answers}) == 3


async def test_handoff_without_a_terminal_id_starts_a_fresh_session(server: Any, mcp: Any) -> None:
    async with mcp.stdio(server.mcp_env()) as client:
        answer = await mcp.call(client, "handoff", {"agent_profile": "developer", "message": "ping"})
    assert not answer.error, answer.text
    assert answer.data["output"] == "ping"


async def test_assign_returns_at_once_and_the_worker_gets_the_callback_line(server: Any, mcp: Any) -> None:
    async with server.client() as api:
        own = await mcp.agent(server, api)
        async with mcp.stdio(server.mcp_env(own)) as client:
            started = time.monotonic()
            # slow_worker takes 3 s to answer: a blocking assign could not return before that.
            answer = await mcp.call(client, "assign",
                                    {"agent_profile": "slow_worker", "message": "count the files"})
            elapsed = time.monotonic() - started
        assert not answer.error, answer.text
        assert elapsed < 2.5, f"assign took {elapsed:.2f} s"
        worker = answer.data["terminal_id"]
        assert answer.data["success"] is True and ID.match(worker)
        assert worker in answer.data["message"] and "delete_terminal" in answer.data["message"]
        assert (await api.get_terminal(worker)).caller_id == own

        task = await mcp.delivered(api, worker)
        # The kernel adds the callback line once; the MCP layer must not add a second copy.
        assert task.body == f"count the files\n\n{mcp.callback_line(own)}"
        assert task.sender_id == own
        await api.delete_terminal(worker)


async def test_send_message_waits_until_the_busy_receiver_is_done(server: Any, mcp: Any) -> None:
    async with server.client() as api:
        own = await mcp.agent(server, api)
        receiver = await mcp.agent(server, api)
        async with mcp.stdio(server.mcp_env(own)) as client:
            # A first call connects the MCP server's HTTP client, so the one under test is quick.
            assert (await mcp.call(client, "delete_terminal", {"terminal_id": "deadbeef"})).error
            await api.send_input(receiver, "__mock_sleep_2")
            busy_since = time.monotonic()
            answer = await mcp.call(client, "send_message",
                                    {"receiver_id": receiver, "message": "status update 7"})
        assert not answer.error, answer.text
        data = answer.data
        assert data["success"] is True and data["sender_id"] == own and data["receiver_id"] == receiver
        assert isinstance(data["message_id"], int) and "T" in data["created_at"]
        queued = await mcp.delivered_after_busy(api, receiver, own, "status update 7", busy_since)
        assert queued.id == data["message_id"]


async def test_send_message_without_receiver_goes_to_the_caller(server: Any, mcp: Any) -> None:
    async with server.client() as api:
        own = await mcp.agent(server, api)
        session = (await api.get_terminal(own)).session_name
        worker = await api.create_terminal(CreateTerminalRequest(
            session_name=session, agent_profile="developer", caller_id=own,
            working_directory=str(server.workdir)))
        async with mcp.stdio(server.mcp_env(worker.id)) as client:
            answer = await mcp.call(client, "send_message", {"message": "results: 3 files"})
        assert not answer.error, answer.text
        assert answer.data["receiver_id"] == own and answer.data["sender_id"] == worker.id


async def test_errors_name_the_problem(server: Any, mcp: Any) -> None:
    async with server.client() as api:
        own = await mcp.agent(server, api)
        idle = await mcp.agent(server, api)
        async with mcp.stdio(server.mcp_env(own)) as client:
            for tool in ("handoff", "assign"):
                answer = await mcp.call(client, tool, {"agent_profile": "no_such_agent", "message": "x"})
                assert answer.error and answer.data["success"] is False
                text = answer.data["message"]
                assert "unknown agent profile 'no_such_agent'" in text and "developer" in text, text

            answer = await mcp.call(client, "send_message", {"receiver_id": "deadbeef", "message": "hello"})
            assert answer.error and answer.data == {
                "success": False,
                "error": "receiver terminal deadbeef not found: it does not exist or was deleted",
            }
            answer = await mcp.call(client, "send_message",
                                    {"receiver_id": "Robert'); DROP", "message": "hello"})
            assert answer.error and "invalid receiver_id" in answer.data["error"]
            answer = await mcp.call(client, "send_message", {"receiver_id": idle, "message": "   "})
            assert answer.error and "message must not be empty" in answer.data["error"]

            answer = await mcp.call(client, "delete_terminal", {"terminal_id": "deadbeef"})
            assert answer.error and "deadbeef not found" in answer.data["message"]
            answer = await mcp.call(client, "delete_terminal", {"terminal_id": own})
            assert answer.error and "your own terminal" in answer.data["message"]
            assert (await api.get_terminal(own)).id == own

            answer = await mcp.call(client, "answer_user_prompt", {"terminal_id": idle, "answer": "1"})
            assert answer.error and "not waiting for an answer" in answer.data["message"]

            answer = await mcp.call(client, "handoff",
                                    {"agent_profile": "developer", "message": "x", "timeout": 0})
            assert answer.error and "timeout must be between 1 and 3600" in answer.data["message"]


async def test_handoff_timeout_keeps_the_worker_and_names_it(server: Any, mcp: Any) -> None:
    async with server.client() as api:
        own = await mcp.agent(server, api)
        async with mcp.stdio(server.mcp_env(own)) as client:
            answer = await mcp.call(client, "handoff",
                                    {"agent_profile": "slow_worker", "message": "x", "timeout": 1})
            assert answer.error and answer.data["success"] is False
            worker = answer.data["terminal_id"]
            assert ID.match(worker) and worker in answer.data["message"]
            assert "timed out after 1 seconds" in answer.data["message"]
            assert (await api.get_terminal(worker)).id == worker

            deleted = await mcp.call(client, "delete_terminal", {"terminal_id": worker})
            assert not deleted.error and deleted.data == {
                "success": True, "message": f"Terminal {worker} deleted successfully"}


async def test_caller_identity_problems(server: Any, mcp: Any) -> None:
    task = {"agent_profile": "developer", "message": "x"}
    async with mcp.stdio(server.mcp_env()) as client:
        answer = await mcp.call(client, "assign", task)
        assert answer.error and "CAO_TERMINAL_ID is not set" in answer.data["message"]
        answer = await mcp.call(client, "send_message", {"receiver_id": "deadbeef", "message": "x"})
        assert answer.error and "CAO_TERMINAL_ID is not set" in answer.data["error"]
    async with mcp.stdio(server.mcp_env("NOT-HEX")) as client:
        for tool in ("handoff", "assign"):
            answer = await mcp.call(client, tool, task)
            assert answer.error and "CAO_TERMINAL_ID 'NOT-HEX' is invalid" in answer.data["message"]
    async with mcp.stdio(server.mcp_env("0badc0de")) as client:
        answer = await mcp.call(client, "assign", task)
        assert answer.error
        assert "your terminal 0badc0de (CAO_TERMINAL_ID) is not known" in answer.data["message"]


async def test_server_not_running(server: Any, mcp: Any) -> None:
    env = server.mcp_env("0badc0de", CAO_API_PORT=str(free_port()))
    async with mcp.stdio(env) as client:
        for tool, args, key in (("handoff", {"agent_profile": "developer", "message": "x"}, "message"),
                                ("send_message", {"message": "x"}, "error")):
            answer = await mcp.call(client, tool, args)
            assert answer.error
            assert "cao-server is not running at http://127.0.0.1:" in answer.data[key]
            assert "`cao server`" in answer.data[key]


async def test_hook_cao_register_mcp_tools(server: Any, mcp: Any) -> None:
    """A plugin's tools (from a real entry point) are listed and callable over stdio; a plugin tool named
    like a built-in is refused with a warning, and a plugin tool's exception reaches the agent."""
    with tempfile.TemporaryFile("w+") as errlog:
        async with mcp.stdio(server.mcp_env("0badc0de"), errlog=errlog) as client:
            listed = {tool.name: tool for tool in (await client.list_tools()).tools}
            assert {"caller_profiles", "fail"} <= set(listed)
            assert listed["caller_profiles"].description == "Your terminal id and the profiles cao knows."
            assert "agent_profile" in listed["handoff"].input_schema["properties"]

            answer = await mcp.call(client, "caller_profiles", {"prefix": "dev"})
            assert not answer.error, answer.text
            assert answer.data == {"caller_id": "0badc0de", "profiles": ["developer"]}
            failed = await mcp.call(client, "fail", {"reason": "boom"})
            assert failed.error and "plugin tool failed on purpose: boom" in failed.text
        errlog.seek(0)
        log = errlog.read()
    assert "MCP tool 'handoff' of plugin module 'cao_mcp_test_tools' is refused" in log


def test_stdout_carries_the_protocol_only(server: Any) -> None:
    """Raw JSON-RPC over the script's pipes: every stdout line is a protocol message, although a plugin
    prints while it loads and the server is unreachable."""
    import os
    import sys

    script = os.path.join(os.path.dirname(sys.executable), "cao-mcp-server")
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "t", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "send_message",
                                                                       "arguments": {"message": "x"}}},
    ]
    env = {"PATH": os.environ.get("PATH", ""), **server.mcp_env("0badc0de", CAO_API_PORT=str(free_port()))}
    # stdin stays open until both replies are read: closing it at once would end the session while
    # the tool call is still running.
    proc = subprocess.Popen([script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=env, text=True)
    try:
        proc.stdin.write("".join(json.dumps(r) + "\n" for r in requests))
        proc.stdin.flush()
        lines = [proc.stdout.readline(), proc.stdout.readline()]
        proc.stdin.close()
        proc.wait(timeout=60)
        rest, stderr = proc.stdout.read(), proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            stream.close()
    done = subprocess.CompletedProcess(proc.args, proc.returncode, "".join(lines) + rest, stderr)
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r.get("id") for r in replies] == [1, 2], done.stdout
    assert replies[0]["result"]["serverInfo"]["name"] == "cao-mcp-server"
    assert replies[1]["result"]["isError"] is True
    assert "cao_mcp_test_tools: loaded" in done.stderr
