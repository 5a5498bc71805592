"""The kernel's in-memory inbox store: the shared contract, plus what is particular to it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from cao_hookspecs import MessageDraft, MessageState
from cao_kernel.inbox_memory import MemoryInboxData, MemoryInboxStore
from cao_kernel.testing.inbox_contract import InboxStoreContract


class TestMemoryInboxContract(InboxStoreContract):
    @pytest.fixture
    def make_store(self) -> Callable[[Path], MemoryInboxStore]:
        # A "place" is a data object: reopening at the same place is a restart that keeps the data.
        places: dict[Path, MemoryInboxData] = {}
        return lambda place: MemoryInboxStore(places.setdefault(place, MemoryInboxData()))


def test_a_new_store_starts_empty_and_stores_are_independent() -> None:
    one, two = MemoryInboxStore(), MemoryInboxStore()
    one.enqueue(MessageDraft(sender_id="s", receiver_id="r", body="hi"))
    assert two.list() == []
    assert len(one.list()) == 1


def test_two_open_stores_over_one_data_share_messages_and_claims() -> None:
    data = MemoryInboxData()
    first, second = MemoryInboxStore(data), MemoryInboxStore(data)
    message = first.enqueue(MessageDraft(sender_id="s", receiver_id="r", body="hi"))
    claimed = second.claim_next("r")
    assert claimed is not None
    assert claimed.id == message.id
    assert first.claim(message.id) is None
    first.close()
    assert second.mark_delivered(message.id).state is MessageState.DELIVERED  # the other stays open


def test_pending_index_forgets_receivers_with_nothing_pending() -> None:
    data = MemoryInboxData()
    store = MemoryInboxStore(data)
    message = store.enqueue(MessageDraft(sender_id="s", receiver_id="r", body="hi"))
    store.claim(message.id)
    store.mark_delivered(message.id)
    assert data.pending == {}
