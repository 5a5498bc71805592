"""StatusTracker: native signals before screen reading, the input latch and its settle window.

The rules are stated in ``cao_kernel/status.py``. The examples pin each one; the state machine runs
any interleaving of screen readings, native signals, input (sent, settled, aborted) and failures
against a reference model written from those rules, and checks properties that hold whatever happens.
"""

from __future__ import annotations

import asyncio
import dataclasses

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from cao_hookspecs import StatusReport, TerminalStatus
from cao_kernel.status import StatusTracker

S = TerminalStatus
READY = (S.IDLE, S.COMPLETED)


def screen(status: TerminalStatus, evidence: str = "") -> StatusReport:
    return StatusReport(status=status, evidence=evidence or f"screen {status.value}")


def native(status: TerminalStatus, event: str = "Stop") -> StatusReport:
    return StatusReport(status=status, evidence=f"native: {event}")


async def _tracker(**kw) -> StatusTracker:
    tracker = StatusTracker("0123abcd", **kw)
    tracker.observe("prompt", screen(S.IDLE, "empty prompt"))
    return tracker


# -- the rules, one example each ----------------------------------------------------------------------


async def test_native_completed_holds_over_a_spinner_remnant_until_the_screen_catches_up():
    t = await _tracker()
    t.note_input()
    t.input_sent()
    t.observe("spinner 1", screen(S.PROCESSING, "spinner"))
    t.native(native(S.COMPLETED))
    assert (t.status, t.report.evidence) == (S.COMPLETED, "native: Stop")
    # Rule 2, baseline: the spinner is still drawn (and animates): a remnant.
    t.observe("spinner 2", screen(S.PROCESSING, "spinner"))
    t.observe("blank", screen(S.UNKNOWN, "nothing"))
    assert (t.status, t.report.evidence) == (S.COMPLETED, "native: Stop")
    # The screen catches up: the hold ends, the native evidence stays until the status moves.
    t.observe("summary", screen(S.COMPLETED, "turn summary"))
    assert t.native_held is None and t.report.evidence == "native: Stop"
    # From here the screen drives: a person typing straight into the CLI starts a turn it shows.
    t.observe("spinner 3", screen(S.PROCESSING, "spinner"))
    assert t.status == S.PROCESSING


async def test_a_newer_screen_status_ends_the_hold():
    t = await _tracker()
    t.observe("spinner", screen(S.PROCESSING))
    t.native(native(S.COMPLETED))
    t.observe("idle again", screen(S.IDLE, "interrupted"))
    assert (t.status, t.native_held) == (S.IDLE, None)


@pytest.mark.parametrize("shown", [S.ERROR, S.WAITING_USER_ANSWER])
async def test_error_and_prompts_on_screen_win_over_any_native_status(shown):
    for held in (S.PROCESSING, S.COMPLETED):
        t = await _tracker()
        t.observe("x", screen(shown))  # even when the baseline is the very same status
        t.native(native(held, "UserPromptSubmit" if held == S.PROCESSING else "Stop"))
        assert t.status == held
        t.observe("y", screen(shown, "again"))
        assert (t.status, t.native_held) == (shown, None)


async def test_input_releases_the_hold_and_the_latch_takes_over():
    t = await _tracker()
    t.observe("answer", screen(S.PROCESSING, "spinner"))
    t.native(native(S.COMPLETED))
    t.note_input()
    assert (t.status, t.native_held) == (S.PROCESSING, None)
    t.observe("answer", screen(S.COMPLETED, "summary"))  # the screen shown when the input went out
    assert t.status == S.PROCESSING
    t.observe("answer 2", screen(S.COMPLETED, "summary 2"))  # a new screen, read differently: the new turn
    assert t.status == S.COMPLETED


async def test_a_native_signal_ends_the_input_latch_at_once():
    t = await _tracker(input_settle=60)
    t.observe("done", screen(S.COMPLETED, "summary of turn 1"))
    t.note_input()
    t.input_sent()
    t.observe("done", screen(S.COMPLETED, "summary of turn 1"))
    assert t.status == S.PROCESSING  # latched: the previous turn
    t.native(native(S.PROCESSING, "UserPromptSubmit"))
    t.native(native(S.COMPLETED))
    assert (t.status, t._settle_timer) == (S.COMPLETED, None)


async def test_a_turn_end_from_before_the_input_is_ignored_once_turn_starts_are_reported():
    t = await _tracker()
    t.note_input()
    t.native(native(S.PROCESSING, "UserPromptSubmit"))
    # A message typed while busy: the kernel sends it, then the first turn ends.
    t.note_input()
    t.native(native(S.COMPLETED))
    assert t.status == S.PROCESSING
    t.native(native(S.PROCESSING, "UserPromptSubmit"))
    t.native(native(S.COMPLETED))
    assert t.status == S.COMPLETED


async def test_without_turn_starts_a_turn_end_is_taken_after_input():
    t = await _tracker()
    t.note_input()
    t.native(native(S.COMPLETED, "notify"))
    assert t.status == S.COMPLETED


async def test_a_late_end_of_the_previous_turn_is_ignored_when_only_ends_are_reported():
    t = await _tracker(native_ends=True, late_end_window=60)
    t.note_input()
    t.observe("answer 1", screen(S.COMPLETED, "answer 1"))  # the screen saw turn 1 end first
    t.note_input()
    t.native(native(S.COMPLETED, "notify"))  # turn 1's notify, after the second input went out
    assert t.status == S.PROCESSING
    t.native(native(S.COMPLETED, "notify"))  # turn 2's
    assert t.status == S.COMPLETED


async def test_a_turn_end_is_taken_when_the_previous_one_came_natively_or_too_long_ago():
    t = await _tracker(native_ends=True, late_end_window=60)
    t.note_input()
    t.native(native(S.COMPLETED, "notify"))
    t.note_input()
    t.native(native(S.COMPLETED, "notify"))  # nothing owed: this is turn 2's end
    assert t.status == S.COMPLETED
    late = await _tracker(native_ends=True, late_end_window=0)
    late.note_input()
    late.observe("answer 1", screen(S.COMPLETED, "answer 1"))
    late.note_input()
    late.native(native(S.COMPLETED, "notify"))  # the window is over: taken as the new turn's end
    assert late.status == S.COMPLETED


async def test_abort_restores_the_held_native_status():
    t = await _tracker()
    t.observe("spinner", screen(S.PROCESSING))
    t.native(native(S.COMPLETED))
    t.note_input()
    t.abort_input()
    assert (t.status, t.native_held) == (S.COMPLETED, native(S.COMPLETED))
    t.observe("spinner 2", screen(S.PROCESSING))  # the baseline is back too
    assert t.status == S.COMPLETED


async def test_failure_is_final_and_native_unknown_means_nothing():
    t = await _tracker()
    t.native(native(S.UNKNOWN, "Whatever"))
    assert t.status == S.IDLE
    t.native(native(S.COMPLETED))
    t.fail("agent exited (status 0)")
    t.native(native(S.PROCESSING, "UserPromptSubmit"))
    t.observe("x", screen(S.COMPLETED))
    assert (t.status, t.report.evidence) == (S.ERROR, "agent exited (status 0)")


async def test_the_settle_window_starts_when_the_input_has_gone_out():
    t = await _tracker(input_settle=0.05)
    t.observe("answer 1", screen(S.COMPLETED, "answer 1"))
    t.note_input()
    t.observe("answer 1 + typed", screen(S.COMPLETED, "answer 1"))  # the paste, the Enter not yet pressed
    await asyncio.sleep(0.15)
    assert t.status == S.PROCESSING  # no window before the input has gone out
    t.input_sent()
    await asyncio.sleep(0.15)
    assert (t.status, t.report.evidence) == (S.COMPLETED, "answer 1")  # ignored input: trusted again


async def test_a_cli_that_reports_turn_starts_gets_longer_before_its_screen_is_trusted_again():
    t = await _tracker(input_settle=0.05)
    t.note_input()
    t.native(native(S.PROCESSING, "UserPromptSubmit"))
    t.native(native(S.COMPLETED), "answer 1")
    t.observe("answer 1", screen(S.COMPLETED, "answer 1"))
    t.note_input()
    t.input_sent()
    # Its turn's start is due: a loaded machine's CLI announces it late, the screen still shows turn 1.
    await asyncio.sleep(0.15)
    assert t.status == S.PROCESSING
    t.native(native(S.PROCESSING, "UserPromptSubmit"))
    t.native(native(S.COMPLETED), "answer 2")
    assert (t.status, t.native_answer) == (S.COMPLETED, "answer 2")
    # An input it ignores is still let go, after the longer wait.
    t.note_input()
    t.input_sent()
    await asyncio.sleep(0.05 * 5 + 0.1)
    assert t.status == S.COMPLETED and t.native_answer is None


async def test_a_stale_ready_frame_before_the_announced_start_is_not_the_new_turns_end():
    t = await _tracker(input_settle=60)
    t.note_input()
    t.native(native(S.PROCESSING, "UserPromptSubmit"))
    t.native(native(S.COMPLETED), "answer 1")
    t.observe("answer 1", screen(S.COMPLETED, "answer 1"))
    t.note_input()
    t.input_sent()
    # The CLI redraws the previous turn's end after it was signalled: another frame, read as ready.
    t.observe("answer 1, redrawn", screen(S.COMPLETED, "summary row"))
    assert t.status == S.PROCESSING
    t.native(native(S.PROCESSING, "UserPromptSubmit"))
    t.native(native(S.COMPLETED), "answer 2")
    assert (t.status, t.native_answer) == (S.COMPLETED, "answer 2")


async def test_an_answer_read_waits_for_the_screen_to_show_a_reported_turn_end():
    t = await _tracker()
    assert await t.screen_caught_up(5)  # nothing held
    t.observe("spinner", screen(S.PROCESSING))
    t.native(native(S.COMPLETED))
    waiter = asyncio.ensure_future(t.screen_caught_up(5))
    await asyncio.sleep(0.05)
    t.observe("spinner 2", screen(S.PROCESSING))
    await asyncio.sleep(0.05)
    assert not waiter.done()
    t.observe("summary", screen(S.COMPLETED))
    assert await asyncio.wait_for(waiter, 1) is True
    # A remnant that never goes away: the wait is bounded.
    t.note_input()
    t.observe("spinner 3", screen(S.PROCESSING))
    t.native(native(S.COMPLETED))
    assert await t.screen_caught_up(0.1) is False


async def test_the_answer_a_turns_end_carried_lasts_until_the_next_input_and_comes_back_on_abort():
    t = await _tracker()
    t.note_input()
    t.native(native(S.PROCESSING, "UserPromptSubmit"))
    t.native(native(S.COMPLETED), "the answer")
    assert t.native_answer == "the answer"
    t.observe("summary", screen(S.COMPLETED, "turn summary"))  # the screen catching up keeps it
    assert t.native_answer == "the answer"
    t.note_input()
    assert t.native_answer is None
    t.abort_input()  # the input never went out: the answer is the latest turn's again
    assert t.native_answer == "the answer"
    t.note_input()
    t.native(native(S.COMPLETED), "stale")  # rule 4: the previous turn's end, ignored with its answer
    assert t.native_answer is None and t.status == S.PROCESSING
    t.native(native(S.PROCESSING, "UserPromptSubmit"))
    t.native(native(S.COMPLETED))  # an end that carries nothing: the screen is read
    assert t.native_answer is None
    t.native(native(S.PROCESSING, "UserPromptSubmit"))
    t.native(native(S.COMPLETED), "second")
    t.observe("spinner", screen(S.ERROR, "crashed"))  # the status moves on: the answer is gone
    assert t.native_answer is None


# -- any interleaving, against a reference model ------------------------------------------------------


@dataclasses.dataclass
class Model:
    """The rules of status.py restated plainly: what the tracker must report after each step."""

    status: TerminalStatus = S.IDLE
    evidence: str = "empty prompt"
    screen: str = "prompt"
    reading: StatusReport | None = dataclasses.field(default_factory=lambda: screen(S.IDLE, "empty prompt"))
    latched_screen: str | None = None
    latched_evidence: str | None = None
    window_open: bool = False
    held: StatusReport | None = None
    baseline: TerminalStatus | None = None
    turns_reported: bool = False
    awaiting_start: bool = False
    saved: tuple | None = None
    final: bool = False
    answer: str | None = None  # what the latest accepted native end of turn carried
    saved_answer: str | None = None

    def show(self, report: StatusReport) -> None:
        if report.status != S.COMPLETED:
            self.answer = None
        if report.status != self.status or report.evidence != self.evidence:
            self.status, self.evidence = report.status, report.evidence

    def unlatch(self) -> None:
        self.latched_screen = None
        self.window_open = False
        self.saved = None

    def observe(self, text: str, reading: StatusReport | None) -> None:
        self.screen = text
        if self.final or reading is None:
            return
        self.reading = reading
        if self.held is not None:
            kind = reading.status
            if kind == S.UNKNOWN:
                return
            if kind == self.held.status:
                self.held = None
                return
            if kind in (S.ERROR, S.WAITING_USER_ANSWER) or kind != self.baseline:
                self.held = None
            else:
                return
        if self.latched_screen is not None:
            same = text == self.latched_screen or reading.evidence == self.latched_evidence
            if reading.status in READY and (same or self.awaiting_start):
                return
            self.unlatch()
        self.show(reading)

    def native(self, report: StatusReport, answer: str | None = None) -> None:
        if self.final or report.status == S.UNKNOWN:
            return
        if report.status == S.PROCESSING:
            self.turns_reported, self.awaiting_start = True, False
        elif report.status in READY and self.awaiting_start:
            return
        self.unlatch()
        self.held = report
        self.baseline = self.reading.status if self.reading is not None else None
        self.show(report)
        self.answer = answer if report.status == S.COMPLETED else None

    def note_input(self) -> None:
        if self.final:
            return
        self.unlatch()
        self.saved = (self.held, self.baseline, self.awaiting_start)
        self.saved_answer, self.answer = self.answer, None
        self.held = None
        self.awaiting_start = self.turns_reported
        self.latched_screen = self.screen
        ready = self.reading is not None and self.reading.status in READY
        self.latched_evidence = self.reading.evidence if ready else None
        self.show(StatusReport(status=S.PROCESSING, evidence="input sent"))

    def input_sent(self) -> None:
        if self.final or self.latched_screen is None:
            return
        self.window_open = True
        self.saved = None

    def settle(self) -> None:
        self.window_open = False
        if self.latched_screen is None or self.final:
            return
        self.latched_screen = None
        self.saved = None
        if self.reading is not None and self.reading.status in READY:
            self.show(self.reading)

    def abort(self) -> None:
        if self.latched_screen is None or self.final:
            return
        saved = self.saved
        self.unlatch()
        if saved is not None:
            self.held, self.baseline, self.awaiting_start = saved
            self.answer = self.saved_answer
        if self.held is not None:
            self.show(self.held)
        elif self.reading is not None:
            self.show(self.reading)

    def fail(self, evidence: str) -> None:
        self.unlatch()
        self.held = None
        self.show(StatusReport(status=S.ERROR, evidence=evidence))
        self.final = True


screens = st.sampled_from(["prompt", "spinner", "answer A", "answer B", "dialog", "crash"])
readings = st.none() | st.builds(screen, st.sampled_from(list(S)), st.sampled_from(["a", "b", "c"]))
natives = st.builds(native, st.sampled_from(list(S)), st.sampled_from(["UserPromptSubmit", "Stop", "notify"]))


class TrackerMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.tracker: StatusTracker = self.run(lambda: StatusTracker("0123abcd", input_settle=3600))
        self.run(lambda: self.tracker.observe("prompt", screen(S.IDLE, "empty prompt")))
        self.model = Model()
        self.changes = 0
        self.tracker._on_change = lambda old, new: self._changed(old, new)

    def _changed(self, old: StatusReport, new: StatusReport) -> None:
        assert old.status != new.status  # a change event is a status change
        self.changes += 1

    def run(self, fn):
        async def call():
            return fn()

        return self.loop.run_until_complete(call())

    def teardown(self) -> None:
        self.loop.close()

    @rule(text=screens, reading=readings)
    def screen_read(self, text, reading):
        before = self.tracker.status
        held = self.tracker.native_held
        baseline = self.model.baseline
        self.run(lambda: self.tracker.observe(text, reading))
        self.model.observe(text, reading)
        if held is not None and reading is not None and reading.status in (S.UNKNOWN, baseline) \
                and reading.status not in (S.ERROR, S.WAITING_USER_ANSWER):
            assert self.tracker.status == before  # a remnant never moves a held status

    @rule(report=natives, answer=st.none() | st.sampled_from(["answer A", "answer B"]))
    def native_signal(self, report, answer):
        self.run(lambda: self.tracker.native(report, answer))
        self.model.native(report, answer)

    @rule()
    def input_goes_out(self):
        self.run(self.tracker.note_input)
        self.model.note_input()
        if not self.model.final:
            assert self.tracker.status == S.PROCESSING and self.tracker.native_held is None

    @rule()
    def last_enter_pressed(self):
        self.run(self.tracker.input_sent)
        self.model.input_sent()

    @precondition(lambda self: self.tracker._settle_timer is not None)
    @rule()
    def settle_window_passes(self):
        def fire():
            self.tracker._settle_timer.cancel()
            self.tracker._settled()

        self.run(fire)
        self.model.settle()

    @rule()
    def input_fails(self):
        self.run(self.tracker.abort_input)
        self.model.abort()

    @rule(evidence=st.sampled_from(["agent exited (status 1)", "terminal lost: gone"]))
    def agent_dies(self, evidence):
        self.run(lambda: self.tracker.fail(evidence))
        self.model.fail(evidence)

    @invariant()
    def agrees_with_the_model(self):
        assert (self.tracker.status, self.tracker.report.evidence) == (self.model.status, self.model.evidence)
        assert self.tracker.native_held == self.model.held
        assert (self.tracker._settle_timer is not None) == self.model.window_open

    @invariant()
    def a_carried_answer_is_the_latest_turns_while_it_shows_completed(self):
        expected = self.model.answer if self.model.status == S.COMPLETED else None
        assert self.tracker.native_answer == expected

    @invariant()
    def a_held_native_status_is_the_status(self):
        held = self.tracker.native_held
        if held is not None:
            assert self.tracker.status == held.status and self.tracker.report.evidence.startswith("native: ")

    @invariant()
    def failure_is_final(self):
        if self.tracker.failed_for_good:
            assert self.tracker.status == S.ERROR and self.tracker.native_held is None


TrackerMachine.TestCase.settings = settings(max_examples=300, stateful_step_count=30, deadline=None)
test_any_interleaving_follows_the_rules = TrackerMachine.TestCase
