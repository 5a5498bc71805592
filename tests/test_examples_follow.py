"""The examples' session follower against a real cao-server (real uvicorn, real tmux, real mock agents):
what it records must be what happened, even when an agent is faster than anyone could poll."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from cao_hookspecs import CreateTerminalRequest, TerminalStatus
from cao_testkit.waiting import eventually

pytestmark = pytest.mark.tmux

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from examples.runner.follow import SessionFollower  # noqa: E402


@pytest.fixture
def server_url(make_kernel):
    from cao_testkit.serve import serve_in_thread

    with serve_in_thread(make_kernel(agents=("buyer", "seller"))) as running:
        yield running.url


async def test_a_worker_that_lives_between_two_polls_is_followed_whole(server_url, workdir):
    from cao_server.client import HttpKernel

    async with HttpKernel(server_url) as api:
        buyer = await api.create_session(CreateTerminalRequest(
            agent_profile="buyer", session_name="follow", working_directory=workdir))
        follower = SessionFollower(api, "cao-follow", t0=time.time(), say=lambda *_: None, settle=0.5)
        await follower.start()
        try:
            # Created, handed a message, answering it and deleted, all without a pause.
            seller = await api.create_terminal(CreateTerminalRequest(
                session_name="cao-follow", agent_profile="seller", working_directory=workdir))
            message = await api.send_message(buyer.id, seller.id, "Offer: 250")
            await api.wait_for_status(seller.id, [TerminalStatus.COMPLETED], timeout=10)
            await api.delete_terminal(seller.id)
            def removed() -> bool:
                return seller.id in follower.tracks and follower.tracks[seller.id].removed is not None

            await eventually(removed, 10.0, "the seller followed to its removal", interval=0.02)
            track = follower.tracks[seller.id]
            assert track.profile == "seller" and track.caller_id is None
            statuses = [s for s, _ in track.statuses]
            assert statuses[0] == "idle" and "processing" in statuses and statuses[-1] == "completed", \
                statuses
            assert [s for s, _ in follower.messages[message.id].states] == ["pending", "delivered"]
            assert [t for _, t in follower.messages[message.id].states] == sorted(
                t for _, t in follower.messages[message.id].states)
        finally:
            await follower.close(exit_agents=False)


async def test_a_supervisor_that_finished_before_the_follower_started_counts_as_done(server_url, workdir):
    from cao_server.client import HttpKernel

    async with HttpKernel(server_url) as api:
        buyer = await api.create_session(CreateTerminalRequest(
            agent_profile="buyer", session_name="fast", working_directory=workdir))
        await api.send_input(buyer.id, "Buy the bike.")
        await api.wait_for_status(buyer.id, [TerminalStatus.COMPLETED], timeout=10)
        follower = SessionFollower(api, "cao-fast", t0=time.time(), say=lambda *_: None, settle=0.3)
        started = time.monotonic()
        await follower.run(buyer.id, timeout=10)
        assert time.monotonic() - started < 5
        assert [s for s, _ in follower.tracks[buyer.id].statuses] == ["completed"]
        await follower.close()
