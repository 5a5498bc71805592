"""cao's MCP tools over streamable HTTP at ``/mcp`` of a real ``cao server`` (one per module), driven by
the SDK's streamable HTTP client; the caller's terminal id travels in ``X-CAO-Terminal-Id``."""

from __future__ import annotations

import asyncio
import re
import time
from typing import Any

import pytest

pytestmark = pytest.mark.tmux

BUILTINS = {"handoff", "assign", "send_message", "delete_terminal", "answer_user_prompt",
            "get_handoff_result"}
ID = re.compile(r"^[0-9a-f]{8}$")


async def test_http_lists_tools_and_plugin_tools_see_the_header(server: Any, mcp: Any) -> None:
    async with mcp.http(server.mcp_url, "0badc0de", token=server.token) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert BUILTINS | {"caller_profiles", "fail"} <= set(listed)
        assert "agent_profile" in listed["handoff"].input_schema["properties"]
        answer = await mcp.call(client, "caller_profiles", {"prefix": "rev"})
    assert not answer.error, answer.text
    assert answer.data == {"caller_id": "0badc0de", "profiles": ["reviewer"]}


async def test_http_callers_are_told_apart(server: Any, mcp: Any) -> None:
    """Stateless transport, one endpoint: concurrent agents each get their own identity."""

    async def whoami(terminal_id: str) -> str:
        async with mcp.http(server.mcp_url, terminal_id, token=server.token) as client:
            return (await mcp.call(client, "caller_profiles", {"prefix": "x"})).data["caller_id"]

    ids = [f"{n:08x}" for n in range(0xa0, 0xa6)]
    assert await asyncio.gather(*(whoami(i) for i in ids)) == ids


async def test_http_handoff_returns_the_workers_answer(server: Any, mcp: Any) -> None:
    async with server.client() as api:
        own = await mcp.agent(server, api)
        async with mcp.http(server.mcp_url, own, token=server.token, secret=server.secret(own)) as client:
            answer = await mcp.call(client, "handoff",
                                    {"agent_profile": "developer", "message": "list the tests"})
    assert not answer.error, answer.text
    assert answer.data["success"] is True and answer.data["output"] == "list the tests"
    assert ID.match(answer.data["terminal_id"])


async def test_http_assign_returns_at_once_with_the_callback_line(server: Any, mcp: Any) -> None:
    async with server.client() as api:
        own = await mcp.agent(server, api)
        async with mcp.http(server.mcp_url, own, token=server.token, secret=server.secret(own)) as client:
            started = time.monotonic()
            answer = await mcp.call(client, "assign", {"agent_profile": "slow_worker", "message": "lint it"})
            elapsed = time.monotonic() - started
        assert not answer.error, answer.text
        assert elapsed < 2.5, f"assign took {elapsed:.2f} s"
        worker = answer.data["terminal_id"]
        task = await mcp.delivered(api, worker)
        assert task.body == f"lint it\n\n{mcp.callback_line(own)}"
        await api.delete_terminal(worker)


async def test_http_send_message_waits_for_the_busy_receiver(server: Any, mcp: Any) -> None:
    async with server.client() as api:
        own = await mcp.agent(server, api)
        receiver = await mcp.agent(server, api)
        async with mcp.http(server.mcp_url, own, token=server.token, secret=server.secret(own)) as client:
            await api.send_input(receiver, "__mock_sleep_2")
            busy_since = time.monotonic()
            answer = await mcp.call(client, "send_message",
                                    {"receiver_id": receiver, "message": "review done"})
        assert not answer.error, answer.text
        assert answer.data["sender_id"] == own and answer.data["receiver_id"] == receiver
        await mcp.delivered_after_busy(api, receiver, own, "review done", busy_since)


async def test_http_errors_name_the_problem(server: Any, mcp: Any) -> None:
    task = {"agent_profile": "developer", "message": "x"}
    async with mcp.http(server.mcp_url, token=server.token) as client:
        answer = await mcp.call(client, "assign", task)
        assert answer.error and "no X-CAO-Terminal-Id header" in answer.data["message"]
        answer = await mcp.call(client, "send_message", {"message": "x"})
        assert answer.error and "no X-CAO-Terminal-Id header" in answer.data["error"]
    async with mcp.http(server.mcp_url, "../etc", token=server.token) as client:
        answer = await mcp.call(client, "handoff", task)
        assert answer.error and "X-CAO-Terminal-Id '../etc' is invalid" in answer.data["message"]
    async with server.client() as api:
        own = await mcp.agent(server, api)
        async with mcp.http(server.mcp_url, own, token=server.token, secret=server.secret(own)) as client:
            answer = await mcp.call(client, "assign", {"agent_profile": "ghost", "message": "x"})
            assert answer.error and "unknown agent profile 'ghost'" in answer.data["message"]
            answer = await mcp.call(client, "send_message", {"receiver_id": "deadbeef", "message": "x"})
            assert answer.error and "receiver terminal deadbeef not found" in answer.data["error"]
            answer = await mcp.call(client, "handoff",
                                    {"agent_profile": "slow_worker", "message": "x", "timeout": 1})
            assert answer.error and "timed out" in answer.data["message"]
            worker = answer.data["terminal_id"]
            assert ID.match(worker) and worker in answer.data["message"]
            other = await mcp.agent(server, api)  # the user's, not this agent's
            refused = await mcp.call(client, "delete_terminal", {"terminal_id": other})
            assert refused.error and f"terminal {other} was started by the user, not by you" in refused.text
            async with mcp.http(server.mcp_url, other, token=server.token,
                                secret=server.secret(other)) as as_other:
                refused = await mcp.call(as_other, "delete_terminal", {"terminal_id": own})
                assert refused.error and "started by the user" in refused.text  # a peer: never
            assert {t.id for t in await api.list_terminals((await api.get_terminal(own)).session_name)} >= {own}
            deleted = await mcp.call(client, "delete_terminal", {"terminal_id": worker})
            assert not deleted.error, deleted.text
            failed = await mcp.call(client, "fail", {"reason": "over http"})
            assert failed.error and "plugin tool failed on purpose: over http" in failed.text


async def test_a_terminal_named_on_mcp_must_be_proven_with_its_secret(server: Any, mcp: Any) -> None:
    """A forged X-CAO-Terminal-Id (another agent's id, no secret or a wrong one) is refused before any
    tool runs; the terminal's own MCP entry carries the secret that proves it."""
    import httpx2

    async with server.client() as api:
        supervisor = await mcp.agent(server, api)
        receiver = await mcp.agent(server, api)
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "send_message", "arguments": {"receiver_id": receiver, "message": "from your supervisor"}}}
    base = {"Authorization": f"Bearer {server.token}", "X-CAO-Terminal-Id": supervisor,
            "Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    async with httpx2.AsyncClient(timeout=30) as http:
        for forged in ({}, {"X-CAO-Terminal-Secret": "guessed"}):
            answer = await http.post(server.mcp_url, json=call, headers={**base, **forged})
            assert answer.status_code == 403, answer.text
            assert f"names terminal {supervisor}" in answer.json()["detail"]
    async with server.client() as api:
        assert await api.list_messages(receiver) == []
    async with mcp.http(server.mcp_url, supervisor, token=server.token,
                        secret=server.secret(supervisor)) as client:
        sent = await mcp.call(client, "send_message", {"receiver_id": receiver, "message": "really me"})
        assert not sent.error, sent.text


def test_only_caos_own_mcp_entry_is_given_the_secret() -> None:
    from cao_hookspecs import AgentProfile, McpServerSpec
    from cao_kernel import launching

    profile = AgentProfile(name="p", mcp_servers={"cao": {"command": "cao-mcp-server"},
                                                  "other": {"command": "someone-elses-server"}})
    spec = McpServerSpec(name="cao", command=lambda: ("cao-mcp-server", ()),
                         matches=lambda entry: entry.get("command") == "cao-mcp-server")
    entries = launching.mcp_servers(profile, {"CAO_TERMINAL_ID": "0123abcd"}, [spec], "s3cret")
    assert entries["cao"]["env"]["CAO_TERMINAL_SECRET"] == "s3cret"
    assert "CAO_TERMINAL_SECRET" not in entries["other"]["env"]
    assert entries["other"]["env"]["CAO_TERMINAL_ID"] == "0123abcd"


async def test_http_a_supervisor_answers_its_own_workers_prompt_and_no_other(server: Any, mcp: Any) -> None:
    async with server.client() as api:
        own = await mcp.agent(server, api)
        stranger = await mcp.agent(server, api)
        async with mcp.http(server.mcp_url, own, token=server.token, secret=server.secret(own)) as client:
            assigned = await mcp.call(client, "assign", {"agent_profile": "asking_worker", "message": "run: make"})
            worker = assigned.data["terminal_id"]
            deadline = time.monotonic() + 15
            while (prompt := (await api.get_terminal(worker)).prompt) is None:
                assert time.monotonic() < deadline, "the worker never asked"
                await asyncio.sleep(0.05)
            async with mcp.http(server.mcp_url, stranger, token=server.token,
                                secret=server.secret(stranger)) as other:
                refused = await mcp.call(other, "answer_user_prompt", {"terminal_id": worker, "answer": "1"})
            assert refused.error and f"terminal {stranger} may not answer" in refused.data["message"]
            answer = await mcp.call(client, "answer_user_prompt",
                                    {"terminal_id": worker, "answer": "1", "prompt_id": prompt.id})
        assert not answer.error, answer.text
        assert answer.data["prompt_id"] == prompt.id and "with option 1 (Yes)" in answer.data["message"]
        trail = await api.prompt_history(worker)
        assert [(e.kind.value, e.by) for e in trail][:3] == [
            ("opened", ""), ("refused", f"terminal:{stranger}"), ("answered", f"terminal:{own}")]
        await api.delete_terminal(worker)
