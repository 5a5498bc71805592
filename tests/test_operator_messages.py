"""An operator's retry and cancel: a pending message cancelled becomes dead and its sender is told; a dead
one retried goes back in line and is delivered once; any other state is a conflict, nothing changes."""

from __future__ import annotations

import asyncio

import pytest

from cao_hookspecs import CreateTerminalRequest, MessageState, TerminalStatus
from cao_kernel.delivery import CANCELLED
from cao_kernel.errors import Conflict, InvalidInput, NotFound
from cao_kernel.inbox_memory import MemoryInboxStore

pytestmark = pytest.mark.tmux


async def _mail_for_a_busy_receiver(kernel, workdir: str, seconds: float):
    request = CreateTerminalRequest(agent_profile="developer", session_name="ops", working_directory=workdir)
    sender = await kernel.create_session(request)
    receiver = await kernel.create_terminal(request)
    await kernel.send_input(receiver.id, f"__mock_sleep_{seconds}")
    await kernel.wait_for_status(receiver.id, {TerminalStatus.PROCESSING}, timeout=5)
    waiting = await kernel.send_message(sender.id, receiver.id, "operator test")
    assert waiting.state == MessageState.PENDING
    return sender, receiver, waiting


async def test_cancel_then_retry_delivers_once_and_tells_the_sender(make_kernel, workdir, tmux_socket):
    seen: list[tuple[str, int, str]] = []

    class Watch:
        from cao_hookspecs import hookimpl

        @hookimpl
        def cao_after_message_dead(self, message, reason):
            seen.append(("dead", message.id, reason))

        @hookimpl
        def cao_after_message_queued(self, message):
            seen.append(("queued", message.id, message.state.value))

    async with make_kernel(agents=("developer",)) as kernel:
        kernel.register_plugin(Watch(), name="watch")
        sender, receiver, waiting = await _mail_for_a_busy_receiver(kernel, workdir, 2)

        cancelled = await kernel.cancel_message(waiting.id)
        assert cancelled.state == MessageState.DEAD and cancelled.last_error == CANCELLED
        assert ("dead", waiting.id, CANCELLED) in seen
        notices = [m.body for m in await kernel.list_messages(sender.id, limit=10)]
        assert any(f"Your message {waiting.id} to terminal {receiver.id}" in body and CANCELLED in body
                   for body in notices), notices
        with pytest.raises(Conflict, match="it is dead, not pending"):
            await kernel.cancel_message(waiting.id)

        retried = await kernel.retry_message(waiting.id)
        assert retried.state == MessageState.PENDING and retried.attempts == 0 and retried.last_error is None
        assert seen.count(("queued", waiting.id, "pending")) == 2
        report = await kernel.wait_for_status(receiver.id, {TerminalStatus.COMPLETED}, timeout=10)
        assert report.status == TerminalStatus.COMPLETED
        delivered = None
        for _ in range(200):
            found = {m.id: m for m in await kernel.list_messages(receiver.id, limit=10)}[waiting.id]
            if found.state == MessageState.DELIVERED:
                delivered = found
                break
            await asyncio.sleep(0.05)
        assert delivered is not None, "the retried message was not delivered"
        with pytest.raises(Conflict, match="it is delivered, not dead or failed or uncertain"):
            await kernel.retry_message(waiting.id)
        with pytest.raises(Conflict):
            await kernel.cancel_message(waiting.id)


async def test_a_message_whose_receiver_is_gone_is_not_retried(make_kernel, workdir):
    async with make_kernel(agents=("developer",)) as kernel:
        sender, receiver, waiting = await _mail_for_a_busy_receiver(kernel, workdir, 5)
        await kernel.cancel_message(waiting.id)
        await kernel.delete_terminal(receiver.id)
        with pytest.raises(Conflict, match=f"its receiver, terminal {receiver.id}, is gone"):
            await kernel.retry_message(waiting.id)
        dead = {m.id: m for m in await kernel.list_messages(receiver.id, limit=10)}[waiting.id]
        assert dead.state == MessageState.DEAD  # left as it was, not stranded in pending


async def test_unknown_and_malformed_ids_are_refused_by_name(make_kernel):
    async with make_kernel() as kernel:
        with pytest.raises(NotFound, match="no such message"):
            await kernel.retry_message(999_999)
        with pytest.raises(NotFound, match="no such message"):
            await kernel.cancel_message(999_999)
        for bad in (0, -1, True, "1", 1.5):
            with pytest.raises(InvalidInput, match="invalid message id"):
                await kernel.retry_message(bad)  # type: ignore[arg-type]


@pytest.fixture(params=["memory", "sqlite"])
def store(request, tmp_path):
    if request.param == "memory":
        yield MemoryInboxStore()
        return
    from cao_inbox_sqlite.store import SqliteInboxStore

    opened = SqliteInboxStore(tmp_path / "inbox.db")
    yield opened
    opened.close()


def test_each_store_moves_states_as_the_contract_says(store):
    from cao_hookspecs import MessageDraft

    message = store.enqueue(MessageDraft(sender_id="a", receiver_id="0000000b", body="hi"))
    with pytest.raises(ValueError, match="not dead or failed or uncertain"):
        store.requeue(message.id)
    dead = store.cancel(message.id, "because")
    assert dead.state == MessageState.DEAD and dead.last_error == "because"
    assert store.receivers_with_pending() == []
    again = store.requeue(message.id)
    assert again.state == MessageState.PENDING and again.attempts == 0 and again.not_before is None
    assert store.receivers_with_pending() == ["0000000b"]
    claimed = store.claim(message.id)
    assert claimed is not None
    with pytest.raises(ValueError, match="it is delivering, not pending"):
        store.cancel(message.id, "late")
    with pytest.raises(LookupError, match="no such message"):
        store.requeue(12345)
