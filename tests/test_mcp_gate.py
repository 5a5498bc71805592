"""The MCP readiness gate on real tmux with real mock agents: a worker whose profile gives it cao's MCP
server gets its task only once that server has reported in (``Kernel.mcp_connected``, which cao's ``/mcp``
endpoint calls), within ``CAO_MCP_CONNECT_TIMEOUT``.

The mock agents here really start ``cao-mcp-server`` at start-up, but no cao-server listens at the address
they are given, so nothing reports them in unless a test does, as the endpoint would.
"""

from __future__ import annotations

import asyncio
import re
import socket
import time
from typing import Any

import pytest

from cao_hookspecs import (
    AgentProfile,
    CreateTerminalRequest,
    MessageState,
    RouteSpec,
    TerminalStatus,
    hookimpl,
)
from cao_kernel.errors import InvalidInput, NotFound
from cao_kernel.readiness import McpNotConnected
from cao_testkit.waiting import eventually

pytestmark = pytest.mark.tmux

CAO_MCP = {"cao-mcp-server": {"type": "stdio", "command": "cao-mcp-server", "args": []}}


class McpServer:
    """cao-mcp's record of its MCP server: which profile entries start it, and where it reports in."""

    @hookimpl
    def cao_register_mcp_servers(self) -> list[Any]:
        from cao_mcp.entry import mcp_server_spec

        return [mcp_server_spec()]


class McpEndpoint:
    """Stands for cao-mcp's route: the gate applies only where reports can arrive."""

    @hookimpl
    def cao_register_routes(self) -> list[RouteSpec]:
        return [RouteSpec(name="mcp", path="/mcp", endpoint=lambda kernel: None, asgi=True,
                          methods=("POST",))]


def dead_port() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return str(probe.getsockname()[1])


@pytest.fixture
def gated(make_kernel: Any, register_plugin: Any) -> Any:
    """``gated(timeout, endpoint=True)``: a kernel (not started) with a ``tooled`` profile (cao's MCP
    server) and a ``plain`` one, its gate waiting ``timeout`` seconds."""
    import contextlib

    stack = contextlib.ExitStack()

    def make(timeout: str = "30", endpoint: bool = True) -> Any:
        kernel = make_kernel(CAO_MCP_CONNECT_TIMEOUT=timeout, CAO_API_PORT=dead_port())
        kernel.add_profile(AgentProfile(name="tooled", provider="mock_cli", mcp_servers=CAO_MCP))
        kernel.add_profile(AgentProfile(name="plain", provider="mock_cli"))
        stack.enter_context(register_plugin(kernel, McpServer(), name="mcp_server"))
        if endpoint:
            stack.enter_context(register_plugin(kernel, McpEndpoint(), name="mcp_endpoint"))
        return kernel

    with stack:
        yield make


async def _state(kernel: Any, receiver: str, message_id: int, timeout: float = 10.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        found = [m for m in await kernel.list_messages(receiver, limit=100) if m.id == message_id]
        if found and found[0].state in (MessageState.DELIVERED, MessageState.DEAD):
            return found[0]
        assert time.monotonic() < deadline, f"message {message_id} still {found[0].state if found else '?'}"
        await asyncio.sleep(0.02)


async def _creating_until_idle(kernel: Any, workdir: str, profile: str, session: str) -> tuple[Any, Any]:
    """Start creating a session of ``profile`` and wait (10 s at most) until its agent reads as idle, so
    that from then on only the gate holds the creation back: the pending creation, and the terminal."""
    creating = asyncio.ensure_future(kernel.create_session(CreateTerminalRequest(
        agent_profile=profile, session_name=session, working_directory=workdir)))

    async def idle() -> Any:
        listed = await kernel.list_terminals(session)
        return listed[0] if listed and listed[0].status == TerminalStatus.IDLE else None

    return creating, await eventually(idle, 10, "the agent never became idle", interval=0.05)


async def _sender_and_gated_worker(kernel: Any, workdir: str, session: str) -> tuple[Any, Any]:
    """A plain agent's session, and in it a worker with cao's MCP server, not waited for: the gate holds
    messages to it until its server reports in."""
    sender = await kernel.create_session(CreateTerminalRequest(
        agent_profile="plain", session_name=session, working_directory=workdir))
    worker = await kernel.create_terminal(CreateTerminalRequest(
        session_name=session, agent_profile="tooled", working_directory=workdir), wait_ready=False)
    return sender, worker


class StatusLog:
    """Records every status each terminal went through."""

    def __init__(self) -> None:
        self.seen: dict[str, list[TerminalStatus]] = {}

    @hookimpl
    def cao_after_status_changed(self, terminal: Any, old: Any, new: Any) -> None:
        self.seen.setdefault(terminal.id, []).append(new.status)


async def test_a_handoff_to_a_worker_whose_mcp_never_connects_types_nothing(
        gated: Any, register_plugin: Any, workdir: str) -> None:
    statuses = StatusLog()
    kernel = gated(timeout="1")
    with register_plugin(kernel, statuses, name="status_log"):
        async with kernel:
            caller = await kernel.create_session(CreateTerminalRequest(
                agent_profile="plain", session_name="g1", working_directory=workdir))
            started = time.monotonic()
            with pytest.raises(McpNotConnected) as failed:
                await kernel.handoff(caller.id, "tooled", "the secret task words", timeout=60)
            waited = time.monotonic() - started
            text = str(failed.value)
            worker = re.match(r"terminal ([0-9a-f]{8}) ", text).group(1)  # type: ignore[union-attr]
            assert text.startswith(f"terminal {worker} (mock_cli, profile tooled): cao's MCP server (its "
                                   f"profile's 'cao-mcp-server' entry) did not connect to cao within 1 s")
            assert "typed nothing" in text and "CAO_MCP_CONNECT_TIMEOUT" in text
            assert 1.0 <= waited < 10, waited
            # The agent was up and idle, and never got any input; then it was removed with its window.
            assert TerminalStatus.IDLE in statuses.seen[worker]
            assert TerminalStatus.PROCESSING not in statuses.seen[worker]
            with pytest.raises(NotFound):
                await kernel.get_terminal(worker)
            assert [t.id for t in await kernel.list_terminals("g1")] == [caller.id]


async def test_creation_waits_for_the_gate(gated: Any, workdir: str) -> None:
    """``wait_ready`` means able to act: ``cao launch`` types its task once creation returns."""
    async with gated(timeout="30") as kernel:
        creating, idle = await _creating_until_idle(kernel, workdir, "tooled", "g0")
        await asyncio.sleep(0.5)
        assert not creating.done(), "creation answered before the MCP server reported in"
        await kernel.mcp_connected(idle.id)
        terminal = await asyncio.wait_for(creating, 5)
        assert terminal.id == idle.id


async def test_messages_for_a_terminal_whose_mcp_never_connects_are_refused(gated: Any, workdir: str) -> None:
    async with gated(timeout="1") as kernel:
        sender, created = await _sender_and_gated_worker(kernel, workdir, "g2")
        worker = created.id
        waiting = await kernel.send_message(sender.id, worker, "the first words")
        dead = await _state(kernel, worker, waiting.id)
        assert dead.state == MessageState.DEAD
        assert f"terminal {worker} (mock_cli, profile tooled): cao's MCP server" in dead.last_error
        assert "did not connect to cao within 1 s" in dead.last_error
        notices = [m.body for m in await kernel.list_messages(sender.id, limit=10)]
        assert any(f"to terminal {worker} could not be delivered" in body for body in notices), notices
        # Sent after the wait ran out: refused at once, with the same reason.
        later = await kernel.send_message(sender.id, worker, "are you there?")
        assert "did not connect" in (await _state(kernel, worker, later.id, timeout=2)).last_error
        screen = await kernel.get_output(worker, "full")
        assert "the first words" not in screen and "are you there?" not in screen
        assert (await kernel.get_status(worker)).status == TerminalStatus.IDLE

        # A report arriving late opens the gate after all.
        await kernel.mcp_connected(worker)
        late = await kernel.send_message(sender.id, worker, "better late")
        assert (await _state(kernel, worker, late.id)).state == MessageState.DELIVERED


async def test_a_message_queued_before_the_mcp_connects_is_delivered_after(gated: Any, workdir: str) -> None:
    async with gated(timeout="30") as kernel:
        sender, worker = await _sender_and_gated_worker(kernel, workdir, "g3")
        queued = await kernel.send_message(sender.id, worker.id, "wait for your tools")
        deadline = time.monotonic() + 10
        while (await kernel.get_status(worker.id)).status != TerminalStatus.IDLE:
            assert time.monotonic() < deadline
            await asyncio.sleep(0.05)
        await asyncio.sleep(1.0)  # the agent itself is ready: only the gate holds the message
        assert (await kernel.list_messages(worker.id))[0].state == MessageState.PENDING
        assert "wait for your tools" not in await kernel.get_output(worker.id, "full")

        reported = time.monotonic()
        await kernel.mcp_connected(worker.id)  # what cao's /mcp does when the agent lists the tools
        assert (await _state(kernel, worker.id, queued.id, timeout=5)).state == MessageState.DELIVERED
        assert time.monotonic() - reported < 1.0
        await kernel.wait_for_status(worker.id, {TerminalStatus.COMPLETED}, timeout=10)
        assert "> MOCK: wait for your tools" in await kernel.get_output(worker.id, "full")
        await kernel.mcp_connected(worker.id)  # a second report changes nothing
        with pytest.raises(NotFound):
            await kernel.mcp_connected("0badf00d")


async def test_a_terminal_without_cao_mcp_is_not_delayed(gated: Any, workdir: str) -> None:
    async with gated(timeout="30") as kernel:
        caller = await kernel.create_session(CreateTerminalRequest(
            agent_profile="plain", session_name="g9", working_directory=workdir))
        started = time.monotonic()
        result = await kernel.handoff(caller.id, "plain", "quick one", timeout=30)
        assert result.success and result.output == "quick one"
        assert time.monotonic() - started < 3.0
        other = await kernel.create_terminal(CreateTerminalRequest(
            session_name="g9", agent_profile="plain", working_directory=workdir))
        started = time.monotonic()
        message = await kernel.send_message(caller.id, other.id, "no tools needed")
        assert (await _state(kernel, other.id, message.id, timeout=5)).state == MessageState.DELIVERED
        assert time.monotonic() - started < 1.0


async def test_assign_to_a_worker_whose_mcp_never_connects_tells_the_caller(gated: Any, workdir: str) -> None:
    async with gated(timeout="1") as kernel:
        caller = await kernel.create_session(CreateTerminalRequest(
            agent_profile="plain", session_name="g4", working_directory=workdir))
        assigned = await kernel.assign(caller.id, "tooled", "count the files")
        assert assigned.success
        worker = assigned.terminal_id
        deadline = time.monotonic() + 15
        while not [m for m in await kernel.list_messages(caller.id, limit=20) if "failed to start" in m.body]:
            assert time.monotonic() < deadline, "the caller was never told"
            await asyncio.sleep(0.05)
        (notice,) = [m.body for m in await kernel.list_messages(caller.id, limit=20)
                     if "failed to start" in m.body]
        assert notice.startswith(f"[cao] Assigned worker {worker} (tooled) failed to start: "
                                 f"terminal {worker}")
        assert "did not connect to cao within 1 s" in notice
        with pytest.raises(NotFound):
            await kernel.get_terminal(worker)
        (task,) = await kernel.list_messages(worker)
        assert task.state == MessageState.DEAD and task.body.startswith("count the files")


@pytest.mark.parametrize("how", ["no endpoint", "timeout 0"])
async def test_no_gate_where_nothing_can_report_or_when_turned_off(gated: Any, workdir: str,
                                                                  how: str) -> None:
    kernel = gated(timeout="0") if how == "timeout 0" else gated(timeout="30", endpoint=False)
    async with kernel:
        sender = await kernel.create_session(CreateTerminalRequest(
            agent_profile="plain", session_name="g5", working_directory=workdir))
        worker = await kernel.create_terminal(CreateTerminalRequest(
            session_name="g5", agent_profile="tooled", working_directory=workdir))  # not held
        message = await kernel.send_message(sender.id, worker.id, "straight in")
        assert (await _state(kernel, worker.id, message.id, timeout=5)).state == MessageState.DELIVERED


async def test_a_bad_timeout_setting_is_refused_before_anything_starts(gated: Any, workdir: str) -> None:
    async with gated(timeout="soon") as kernel:
        refused = r"CAO_MCP_CONNECT_TIMEOUT must be a number of seconds.*'soon'"
        with pytest.raises(InvalidInput, match=refused):
            await kernel.create_session(CreateTerminalRequest(
                agent_profile="tooled", session_name="g6", working_directory=workdir))
        assert await kernel.list_sessions() == []
        plain = await kernel.create_session(CreateTerminalRequest(
            agent_profile="plain", session_name="g7", working_directory=workdir))
        assert plain.agent_profile == "plain"


class SlowToOfferTools:
    """The mock agent registered again as a CLI that needs a moment after reading cao's tool list."""

    def __init__(self, kernel: Any, settle: float) -> None:
        import attrs

        mock = kernel.provider("mock_cli")
        self.spec = attrs.evolve(mock, name="mock_settling",
                                 capabilities=attrs.evolve(mock.capabilities, mcp_settle=settle))

    @hookimpl
    def cao_register_providers(self) -> list[Any]:
        return [self.spec]


async def test_the_gate_opens_a_providers_settle_time_after_the_report(gated: Any, register_plugin: Any,
                                                                        workdir: str) -> None:
    """Claude Code marks a server connected a moment after reading its lists: the gate waits that long."""
    kernel = gated(timeout="30")
    with register_plugin(kernel, SlowToOfferTools(kernel, 0.6), name="settling"):
        kernel.add_profile(AgentProfile(name="settling", provider="mock_settling", mcp_servers=CAO_MCP))
        async with kernel:
            creating, idle = await _creating_until_idle(kernel, workdir, "settling", "g7")
            started = time.monotonic()
            reporting = asyncio.ensure_future(kernel.mcp_connected(idle.id))
            await asyncio.sleep(0.4)
            assert not creating.done(), "the gate opened before the provider's settle time"
            await asyncio.wait_for(reporting, 5)
            terminal = await asyncio.wait_for(creating, 5)
            assert terminal.id == idle.id and time.monotonic() - started >= 0.6


async def test_the_settle_setting_replaces_every_providers_own(gated: Any, register_plugin: Any,
                                                               workdir: str) -> None:
    kernel = gated(timeout="30")
    kernel.settings["CAO_MCP_SETTLE"] = "0"
    with register_plugin(kernel, SlowToOfferTools(kernel, 5.0), name="settling"):
        kernel.add_profile(AgentProfile(name="settling", provider="mock_settling", mcp_servers=CAO_MCP))
        async with kernel:
            creating, idle = await _creating_until_idle(kernel, workdir, "settling", "g8")
            started = time.monotonic()
            await kernel.mcp_connected(idle.id)
            await asyncio.wait_for(creating, 5)
            assert time.monotonic() - started < 1.0, "the provider's own settle was waited"
            steps = {e.name: e for e in await kernel.get_timeline(idle.id)}
            assert steps["gate_open"].detail["settle"] == "0"
    for bad in ("-1", "soon", "11"):
        refused = gated(timeout="30")
        refused.settings["CAO_MCP_SETTLE"] = bad
        with pytest.raises(InvalidInput, match="CAO_MCP_SETTLE must be a number of seconds from 0 to 10"):
            await refused.start()
        await refused.aclose()


class OwnMcpServer:
    """A plugin's own MCP server, named by its own record and reporting in through its own route."""

    @hookimpl
    def cao_register_mcp_servers(self) -> list[Any]:
        from cao_hookspecs import McpServerSpec

        return [McpServerSpec(name="own", matches=lambda entry: entry.get("command") == "own-mcp",
                              command=lambda: ("/opt/own/bin/own-mcp", ("--stdio",)),
                              env_settings=("CAO_OWN_ADDRESS", "CAO_OWN_UNSET"), report_route="own")]

    @hookimpl
    def cao_register_routes(self) -> list[RouteSpec]:
        return [RouteSpec(name="own", path="/own-mcp", endpoint=lambda kernel: None, asgi=True,
                          methods=("POST",))]


async def test_hook_cao_register_mcp_servers(make_kernel: Any, register_plugin: Any, workdir: str) -> None:
    """The kernel knows cao's MCP server only from the records plugins register: a matching profile entry
    gets the record's command, every entry the settings it names, and the terminal waits for a report
    through the record's route."""
    import attrs

    kernel = make_kernel(CAO_OWN_ADDRESS="127.0.0.1:7", CAO_MCP_CONNECT_TIMEOUT="30")
    kernel.add_profile(AgentProfile(name="owned", provider="mock_cli", mcp_servers={
        "tools": {"command": "own-mcp"}, "other": {"command": "other-server", "env": {"KEEP": "1"}}}))
    seen: dict[str, Any] = {}
    with register_plugin(kernel, OwnMcpServer(), name="own"):
        mock = kernel.provider("mock_cli")

        def spy_launch(ctx: Any) -> Any:
            seen.update(ctx.mcp_servers)
            return mock.launch(attrs.evolve(ctx, mcp_servers={}))  # the entries name no real program

        kernel.providers["mock_cli"] = attrs.evolve(mock, launch=spy_launch)
        async with kernel:
            creating, idle = await _creating_until_idle(kernel, workdir, "owned", "own")
            await asyncio.sleep(0.3)
            assert not creating.done(), "the terminal did not wait for its MCP server to report in"
            await kernel.mcp_connected(idle.id)
            terminal = await asyncio.wait_for(creating, 5)
    assert seen["tools"]["command"] == "/opt/own/bin/own-mcp" and seen["tools"]["args"] == ["--stdio"]
    assert seen["other"]["command"] == "other-server" and seen["other"]["env"]["KEEP"] == "1"
    for entry in seen.values():
        assert entry["env"]["CAO_TERMINAL_ID"] == terminal.id
        assert entry["env"]["CAO_OWN_ADDRESS"] == "127.0.0.1:7" and "CAO_OWN_UNSET" not in entry["env"]


class WithoutMcpClient:
    """The mock agent registered again as a CLI that has no MCP client (Aider)."""

    def __init__(self, kernel: Any) -> None:
        import attrs

        mock = kernel.provider("mock_cli")
        self.spec = attrs.evolve(mock, name="mock_no_mcp",
                                 capabilities=attrs.evolve(mock.capabilities, mcp_client=False))

    @hookimpl
    def cao_register_providers(self) -> list[Any]:
        return [self.spec]


FAILING = """async def fail(turn):
    raise RuntimeError("the disk is full")
"""


async def test_a_cli_without_mcp_client_is_not_gated_and_its_assigned_answer_is_relayed(
        gated: Any, register_plugin: Any, workdir: str) -> None:
    """Nothing ever reports in for a CLI without an MCP client: it starts without waiting. An assign to it
    gets no callback line (the worker could never call send_message); cao waits for the end of its turn
    and queues its last message to the caller as the worker's own message, or what went wrong."""
    from pathlib import Path

    from cao_kernel.delivery import sender_suffix

    Path(workdir, "relay_behaviours.py").write_text(FAILING)
    kernel = gated(timeout="30")
    with register_plugin(kernel, WithoutMcpClient(kernel), name="no_mcp"):
        kernel.add_profile(AgentProfile(name="leaf", provider="mock_no_mcp", mcp_servers=CAO_MCP,
                                        extra={"mockBehaviour": "echo"}))
        kernel.add_profile(AgentProfile(name="broken", provider="mock_no_mcp",
                                        extra={"mockBehaviour": "relay_behaviours:fail"}))
        async with kernel:
            boss = await asyncio.wait_for(kernel.create_session(CreateTerminalRequest(
                agent_profile="leaf", session_name="g8", working_directory=workdir)), 10)
            assert boss.provider == "mock_no_mcp"
            done = await kernel.assign(boss.id, "leaf", "Count the files.")
            assert done.success, done.message
            worker = done.terminal_id

            async def from_(sender: str) -> list[str]:
                messages = await kernel.list_messages(boss.id, limit=50)
                return [m.body for m in messages if m.sender_id == sender]

            relayed = await eventually(lambda: from_(worker), timeout=20)
            assert relayed == [f"Count the files.\n\n{sender_suffix(worker)}"]
            [task] = [m.body for m in await kernel.list_messages(worker, limit=10)]
            assert task == "Count the files."  # no callback line the worker could not follow

            failing = await kernel.assign(boss.id, "broken", "Write the report.")
            [notice] = await eventually(lambda: from_(failing.terminal_id), timeout=20)
            assert notice.startswith(f"[cao] Assigned worker {failing.terminal_id} (broken) failed: ")
            assert "the disk is full" in notice and notice.endswith(sender_suffix(failing.terminal_id))
