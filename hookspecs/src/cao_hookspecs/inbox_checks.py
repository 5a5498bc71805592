"""Argument checks every ``InboxStore`` applies, so all stores refuse the same bad input the same way,
before anything is written."""

from __future__ import annotations

import math

from cao_hookspecs import Message, MessageDraft, MessageState

#: Largest message body accepted, counted in UTF-8 bytes.
MAX_BODY_BYTES = 1024 * 1024


def check_draft(draft: MessageDraft) -> None:
    """Raise TypeError or ValueError naming the first thing wrong with ``draft``."""
    if not isinstance(draft, MessageDraft):
        raise TypeError(f"enqueue takes a MessageDraft, not {type(draft).__name__}")
    for field in ("sender_id", "receiver_id", "body"):
        value = getattr(draft, field)
        if not isinstance(value, str):
            raise TypeError(f"message {field} must be a string, not {type(value).__name__}")
    if draft.idempotency_key is not None and not isinstance(draft.idempotency_key, str):
        raise TypeError("message idempotency_key must be a string or None")
    if not draft.receiver_id:
        raise ValueError("message receiver_id is empty")
    for field in ("sender_id", "receiver_id", "idempotency_key"):
        value = getattr(draft, field)
        if value is not None:
            _utf8(value, field)
    size = len(_utf8(draft.body, "body"))
    if size > MAX_BODY_BYTES:
        raise ValueError(f"message body is {size} bytes; the limit is {MAX_BODY_BYTES} bytes (1 MiB)")


def check_failure(reason: str, retry_at: float | None) -> None:
    """Validate the arguments of ``mark_failed``."""
    if not isinstance(reason, str):
        raise TypeError(f"failure reason must be a string, not {type(reason).__name__}")
    if retry_at is not None and not math.isfinite(retry_at):
        raise ValueError(f"retry_at must be a finite time or None, not {retry_at!r}")


def check_list_args(state: MessageState | str | None, limit: int) -> MessageState | None:
    """Validate the filters of ``list``; returns the state as an enum member."""
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
        raise ValueError(f"limit must be a whole number >= 0, not {limit!r}")
    return None if state is None else MessageState(state)


def _utf8(value: str, field: str) -> bytes:
    # A lone surrogate cannot be stored as text; say which field holds it instead of a codec trace.
    try:
        return value.encode("utf-8")
    except UnicodeEncodeError as err:
        raise ValueError(f"message {field} is not valid text: {err.reason} at index {err.start}") from None


def pending_message(draft: MessageDraft, message_id: int, now: float) -> Message:
    """The record a store keeps for a freshly enqueued ``draft``."""
    return Message(
        id=message_id,
        sender_id=draft.sender_id,
        receiver_id=draft.receiver_id,
        body=draft.body,
        state=MessageState.PENDING,
        created_at=now,
        updated_at=now,
        orchestration_type=draft.orchestration_type,
        idempotency_key=draft.idempotency_key,
    )


#: The states an operator's retry takes a message from.
FINISHED_BADLY = (MessageState.DEAD, MessageState.FAILED, MessageState.UNCERTAIN)


def in_state(message: Message, action: str, states: tuple[MessageState, ...]) -> Message:
    """``message`` when its state is one of ``states``, else ``ValueError`` naming what it is."""
    if message.state not in states:
        wanted = " or ".join(state.value for state in states)
        raise ValueError(f"cannot {action} message {message.id}: it is {message.state.value}, not {wanted}")
    return message
