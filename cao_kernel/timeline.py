"""Every terminal's timeline (``cao_hookspecs.timeline``): the kernel's services record steps here, and
``KernelAPI.get_timeline`` reads them.

A timeline lives in memory only: it measures this kernel's work, and a terminal re-adopted by the next
kernel starts a new one. It is bounded twice: a terminal keeps its first ``KEEP_FIRST`` events (its
start) and its latest ones up to ``MAX_EVENTS``, and the timelines of removed terminals are kept for the
``KEEP_GONE`` most recently removed.
"""

from __future__ import annotations

import bisect
import time
from collections import OrderedDict
from collections.abc import Mapping

import attrs

from cao_hookspecs import StatusReport, TerminalStatus, TimelineEvent

MAX_EVENTS = 256
KEEP_FIRST = 64
KEEP_GONE = 256


@attrs.define(eq=False)
class _Timeline:
    events: list[TimelineEvent] = attrs.field(factory=list)
    # Where the terminal's current input is: typing, sent, drawing (its first output came), until its
    # answer is ready; and the screen as it was when the input went out.
    turn: str | None = None
    screen_at_input: str = ""

    def add(self, event: TimelineEvent) -> None:
        # Steps reported by another process (the MCP relay) arrive after later local ones: keep time order.
        keys = [e.at for e in self.events]
        self.events.insert(bisect.bisect_right(keys, event.at), event)
        if len(self.events) > MAX_EVENTS:
            del self.events[KEEP_FIRST]


class Timelines:
    """The timelines of one kernel's terminals, live and recently removed."""

    def __init__(self) -> None:
        self._live: dict[str, _Timeline] = {}
        self._gone: OrderedDict[str, _Timeline] = OrderedDict()

    def record(self, terminal_id: str, name: str, *, at: float | None = None, once: bool = False,
               detail: Mapping[str, object] | None = None) -> None:
        """Add step ``name`` to a live terminal's timeline (``at`` defaults to now); ``once``: not when
        the timeline has it already. A terminal removed, or never started, records nothing."""
        timeline = self._live.get(terminal_id)
        if timeline is None or (once and any(e.name == name for e in timeline.events)):
            return
        timeline.add(TimelineEvent(name=name, at=time.time() if at is None else at, detail=detail or {}))

    def start(self, terminal_id: str, *, at: float, before: list[TimelineEvent] | None = None) -> None:
        """Open a timeline for a new terminal, created at ``at``; ``before`` are steps recorded for it
        before it had an id (a delegation's request)."""
        timeline = _Timeline()
        for event in before or ():
            timeline.add(event)
        self._live[terminal_id] = timeline
        self.record(terminal_id, "terminal_created", at=at)

    def has(self, terminal_id: str, name: str) -> bool:
        timeline = self._live.get(terminal_id)
        return timeline is not None and any(e.name == name for e in timeline.events)

    def typing(self, terminal_id: str, typing: bool = True) -> None:
        """An input is being typed (``typing``), or could not be after all: the turn that follows is its.
        Set before the keys go out, as the CLI may end its turn before the typing call returns."""
        timeline = self._live.get(terminal_id)
        if timeline is not None:
            timeline.turn = "typing" if typing else None

    def typed(self, terminal_id: str, screen: str, detail: Mapping[str, object] | None = None) -> None:
        """An input was typed and submitted; ``screen`` is the last one read before (its own echo aside,
        the next different screen is the CLI's first output for it)."""
        self.record(terminal_id, "task_typed", detail=detail)
        timeline = self._live.get(terminal_id)
        if timeline is not None and timeline.turn == "typing":
            timeline.turn, timeline.screen_at_input = "sent", screen

    def screen_read(self, terminal_id: str, screen: str) -> None:
        """A new screen reading: the first that differs after an input is the CLI's first output."""
        timeline = self._live.get(terminal_id)
        if timeline is not None and timeline.turn == "sent" and screen != timeline.screen_at_input:
            timeline.turn, timeline.screen_at_input = "drawing", ""
            self.record(terminal_id, "first_output")

    def status_changed(self, terminal_id: str, new: StatusReport) -> None:
        """Note when the CLI's turn for the last input ended."""
        timeline = self._live.get(terminal_id)
        if timeline is None or timeline.turn is None:
            return
        if new.status is TerminalStatus.COMPLETED or (
                new.status is TerminalStatus.IDLE and timeline.turn == "drawing"):
            timeline.turn = None
            self.record(terminal_id, "answer_ready", at=new.since or time.time(),
                        detail={"status": new.status.value})

    def end(self, terminal_id: str) -> None:
        """The terminal was removed: record it and keep its timeline among the recently removed."""
        self.record(terminal_id, "terminal_gone")
        timeline = self._live.pop(terminal_id, None)
        if timeline is None:
            return
        self._gone[terminal_id] = timeline
        while len(self._gone) > KEEP_GONE:
            self._gone.popitem(last=False)

    def get(self, terminal_id: str) -> list[TimelineEvent] | None:
        """The terminal's steps in time order, or None when it has no timeline (unknown, or forgotten)."""
        timeline = self._live.get(terminal_id) or self._gone.get(terminal_id)
        return None if timeline is None else list(timeline.events)


__all__ = ["Timelines"]
