"""``HttpKernel`` against a real server: every ``KernelAPI`` method, its errors, and ``connect``."""

from __future__ import annotations

import inspect
import socket

import pytest
from cao_hookspecs import (
    AgentFailed,
    Conflict,
    CreateTerminalRequest,
    InvalidInput,
    KernelAPI,
    MessageState,
    NotFound,
    OrchestrationType,
    TerminalStatus,
    Timeout,
)
from cao_provider_mock.contract import reply_payload
from cao_server.api_token import ensure_token
from cao_server.client import HttpKernel, ServerNotRunning, connect
from cao_server.errors import BadParameter, Unauthorized
from cao_testkit.serve import serve_in_thread

READY = {TerminalStatus.IDLE, TerminalStatus.COMPLETED}


async def _eventually(read, timeout: float = 10.0):
    """Await ``read()`` until it returns something truthy."""
    import asyncio
    import time

    deadline = time.monotonic() + timeout
    while not (value := await read()):
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.02)
    return value


def test_http_kernel_has_every_kernel_api_method_with_the_same_signature():
    protocol_methods = {
        name for name, _ in inspect.getmembers(KernelAPI, inspect.isfunction) if not name.startswith("_")
    }
    assert protocol_methods  # the comparison below must not be vacuous
    for name in sorted(protocol_methods):
        ours = inspect.signature(getattr(HttpKernel, name))
        theirs = inspect.signature(getattr(KernelAPI, name))
        assert inspect.iscoroutinefunction(getattr(HttpKernel, name)), name
        ours_params = list(ours.parameters.values())
        for expected in theirs.parameters.values():
            found = ours.parameters.get(expected.name)
            assert found is not None, f"{name} lacks {expected.name}"
            assert (found.kind, found.default) == (expected.kind, expected.default), f"{name}.{expected.name}"
        # Anything extra must be optional keyword-only, so Protocol-typed callers never notice.
        for extra in ours_params:
            if extra.name not in theirs.parameters:
                assert (
                    extra.kind is inspect.Parameter.KEYWORD_ONLY
                    and extra.default is not inspect.Parameter.empty
                )
    assert isinstance(HttpKernel("http://127.0.0.1:1"), KernelAPI)


async def test_ping_reports_a_missing_server_by_address():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    async with HttpKernel(f"http://127.0.0.1:{port}") as client:
        with pytest.raises(ServerNotRunning) as caught:
            await client.ping()
        assert str(caught.value) == (
            f"no cao-server is running at http://127.0.0.1:{port}; start it with `cao server`"
        )
        with pytest.raises(ServerNotRunning):
            await client.list_sessions()


def test_connect_builds_the_address_and_reads_the_token(cao_home):
    client = connect({"CAO_HOME_DIR": str(cao_home)})
    assert client.base_url == "http://127.0.0.1:9889" and client.token is None
    token = ensure_token(cao_home)
    client = connect({"CAO_HOME_DIR": str(cao_home), "CAO_API_HOST": "::1", "CAO_API_PORT": "9001"})
    assert client.base_url == "http://[::1]:9001" and client.token == token
    assert connect({"CAO_API_HOST": "0.0.0.0", "CAO_API_PORT": "5"}).base_url == "http://127.0.0.1:5"
    with pytest.raises(InvalidInput, match="CAO_API_PORT"):
        connect({"CAO_API_PORT": "http"})


@pytest.mark.tmux
async def test_every_method_over_http(server, workdir, cao_home):
    async with HttpKernel(server.url) as k:
        assert (await k.ping())["status"] == "ok"
        sup = await k.create_session(CreateTerminalRequest(
            agent_profile="developer", session_name="cli", working_directory=workdir,
            allowed_tools=["fs_read"], env={"PROJECT": "x"}))
        assert (
            sup.status == TerminalStatus.IDLE
            and sup.session_name == "cao-cli"
            and sup.allowed_tools == ("fs_read",)
        )
        assert sup.created_at > 0 and sup.provider == "mock_cli"
        assert [s.name for s in await k.list_sessions()] == ["cao-cli"]
        info, members = await k.get_session("cli")
        assert info.name == "cao-cli" and [t.id for t in members] == [sup.id]
        assert (await k.get_terminal(sup.id)).id == sup.id
        assert await k.working_directory(sup.id) == workdir

        await k.send_input(sup.id, "hello over http")
        report = await k.wait_for_status(sup.id, {TerminalStatus.COMPLETED}, timeout=10)
        assert report.status == TerminalStatus.COMPLETED and report.evidence and report.since
        assert await k.get_output(sup.id, "last") == "hello over http"
        assert "MockCli ready." in await k.get_output(sup.id)
        assert (await k.get_status(sup.id)).status == TerminalStatus.COMPLETED
        await k.send_keys(sup.id, "Enter")

        worker = await k.create_terminal(CreateTerminalRequest(
            session_name="cli", agent_profile="reviewer", caller_id=sup.id, working_directory=workdir))
        assert worker.caller_id == sup.id and worker.agent_profile == "reviewer"
        assert [t.id for t in await k.list_terminals("cli")] == [sup.id, worker.id]
        sent = await k.send_message(worker.id, None, "report: all good")
        assert (
            sent.receiver_id == sup.id and sent.sender_id == worker.id and sent.state == MessageState.PENDING
        )
        assert "report: all good" in sent.body
        delivered = await _eventually(lambda: k.list_messages(sup.id, state=MessageState.DELIVERED))
        assert [m.id for m in delivered] == [sent.id] and delivered[0].created_at > 0
        from_user = await k.send_message("operator", worker.id, "from a person", idempotency_key="op-1")
        assert from_user.sender_id == "operator" and from_user.body == "from a person"
        assert (
            await k.send_message("operator", worker.id, "from a person", idempotency_key="op-1")
        ).id == from_user.id

        task = "summarise the design in one line"
        handed = await k.handoff(sup.id, "developer", task, timeout=30)
        assert (
            handed.success
            and handed.kind == OrchestrationType.HANDOFF
            and handed.output == reply_payload(task)
        )
        assert handed.duration > 0 and handed.caller_id == sup.id
        assigned = await k.assign(sup.id, "developer", "analyse dataset A")
        assert assigned.success and assigned.terminal_id and assigned.kind == OrchestrationType.ASSIGN
        await k.wait_for_status(assigned.terminal_id, {TerminalStatus.COMPLETED}, timeout=15)
        with pytest.raises(Conflict, match="not waiting"):
            await k.answer_user_prompt(sup.id, "yes")

        profiles = await k.list_profiles()
        assert {"developer", "reviewer"} <= {p.name for p in profiles}
        developer = await k.get_profile("developer")
        assert (
            developer.name == "developer"
            and developer.mcp_servers["cao-mcp-server"]["command"] == "cao-mcp-server"
        )
        assert any(p["name"] == "mock_cli" for p in await k.list_providers())
        installed = await k.install_profile("reviewer", env=["TEAM=core"])
        assert installed["agent_name"] == "reviewer" and (cao_home / "agent-store" / "reviewer.md").exists()

        await k.exit_terminal(worker.id)
        await k.wait_for_status(worker.id, {TerminalStatus.ERROR}, timeout=10)
        await k.delete_terminal(worker.id)
        deleted = await k.delete_session("cao-cli")
        assert sup.id in deleted
        assert await k.list_sessions() == [s for s in await k.list_sessions() if s.name != "cao-cli"]


@pytest.mark.tmux
async def test_errors_come_back_as_the_same_classes(server, workdir):
    async with HttpKernel(server.url, timeout=10) as k:
        term = await k.create_session(CreateTerminalRequest(
            agent_profile="developer", session_name="errs", working_directory=workdir))
        with pytest.raises(NotFound):
            await k.get_terminal("0badf00d")
        with pytest.raises(InvalidInput, match="8 lowercase hex"):
            await k.get_terminal("../sessions")
        with pytest.raises(InvalidInput):
            await k.get_session("a/b")
        with pytest.raises(Conflict, match="already exists"):
            await k.create_session(CreateTerminalRequest(
                agent_profile="developer", session_name="errs", working_directory=workdir))
        with pytest.raises(NotFound):
            await k.get_profile("nosuch")
        with pytest.raises(InvalidInput, match="invalid key"):
            await k.send_keys(term.id, "Enter; rm")
        with pytest.raises(BadParameter):
            await k.get_output(term.id, "middle")
        await k.send_input(term.id, "__mock_sleep_3")
        with pytest.raises(Timeout):
            await k.wait_for_status(term.id, {TerminalStatus.COMPLETED}, timeout=0.3)
        with pytest.raises(InvalidInput, match="no receiver"):
            await k.send_message("operator", None, "to nobody")
        with pytest.raises(InvalidInput, match="KEY=VALUE"):
            await k.install_profile("reviewer", env=["novalue"])
        await k.send_keys(term.id, "C-c")
        await k.exit_terminal(term.id)
        assert (
            await k.wait_for_status(term.id, {TerminalStatus.ERROR}, timeout=10)
        ).status == TerminalStatus.ERROR
        with pytest.raises(AgentFailed):
            await k.wait_for_status(term.id, READY, timeout=10)
        with pytest.raises(Conflict):
            await k.send_input(term.id, "anyone?")


@pytest.mark.tmux
async def test_handoff_without_caller_and_long_waits_split(server, workdir, monkeypatch):
    import cao_server.client as client_module

    monkeypatch.chdir(workdir)
    # Waits longer than the server's limit are split into several long-polls.
    monkeypatch.setattr(client_module, "MAX_WAIT", 0.2)
    async with HttpKernel(server.url) as k:
        result = await k.handoff(None, "developer", "no caller here", timeout=20)
        assert result.success and result.output == "no caller here" and result.caller_id is None
        term = await k.create_session(CreateTerminalRequest(
            agent_profile="developer", working_directory=workdir))
        await k.send_input(term.id, "__mock_sleep_1")
        report = await k.wait_for_status(term.id, {TerminalStatus.COMPLETED}, timeout=5)
        assert report.status == TerminalStatus.COMPLETED


@pytest.mark.tmux
async def test_token_is_sent_when_bound_off_loopback(make_kernel, cao_home, workdir):
    token = ensure_token(cao_home)
    with serve_in_thread(make_kernel(), host="0.0.0.0", token=token) as running:
        async with HttpKernel(running.url) as anonymous:
            assert (await anonymous.ping())["status"] == "ok"
            with pytest.raises(Unauthorized, match="API token"):
                await anonymous.list_sessions()
        async with connect(
            {"CAO_HOME_DIR": str(cao_home), "CAO_API_HOST": "0.0.0.0", "CAO_API_PORT": str(running.port)}
        ) as k:
            assert await k.list_sessions() == []
