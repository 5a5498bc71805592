"""Per-terminal status: the latest reading, its evidence, and waiters that need no polling.

Readings arrive when the terminal's screen changes (the backend pushes output events). Waiters await
an ``asyncio.Event`` that is replaced on every change, so an idle terminal costs nothing.

After input is sent the tracker reports ``processing`` at once and refuses to go back to a ready
status on the screen that was showing when the input went out, or on a redraw of it that the detector
reads with the same evidence: otherwise a caller waiting for ``completed`` right after sending would see
the previous turn's answer. After a settle window with no sign of a new turn it trusts the screen again.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Collection

from cao_hookspecs import StatusReport, TerminalStatus

from .errors import AgentFailed, NotFound, Timeout

StatusListener = Callable[[StatusReport, StatusReport], None]


class StatusTracker:
    """Status of one terminal. Lives on the kernel's event loop; not thread-safe by design."""

    def __init__(
        self, terminal_id: str, on_change: StatusListener | None = None, *, input_settle: float = 2.0
    ) -> None:
        self.terminal_id = terminal_id
        # How long a ready reading on the unchanged pre-input screen is distrusted. After that the agent
        # either ignored the input or answered without changing the screen; trust the screen again.
        self.input_settle = input_settle
        self._settle_timer: asyncio.TimerHandle | None = None
        self.report = StatusReport(status=TerminalStatus.UNKNOWN, evidence="not read yet", since=time.time())
        self.screen = ""
        self._changed = asyncio.Event()
        self._on_change = on_change
        self._screen_at_input: str | None = None
        self._last_reading: StatusReport | None = None
        self._evidence_at_input: str | None = None
        self._final = False
        self._closed = False

    @property
    def status(self) -> TerminalStatus:
        return self.report.status

    def observe(self, screen: str, report: StatusReport | None) -> None:
        """A new reading of the screen (``report`` None: no detector had an answer)."""
        self.screen = screen
        if self._final or report is None:
            return
        self._last_reading = report
        if self._screen_at_input is not None:
            if report.status.ready and (
                screen == self._screen_at_input or report.evidence == self._evidence_at_input
            ):
                # Still the previous turn: the same screen, or a redraw of it (hints, footers) that the
                # detector reads exactly as before the input.
                return
            self._clear_latch()
        self._set(report)

    def _clear_latch(self) -> None:
        self._screen_at_input = None
        if self._settle_timer is not None:
            self._settle_timer.cancel()
            self._settle_timer = None

    def _settled(self) -> None:
        self._settle_timer = None
        if self._screen_at_input is None or self._final:
            return
        # The window passed without a sign of a new turn: the agent ignored the input or answered without
        # changing what the detector reads. Trust the latest reading again.
        reading = self._last_reading
        self._screen_at_input = None
        if reading is not None and reading.status.ready:
            self._set(reading)

    def note_input(self) -> None:
        """Input was just sent: the agent is busy until a new screen says otherwise."""
        if self._final:
            return
        self._clear_latch()
        self._screen_at_input = self.screen
        last = self._last_reading
        self._evidence_at_input = last.evidence if last is not None and last.status.ready else None
        self._settle_timer = asyncio.get_running_loop().call_later(self.input_settle, self._settled)
        self._set(StatusReport(status=TerminalStatus.PROCESSING, evidence="input sent"))

    def abort_input(self) -> None:
        """The input could not be sent after all: go back to what the screen last said."""
        if self._screen_at_input is None or self._final:
            return
        self._clear_latch()
        if self._last_reading is not None:
            self._set(self._last_reading)

    def close(self) -> None:
        """The terminal was deleted: wake every waiter (they raise NotFound)."""
        self._clear_latch()
        self._closed = True
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    def fail(self, evidence: str) -> None:
        """The agent exited or its terminal was lost: error, for good."""
        self._clear_latch()
        self._set(StatusReport(status=TerminalStatus.ERROR, evidence=evidence))
        self._final = True

    @property
    def failed_for_good(self) -> bool:
        return self._final

    def _set(self, report: StatusReport) -> None:
        old = self.report
        if report.status == old.status and report.evidence == old.evidence:
            return
        if report.status == old.status:
            # Same status, new evidence: keep the original `since`, no change event.
            self.report = StatusReport(status=report.status, evidence=report.evidence, since=old.since)
            return
        self.report = StatusReport(status=report.status, evidence=report.evidence, since=time.time())
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()
        if self._on_change is not None:
            self._on_change(old, self.report)

    async def wait_for(
        self,
        statuses: Collection[TerminalStatus],
        timeout: float,
        *,
        fail_on_error: bool = True,
    ) -> StatusReport:
        """Return as soon as the status is one of ``statuses``.

        Raises ``AgentFailed`` when the terminal reaches ``error`` (unless error is awaited or
        ``fail_on_error`` is false) and ``Timeout`` when ``timeout`` seconds pass first.
        """
        wanted = {TerminalStatus(s) for s in statuses}
        deadline = time.monotonic() + timeout
        while True:
            if self._closed:
                raise NotFound(f"terminal {self.terminal_id} was deleted")
            current = self.report
            if current.status in wanted:
                return current
            if fail_on_error and current.status == TerminalStatus.ERROR:
                raise AgentFailed(f"terminal {self.terminal_id} is in error: {current.evidence}")
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                names = ", ".join(sorted(s.value for s in wanted))
                raise Timeout(
                    f"terminal {self.terminal_id} did not reach {names} within {timeout:g} s "
                    f"(status {current.status.value}: {current.evidence})"
                )
            try:
                await asyncio.wait_for(self._changed.wait(), remaining)
            except TimeoutError:
                continue
