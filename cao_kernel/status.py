"""Per-terminal status: the latest reading, its evidence, and waiters that need no polling.

Readings arrive when the terminal's screen changes (the backend pushes output events), and from the
agent CLI itself when its provider maps native signals (hooks, notify programs: ``signal_channel``).
Waiters await an ``asyncio.Event`` that is replaced on every change, so an idle terminal costs nothing.

Input. ``note_input`` (just before the text goes out) reports ``processing`` at once and refuses to go
back to a ready status on the screen that was showing then, or on a redraw of it that the detector reads
with the same evidence: otherwise a caller waiting for ``completed`` right after sending would see the
previous turn's answer. ``input_sent`` (once the last Enter is pressed) starts a settle window; when it
passes with no sign of a new turn the screen is trusted again. The window starts after the send because
a paste plus a provider's submit delay can take longer than the window itself. A terminal whose CLI
reports its turns' starts natively trusts no ready screen before the input's turn has announced itself,
and waits ``NATIVE_START_PATIENCE`` windows instead of one: every turn it takes
is announced, so a quiet screen means a slow CLI (a loaded machine) far more often than an ignored
input, and trusting the screen too soon would hand a waiter the previous turn's answer. A turn too fast
for its busy screen to be seen ends the latch early when the tracker can read answers (``answer_of``, the
provider's last-message extraction): a ready screen whose answer differs from the one shown at input is
the new turn's. Neither answer may contain the other, so the old answer cut short by a scroll does not
count as new. ``turn_started`` says whether the input's turn has shown itself (a native ``processing``,
or a busy screen that is not merely the typed text waiting at the prompt, read by ``pending_of``).

Native signals come before the screen. The rules, in order:

1. A native report (``native``) is taken at once, its evidence ``native: <event>``, and *held*. The
   screen's reading at that moment is its baseline. A native ``unknown`` is ignored.
2. While a native status is held, a screen reading
   - of ``unknown`` (the detector cannot tell) changes nothing;
   - of the held status releases the hold: the screen has caught up and drives again;
   - of ``error`` or ``waiting_user_answer`` wins: the screen shows what hooks do not reliably report
     (a crash, a start-up dialog, a permission prompt or menu);
   - of the baseline status is a remnant of what was drawn before the signal (a spinner still on screen
     after the turn ended) and changes nothing;
   - of any other status is a newer screen event and wins.
3. Input (``note_input``) releases the hold; the input latch above takes over.
4. A newer native report replaces the hold. Once a terminal has reported a turn's start natively
   (a native ``processing``), a native ready report that arrives after input and before the next native
   ``processing`` belongs to a turn that started before the input, and is ignored (the screen still
   reports that input's turn).
5. A CLI that reports only turn ends (``native_ends`` without a native ``processing`` so far) may
   report a turn's end after its screen showed that end, and after the next input went out: a native
   ready report within ``late_end_window`` of an input whose previous turn ended without one belongs to
   that previous turn, and is ignored once (the screen still reports the new turn).
6. ``fail`` (the agent exited, the terminal was lost) is final, whatever was held.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Collection

from cao_hookspecs import StatusReport, TerminalStatus

from .errors import AgentFailed, NotFound, Timeout

StatusListener = Callable[[StatusReport, StatusReport], None]
#: A screen's last answer, or None when it shows none the provider can read.
AnswerReader = Callable[[str], "str | None"]
_UNREAD = object()

#: Screen statuses that end a held native status whatever its baseline (rule 2).
SCREEN_ONLY = frozenset({TerminalStatus.ERROR, TerminalStatus.WAITING_USER_ANSWER})
# How long after an input a CLI's native report of the previous turn's end may still arrive (rule 5):
# the notify program it runs takes a process start, longer on a busy machine.
LATE_END_WINDOW = 2.0
#: Settle windows an input waits for the native start of its turn, on a CLI that reports turn starts.
NATIVE_START_PATIENCE = 5


class StatusTracker:
    """Status of one terminal. Lives on the kernel's event loop; not thread-safe by design."""

    def __init__(
        self, terminal_id: str, on_change: StatusListener | None = None, *, input_settle: float = 2.0,
        answer_of: AnswerReader | None = None, native_ends: bool = False,
        late_end_window: float = LATE_END_WINDOW, pending_of: Callable[[str], str] | None = None,
    ) -> None:
        self.terminal_id = terminal_id
        self._pending_of = pending_of
        self._turn_started = False
        self._answer_of = answer_of
        self._answer_at_input: object = _UNREAD
        # How long a ready reading on the unchanged pre-input screen is distrusted after the input went
        # out. After that the agent either ignored the input or answered without changing the screen.
        self.input_settle = input_settle
        self._settle_timer: asyncio.TimerHandle | None = None
        self.report = StatusReport(status=TerminalStatus.UNKNOWN, evidence="not read yet", since=time.time())
        self.screen = ""
        self._changed = asyncio.Event()
        self._observed = asyncio.Event()
        self._on_change = on_change
        self._screen_at_input: str | None = None
        self._last_reading: StatusReport | None = None
        self._evidence_at_input: str | None = None
        self._final = False
        self._closed = False
        # Native signals (see the module docstring for the rules).
        self._native: StatusReport | None = None
        self._native_baseline: TerminalStatus | None = None
        self._native_turns = False
        self._awaiting_native_start = False
        self._before_input: tuple[StatusReport | None, TerminalStatus | None, bool] | None = None
        # Rule 5: whether the CLI reports turn ends natively, whether the latest input's turn has ended
        # natively, and until when a native end may still be the previous turn's.
        self._native_ends = native_ends
        self.late_end_window = late_end_window
        self._turn: tuple[bool, bool, float] = (False, False, 0.0)  # (open, ended natively, late until)
        self._turn_before_input: tuple[bool, bool, float] | None = None
        # The answer a native end of turn carried (ProviderSpec.native_answer), for the turn it ended.
        self._answer: str | None = None
        self._answer_before_input: str | None = None

    @property
    def status(self) -> TerminalStatus:
        return self.report.status

    @property
    def turn_started(self) -> bool:
        """Whether a turn has shown itself since the latest input (see the module docstring)."""
        return self._turn_started

    @property
    def native_answer(self) -> str | None:
        """The answer the CLI's own signal carried with the end of the latest turn, while the terminal
        is still completed after it; None otherwise (the answer is then read from the screen)."""
        return self._answer if self.report.status == TerminalStatus.COMPLETED else None

    @property
    def native_held(self) -> StatusReport | None:
        """The native report currently held over the screen, if any."""
        return self._native

    def observe(self, screen: str, report: StatusReport | None) -> None:
        """A new reading of the screen (``report`` None: no detector had an answer)."""
        self.screen = screen
        observed, self._observed = self._observed, asyncio.Event()
        observed.set()
        if self._final or report is None:
            return
        if report.status == TerminalStatus.PROCESSING and not self._turn_started:
            # Some CLIs' screens read busy while typed text waits at their prompt: that is no turn yet.
            self._turn_started = self._pending_of is None or not self._pending_of(screen)
        self._last_reading = report
        if self._native is not None and not self._screen_overrides_native(report):
            return
        if self._screen_at_input is not None:
            if report.status.ready and (
                self._awaiting_native_start
                or screen == self._screen_at_input
                or (report.evidence == self._evidence_at_input and not self._shows_new_answer(screen))
            ):
                # Still the previous turn: the same screen, or a redraw of it (hints, footers) that the
                # detector reads exactly as before the input; or, on a CLI that announces each turn's
                # start, any ready screen before that announcement (a frame of the previous turn drawn
                # after its end was signalled).
                return
            self._clear_latch()
        self._set(report)

    def _shows_new_answer(self, screen: str) -> bool:
        """Whether ``screen`` shows an answer other than the one on the screen at input (see the module
        docstring). False whenever either answer cannot be read."""
        if self._answer_of is None or self._screen_at_input is None:
            return False
        if self._answer_at_input is _UNREAD:
            self._answer_at_input = self._answer_of(self._screen_at_input)
        before = self._answer_at_input
        after = self._answer_of(screen)
        if not isinstance(before, str) or not before.strip() or not after or not after.strip():
            return False
        return before not in after and after not in before

    def _screen_overrides_native(self, reading: StatusReport) -> bool:
        """Rule 2: whether a screen reading replaces the held native status (releasing it if so)."""
        held = self._native
        assert held is not None
        status = reading.status
        if status == TerminalStatus.UNKNOWN:
            return False
        if status == held.status:
            self._native = None  # the screen caught up; the native evidence stays until the status moves
            return False
        if status in SCREEN_ONLY or status != self._native_baseline:
            self._native = None
            return True
        return False

    def native(self, report: StatusReport, answer: str | None = None) -> None:
        """A status the agent CLI reported itself (already mapped by its provider; evidence set), and
        the answer its signal carried when it ended a turn."""
        if self._final or report.status == TerminalStatus.UNKNOWN:
            return
        if report.status == TerminalStatus.PROCESSING:
            self._turn_started = True
            self._native_turns = True
            self._awaiting_native_start = False
        elif report.status.ready and self._awaiting_native_start:
            return  # rule 4: the end of a turn that began before the latest input
        elif report.status.ready and not self._native_turns:
            open_, ended, late_until = self._turn
            if time.monotonic() < late_until:
                self._turn = (open_, ended, 0.0)
                return  # rule 5: the previous turn's end, arriving late
            self._turn = (open_, True, 0.0)
        self._clear_latch()
        self._native = report
        last = self._last_reading
        self._native_baseline = last.status if last is not None else None
        self._set(report)
        self._answer = answer if report.status == TerminalStatus.COMPLETED else None

    def _clear_latch(self) -> None:
        self._screen_at_input = None
        self._answer_at_input = _UNREAD
        self._before_input = None
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
        self._answer_at_input = _UNREAD
        self._before_input = None
        if reading is not None and reading.status.ready:
            self._set(reading)

    def note_input(self) -> None:
        """Input is about to be sent: the agent is busy until a new screen or native signal says otherwise."""
        if self._final:
            return
        self._clear_latch()
        self._turn_started = False
        self._before_input = (self._native, self._native_baseline, self._awaiting_native_start)
        self._answer_before_input, self._answer = self._answer, None
        self._native = None
        self._awaiting_native_start = self._native_turns
        self._turn_before_input = self._turn
        open_, ended, _ = self._turn
        owed = self._native_ends and open_ and not ended
        self._turn = (True, False, time.monotonic() + self.late_end_window if owed else 0.0)
        self._screen_at_input = self.screen
        last = self._last_reading
        self._evidence_at_input = last.evidence if last is not None and last.status.ready else None
        self._set(StatusReport(status=TerminalStatus.PROCESSING, evidence="input sent"))

    def input_sent(self) -> None:
        """The input has gone out, last Enter included: start the settle window."""
        if self._final or self._screen_at_input is None:
            return  # a new turn has already shown itself
        if self._settle_timer is not None:
            self._settle_timer.cancel()
        self._before_input = self._turn_before_input = None
        window = self.input_settle * (NATIVE_START_PATIENCE if self._awaiting_native_start else 1)
        self._settle_timer = asyncio.get_running_loop().call_later(window, self._settled)

    def abort_input(self) -> None:
        """The input could not be sent after all: go back to what was known before it."""
        if self._screen_at_input is None or self._final:
            return
        before, turn = self._before_input, self._turn_before_input
        self._clear_latch()
        if before is not None:
            self._native, self._native_baseline, self._awaiting_native_start = before
            self._answer = self._answer_before_input
        if turn is not None:
            self._turn, self._turn_before_input = turn, None
        if self._native is not None:
            self._set(self._native)
        elif self._last_reading is not None:
            self._set(self._last_reading)

    def detach(self) -> None:
        """The kernel stops watching the terminal (it keeps running): drop the input latch and its timer."""
        self._clear_latch()

    def close(self) -> None:
        """The terminal was deleted: wake every waiter (they raise NotFound)."""
        self._clear_latch()
        self._closed = True
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    def fail(self, evidence: str) -> None:
        """The agent exited or its terminal was lost: error, for good."""
        self._clear_latch()
        self._native = None
        # Final before the change goes out: whoever hears of it can tell it is for good.
        self._final = True
        before = self._changed
        self._set(StatusReport(status=TerminalStatus.ERROR, evidence=evidence))
        if self._changed is before:
            # Already in error (the agent said so): no change event, but waiters must hear it is final.
            changed, self._changed = self._changed, asyncio.Event()
            changed.set()

    @property
    def failed_for_good(self) -> bool:
        return self._final

    async def ended(self) -> StatusReport | None:
        """Wait until the terminal fails for good (its last report) or is deleted (None)."""
        while not self._final:
            if self._closed:
                return None
            await self._changed.wait()
        return self.report

    def _set(self, report: StatusReport) -> None:
        if report.status != TerminalStatus.COMPLETED:
            self._answer = None  # a turn's answer lasts while its end is what the terminal shows
        old = self.report
        if report.status == old.status:
            if report.evidence != old.evidence or report.prompt != old.prompt:
                # Same status, new evidence or prompt: keep the original `since`, no change event (a new
                # prompt is announced by the kernel's prompt desk).
                self.report = StatusReport(status=report.status, evidence=report.evidence, since=old.since,
                                           prompt=report.prompt)
            return
        self.report = StatusReport(status=report.status, evidence=report.evidence, since=time.time(),
                                   prompt=report.prompt)
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()
        if self._on_change is not None:
            self._on_change(old, self.report)

    async def next_screen(self, timeout: float) -> bool:
        """Wait for the next screen reading, for at most ``timeout`` seconds; False when none came."""
        try:
            await asyncio.wait_for(self._observed.wait(), max(timeout, 0.0))
        except TimeoutError:
            return False
        return True

    async def screen_caught_up(self, timeout: float) -> bool:
        """Wait until the screen shows what a held native ready status says, for at most ``timeout``.

        A CLI can report a turn's end a few milliseconds before it has drawn the end of the answer
        (Codex draws its turn summary after running ``notify``); an answer read then would be missing.
        True at once when nothing native is held; False when the screen did not catch up in time (a
        remnant the detector keeps misreading: the answer is as drawn as it will get).
        """
        deadline = time.monotonic() + timeout
        while self._native is not None and self._native.status.ready and not self._closed:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            try:
                await asyncio.wait_for(self._observed.wait(), remaining)
            except TimeoutError:
                return False
        return True

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
