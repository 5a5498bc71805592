"""Spans and metrics from cao's lifecycle events.

cao's events come as pairs seen at different moments (a terminal created, later killed; a turn started by
``processing``, ended by ``completed``), so each span is started by one event and ended by its partner,
and kept in between under the id that pairs them. The tree:

- ``session <name>``: from the session's creation to its deletion;
- ``terminal <profile>`` (GenAI ``create_agent``): a terminal's life, in its session's span;
- ``turn <profile>`` (GenAI ``invoke_agent``): ``processing`` until ``completed``, ``idle`` or ``error``,
  in its terminal's span; a prompt on the way is an event of it;
- ``handoff <profile>`` / ``assign <profile>``: a delegation, in its caller's terminal span;
- ``deliver <message id>``: an inbox message from queued to delivered (or dead), in its sender's span.

Every span is ended once: by its partner event, or by :meth:`Telemetry.close` (marked
``cao.open_at_close``), so nothing stays open in an exporter.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from cao_hookspecs import TerminalStatus

from . import semconv as sc

__all__ = ["Telemetry"]

_TURN_ENDS = {TerminalStatus.COMPLETED, TerminalStatus.IDLE, TerminalStatus.ERROR}


def _ns(seconds: float | None) -> int | None:
    return None if not seconds else int(seconds * 1e9)


class Telemetry:
    """The open spans and the instruments of one kernel. Thread-safe: cao calls observers from its
    event loop and from its I/O threads."""

    def __init__(self, tracer_provider: Any, meter_provider: Any, *, owned: bool = False) -> None:
        from opentelemetry.trace import Status, StatusCode

        self._status = Status
        self._codes = StatusCode
        self._tracer_provider = tracer_provider
        self._meter_provider = meter_provider
        self._owned = owned
        self._tracer = tracer_provider.get_tracer("cao")
        meter = meter_provider.get_meter("cao")
        self._turn_seconds = meter.create_histogram(sc.TURN_DURATION, unit="s",
                                                    description="an agent turn, processing to its end")
        self._delivery_seconds = meter.create_histogram(sc.DELIVERY_LATENCY, unit="s",
                                                        description="an inbox message, queued to typed in")
        self._live = meter.create_up_down_counter(sc.LIVE_TERMINALS, description="terminals running")
        self._delegations = meter.create_counter(sc.DELEGATIONS, description="handoffs and assigns ended")
        self._lock = threading.Lock()
        self._sessions: dict[str, Any] = {}
        self._terminals: dict[str, tuple[Any, dict[str, str]]] = {}
        self._turns: dict[str, tuple[Any, float]] = {}
        self._delegating: dict[str, Any] = {}
        self._deliveries: dict[int, Any] = {}
        self._closed = False

    # -- helpers ----------------------------------------------------------------------------------

    def _start(self, name: str, parent: Any, attributes: dict[str, Any], start: float | None = None) -> Any:
        from opentelemetry.trace import set_span_in_context

        context = set_span_in_context(parent) if parent is not None else None
        return self._tracer.start_span(name, context=context, attributes=attributes, start_time=_ns(start))

    def _end(self, span: Any, *, error: str | None = None, end: float | None = None) -> None:
        if error is not None:
            span.set_status(self._status(self._codes.ERROR, error))
        span.end(end_time=_ns(end))

    def _terminal_span(self, terminal_id: str | None) -> Any:
        entry = self._terminals.get(terminal_id or "")
        return entry[0] if entry else None

    @staticmethod
    def _agent(terminal: Any) -> dict[str, str]:
        return {sc.AGENT_NAME: terminal.agent_profile, sc.AGENT_ID: terminal.id,
                sc.PROVIDER: terminal.provider, sc.SESSION: terminal.session_name,
                sc.CONVERSATION: terminal.session_name}

    # -- sessions and terminals -------------------------------------------------------------------

    def terminal_created(self, terminal: Any) -> None:
        with self._lock:
            if self._closed or terminal.id in self._terminals:
                return
            session = self._sessions.get(terminal.session_name)
            if session is None:
                session = self._start(f"session {terminal.session_name}", None,
                                      {sc.SESSION: terminal.session_name}, terminal.created_at or None)
                self._sessions[terminal.session_name] = session
            agent = self._agent(terminal)
            attributes: dict[str, Any] = {**agent, sc.OPERATION: sc.CREATE_AGENT}
            if terminal.caller_id:
                attributes[sc.CALLER] = terminal.caller_id
            span = self._start(f"terminal {terminal.agent_profile}", session, attributes,
                               terminal.created_at or None)
            self._terminals[terminal.id] = (span, agent)
        self._live.add(1, {sc.PROVIDER: terminal.provider})

    def terminal_killed(self, terminal: Any) -> None:
        with self._lock:
            turn = self._turns.pop(terminal.id, None)
            entry = self._terminals.pop(terminal.id, None)
            if turn is not None:
                # Often cao's own exit command (a handoff's worker being removed): not an error.
                turn[0].set_attribute(sc.STATUS, "deleted")
                self._end(turn[0])
            if entry is None:
                return
            self._end(entry[0])
        self._live.add(-1, {sc.PROVIDER: terminal.provider})

    def session_killed(self, session_name: str) -> None:
        with self._lock:
            span = self._sessions.pop(session_name, None)
            if span is not None:
                self._end(span)

    # -- turns --------------------------------------------------------------------------------------

    def status_changed(self, terminal: Any, new: Any) -> None:
        status = TerminalStatus(new.status)
        at = new.since or time.time()
        ended: tuple[float, dict[str, str]] | None = None
        with self._lock:
            entry = self._terminals.get(terminal.id)
            if self._closed or entry is None:
                return
            parent, agent = entry
            turn = self._turns.get(terminal.id)
            if status is TerminalStatus.PROCESSING and turn is None:
                span = self._start(f"turn {terminal.agent_profile}", parent,
                                   {**agent, sc.OPERATION: sc.INVOKE_AGENT}, at)
                self._turns[terminal.id] = (span, at)
            elif turn is not None and status is TerminalStatus.WAITING_USER_ANSWER:
                turn[0].add_event("prompt", {sc.EVIDENCE: new.evidence[:sc.EVIDENCE_LIMIT]}, _ns(at))
            elif turn is not None and status in _TURN_ENDS:
                del self._turns[terminal.id]
                span, started = turn
                span.set_attribute(sc.STATUS, status.value)
                failed = status is TerminalStatus.ERROR
                error = (new.evidence[:sc.EVIDENCE_LIMIT] or "error") if failed else None
                self._end(span, error=error, end=at)
                ended = (max(0.0, at - started), {sc.PROVIDER: terminal.provider, sc.AGENT_NAME:
                                                  terminal.agent_profile, sc.STATUS: status.value})
        if ended is not None:
            self._turn_seconds.record(*ended)

    # -- delegations --------------------------------------------------------------------------------

    def delegation_started(self, kind: str, request: Any, worker: Any) -> None:
        with self._lock:
            if self._closed:
                return
            parent = self._terminal_span(request.caller_id) or self._sessions.get(worker.session_name)
            attributes = {sc.KIND: kind, sc.AGENT_NAME: request.agent_profile, sc.AGENT_ID: worker.id,
                          sc.PROVIDER: worker.provider, sc.SESSION: worker.session_name}
            if request.caller_id:
                attributes[sc.CALLER] = request.caller_id
            self._delegating[worker.id] = self._start(f"{kind} {request.agent_profile}", parent, attributes)

    def delegation_finished(self, kind: str, result: Any) -> None:
        with self._lock:
            span = self._delegating.pop(result.terminal_id or "", None)
            if span is not None:
                span.set_attribute(sc.SUCCESS, bool(result.success))
                self._end(span, error=None if result.success else (result.message or "failed"))
        self._delegations.add(1, {sc.KIND: kind, sc.SUCCESS: bool(result.success)})

    # -- deliveries -----------------------------------------------------------------------------------

    def message_queued(self, message: Any) -> None:
        with self._lock:
            if self._closed or message.id in self._deliveries:
                return
            attributes = {sc.MESSAGE: message.id, sc.SENDER: message.sender_id,
                          sc.RECEIVER: message.receiver_id, sc.KIND: str(message.orchestration_type)}
            self._deliveries[message.id] = self._start(f"deliver {message.id}",
                                                       self._terminal_span(message.sender_id), attributes,
                                                       message.created_at or None)

    def message_delivered(self, message: Any, receipt: Any) -> None:
        with self._lock:
            span = self._deliveries.pop(message.id, None)
            if span is not None:
                span.set_attribute(sc.ATTEMPTS, message.attempts)
                self._end(span, end=receipt.delivered_at or None)
        if message.created_at and receipt.delivered_at:
            self._delivery_seconds.record(max(0.0, receipt.delivered_at - message.created_at),
                                          {sc.KIND: str(message.orchestration_type)})

    def message_retrying(self, message: Any, reason: str) -> None:
        with self._lock:
            span = self._deliveries.get(message.id)
            if span is not None:
                span.add_event("attempt failed", {sc.REASON: reason, sc.ATTEMPTS: message.attempts})

    def message_lost(self, message: Any, reason: str) -> None:
        """Dead (no attempt left) or uncertain (may never have arrived): the delivery span ends in error."""
        with self._lock:
            span = self._deliveries.pop(message.id, None)
            if span is not None:
                self._end(span, error=f"{message.state}: {reason}")

    # -- the end --------------------------------------------------------------------------------------

    def open_spans(self) -> int:
        with self._lock:
            return (len(self._sessions) + len(self._terminals) + len(self._turns) + len(self._delegating)
                    + len(self._deliveries))

    def close(self) -> None:
        """End every open span (marked ``cao.open_at_close``); flush and stop exporters this plugin made."""
        with self._lock:
            self._closed = True
            spans = [*(turn for turn, _ in self._turns.values()), *self._delegating.values(),
                     *self._deliveries.values(), *(span for span, _ in self._terminals.values()),
                     *self._sessions.values()]
            for table in (self._turns, self._delegating, self._deliveries, self._terminals, self._sessions):
                table.clear()
        for span in spans:
            span.set_attribute(sc.OPEN_AT_CLOSE, True)
            span.end()
        if self._owned:
            self._tracer_provider.shutdown()
            self._meter_provider.shutdown()
