"""The examples' session follower against a real kernel, real tmux and real mock agents: what it
records must be what happened, even when an agent is faster than its poll."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import pytest

from cao_hookspecs import AgentProfile, MessageState, TerminalStatus

pytestmark = pytest.mark.tmux

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from examples.runner.follow import SessionFollower  # noqa: E402


async def _until_delivered(kernel, receiver, message_id):
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if any(m.id == message_id and m.state == MessageState.DELIVERED
               for m in await kernel.list_messages(receiver, limit=100)):
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"message {message_id} was never delivered")


async def test_a_message_taken_by_a_terminal_deleted_between_two_scans_ends_delivered(make_kernel, workdir):
    kernel = make_kernel()
    for name in ("buyer", "seller"):
        kernel.add_profile(AgentProfile(name=name, provider="mock_cli"))
    async with kernel:
        buyer = await kernel.create_session("buyer", session_name="follow", working_directory=workdir)
        seller = await kernel.create_terminal("follow", "seller", working_directory=workdir)
        await kernel.send_input(seller.id, "__mock_sleep_1")
        message = await kernel.send_message(buyer.id, seller.id, "Offer: 250")
        follower = SessionFollower(kernel, "follow", t0=time.time(), say=lambda *_: None, settle=0.5)
        try:
            await follower._scan()
            assert follower.messages[message.id].states[-1][0] == "pending"
            # Between this scan and the next the seller takes the message, answers it and is deleted.
            await _until_delivered(kernel, seller.id, message.id)
            await kernel.wait_for_status(seller.id, {TerminalStatus.COMPLETED}, timeout=10)
            await kernel.delete_terminal(seller.id)
            await follower._scan()
            assert follower.tracks[seller.id].removed is not None
            assert [state for state, _ in follower.messages[message.id].states] == ["pending", "delivered"]
        finally:
            await follower.close(exit_agents=False)


async def test_a_supervisor_that_finished_before_its_first_status_was_read_counts_as_done(make_kernel, workdir):
    kernel = make_kernel()
    kernel.add_profile(AgentProfile(name="buyer", provider="mock_cli"))
    async with kernel:
        buyer = await kernel.create_session("buyer", session_name="fast", working_directory=workdir)
        await kernel.send_input(buyer.id, "Buy the bike.")
        await kernel.wait_for_status(buyer.id, {TerminalStatus.COMPLETED}, timeout=10)
        follower = SessionFollower(kernel, "fast", t0=time.time(), say=lambda *_: None, settle=0.3)
        started = time.monotonic()
        await follower.run(buyer.id, timeout=10)
        assert time.monotonic() - started < 5
        assert [s for s, _ in follower.tracks[buyer.id].statuses] == ["completed"]
        await follower.close(exit_agents=False)
