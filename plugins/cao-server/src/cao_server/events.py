"""``GET /events``: what happens in the kernel, as it happens, one JSON object per line.

A follower that polls can miss what starts and ends between two polls: a worker created, answering and
deleted within a fraction of a second, a message queued and delivered at once. The hub below observes
the kernel's own after-hooks, so a subscriber sees every terminal created or removed, every status
change (with the time the kernel first saw it) and every change of a message's state, in order.

Events (the ``event`` field):

- ``subscribed``: the first line, with the server's time (``at``); everything after it is new;
- ``terminal_created`` / ``terminal_removed``: ``terminal`` is the terminal record;
- ``status``: ``terminal_id``, ``session_name``, ``status``, ``evidence``, ``since`` (seconds since the
  epoch, as every ``at``), and ``prompt``: the prompt the agent waits on (id, question, options), or null;
- ``prompt``: ``kind`` (``opened``, ``answered``, ``refused``, ``escalated``, ``closed``), ``terminal_id``,
  ``session_name``, ``prompt`` (the open prompt record), ``by``, ``option``, ``text``, ``detail``;
- ``message``: ``message`` is the message record (``state`` says which change), plus ``reason`` for a
  failed or dead one;
- ``handoff_started`` / ``assign_started``: ``caller_id``, ``worker_id``, ``session_name``,
  ``agent_profile``; ``handoff_finished`` / ``assign_finished`` add ``success`` and ``duration`` (s);
- ``activity``: what a plugin's own work did (``KernelAPI.report_activity``): ``kind`` (``flow.run``,
  ``workflow.step``...), ``data`` (a JSON object: by convention ``run_id``, ``state``, ``summary``) and
  ``session_name`` when the data names one;
- ``ping``: every ``PING_SECONDS`` while nothing else happens, so a client notices a dead connection;
- ``overflow``: the last line. The subscriber read so slowly that ``BACKLOG_BYTES`` of events (or
  ``QUEUE_LIMIT`` of them) waited for it, so it was dropped: ``reason`` says so, with both limits. What
  waited is let go at once; a client that still wants events subscribes again and rereads the state.

``?session=NAME`` keeps the events of one session (messages by their receiver's session). Every event
but ``subscribed``, ``ping`` and ``overflow`` carries ``seq`` (increasing, per server) and ``at``.

A client that sends ``Accept: text/event-stream`` (a browser's ``EventSource``) gets the same events as
server-sent events: ``data: <the JSON>`` per event, pings as comments.

``GET /events/history`` answers the most recent events (``HISTORY_EVENTS`` and ``HISTORY_BYTES`` at
most, oldest first) as one JSON list, for a timeline that starts before its page opened. The hub also
knows which handoffs and assigns are under way (``delegations``), for ``GET /team``.

Nothing here runs while nobody watches: the hub only encodes each event once and keeps it in the
bounded history; pings tick only inside a subscriber's stream.
"""

from __future__ import annotations

import asyncio
import collections
import json
import threading
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from cao_hookspecs import hookimpl

from . import wire
from .converter import to_json

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

    from cao_hookspecs import (
        Activity,
        DelegationRequest,
        DelegationResult,
        DeliveryReceipt,
        Message,
        PromptEvent,
        StatusReport,
        Terminal,
    )

#: Events a subscriber may fall behind by before it is dropped (a stuck client must not grow memory).
QUEUE_LIMIT = 10_000
#: Bytes of events the same: a message event holds the whole body, so a count alone let a client that
#: never reads hold gigabytes. Twice the largest event (a 1 MiB body escaped at worst, about 6 MiB).
BACKLOG_BYTES = 16 * 1024 * 1024
PING_SECONDS = 5.0
MEDIA_TYPE = "application/x-ndjson"
SSE_MEDIA_TYPE = "text/event-stream"
HISTORY_EVENTS = 2000
#: A message event holds its whole body: the history is bounded by bytes as well as by count.
HISTORY_BYTES = 8 * 1024 * 1024


class _Subscriber:
    def __init__(self, loop: asyncio.AbstractEventLoop, session: str | None) -> None:
        self.loop = loop
        self.session = session
        # Lines already encoded, shared by every subscriber; None ends the stream.
        self.queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.backlog = 0  # bytes in the queue
        self.dropped = False

    def put(self, line: bytes) -> None:
        # On the subscriber's loop only: the queue is not thread-safe.
        if self.dropped:
            return
        if self.queue.qsize() >= QUEUE_LIMIT or self.backlog + len(line) > BACKLOG_BYTES:
            self._drop()
            return
        self.backlog += len(line)
        self.queue.put_nowait(line)

    def take(self, line: bytes | None) -> None:
        if line is not None:
            self.backlog -= len(line)

    def _drop(self) -> None:
        waiting = self.queue.qsize()
        self.dropped = True
        while not self.queue.empty():  # let go of what waited: the point of dropping it
            self.queue.get_nowait()
        self.backlog = 0
        reason = (f"this subscriber read too slowly: {waiting} events waited for it, past the limit of "
                  f"{QUEUE_LIMIT} events or {BACKLOG_BYTES} bytes, so it was dropped; subscribe again")
        self.queue.put_nowait(_line({"event": "overflow", "at": time.time(), "reason": reason,
                                     "limit_events": QUEUE_LIMIT, "limit_bytes": BACKLOG_BYTES}))
        self.queue.put_nowait(None)


class EventHub:
    """A kernel plugin (observer hooks only) that fans the kernel's events out to subscribers."""

    def __init__(self) -> None:
        self._subscribers: list[_Subscriber] = []
        self._sessions: dict[str, str] = {}  # terminal id -> session name, for message filtering
        self._lock = threading.Lock()
        self._seq = 0
        self._history: collections.deque[tuple[str | None, bytes]] = collections.deque()
        self._history_bytes = 0
        # worker id -> the handoff or assign that started it, while it is under way
        self._delegations: dict[str, dict[str, Any]] = {}

    def delegations(self) -> dict[str, dict[str, Any]]:
        """Handoffs and assigns under way, by worker id: ``kind``, ``caller_id``, ``started_at``."""
        with self._lock:
            return {worker: dict(entry) for worker, entry in self._delegations.items()}

    def history(self, session: str | None, limit: int) -> bytes:
        """The most recent events (of ``session``), oldest first, as one JSON list."""
        with self._lock:
            lines = [line for owner, line in self._history if session is None or owner == session]
        return b"[" + b",".join(line.rstrip(b"\n") for line in lines[-limit:]) + b"]"

    # -- subscribers ------------------------------------------------------------------------------

    async def stream(self, session: str | None) -> AsyncIterator[bytes]:
        """Lines of JSON from now on; ends when the hub closes or the subscriber overflows."""
        subscriber = _Subscriber(asyncio.get_running_loop(), session)
        with self._lock:
            self._subscribers.append(subscriber)
        try:
            yield _line({"event": "subscribed", "at": time.time(), "session": session})
            while True:
                try:
                    line = await asyncio.wait_for(subscriber.queue.get(), PING_SECONDS)
                except TimeoutError:
                    line = _line({"event": "ping", "at": time.time()})
                else:
                    subscriber.take(line)
                if line is None:
                    return
                yield line
        finally:
            with self._lock:
                if subscriber in self._subscribers:
                    self._subscribers.remove(subscriber)

    def close(self) -> None:
        """End every stream (the server is stopping)."""
        with self._lock:
            subscribers, self._subscribers = self._subscribers, []
        for subscriber in subscribers:
            _call_on(subscriber.loop, subscriber.queue.put_nowait, None)

    def _publish(self, event: dict[str, Any], session: str | None) -> None:
        with self._lock:
            self._seq += 1
            event.setdefault("at", time.time())
            event["seq"] = self._seq
            line = _line(event)  # once, however many subscribers: a message event can be megabytes
            self._remember(session, line)
            subscribers = [s for s in self._subscribers if s.session is None or s.session == session]
        if not subscribers:
            return
        for subscriber in subscribers:
            _call_on(subscriber.loop, subscriber.put, line)

    def _remember(self, session: str | None, line: bytes) -> None:
        # Under the lock.
        self._history.append((session, line))
        self._history_bytes += len(line)
        while len(self._history) > HISTORY_EVENTS or self._history_bytes > HISTORY_BYTES:
            self._history_bytes -= len(self._history.popleft()[1])

    # -- the kernel's observer hooks ----------------------------------------------------------------

    @hookimpl
    def cao_after_terminal_created(self, terminal: Terminal) -> None:
        self._sessions[terminal.id] = terminal.session_name
        self._publish({"event": "terminal_created", "terminal": wire.terminal_json(terminal)}, terminal.session_name)

    @hookimpl
    def cao_after_handoff_started(self, request: DelegationRequest, worker: Terminal) -> None:
        self._started("handoff", request, worker)

    @hookimpl
    def cao_after_assign_started(self, request: DelegationRequest, worker: Terminal) -> None:
        self._started("assign", request, worker)

    @hookimpl
    def cao_after_handoff_finished(self, result: DelegationResult) -> None:
        self._finished("handoff", result)

    @hookimpl
    def cao_after_assign_finished(self, result: DelegationResult) -> None:
        self._finished("assign", result)

    def _started(self, kind: str, request: DelegationRequest, worker: Terminal) -> None:
        with self._lock:
            self._delegations[worker.id] = {"kind": kind, "caller_id": request.caller_id,
                                            "started_at": time.time()}
        self._publish({"event": f"{kind}_started", "caller_id": request.caller_id, "worker_id": worker.id,
                       "session_name": worker.session_name, "agent_profile": worker.agent_profile},
                      worker.session_name)

    def _finished(self, kind: str, result: DelegationResult) -> None:
        worker = result.terminal_id
        with self._lock:
            if worker is not None:
                self._delegations.pop(worker, None)
            session = self._sessions.get(worker or "") or self._sessions.get(result.caller_id or "")
        self._publish({"event": f"{kind}_finished", "caller_id": result.caller_id, "worker_id": worker,
                       "session_name": session, "agent_profile": result.agent_profile,
                       "success": result.success, "duration": round(result.duration, 3)}, session)

    @hookimpl
    def cao_after_terminal_killed(self, terminal: Terminal) -> None:
        with self._lock:
            self._delegations.pop(terminal.id, None)
        self._publish({"event": "terminal_removed", "terminal": wire.terminal_json(terminal), "at": time.time()},
                      terminal.session_name)

    @hookimpl
    def cao_after_status_changed(self, terminal: Terminal, old: StatusReport, new: StatusReport) -> None:
        self._sessions.setdefault(terminal.id, terminal.session_name)
        self._publish({"event": "status", "terminal_id": terminal.id, "session_name": terminal.session_name,
                       "status": new.status.value, "evidence": new.evidence,
                       "since": new.since if new.since is not None else time.time(),
                       "prompt": to_json(terminal.prompt) if terminal.prompt is not None else None},
                      terminal.session_name)

    @hookimpl
    def cao_after_prompt(self, event: PromptEvent) -> None:
        terminal_id = event.prompt.terminal_id
        session = self._sessions.get(terminal_id)
        self._publish({"event": "prompt", "kind": event.kind.value, "terminal_id": terminal_id,
                       "session_name": session, "prompt": to_json(event.prompt), "by": event.by,
                       "option": event.option, "text": event.text, "detail": event.detail, "at": event.at},
                      session)

    @hookimpl
    def cao_after_message_queued(self, message: Message) -> None:
        self._message(message)

    @hookimpl
    def cao_after_message_delivered(self, message: Message, receipt: DeliveryReceipt) -> None:
        self._message(message)

    @hookimpl
    def cao_after_message_failed(self, message: Message, reason: str) -> None:
        self._message(message, reason)

    @hookimpl
    def cao_after_message_dead(self, message: Message, reason: str) -> None:
        self._message(message, reason)

    @hookimpl
    def cao_after_message_uncertain(self, message: Message, reason: str) -> None:
        self._message(message, reason)

    @hookimpl
    def cao_after_activity(self, activity: Activity) -> None:
        session = activity.data.get("session_name")
        session = session if isinstance(session, str) and session else None
        self._publish({"event": "activity", "kind": activity.kind, "data": dict(activity.data),
                       "session_name": session, "at": activity.at}, session)

    def _message(self, message: Message, reason: str | None = None) -> None:
        event: dict[str, Any] = {"event": "message", "message": wire.message_json(message)}
        if reason is not None:
            event["reason"] = reason
        self._publish(event, self._sessions.get(message.receiver_id))


def _line(event: dict[str, Any]) -> bytes:
    return (json.dumps(event, separators=(",", ":")) + "\n").encode()


def _call_on(loop: asyncio.AbstractEventLoop, fn: Any, *args: Any) -> None:
    """Run ``fn(*args)`` on ``loop``: at once when this is its thread, else soon, from any thread."""
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is loop:
        fn(*args)
    elif not loop.is_closed():
        loop.call_soon_threadsafe(fn, *args)


def events_endpoint(hub: EventHub | None) -> Any:
    """The starlette endpoint for ``GET /events`` (501 when the kernel cannot take an observer)."""

    async def events(request: Request) -> Response:
        from starlette.responses import JSONResponse, StreamingResponse

        from cao_hookspecs.errors import InvalidInput

        from .validation import session_filter

        if hub is None:
            return JSONResponse({"detail": "this server's kernel does not publish events", "error": "NotSupported"},
                                status_code=501)
        raw = request.query_params.get("session")
        try:
            session = session_filter(raw) if raw else None
        except InvalidInput as exc:
            return JSONResponse({"detail": str(exc), "error": "InvalidInput"}, status_code=400)
        headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
        if SSE_MEDIA_TYPE in request.headers.get("accept", ""):
            return StreamingResponse(_server_sent(hub.stream(session)), media_type=SSE_MEDIA_TYPE,
                                     headers=headers)
        return StreamingResponse(hub.stream(session), media_type=MEDIA_TYPE, headers=headers)

    return events


async def _server_sent(lines: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    """The same events as server-sent events: one ``data:`` field per event (JSON holds no newline),
    pings as comments, which ``EventSource`` ignores."""
    yield b"retry: 2000\n\n"
    async for line in lines:
        if line.startswith(b'{"event":"ping"'):
            yield b": ping\n\n"
        else:
            yield b"data: " + line.rstrip(b"\n") + b"\n\n"
