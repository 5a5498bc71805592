"""``MemoryInboxStore``: the kernel's built-in inbox store, kept in process memory.

It behaves exactly like the durable ``sqlite`` store (the shared contract suite in
``cao_kernel.testing.inbox_contract`` runs against both) except that nothing outlives the process.
It is the fallback when no durable store is installed, and a fast store for tests and embedding apps.

The messages live in a ``MemoryInboxData`` object that several store instances may share: closing a
store and opening a new one over the same data is what a restart looks like for this store.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable

import attrs

from cao_hookspecs import Message, MessageDraft, MessageState
from cao_hookspecs.inbox_checks import (
    FINISHED_BADLY,
    MAX_BODY_BYTES,
    check_draft,
    check_failure,
    check_list_args,
    in_state,
    pending_message,
)

__all__ = ["MAX_BODY_BYTES", "MemoryInboxData", "MemoryInboxStore"]

#: Largest message body accepted, counted in UTF-8 bytes (the sqlite store uses the same limit).


class MemoryInboxData:
    """The messages of one in-memory inbox, and the lock that makes every change atomic."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.messages: dict[int, Message] = {}
        self.by_key: dict[str, int] = {}
        # receiver -> ids of its pending messages: claims look at a handful of ids, not the history
        self.pending: dict[str, set[int]] = {}
        self.last_id = 0


class MemoryInboxStore:
    """An ``InboxStore`` in memory. Thread-safe: every method holds the data's lock while it runs.

    :param data: the messages to serve; a fresh, empty inbox when omitted.
    """

    def __init__(self, data: MemoryInboxData | None = None) -> None:
        self.data = data if data is not None else MemoryInboxData()
        self._closed = False

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"{len(self.data.messages)} messages"
        return f"<MemoryInboxStore {state}>"

    def enqueue(self, draft: MessageDraft) -> Message:
        """Store ``draft`` as a pending message, or return the stored one if its key was seen before."""
        check_draft(draft)
        data = self._data()
        with data.lock:
            if draft.idempotency_key is not None and draft.idempotency_key in data.by_key:
                return data.messages[data.by_key[draft.idempotency_key]]
            now = time.time()
            data.last_id += 1
            message = pending_message(draft, data.last_id, now)
            data.messages[message.id] = message
            data.pending.setdefault(message.receiver_id, set()).add(message.id)
            if draft.idempotency_key is not None:
                data.by_key[draft.idempotency_key] = message.id
            return message

    def claim_next(self, receiver_id: str, *, now: float | None = None) -> Message | None:
        """Move the receiver's oldest due pending message to delivering and return it (None if none)."""
        due_at = time.time() if now is None else now
        data = self._data()
        with data.lock:
            for message_id in sorted(data.pending.get(receiver_id, ())):
                message = data.messages[message_id]
                if message.not_before is None or message.not_before <= due_at:
                    return self._put(message, state=MessageState.DELIVERING)
            return None

    def claim(self, message_id: int) -> Message | None:
        """Move one pending message to delivering; None when it is not pending (or does not exist)."""
        data = self._data()
        with data.lock:
            message = data.messages.get(message_id)
            if message is None or message.state is not MessageState.PENDING:
                return None
            return self._put(message, state=MessageState.DELIVERING)

    def mark_delivered(self, message_id: int) -> Message:
        """delivering -> delivered."""
        with self._data().lock:
            message = self._delivering(message_id, "mark delivered")
            return self._put(message, state=MessageState.DELIVERED)

    def mark_failed(self, message_id: int, reason: str, *, retry_at: float | None) -> Message:
        """delivering -> pending again at ``retry_at`` (or dead when it is None), counting the attempt."""
        check_failure(reason, retry_at)
        with self._data().lock:
            message = self._delivering(message_id, "mark failed")
            if retry_at is None:
                return self._put(
                    message, state=MessageState.DEAD, attempts=message.attempts + 1, last_error=reason
                )
            return self._put(
                message,
                state=MessageState.PENDING,
                attempts=message.attempts + 1,
                last_error=reason,
                not_before=float(retry_at),
            )

    def release(self, message_id: int) -> Message:
        """delivering -> pending without counting an attempt."""
        with self._data().lock:
            message = self._delivering(message_id, "release")
            return self._put(message, state=MessageState.PENDING)

    def mark_uncertain(self, message_id: int, reason: str) -> Message:
        """delivering -> uncertain, keeping ``reason``."""
        check_failure(reason, None)
        with self._data().lock:
            message = self._delivering(message_id, "mark uncertain")
            return self._put(message, state=MessageState.UNCERTAIN, last_error=reason)

    def requeue(self, message_id: int) -> Message:
        """dead, failed or uncertain -> pending, due now, attempts and last error cleared."""
        with self._data().lock:
            message = self._in(message_id, "retry", FINISHED_BADLY)
            return self._put(message, state=MessageState.PENDING, attempts=0, last_error=None, not_before=None)

    def cancel(self, message_id: int, reason: str) -> Message:
        """pending -> dead, keeping ``reason``."""
        check_failure(reason, None)
        with self._data().lock:
            message = self._in(message_id, "cancel", (MessageState.PENDING,))
            return self._put(message, state=MessageState.DEAD, last_error=reason, not_before=None)

    def get(self, message_id: int) -> Message | None:
        """One message by id, or None."""
        data = self._data()
        with data.lock:
            return data.messages.get(message_id)

    def list(
        self, receiver_id: str | None = None, *, state: MessageState | None = None, limit: int = 100
    ) -> list[Message]:
        """Up to ``limit`` messages oldest first, optionally of one receiver and one state."""
        wanted = check_list_args(state, limit)
        data = self._data()
        with data.lock:
            return _first(
                (  # dicts keep insertion order, which is id order
                    m
                    for m in data.messages.values()
                    if (receiver_id is None or m.receiver_id == receiver_id)
                    and (wanted is None or m.state is wanted)
                ),
                limit,
            )

    def receivers_with_pending(self) -> list[str]:
        """Receivers with at least one pending message, the one waiting longest first."""
        data = self._data()
        with data.lock:
            return sorted(data.pending, key=lambda receiver: min(data.pending[receiver]))

    def close(self) -> None:
        """Stop serving; the data stays for a store opened over it later. Closing twice is fine."""
        self._closed = True

    # -- helpers (callers hold the lock) ----------------------------------------------------------

    def _data(self) -> MemoryInboxData:
        if self._closed:
            raise RuntimeError("the inbox store is closed")
        return self.data

    def _delivering(self, message_id: int, action: str) -> Message:
        return self._in(message_id, action, (MessageState.DELIVERING,))

    def _in(self, message_id: int, action: str, states: tuple[MessageState, ...]) -> Message:
        message = self.data.messages.get(message_id)
        if message is None:
            raise LookupError(f"cannot {action} message {message_id}: no such message")
        return in_state(message, action, states)

    def _put(self, message: Message, **changes: object) -> Message:
        updated = attrs.evolve(message, updated_at=time.time(), **changes)
        self.data.messages[message.id] = updated
        pending = self.data.pending
        if message.state is MessageState.PENDING and updated.state is not MessageState.PENDING:
            ids = pending[message.receiver_id]
            ids.discard(message.id)
            if not ids:
                del pending[message.receiver_id]
        elif updated.state is MessageState.PENDING and message.state is not MessageState.PENDING:
            pending.setdefault(message.receiver_id, set()).add(message.id)
        return updated


def _first(messages: Iterable[Message], limit: int) -> list[Message]:
    out: list[Message] = []
    for message in messages:
        if len(out) >= limit:
            break
        out.append(message)
    return out
