"""Messages to a terminal that can never take input are settled: the waiting ones are dead-lettered with
the reason and their senders told, new ones are refused at once, and a restart settles those whose
terminal did not survive it."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import time

import pytest

from cao_hookspecs import CreateTerminalRequest, MessageState, TerminalStatus
from cao_kernel.errors import Conflict, NotFound


def _tmux(socket: str, *args: str) -> str:
    return subprocess.run(["tmux", "-S", socket, *args], capture_output=True, text=True, check=False).stdout


async def _busy_receiver_with_mail(kernel, workdir: str, sender_id: str | None = None):
    """A session whose second terminal is busy for a while, with one message waiting for it."""
    request = CreateTerminalRequest(agent_profile="developer", session_name="dead", working_directory=workdir)
    sender = await kernel.create_session(request)
    receiver = await kernel.create_terminal(request)
    await kernel.send_input(receiver.id, "__mock_sleep_30")
    await kernel.wait_for_status(receiver.id, {TerminalStatus.PROCESSING}, timeout=5)
    waiting = await kernel.send_message(sender_id or sender.id, receiver.id, "wait for me")
    assert waiting.state == MessageState.PENDING
    return sender, receiver, waiting


async def _settled(kernel, receiver_id: str, message_id: int, timeout: float = 10.0):
    """The message once it is delivered or dead."""
    deadline = time.monotonic() + timeout
    while True:
        found = {m.id: m for m in await kernel.list_messages(receiver_id, limit=100)}[message_id]
        if found.state in (MessageState.DELIVERED, MessageState.DEAD):
            return found
        assert time.monotonic() < deadline, f"message {message_id} still {found.state.value}"
        await asyncio.sleep(0.05)


async def test_a_terminal_whose_agent_dies_settles_what_waits_for_it(make_kernel, workdir, tmux_socket):
    async with make_kernel(agents=("developer",)) as kernel:
        sender, receiver, waiting = await _busy_receiver_with_mail(kernel, workdir)
        target = f"{receiver.session_name}:{receiver.name}"
        pid = int(_tmux(tmux_socket, "display-message", "-p", "-t", target, "#{pane_pid}"))
        os.kill(pid, signal.SIGKILL)
        report = await kernel.wait_for_status(receiver.id, {TerminalStatus.ERROR}, timeout=10)

        dead = await _settled(kernel, receiver.id, waiting.id)
        assert dead.state == MessageState.DEAD
        assert f"terminal {receiver.id} cannot take messages: {report.evidence}" in dead.last_error
        notices = [m.body for m in await kernel.list_messages(sender.id, limit=10)]
        assert any(f"Your message {waiting.id} to terminal {receiver.id} could not be delivered" in body
                   for body in notices), notices
        with pytest.raises(Conflict, match=f"terminal {receiver.id} cannot take messages"):
            await kernel.send_message(sender.id, receiver.id, "are you there?")
        assert [m.id for m in await kernel.list_messages(receiver.id, limit=100)] == [waiting.id]


async def test_messages_waiting_when_the_tmux_server_dies_are_dead_lettered(make_kernel, workdir,
                                                                            tmux_socket):
    async with make_kernel(agents=("developer",)) as kernel:
        _, receiver, waiting = await _busy_receiver_with_mail(kernel, workdir, sender_id="tester")
        _tmux(tmux_socket, "kill-server")
        await kernel.wait_for_status(receiver.id, {TerminalStatus.ERROR}, timeout=10)
        dead = await _settled(kernel, receiver.id, waiting.id)
        assert dead.state == MessageState.DEAD and "cannot take messages" in dead.last_error, dead
        with pytest.raises(Conflict):
            await kernel.send_message("tester", receiver.id, "anyone?")


async def test_a_restart_settles_messages_whose_terminal_did_not_survive(make_kernel, workdir, tmux_socket):
    async with make_kernel(agents=("developer",)) as kernel:
        _, receiver, waiting = await _busy_receiver_with_mail(kernel, workdir, sender_id="tester")
    _tmux(tmux_socket, "kill-server")
    async with make_kernel(agents=("developer",)) as kernel:
        dead = await _settled(kernel, receiver.id, waiting.id, timeout=0.1)
        assert dead.state == MessageState.DEAD
        assert dead.last_error == "receiver terminal no longer exists"


async def test_shutting_down_every_session_removes_terminals_the_tmux_server_took_with_it(
        make_kernel, workdir, tmux_socket):
    async with make_kernel(agents=("developer",)) as kernel:
        sender, receiver, _ = await _busy_receiver_with_mail(kernel, workdir, sender_id="tester")
        runtime = [kernel.home.runtime / "terminals" / t.id for t in (sender, receiver)]
        assert all(folder.is_dir() for folder in runtime), runtime
        _tmux(tmux_socket, "kill-server")
        for terminal in (sender, receiver):
            await kernel.wait_for_status(terminal.id, {TerminalStatus.ERROR}, timeout=10)
        # What `cao shutdown --all` does: delete every session the server lists.
        sessions = [s.name for s in await kernel.list_sessions()]
        assert sessions == [sender.session_name]
        assert sorted(await kernel.delete_session(sender.session_name)) == sorted([sender.id, receiver.id])
        assert await kernel.list_sessions() == []
        for terminal in (sender, receiver):
            with pytest.raises(NotFound):
                await kernel.get_terminal(terminal.id)
        assert not any(folder.exists() for folder in runtime), runtime
