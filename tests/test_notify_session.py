"""A whole session with mock agents on real tmux, the Discord notifier loaded from its entry point, and a
fake Discord webhook on 127.0.0.1: a handoff and an assign, then the session is deleted, and the webhook
receives one post per event, in the order they happened."""

from __future__ import annotations

import asyncio

import pytest

from cao_hookspecs import CreateTerminalRequest, hookimpl
from cao_testkit.notify.discord import FakeWebhook
from cao_testkit.waiting import eventually

pytestmark = pytest.mark.tmux


async def test_a_session_with_a_handoff_and_an_assign_posts_its_events_in_order(make_kernel, workdir):
    with FakeWebhook() as webhook:
        kernel = make_kernel("tmux", "mock_cli", "inbox_sqlite", "notify_discord",
                             agents=("supervisor", "developer"), CAO_DISCORD_WEBHOOK_URL=webhook.url)
        async with kernel:
            supervisor = await kernel.create_session(CreateTerminalRequest(
                agent_profile="supervisor", session_name="notify", working_directory=workdir))
            result = await kernel.handoff(supervisor.id, "developer", "write the release notes", timeout=30)
            assert result.success, result.message
            # The answer comes back first; the worker is dismissed right after.
            await eventually(lambda: kernel.terminals.get(result.terminal_id) is None, 10,
                             "the handoff's worker was not removed", interval=0.02)
            assigned = await kernel.assign(supervisor.id, "developer", "tidy the changelog")
            # The assign finishes when its task has been typed into the worker: its eighth post.
            await asyncio.to_thread(webhook.wait_for, 8, 10.0)
            await kernel.delete_session("notify")
        # Leaving the kernel ran cao_shutdown, which flushed the queue: every post has arrived.
        kinds = webhook.event_kinds()
        payloads = webhook.payloads()

    assert kinds == [
        "terminal_created",   # the supervisor
        "session_created",
        "terminal_created",   # the worker
        "handoff_finished",
        "terminal_killed",    # the worker, dismissed once its answer went back
        "terminal_created",   # the assigned worker
        "message_delivered",  # its task
        "assign_finished",
        "terminal_killed",    # the supervisor and the assigned worker, with their session
        "terminal_killed",
        "session_killed",
    ]
    titles = [p["embeds"][0]["title"] for p in payloads]
    assert titles[1] == "Session started: cao-notify"
    assert titles[3] == "Handoff finished: developer"
    assert "write the release notes" in payloads[3]["embeds"][0]["description"]
    assert "tidy the changelog" in payloads[6]["embeds"][0]["description"]
    assert titles[7] == "Assign delivered: developer"
    assert titles[-1] == "Session ended: cao-notify"
    fields = {f["name"]: f["value"] for f in payloads[-1]["embeds"][0]["fields"]}
    assert fields["Terminals"] == f"{supervisor.id}, {assigned.terminal_id}"



async def test_a_handoff_workers_removal_is_heard_before_plugins_are_told_to_stop(make_kernel, workdir):
    heard: list[str] = []

    class Recorder:
        @hookimpl
        def cao_after_terminal_killed(self, terminal):
            heard.append(f"killed {terminal.agent_profile}")

        @hookimpl
        def cao_shutdown(self):
            heard.append("shutdown")

    kernel = make_kernel(agents=("supervisor", "developer"))
    kernel.register_plugin(Recorder(), name="recorder")
    async with kernel:
        supervisor = await kernel.create_session(CreateTerminalRequest(
            agent_profile="supervisor", session_name="closing", working_directory=workdir))
        result = await kernel.handoff(supervisor.id, "developer", "say done", timeout=30)
        assert result.success, result.message
        # Closing at once: the worker is still being dismissed in the background.
    assert heard[:2] == ["killed developer", "shutdown"], heard
    await kernel.start()
    await kernel.delete_session("closing")
    await kernel.aclose()
