"""A kernel that starts while messages wait for receivers that are idle again types each of them once.

The normal state after any restart under traffic: the previous kernel stopped (SIGTERM or a crash) while
receivers were busy and messages waited for them; by the time the next kernel starts, the receivers are
idle. Re-adopting them makes them ready at once, and nothing may be typed, or settled, twice.
"""

from __future__ import annotations

import asyncio
import re
import subprocess
import time

from cao_hookspecs import CreateTerminalRequest, MessageState, TerminalStatus

RECEIVERS = 8
MESSAGES_EACH = 3
BUSY_SECONDS = 2.0


def _scrollback(tmux_socket: str, session: str, window: str) -> str:
    # Exact names: tmux would otherwise also match a window whose name merely starts with this one.
    target = f"={session}:={window}"
    done = subprocess.run(["tmux", "-S", tmux_socket, "capture-pane", "-p", "-J", "-S", "-", "-t", target],
                          capture_output=True, text=True, timeout=10)
    if done.returncode:
        listed = subprocess.run(["tmux", "-S", tmux_socket, "list-windows", "-a", "-F",
                                 "#{session_name}:#{window_name}"], capture_output=True, text=True, timeout=10)
        raise AssertionError(f"capture of {target} failed: {done.stderr.strip()}; "
                             f"windows: {listed.stdout.split()} {listed.stderr.strip()}")
    return done.stdout


async def _settled(kernel, receivers, wanted: int, timeout: float = 30.0) -> None:
    """Every message delivered, and every receiver done answering."""
    deadline = time.monotonic() + timeout
    while True:
        delivered = 0
        for terminal in receivers:
            delivered += len(await kernel.list_messages(terminal.id, state=MessageState.DELIVERED, limit=100))
        if delivered == wanted:
            break
        assert time.monotonic() < deadline, f"{delivered} of {wanted} messages delivered"
        await asyncio.sleep(0.1)
    for terminal in receivers:
        await kernel.wait_for_status(terminal.id, {TerminalStatus.COMPLETED, TerminalStatus.IDLE}, timeout=10)


async def test_waiting_messages_are_typed_once_when_the_next_kernel_finds_their_receivers_idle(
        make_kernel, workdir, tmux_socket):
    request = CreateTerminalRequest(agent_profile="developer", session_name="restart",
                                    working_directory=workdir)
    async with make_kernel(agents=("developer",)) as kernel:
        receivers = [await kernel.create_session(request)]
        receivers += await asyncio.gather(*(kernel.create_terminal(request) for _ in range(RECEIVERS - 1)))
        for terminal in receivers:
            await kernel.send_input(terminal.id, f"__mock_sleep_{BUSY_SECONDS}")
        busy_until = time.monotonic() + BUSY_SECONDS
        for terminal in receivers:
            await kernel.wait_for_status(terminal.id, {TerminalStatus.PROCESSING}, timeout=5)
        tokens = {terminal.id: [f"note-{terminal.id}-{n}" for n in range(MESSAGES_EACH)]
                  for terminal in receivers}
        for terminal in receivers:
            for token in tokens[terminal.id]:
                await kernel.send_message("tester", terminal.id, token)
        assert time.monotonic() < busy_until, "the receivers were idle before the messages were queued"
    # The kernel is gone, the agents run on; the next one starts once they are all idle again.
    await asyncio.sleep(busy_until - time.monotonic() + 0.5)

    async with make_kernel(agents=("developer",)) as kernel:
        await _settled(kernel, receivers, RECEIVERS * MESSAGES_EACH)
        await asyncio.sleep(0.5)  # a second typing would show by now
        for terminal in receivers:
            rows = [row for row in _scrollback(tmux_socket, terminal.session_name, terminal.name).splitlines()
                    if row.startswith("> MOCK:")]
            for token in tokens[terminal.id]:
                typed = sum(len(re.findall(rf"{token}\b", row)) for row in rows)
                assert typed == 1, f"{token} was typed {typed} times into {terminal.id}: {rows}"
            states = {m.state for m in await kernel.list_messages(terminal.id, limit=100)}
            assert states == {MessageState.DELIVERED}, states
