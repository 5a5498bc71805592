"""Inbox delivery and the three orchestration semantics on real tmux with real mock agents."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from cao_hookspecs import CreateTerminalRequest, MessageState, TerminalStatus
from cao_kernel.errors import Conflict, InvalidInput, NotFound
from cao_testkit.waiting import eventually

pytestmark = pytest.mark.tmux


AGENTS = ("supervisor", "developer")


async def _supervisor(kernel, session, workdir):
    return await kernel.create_session(CreateTerminalRequest(
        agent_profile="supervisor", session_name=session, working_directory=workdir))


async def _wait_state(kernel, receiver, message_id, state, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for m in await kernel.list_messages(receiver, limit=100):
            if m.id == message_id and m.state == state:
                return m
        await asyncio.sleep(0.02)
    raise AssertionError(f"message {message_id} never became {state}")


async def test_message_to_idle_terminal_arrives_at_once(make_kernel, workdir):
    async with make_kernel(agents=AGENTS) as kernel:
        a = await _supervisor(kernel, "m1", workdir)
        b = await kernel.create_terminal(CreateTerminalRequest(
            session_name="m1", agent_profile="developer", working_directory=workdir))
        started = time.monotonic()
        message = await kernel.send_message(a.id, b.id, "hello from a")
        assert message.state == MessageState.PENDING and message.id > 0
        await _wait_state(kernel, b.id, message.id, MessageState.DELIVERED, timeout=2)
        assert time.monotonic() - started < 1.0
        await kernel.wait_for_status(b.id, {TerminalStatus.COMPLETED}, timeout=10)
        full = await kernel.get_output(b.id, "full")
        assert "hello from a" in full
        assert f"[Message from terminal {a.id}. Use send_message MCP tool for any follow-up work.]" in full


async def test_message_to_busy_terminal_waits_until_it_finishes(make_kernel, workdir):
    async with make_kernel(agents=AGENTS) as kernel:
        a = await _supervisor(kernel, "m2", workdir)
        b = await kernel.create_terminal(CreateTerminalRequest(
            session_name="m2", agent_profile="developer", working_directory=workdir))
        await kernel.send_input(b.id, "__mock_sleep_1.5")
        message = await kernel.send_message(a.id, b.id, "after your nap")
        await asyncio.sleep(0.5)
        assert (await kernel.list_messages(b.id))[0].state == MessageState.PENDING
        assert "after your nap" not in await kernel.get_output(b.id, "full")
        await _wait_state(kernel, b.id, message.id, MessageState.DELIVERED, timeout=10)
        await kernel.wait_for_status(b.id, {TerminalStatus.COMPLETED}, timeout=10)
        full = await kernel.get_output(b.id, "full")
        assert full.index("slept 1.5s") < full.index("after your nap")


async def test_send_message_defaults_to_caller_and_refuses_self(make_kernel, workdir):
    async with make_kernel(agents=AGENTS) as kernel:
        sup = await _supervisor(kernel, "m3", workdir)
        worker = await kernel.create_terminal(CreateTerminalRequest(
            session_name="m3", agent_profile="developer", working_directory=workdir, caller_id=sup.id))
        reply = await kernel.send_message(worker.id, None, "done: 42")
        assert reply.receiver_id == sup.id
        with pytest.raises(InvalidInput, match="itself"):
            await kernel.send_message(sup.id, sup.id, "me")
        with pytest.raises(InvalidInput, match="no caller"):
            await kernel.send_message(sup.id, None, "who?")
        with pytest.raises(NotFound):
            await kernel.send_message(sup.id, "0badf00d", "nobody")


async def test_handoff_returns_exact_answer_and_leaves_no_worker(make_kernel, workdir, tmux_socket):
    async with make_kernel(agents=AGENTS) as kernel:
        sup = await _supervisor(kernel, "h1", workdir)
        started = time.monotonic()
        result = await kernel.handoff(sup.id, "developer", "summarise the design in one line", timeout=30)
        assert result.success, result.message
        assert result.output == "summarise the design in one line"
        assert result.message.startswith("Successfully handed off to developer (mock_cli) in ")
        assert time.monotonic() - started < 5

        async def worker_removed() -> bool:  # while the answer goes back, the worker is asked to go
            return [t.id for t in await kernel.list_terminals("h1")] == [sup.id]

        await eventually(worker_removed, 10, "the handoff's worker was not removed", interval=0.02)
        windows = subprocess.run(["tmux", "-S", tmux_socket, "list-windows", "-t", "cao-h1", "-F", "#{@cao_id}"],
                                 capture_output=True, text=True).stdout.split()
        assert windows == [sup.id]


async def test_handoff_timeout_keeps_the_worker_and_names_it(make_kernel, workdir):
    async with make_kernel(agents=AGENTS) as kernel:
        sup = await _supervisor(kernel, "h2", workdir)
        result = await kernel.handoff(sup.id, "developer", "__mock_sleep_5", timeout=1)
        assert not result.success
        assert "timed out after 1 seconds" in result.message and result.terminal_id in result.message
        assert result.terminal_id in [t.id for t in await kernel.list_terminals("h2")]


async def test_assign_returns_before_the_worker_is_ready_and_carries_the_callback(make_kernel, workdir):
    async with make_kernel(agents=AGENTS) as kernel:
        sup = await _supervisor(kernel, "a1", workdir)
        result = await kernel.assign(sup.id, "developer", "analyse dataset A")
        assert result.success and result.terminal_id
        worker = await kernel.get_terminal(result.terminal_id)
        assert worker.caller_id == sup.id
        assert worker.status not in (TerminalStatus.IDLE, TerminalStatus.COMPLETED)
        await kernel.wait_for_status(worker.id, {TerminalStatus.COMPLETED}, timeout=10)
        full = await kernel.get_output(worker.id, "full")
        assert "analyse dataset A" in full
        assert (f"[Assigned by terminal {sup.id}. When done, send results back to terminal {sup.id} "
                "using send_message]") in full


async def test_an_assigned_worker_that_dies_mid_task_is_reported_to_its_caller(make_kernel, workdir,
                                                                              tmux_socket):
    async with make_kernel(agents=AGENTS) as kernel:
        sup = await _supervisor(kernel, "a2", workdir)
        result = await kernel.assign(sup.id, "developer", "__mock_sleep_30")
        worker = await kernel.get_terminal(result.terminal_id)
        await kernel.wait_for_status(worker.id, {TerminalStatus.PROCESSING}, timeout=10)
        deadline = time.monotonic() + 10
        while "\u276f [Pasted text: " not in await kernel.get_output(worker.id, "full"):  # it has the task
            assert time.monotonic() < deadline, "the worker never showed its task"
            await asyncio.sleep(0.02)
        pid = subprocess.run(["tmux", "-S", tmux_socket, "display-message", "-p", "-t",
                              f"{worker.session_name}:{worker.name}", "#{pane_pid}"],
                             capture_output=True, text=True, check=True).stdout
        os.kill(int(pid), signal.SIGKILL)
        report = await kernel.wait_for_status(worker.id, {TerminalStatus.ERROR}, timeout=10)

        deadline = time.monotonic() + 10
        while not (notices := [m for m in await kernel.list_messages(sup.id, limit=10)
                               if m.sender_id == worker.id]):
            assert time.monotonic() < deadline, "the caller was never told"
            await asyncio.sleep(0.05)
        [notice] = notices
        expected = f"[cao] Assigned worker {worker.id} (developer) stopped: {report.evidence}."
        assert notice.body.startswith(expected), notice.body
        # What it was doing: the task it had been given, pasted into its prompt.
        assert "\u276f [Pasted text: " in notice.body.split("Its last lines:", 1)[1], notice.body


async def test_messages_survive_a_killed_kernel_exactly_once(make_kernel, workdir, tmux_socket, cao_home):
    """A kernel process is SIGKILLed with messages queued for a busy receiver; the next kernel delivers
    every one of them, each exactly once."""
    script = textwrap.dedent(
        f"""
        import asyncio, sys
        from cao_hookspecs import AgentProfile, CreateTerminalRequest
        from cao_kernel.kernel import Kernel
        from cao_kernel.plugins import LoadPolicy

        async def main():
            k = Kernel(policy=LoadPolicy(only=("tmux", "mock_cli", "inbox_sqlite")), home={str(cao_home)!r},
                       settings={{"CAO_TMUX_SOCKET": {tmux_socket!r}}})
            for name in ("supervisor", "developer"):
                k.add_profile(AgentProfile(name=name, provider="mock_cli"))
            a = await k.create_session(CreateTerminalRequest(
                agent_profile="supervisor", session_name="crash", working_directory={workdir!r}))
            b = await k.create_terminal(CreateTerminalRequest(
                session_name="cao-crash", agent_profile="developer", working_directory={workdir!r}))
            await k.send_input(b.id, "__mock_sleep_2")
            for i in range(3):
                await k.send_message(a.id, b.id, f"token-{{i}}-" + "z" * 10)
            print(b.id, flush=True)
            await asyncio.sleep(60)

        asyncio.run(main())
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        receiver = proc.stdout.readline().strip()
        assert len(receiver) == 8, "child kernel did not start"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
    async with make_kernel(agents=AGENTS) as kernel:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            states = [m.state for m in await kernel.list_messages(receiver, limit=100)]
            if states and all(s == MessageState.DELIVERED for s in states):
                break
            await asyncio.sleep(0.1)
        assert states == [MessageState.DELIVERED] * 3
        await kernel.wait_for_status(receiver, {TerminalStatus.COMPLETED}, timeout=10)
        full = await kernel.get_output(receiver, "full")
        for i in range(3):
            # Typed once: it appears in the echo of the input and in the mock's single answer line.
            assert full.count(f"token-{i}-") == full.count("token-0-")
        assert full.count("> MOCK:") == 2  # the nap, then the three joined messages as one input
        assert os.path.exists(os.path.join(cao_home, "db"))


async def test_a_full_inbox_refuses_new_messages_naming_the_limit(make_kernel, workdir):
    """Messages waiting for a busy terminal are capped by count and by bytes (``cao_kernel.inbox_limits``)."""
    settings = {"CAO_INBOX_MAX_PENDING": "3", "CAO_INBOX_MAX_PENDING_BYTES": "3000"}
    async with make_kernel(agents=AGENTS, **settings) as kernel:
        a = await _supervisor(kernel, "full", workdir)
        b, c = [await kernel.create_terminal(CreateTerminalRequest(
            session_name="full", agent_profile="developer", working_directory=workdir)) for _ in range(2)]
        for busy in (b, c):
            await kernel.send_input(busy.id, "__mock_sleep_30")
            await kernel.wait_for_status(busy.id, {TerminalStatus.PROCESSING}, timeout=10)
        for i in range(3):
            await kernel.send_message(a.id, b.id, f"note {i}")
        with pytest.raises(Conflict, match=f"terminal {b.id} already has 3 messages waiting.*"
                                           "CAO_INBOX_MAX_PENDING=3"):
            await kernel.send_message(a.id, b.id, "one too many")
        # Bytes: two messages of about 1.5 kB fit, a third small one does not.
        for _ in range(2):
            await kernel.send_message(a.id, c.id, "x" * 1400)
        with pytest.raises(Conflict, match="over CAO_INBOX_MAX_PENDING_BYTES=3000"):
            await kernel.send_message(a.id, c.id, "y" * 100)
        pending = await kernel.list_messages(c.id, state=MessageState.PENDING, limit=10)
        assert [len(m.body) > 1400 for m in pending] == [True, True]


async def test_bad_inbox_caps_are_refused_by_name(make_kernel, workdir):
    from cao_kernel.inbox_limits import PendingCap

    with pytest.raises(InvalidInput, match="CAO_INBOX_MAX_PENDING must be a whole number of messages"):
        PendingCap.from_settings({"CAO_INBOX_MAX_PENDING": "lots"})
    assert PendingCap.from_settings({"CAO_INBOX_MAX_PENDING": "0"}).messages == 0


async def test_a_message_at_the_limit_from_a_terminal_is_refused_by_name(make_kernel, workdir):
    from cao_hookspecs.names import MAX_INPUT_BYTES

    request = CreateTerminalRequest(agent_profile="developer", session_name="limit", working_directory=workdir)
    async with make_kernel(agents=("developer",)) as kernel:
        sender = await kernel.create_session(request)
        receiver = await kernel.create_terminal(request)
        # Within the limit alone, over it once cao's sender line is added.
        with pytest.raises(InvalidInput, match="message with its sender line"):
            await kernel.send_message(sender.id, receiver.id, "x" * (MAX_INPUT_BYTES - 10))
        assert await kernel.list_messages(receiver.id) == []
