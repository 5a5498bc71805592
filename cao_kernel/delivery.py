"""The delivery engine: moves inbox messages into terminals when their receivers are ready.

Driven by events, not timers: a message is tried when it is queued and whenever its receiver becomes
ready (idle or completed). The only timer is the one that wakes a failed message for its retry.

Guarantees:
- a message is durable before its id is returned (the store's job);
- it is claimed atomically (pending -> delivering), so two deliveries can never take the same message;
- one delivery per ready cycle per receiver: typing puts the receiver in ``processing``, and the next
  message waits for the next ready transition;
- it is marked delivered only after it was typed; a kernel that dies in between leaves it
  ``delivering``, and the next kernel checks the receiver's screen before deciding to type it again;
- failed attempts are retried with backoff, then dead-lettered, and the sender is told;
- a receiver whose MCP readiness gate is closed (``cao_kernel.readiness``) gets nothing until it opens;
  once its bounded wait has run out, what waits for it is refused with the reason, and the senders told.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING, Any

import attrs

from cao_hookspecs import InboxStore, Message, MessageDraft, MessageState, TerminalStatus

from .errors import InvalidInput

if TYPE_CHECKING:
    from .kernel import Kernel
    from .live import LiveTerminal

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 5
BACKOFF_BASE = 0.5
BACKOFF_MAX = 30.0
SYSTEM_SENDER = "cao"


def backoff(attempts: int, base: float = BACKOFF_BASE) -> float:
    """Seconds to wait before retry number ``attempts`` (1-based): doubling, capped."""
    return min(BACKOFF_MAX, base * 2 ** max(0, attempts - 1))


class DeliveryEngine:
    """One per kernel. Lives on the kernel's event loop; store calls run on the I/O pool."""

    def __init__(self, kernel: Kernel, store: InboxStore) -> None:
        self.kernel = kernel
        self.store = store
        self._busy: set[str] = set()  # receivers with a delivery in progress
        self._again: set[str] = set()  # receivers kicked while busy
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._closed = False
        self.max_attempts = int(kernel.settings.get("CAO_INBOX_MAX_ATTEMPTS") or MAX_ATTEMPTS)
        self.backoff_base = float(kernel.settings.get("CAO_INBOX_RETRY_BASE") or BACKOFF_BASE)
        self.eager = str(kernel.settings.get("CAO_EAGER_INBOX_DELIVERY", "")).lower() in ("1", "true", "yes")

    # -- entry points -----------------------------------------------------------------------------

    async def enqueue(self, draft: MessageDraft) -> Message:
        message = await self.kernel._io(self.store.enqueue, draft)
        self.kernel.hooks.after("cao_after_message_queued", message=message)
        self.kick(message.receiver_id)
        return message

    def kick(self, receiver_id: str) -> None:
        """Try to deliver to ``receiver_id`` now if it can take input."""
        if self._closed:
            return
        if receiver_id in self._busy:
            self._again.add(receiver_id)
            return
        live = self.kernel._live.get(receiver_id)
        if live is None:
            return
        refusal = self.kernel._mcp_failure(receiver_id)
        if refusal is None and not self._can_receive(live):
            return
        self._busy.add(receiver_id)
        task = asyncio.ensure_future(self._run(receiver_id) if refusal is None
                                     else self._refuse(receiver_id, str(refusal)))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def on_status(self, live: LiveTerminal) -> None:
        if self._can_receive(live):
            self.kick(live.id)

    def _can_receive(self, live: LiveTerminal) -> bool:
        if live.starting or not self.kernel._mcp_ready(live.id):
            return False
        status = live.tracker.status
        if status.ready:
            return True
        caps = live.provider.capabilities if live.provider else None
        return bool(
            self.eager and caps and caps.accepts_input_while_busy
            and status in (TerminalStatus.PROCESSING, TerminalStatus.WAITING_USER_ANSWER)
        )

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
        io = self.kernel._io
        claimed = await io(self.store.claim_next, receiver_id, now=time.time())
        if claimed is None:
            await self._arm_retry_timer(receiver_id)
            return
        batch = [claimed]
        # Consecutive messages from the same sender go out as one input, as upstream does.
        for candidate in await io(self.store.list, receiver_id, state=MessageState.PENDING, limit=20):
            if candidate.sender_id != claimed.sender_id or (candidate.not_before or 0) > time.time():
                break
            more = await io(self.store.claim, candidate.id)
            if more is None:
                break
            batch.append(more)
        live = self.kernel._live.get(receiver_id)
        if live is None:
            for message in batch:
                await self._fail(message, "receiver terminal no longer exists", final=True)
            return
        if not self._can_receive(live):
            # Became busy between the kick and the claim: put the messages back untouched.
            for message in batch:
                await io(self.store.release, message.id)
            return
        body = "\n".join(m.body for m in batch)
        envelope = attrs.evolve(batch[0], body=body)
        live.tracker.note_input()
        try:
            receipt = await io(
                self.kernel.hooks.deliver_message, live.terminal(), envelope, live.provider, self.kernel.backend
            )
            if receipt is None:
                raise RuntimeError("no delivery plugin took the message")
        except Exception as exc:  # noqa: BLE001
            live.tracker.abort_input()
            reason = f"{type(exc).__name__}: {exc}"
            for message in batch:
                await self._fail(message, reason)
            return
        live.tracker.input_sent()  # the settle window counts from the last Enter, not from before the paste
        for message in batch:
            delivered = await io(self.store.mark_delivered, message.id)
            self.kernel.hooks.after("cao_after_message_delivered", message=delivered,
                                    receipt=attrs.evolve(receipt, message_id=message.id))
            self.kernel._message_delivered(delivered)

    async def _fail(self, message: Message, reason: str, *, final: bool = False) -> None:
        attempts = message.attempts + 1
        retry_at = None if final or attempts >= self.max_attempts else time.time() + backoff(attempts, self.backoff_base)
        updated = await self.kernel._io(self.store.mark_failed, message.id, reason, retry_at=retry_at)
        if updated.state == MessageState.DEAD:
            self.kernel.hooks.after("cao_after_message_dead", message=updated, reason=reason)
            await self._report_dead(updated, reason)
        else:
            self.kernel.hooks.after("cao_after_message_failed", message=updated, reason=reason)
            self._arm_timer(updated.receiver_id, updated.not_before or time.time())

    async def _report_dead(self, message: Message, reason: str) -> None:
        self.kernel._message_dead(message, reason)
        if message.sender_id not in self.kernel._live or message.sender_id == SYSTEM_SENDER:
            return
        notice = (
            f"[cao] Your message {message.id} to terminal {message.receiver_id} could not be delivered "
            f"after {message.attempts} attempts: {reason}. Its text began: {message.body[:200]!r}"
        )
        await self.enqueue(MessageDraft(sender_id=SYSTEM_SENDER, receiver_id=message.sender_id, body=notice,
                                        idempotency_key=f"dead-letter-{message.id}"))

    # -- retries ----------------------------------------------------------------------------------

    async def _arm_retry_timer(self, receiver_id: str) -> None:
        waiting = await self.kernel._io(self.store.list, receiver_id, state=MessageState.PENDING, limit=1)
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

    # -- restart and removal ----------------------------------------------------------------------

    async def recover(self) -> None:
        """After a restart: settle messages left ``delivering`` and wake every inbox with mail."""
        io = self.kernel._io
        for message in await io(self.store.list, None, state=MessageState.DELIVERING, limit=100_000):
            live = self.kernel._live.get(message.receiver_id)
            if live is None:
                await self._fail(message, "receiver terminal no longer exists", final=True)
                continue
            history = await io(self.kernel.backend.capture, message.receiver_id, history=-1)
            if _was_typed(message.body, history):
                delivered = await io(self.store.mark_delivered, message.id)
                self.kernel._message_delivered(delivered)
            else:
                await io(self.store.release, message.id)
        for receiver in await io(self.store.receivers_with_pending):
            if receiver in self.kernel._live:
                self.kick(receiver)

    async def receiver_gone(self, receiver_id: str) -> None:
        """A terminal was deleted: its waiting messages can never arrive."""
        await self._fail_pending(receiver_id, "receiver terminal was deleted")

    async def _fail_pending(self, receiver_id: str, reason: str) -> None:
        """Fail every message waiting for ``receiver_id`` for good, telling each sender ``reason``."""
        timer = self._timers.pop(receiver_id, None)
        if timer is not None:
            timer.cancel()
        io = self.kernel._io
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


def _was_typed(body: str, history: str) -> bool:
    """Whether a message's text is visible in the terminal's history (rows may wrap or be joined)."""
    probe = " ".join(body.split())[:120]
    flat = " ".join(history.split())
    return bool(probe) and probe in flat


def sender_suffix(sender_id: str) -> str:
    return f"[Message from terminal {sender_id}. Use send_message MCP tool for any follow-up work.]"


def validate_message(text: Any) -> str:
    if not isinstance(text, str) or not text.strip():
        raise InvalidInput("message must not be empty")
    return text


__all__ = ["DeliveryEngine", "backoff", "sender_suffix", "validate_message"]
