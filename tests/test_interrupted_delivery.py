"""A kernel that stopped in the middle of a delivery leaves a record of how far it got, and the next kernel
settles the message from that record: typed once, never twice, never counted as typed when it was not.

Each test stops where a crash would: the message is claimed (``delivering``) and typed, or half typed, or
not typed, and the kernel goes away before marking it delivered. What the receiver really got is counted
in its pane's scrollback (the mock agent's answer rows), not in cao's records.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import time

from cao_hookspecs import CreateTerminalRequest, InputMark, MessageState, TerminalStatus

from .test_restart_delivery import _scrollback


def _answers(tmux_socket: str, terminal, token: str) -> int:
    """How many times the mock agent answered an input that carried ``token``."""
    rows = [row for row in _scrollback(tmux_socket, terminal.session_name, terminal.name).splitlines()
            if row.startswith("> MOCK:")]
    return sum(len(re.findall(rf"{re.escape(token)}\b", row)) for row in rows)


async def _claimed_while_busy(kernel, sender_id: str, receiver, body: str):
    """Queue ``body`` for a busy receiver and claim it as a delivery would, before the engine can."""
    await kernel.send_input(receiver.id, "__mock_sleep_1")
    await kernel.wait_for_status(receiver.id, {TerminalStatus.PROCESSING}, timeout=5)
    queued = await kernel.send_message(sender_id, receiver.id, body)
    claimed = kernel.delivery.store.claim(queued.id)
    assert claimed is not None and claimed.state is MessageState.DELIVERING
    await kernel.wait_for_status(receiver.id, {TerminalStatus.COMPLETED}, timeout=10)
    return claimed


def _pasted_without_enter(kernel, tmux_socket: str, receiver, claimed) -> None:
    """Where a provider with a submit delay stops: the text pasted into the input box, its Enter owed, and
    the pane's record saying so (the kernel stopped between the two)."""
    kernel.terminals.backend.send_text(receiver.id, claimed.body, enter_count=0)
    subprocess.run(["tmux", "-S", tmux_socket, "set-option", "-p", "-t", f"={receiver.session_name}:",
                    "@cao_input", f"{claimed.id} pasted"], check=True, timeout=10)


async def _settled_once(kernel, tmux_socket, receiver, message_id: int, token: str) -> None:
    deadline = time.monotonic() + 15
    while (kernel.delivery.store.get(message_id)).state is not MessageState.DELIVERED:
        assert time.monotonic() < deadline, kernel.delivery.store.get(message_id)
        await asyncio.sleep(0.05)
    await kernel.wait_for_status(receiver.id, {TerminalStatus.COMPLETED, TerminalStatus.IDLE}, timeout=10)
    await asyncio.sleep(0.5)  # a second typing would show by now
    typed = _answers(tmux_socket, receiver, token)
    assert typed == 1, f"{token} typed {typed} times:\n" + _scrollback(tmux_socket, receiver.session_name,
                                                                          receiver.name)


async def test_a_message_typed_just_before_the_crash_is_not_typed_again(make_kernel, workdir, tmux_socket):
    # From a terminal, so the body ends with cao's sender line, and the mock shows the paste collapsed
    # ("[Pasted text: 3 lines]"): the text never appears on screen as it was sent.
    request = CreateTerminalRequest(agent_profile="developer", session_name="typed",
                                    working_directory=workdir)
    async with make_kernel(agents=("developer",)) as kernel:
        sender = await kernel.create_session(request)
        receiver = await kernel.create_terminal(request)
        claimed = await _claimed_while_busy(kernel, sender.id, receiver, "token-typed-once")
        # Typed through the same path a delivery takes; the kernel then stops before marking it.
        await kernel.terminals.deliver(kernel.terminals.live(receiver.id), claimed)
        await kernel.wait_for_status(receiver.id, {TerminalStatus.COMPLETED}, timeout=10)
        assert kernel.delivery.store.get(claimed.id).state is MessageState.DELIVERING
    async with make_kernel(agents=("developer",)) as kernel:
        await _settled_once(kernel, tmux_socket, receiver, claimed.id, "token-typed-once")


async def test_a_claimed_message_that_was_never_typed_is_typed_once(make_kernel, workdir, tmux_socket):
    # An earlier message shares its first 130 characters: the text on screen says nothing about this one.
    shared = "x" * 130
    request = CreateTerminalRequest(agent_profile="developer", session_name="untyped",
                                    working_directory=workdir)
    async with make_kernel(agents=("developer",)) as kernel:
        receiver = await kernel.create_session(request)
        earlier = await kernel.send_message("tester", receiver.id, f"{shared} token-earlier")
        await _settled_once(kernel, tmux_socket, receiver, earlier.id, "token-earlier")
        claimed = await _claimed_while_busy(kernel, "tester", receiver, f"{shared} token-never-typed")
    assert _answers(tmux_socket, receiver, "token-never-typed") == 0
    async with make_kernel(agents=("developer",)) as kernel:
        await _settled_once(kernel, tmux_socket, receiver, claimed.id, "token-never-typed")


async def test_a_message_pasted_without_its_enter_is_submitted_not_typed_again(make_kernel, workdir,
                                                                              tmux_socket):
    request = CreateTerminalRequest(agent_profile="developer", session_name="pasted",
                                    working_directory=workdir)
    async with make_kernel(agents=("developer",)) as kernel:
        receiver = await kernel.create_session(request)
        claimed = await _claimed_while_busy(kernel, "tester", receiver, "token-pasted")
        _pasted_without_enter(kernel, tmux_socket, receiver, claimed)
        await asyncio.sleep(0.3)
        assert _answers(tmux_socket, receiver, "token-pasted") == 0
    async with make_kernel(agents=("developer",)) as kernel:
        await _settled_once(kernel, tmux_socket, receiver, claimed.id, "token-pasted")
        # The owed Enter was recorded with its mark: a kernel stopped right after would not press it again.
        mark = kernel.terminals.backend.input_mark(receiver.id)
        assert mark == InputMark(mark=str(claimed.id), submitted=True)


async def test_a_pasted_input_whose_enter_cannot_be_pressed_fails_without_stopping_the_start(
        make_kernel, workdir, tmux_socket):
    request = CreateTerminalRequest(agent_profile="developer", session_name="stuck",
                                    working_directory=workdir)
    async with make_kernel(agents=("developer",)) as kernel:
        receiver = await kernel.create_session(request)
        claimed = await _claimed_while_busy(kernel, "tester", receiver, "token-stuck")
        _pasted_without_enter(kernel, tmux_socket, receiver, claimed)
        target = f"={receiver.session_name}:"
    # The agent ends before the next kernel can press the Enter it owes.
    pid = subprocess.run(["tmux", "-S", tmux_socket, "display-message", "-p", "-t", target, "#{pane_pid}"],
                         capture_output=True, text=True, check=True, timeout=10).stdout.strip()
    os.kill(int(pid), signal.SIGKILL)
    async with make_kernel(agents=("developer",)) as kernel:
        settled = kernel.delivery.store.get(claimed.id)
        # An attempt that failed: waiting for its retry (or dead), never counted as delivered.
        assert settled.state is not MessageState.DELIVERED, settled
        assert settled.attempts == 1 and "could not submit the pasted input" in settled.last_error, settled
        assert _answers(tmux_socket, receiver, "token-stuck") == 0


class _StopsAfterFirstMark:
    """The store of a kernel that dies between two of a batch's "delivered" writes."""

    def __init__(self, store) -> None:
        self._store, self.marked = store, []

    def __getattr__(self, name):
        return getattr(self._store, name)

    def mark_delivered(self, message_id: int):
        if self.marked:
            raise OSError("the kernel stopped here")
        self.marked.append(message_id)
        return self._store.mark_delivered(message_id)


async def test_a_batch_whose_delivered_writes_were_cut_short_is_not_typed_again(make_kernel, workdir,
                                                                               tmux_socket):
    request = CreateTerminalRequest(agent_profile="developer", session_name="batch",
                                    working_directory=workdir)
    async with make_kernel(agents=("developer",)) as kernel:
        receiver = await kernel.create_session(request)
        await kernel.send_input(receiver.id, "__mock_sleep_1")
        await kernel.wait_for_status(receiver.id, {TerminalStatus.PROCESSING}, timeout=5)
        # Two messages from one sender wait for a busy receiver: they go out as one input.
        first = await kernel.send_message("tester", receiver.id, "token-batch-first")
        second = await kernel.send_message("tester", receiver.id, "token-batch-second")
        store = kernel.delivery.store = _StopsAfterFirstMark(kernel.delivery.store)
        await kernel.wait_for_status(receiver.id, {TerminalStatus.COMPLETED}, timeout=10)
        deadline = time.monotonic() + 10
        while not store.marked:
            assert time.monotonic() < deadline, "the batch was never typed"
            await asyncio.sleep(0.05)
        await kernel.wait_for_status(receiver.id, {TerminalStatus.COMPLETED}, timeout=10)
        assert _answers(tmux_socket, receiver, "token-batch-second") == 1
    async with make_kernel(agents=("developer",)) as kernel:
        for message in (first, second):
            await _settled_once(kernel, tmux_socket, receiver, message.id, message.body)
