"""Entry point of cao-otel: ``plugin``, one :class:`OtelPlugin`. Inert unless switched on
(``OTEL_SDK_DISABLED=false``) or given providers by an embedding program; the OpenTelemetry SDK loads
only then, at the kernel's start."""

from __future__ import annotations

import asyncio
import logging
import os
from typing import Any

from cao_hookspecs import hookimpl

log = logging.getLogger(__name__)

__all__ = ["OtelPlugin", "plugin"]


class OtelPlugin:
    """Spans and metrics of one kernel's team (see :mod:`cao_otel.telemetry`).

    :param tracer_provider: / :param meter_provider: where to record (an embedding program's own, or
        in-memory ones in tests); without them the plugin makes OTLP/HTTP exporters when switched on
        and stops them with the kernel.
    """

    def __init__(self, *, tracer_provider: Any = None, meter_provider: Any = None) -> None:
        if (tracer_provider is None) != (meter_provider is None):
            raise ValueError("give both a tracer provider and a meter provider, or neither")
        self._given = (tracer_provider, meter_provider) if tracer_provider is not None else None
        self.telemetry: Any = None

    @hookimpl
    def cao_startup(self, kernel: Any) -> None:
        from .switch import providers_from_env, switched_on
        from .telemetry import Telemetry

        if self._given is not None:
            self.telemetry = Telemetry(*self._given)
        elif switched_on(os.environ):
            self.telemetry = Telemetry(*providers_from_env(os.environ), owned=True)
            log.info("cao-otel: exporting traces and metrics over OTLP/HTTP")

    @hookimpl
    def cao_shutdown(self) -> Any:
        telemetry, self.telemetry = self.telemetry, None
        if telemetry is None:
            return None
        # Flushing exporters is network I/O: off the event loop, within the kernel's shutdown bound.
        return asyncio.to_thread(telemetry.close)

    @hookimpl
    def cao_after_terminal_created(self, terminal: Any) -> None:
        if self.telemetry is not None:
            self.telemetry.terminal_created(terminal)

    @hookimpl
    def cao_after_terminal_killed(self, terminal: Any) -> None:
        if self.telemetry is not None:
            self.telemetry.terminal_killed(terminal)

    @hookimpl
    def cao_after_session_killed(self, session_name: str) -> None:
        if self.telemetry is not None:
            self.telemetry.session_killed(session_name)

    @hookimpl
    def cao_after_status_changed(self, terminal: Any, new: Any) -> None:
        if self.telemetry is not None:
            self.telemetry.status_changed(terminal, new)

    @hookimpl
    def cao_after_handoff_started(self, request: Any, worker: Any) -> None:
        if self.telemetry is not None:
            self.telemetry.delegation_started("handoff", request, worker)

    @hookimpl
    def cao_after_handoff_finished(self, result: Any) -> None:
        if self.telemetry is not None:
            self.telemetry.delegation_finished("handoff", result)

    @hookimpl
    def cao_after_assign_started(self, request: Any, worker: Any) -> None:
        if self.telemetry is not None:
            self.telemetry.delegation_started("assign", request, worker)

    @hookimpl
    def cao_after_assign_finished(self, result: Any) -> None:
        if self.telemetry is not None:
            self.telemetry.delegation_finished("assign", result)

    @hookimpl
    def cao_after_message_queued(self, message: Any) -> None:
        if self.telemetry is not None:
            self.telemetry.message_queued(message)

    @hookimpl
    def cao_after_message_delivered(self, message: Any, receipt: Any) -> None:
        if self.telemetry is not None:
            self.telemetry.message_delivered(message, receipt)

    @hookimpl
    def cao_after_message_failed(self, message: Any, reason: str) -> None:
        if self.telemetry is not None:
            self.telemetry.message_retrying(message, reason)

    @hookimpl
    def cao_after_message_dead(self, message: Any, reason: str) -> None:
        if self.telemetry is not None:
            self.telemetry.message_lost(message, reason)

    @hookimpl
    def cao_after_message_uncertain(self, message: Any, reason: str) -> None:
        if self.telemetry is not None:
            self.telemetry.message_lost(message, reason)


#: What the ``otel`` entry point loads.
plugin = OtelPlugin()
