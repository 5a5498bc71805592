"""The delivery engine: moves inbox messages into terminals when their receivers are ready.

Driven by events, not timers: a message is tried when it is queued and whenever its receiver becomes
ready (idle or completed). The only timer is the one that wakes a failed message for its retry.

Guarantees:
- a message is durable before its id is returned (the store's job);
- it is claimed atomically (pending -> delivering), so two deliveries can never take the same message;
- nothing is delivered before the messages an earlier kernel left ``delivering`` are settled, so a
  delivery of this kernel is never taken for one of them;
- one delivery per ready cycle per receiver: typing puts the receiver in ``processing``, and the next
  message waits for the next ready transition;
- it is marked delivered only after it was typed; a kernel that dies in between leaves it
  ``delivering``, and the next kernel checks the receiver's screen before deciding to type it again;
- failed attempts are retried with backoff, then dead-lettered, and the sender is told;
- a receiver that can never take input again (its agent exited, its terminal was lost, it did not
  survive a restart) gets nothing: what waits for it is dead-lettered with the reason, senders told;
- a receiver whose MCP readiness gate is closed (``cao_kernel.readiness``) gets nothing until it opens;
  once its bounded wait has run out, what waits for it is refused with the reason, and the senders told.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

import attrs

from cao_hookspecs import (
    DeliveryReceipt,
    InboxStore,
    InputMark,
    Message,
    MessageDraft,
    MessageState,
    TerminalStatus,
)

from .errors import CaoError, Conflict, InvalidInput

if TYPE_CHECKING:
    from .hooks import Emit
    from .iopool import IoPool
    from .live import LiveTerminal

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 5
BACKOFF_BASE = 0.5
BACKOFF_MAX = 30.0
SYSTEM_SENDER = "cao"

class Receivers(Protocol):
    """The terminals messages go to, as the delivery engine sees them."""

    def get(self, terminal_id: str) -> LiveTerminal | None:
        """The terminal, or None when it does not exist (any more)."""

    def can_receive(self, terminal_id: str) -> bool:
        """Whether it has finished starting and may be given tasks (its MCP readiness gate is open)."""

    def refusal(self, terminal_id: str) -> CaoError | None:
        """Why it can never take messages, once that is known (its MCP server never connected)."""

    async def deliver(self, live: LiveTerminal, message: Message) -> DeliveryReceipt | None:
        """Type one message into it; raises when that failed."""

    async def input_mark(self, terminal_id: str) -> InputMark | None:
        """The mark of the last input typed into it (the first message id of that delivery); raises
        ``NotImplementedError`` when its backend keeps no such record."""

    async def submit_input(self, live: LiveTerminal, mark: str) -> None:
        """Press the Enter a typed input still owes (its delivery stopped between paste and Enter), and
        record its ``mark`` submitted in the same step, so that a kernel stopping right after does not
        leave the next one pressing it again."""


def backoff(attempts: int, base: float = BACKOFF_BASE) -> float:
    """Seconds to wait before retry number ``attempts`` (1-based): doubling, capped."""
    return min(BACKOFF_MAX, base * 2 ** max(0, attempts - 1))


#: Why a message an operator cancelled was not delivered.
CANCELLED = "cancelled by the operator"


class DeliveryEngine:
    """One per kernel. Lives on the kernel's event loop; store calls run on the I/O pool.

    :param on_delivered: called with each message marked delivered.
    :param on_dead: called with each message that failed for good, and the reason.
    """

    def __init__(
        self, store: InboxStore, *, receivers: Receivers, io: IoPool, emit: Emit, settings: Mapping[str, Any],
        on_delivered: Callable[[Message], None], on_dead: Callable[[Message, str], None],
    ) -> None:
        self.store = store
        self._receivers = receivers
        self._io = io.run
        self._emit = emit
        self._on_delivered = on_delivered
        self._on_dead = on_dead
        self._busy: set[str] = set()  # receivers with a delivery in progress
        self._again: set[str] = set()  # receivers kicked while busy
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._closed = False
        # Receivers kicked before ``recover`` ran: until then a message found ``delivering`` is one an
        # earlier kernel left, and a delivery started now would be taken for one.
        self._held: set[str] | None = set()
        self.max_attempts = int(settings.get("CAO_INBOX_MAX_ATTEMPTS") or MAX_ATTEMPTS)
        self.backoff_base = float(settings.get("CAO_INBOX_RETRY_BASE") or BACKOFF_BASE)
        self.eager = str(settings.get("CAO_EAGER_INBOX_DELIVERY", "")).lower() in ("1", "true", "yes")

    # -- entry points -----------------------------------------------------------------------------

    async def enqueue(self, draft: MessageDraft) -> Message:
        message = await self._io(self.store.enqueue, draft)
        self._emit("cao_after_message_queued", message=message)
        self.kick(message.receiver_id)
        return message

    async def retry(self, message_id: int) -> Message:
        """An operator's retry: a dead, failed or uncertain message goes back in line, due now. A message
        whose receiver is gone is refused: nothing would ever deliver or settle it."""
        found = await self._io(self.store.get, message_id)
        if found is not None and self._receivers.get(found.receiver_id) is None:
            raise Conflict(f"cannot retry message {message_id}: its receiver, terminal {found.receiver_id}, "
                           "is gone")
        message = await self._io(self.store.requeue, message_id)
        self._emit("cao_after_message_queued", message=message)
        self.kick(message.receiver_id)
        return message

    async def cancel(self, message_id: int) -> Message:
        """An operator's cancel: a pending message becomes dead, and its sender is told, as for any dead
        letter (a waiting assign ends)."""
        message = await self._io(self.store.cancel, message_id, CANCELLED)
        self._emit("cao_after_message_dead", message=message, reason=CANCELLED)
        await self._report_dead(message, CANCELLED)
        return message

    def kick(self, receiver_id: str) -> None:
        """Try to deliver to ``receiver_id`` now if it can take input."""
        if self._closed:
            return
        if self._held is not None:
            self._held.add(receiver_id)
            return
        if receiver_id in self._busy:
            self._again.add(receiver_id)
            return
        live = self._receivers.get(receiver_id)
        if live is None:
            return
        refusal = self._receivers.refusal(receiver_id)
        if refusal is None and not self._can_receive(live):
            return
        self._busy.add(receiver_id)
        task = asyncio.ensure_future(self._run(receiver_id) if refusal is None
                                     else self._refuse(receiver_id, str(refusal)))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def status_changed(self, receiver_id: str) -> None:
        """The receiver's status changed: deliver if it is ready now, refuse what waits for it if it never
        will be (``kick`` checks both)."""
        self.kick(receiver_id)

    def _can_receive(self, live: LiveTerminal) -> bool:
        if not self._receivers.can_receive(live.id):
            return False
        status = live.tracker.status
        if status.ready:
            return True
        caps = live.provider.capabilities if live.provider else None
        # Never while a prompt is open, eager or not: the message's keys would answer it.
        return bool(self.eager and caps and caps.accepts_input_while_busy
                    and status == TerminalStatus.PROCESSING)

    # -- one delivery -----------------------------------------------------------------------------

    async def _run(self, receiver_id: str) -> None:
        try:
            await self._deliver_next(receiver_id)
        except Exception:  # noqa: BLE001 - the engine must survive anything a plugin or store does
            log.exception("delivery to %s failed unexpectedly", receiver_id)
        finally:
            self._done(receiver_id)

    async def _refuse(self, receiver_id: str, reason: str) -> None:
        """The receiver cannot act on messages (its MCP client never connected): refuse what waits."""
        try:
            await self._fail_pending(receiver_id, reason)
        except Exception:  # noqa: BLE001
            log.exception("refusing messages to %s failed unexpectedly", receiver_id)
        finally:
            self._done(receiver_id)

    def _done(self, receiver_id: str) -> None:
        self._busy.discard(receiver_id)
        if receiver_id in self._again:
            self._again.discard(receiver_id)
            self.kick(receiver_id)

    async def _deliver_next(self, receiver_id: str) -> None:
        io = self._io
        waiting = await io(self.store.list, receiver_id, state=MessageState.PENDING, limit=100)
        now, blocked, first = time.time(), set(), None
        for message in waiting:
            # The oldest due message whose sender has no older one waiting: a message waiting for its
            # retry holds back its sender's later ones, so one sender's messages arrive in order.
            if message.sender_id not in blocked and (message.not_before or 0) <= now:
                first = message
                break
            blocked.add(message.sender_id)
        claimed = None if first is None else await io(self.store.claim, first.id)
        if claimed is None:
            await self._arm_retry_timer(receiver_id)
            return
        batch = [claimed]
        # Consecutive messages from the same sender go out as one input, as upstream does.
        for candidate in (m for m in waiting if m.id > claimed.id):
            if candidate.sender_id != claimed.sender_id or (candidate.not_before or 0) > time.time():
                break
            more = await io(self.store.claim, candidate.id)
            if more is None:
                break
            batch.append(more)
        live = self._receivers.get(receiver_id)
        if live is None:
            for message in batch:
                await self._fail(message, "receiver terminal no longer exists", final=True)
            return
        if not self._can_receive(live):
            # Became busy between the kick and the claim: put the messages back untouched.
            await self._release(batch)
            return
        body = "\n".join(m.body for m in batch)
        envelope = attrs.evolve(batch[0], body=body)
        try:
            receipt = await self._receivers.deliver(live, envelope)
        except Exception as exc:  # noqa: BLE001
            reason = f"{type(exc).__name__}: {exc}"
            for message in batch:
                await self._fail(message, reason)
            return
        assert receipt is not None
        for delivered in await self._mark_delivered(batch):
            self._emit("cao_after_message_delivered", message=delivered,
                       receipt=attrs.evolve(receipt, message_id=delivered.id))
            self._on_delivered(delivered)

    async def _mark_delivered(self, batch: list[Message]) -> list[Message]:
        """Record a typed batch as delivered, newest first, so that a kernel stopping halfway leaves the
        batch's first message ``delivering``: its id is the input's mark, and the next kernel's recovery
        settles the rest of the batch from it instead of typing it again."""
        delivered = [await self._io(self.store.mark_delivered, message.id) for message in reversed(batch)]
        return delivered[::-1]

    async def _fail(self, message: Message, reason: str, *, final: bool = False) -> None:
        attempts = message.attempts + 1
        retry_at = None if final or attempts >= self.max_attempts else time.time() + backoff(attempts, self.backoff_base)
        updated = await self._io(self.store.mark_failed, message.id, reason, retry_at=retry_at)
        if updated.state == MessageState.DEAD:
            self._emit("cao_after_message_dead", message=updated, reason=reason)
            await self._report_dead(updated, reason)
        else:
            self._emit("cao_after_message_failed", message=updated, reason=reason)
            self._arm_timer(updated.receiver_id, updated.not_before or time.time())

    async def _report_dead(self, message: Message, reason: str) -> None:
        self._on_dead(message, reason)
        await self._tell_sender(message, *_notice(message))

    async def _tell_sender(self, message: Message, what: str, key: str) -> None:
        """Queue a notice for the message's sender (a terminal still here) saying what became of it."""
        if self._receivers.get(message.sender_id) is None or message.sender_id == SYSTEM_SENDER:
            return
        notice = (f"[cao] Your message {message.id} to terminal {message.receiver_id} {what}. "
                  f"Its text began: {message.body[:200]!r}")
        await self.enqueue(MessageDraft(sender_id=SYSTEM_SENDER, receiver_id=message.sender_id, body=notice,
                                        idempotency_key=key))

    # -- retries ----------------------------------------------------------------------------------

    async def _arm_retry_timer(self, receiver_id: str) -> None:
        waiting = await self._io(self.store.list, receiver_id, state=MessageState.PENDING, limit=1)
        if waiting and waiting[0].not_before:
            self._arm_timer(receiver_id, waiting[0].not_before)

    def _arm_timer(self, receiver_id: str, when: float) -> None:
        loop = asyncio.get_running_loop()
        old = self._timers.pop(receiver_id, None)
        if old is not None:
            old.cancel()
        delay = max(0.0, when - time.time()) + 0.01
        self._timers[receiver_id] = loop.call_later(delay, self._timer_fired, receiver_id)

    def _timer_fired(self, receiver_id: str) -> None:
        self._timers.pop(receiver_id, None)
        self.kick(receiver_id)

    async def list(
        self, receiver_id: str | None, *, state: MessageState | None = None, limit: int = 100
    ) -> list[Message]:
        """Messages from the store, oldest first (see ``InboxStore.list``)."""
        return await self._io(self.store.list, receiver_id, state=state, limit=limit)

    # -- restart and removal ----------------------------------------------------------------------

    async def recover(self) -> None:
        """Settle the messages an earlier kernel left ``delivering``, then start delivering: every inbox
        with mail, and every receiver kicked in the meantime, is woken. Nothing is delivered before this
        runs (the kernel calls it once its terminals are re-adopted)."""
        io = self._io
        batches: dict[str, list[Message]] = {}
        for message in await io(self.store.list, None, state=MessageState.DELIVERING, limit=100_000):
            batches.setdefault(message.receiver_id, []).append(message)
        for receiver_id, batch in batches.items():
            await self._settle_interrupted(receiver_id, sorted(batch, key=lambda m: m.id))
        await self._send_owed_notices()
        kicked, self._held = self._held or set(), None
        for receiver in sorted({*kicked, *await io(self.store.receivers_with_pending)}):
            if self._receivers.get(receiver) is not None:
                self.kick(receiver)
            else:
                # Its terminal did not survive the restart (the tmux server died with it, or it was
                # removed meanwhile): what waits for it can never arrive.
                await self._fail_pending(receiver, "receiver terminal no longer exists")

    async def _send_owed_notices(self) -> None:
        """A kernel stopped between recording a message dead (or uncertain) and queueing the notice to its
        sender: each settled message whose sender is here and holds no notice for it gets one now."""
        io = self._io
        owed: dict[str, list[Message]] = {}
        for state in (MessageState.DEAD, MessageState.UNCERTAIN):
            for message in await io(self.store.list, None, state=state, limit=100_000):
                if message.sender_id != SYSTEM_SENDER and self._receivers.get(message.sender_id) is not None:
                    owed.setdefault(message.sender_id, []).append(message)
        for sender_id, messages in owed.items():
            held = {m.idempotency_key for m in await io(self.store.list, sender_id, limit=100_000)}
            for message in messages:
                what, key = _notice(message)
                if key not in held:
                    await self._tell_sender(message, what, key)

    async def _settle_interrupted(self, receiver_id: str, batch: list[Message]) -> None:
        """Messages a stopped kernel had claimed for one receiver (one delivery: one batch, oldest first).

        The delivery marked the input with the batch's first id in the same indivisible backend step as
        the paste and as the last Enter, so the receiver's input mark says what was done: typed and
        submitted (delivered), typed with its Enter owed (press it, delivered), or not typed (back to
        pending, typed once later).
        """
        io = self._io
        live = self._receivers.get(receiver_id)
        if live is None:
            for message in batch:
                await self._fail(message, "receiver terminal no longer exists", final=True)
            return
        try:
            mark = await self._receivers.input_mark(receiver_id)
        except NotImplementedError:
            await self._unknowable(live, batch, "its terminal's backend keeps no record of what was typed")
            return
        except Exception as exc:  # noqa: BLE001 - the receiver cannot be read
            await self._unknowable(live, batch, f"its terminal's input record cannot be read ({exc})")
            return
        if mark is None or mark.mark != str(batch[0].id):
            await self._release(batch)
            return
        if not mark.submitted:
            try:
                await self._receivers.submit_input(live, mark.mark)
            except Exception as exc:  # noqa: BLE001 - one receiver must not stop the kernel's start
                reason = f"could not submit the pasted input: {type(exc).__name__}: {exc}"
                for message in batch:
                    await self._fail(message, reason)
                return
        for delivered in await self._mark_delivered(batch):
            self._on_delivered(delivered)

    async def _release(self, batch: list[Message]) -> None:
        """Back to pending, to be typed once later (no attempt counted)."""
        for message in batch:
            await self._io(self.store.release, message.id)

    async def _unknowable(self, live: LiveTerminal, batch: list[Message], why: str) -> None:
        """An interrupted delivery nobody can tell was typed: its provider's written choice decides."""
        caps = live.provider.capabilities if live.provider else None
        if caps is None or caps.uncertain_delivery == "retype":
            log.warning("retyping %d interrupted message(s) to %s: %s", len(batch), live.id, why)
            await self._release(batch)
            return
        reason = f"its delivery was cut short and {why}; it is not typed again"
        for message in batch:
            uncertain = await self._io(self.store.mark_uncertain, message.id, reason)
            self._emit("cao_after_message_uncertain", message=uncertain, reason=reason)
            await self._tell_sender(uncertain, *_notice(uncertain))

    async def receiver_gone(self, receiver_id: str) -> None:
        """A terminal was deleted: its waiting messages can never arrive."""
        await self._fail_pending(receiver_id, "receiver terminal was deleted")

    async def _fail_pending(self, receiver_id: str, reason: str) -> None:
        """Fail every message waiting for ``receiver_id`` for good, telling each sender ``reason``."""
        timer = self._timers.pop(receiver_id, None)
        if timer is not None:
            timer.cancel()
        io = self._io
        for message in await io(self.store.list, receiver_id, state=MessageState.PENDING, limit=100_000):
            claimed = await io(self.store.claim, message.id)
            if claimed is not None:
                await self._fail(claimed, reason, final=True)

    async def aclose(self) -> None:
        """Stop: no timer fires and no delivery runs after this returns."""
        self._closed = True
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def _notice(message: Message) -> tuple[str, str]:
    """What a sender is told about its message that was settled without arriving, and the notice's
    idempotency key (one notice per message, whichever kernel sends it)."""
    if message.state is MessageState.UNCERTAIN:
        return f"may or may not have arrived: {message.last_error}", f"uncertain-{message.id}"
    return (f"could not be delivered after {message.attempts} attempts: {message.last_error}",
            f"dead-letter-{message.id}")


def sender_suffix(sender_id: str) -> str:
    return f"[Message from terminal {sender_id}. Use send_message MCP tool for any follow-up work.]"


def validate_message(text: Any) -> str:
    if not isinstance(text, str) or not text.strip():
        raise InvalidInput("message must not be empty")
    return text


__all__ = ["DeliveryEngine", "backoff", "sender_suffix", "validate_message"]
