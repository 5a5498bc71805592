"""Terminals' timelines: the steps a kernel records for each terminal (real tmux, mock agents), what an MCP
client's report adds to them, and the bounds that keep them small."""

from __future__ import annotations

import math
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cao_hookspecs import CreateTerminalRequest, StatusReport, TerminalStatus
from cao_kernel import timeline as timeline_module
from cao_kernel.errors import InvalidInput, NotFound
from cao_kernel.timeline import Timelines


def _names(events) -> list[str]:
    return [event.name for event in events]


@pytest.mark.tmux
async def test_a_terminal_s_steps_from_creation_to_removal(make_kernel, workdir):
    async with make_kernel(agents=("developer",)) as kernel:
        term = await kernel.create_session(CreateTerminalRequest(
            agent_profile="developer", session_name="steps", working_directory=workdir))
        started = await kernel.get_timeline(term.id)
        assert _names(started) == ["terminal_created", "process_started", "first_screen", "cli_ready"]
        assert started[0].at == term.created_at
        assert started[-1].detail["evidence"].startswith("mock_cli")

        await kernel.send_input(term.id, "__mock_sleep_1")
        await kernel.wait_for_status(term.id, [TerminalStatus.COMPLETED], 10)
        await kernel.send_input(term.id, "second")
        await kernel.wait_for_status(term.id, [TerminalStatus.COMPLETED], 10)
        events = await kernel.get_timeline(term.id)
        turns = _names(events)[4:]
        assert turns == ["task_typed", "first_output", "answer_ready"] * 2, turns
        assert [e.at for e in events] == sorted(e.at for e in events)
        assert events[-1].detail == {"status": "completed"}
        # The first turn slept a second: its answer came that long after its first output.
        assert events[6].at - events[5].at >= 0.9

        await kernel.delete_terminal(term.id)
        gone = await kernel.get_timeline(term.id)
        assert _names(gone) == [*_names(events), "terminal_gone"]

        with pytest.raises(NotFound, match="terminal 0123abcd not found"):
            await kernel.get_timeline("0123abcd")
        with pytest.raises(InvalidInput, match="invalid terminal id"):
            await kernel.get_timeline("../../etc")


@pytest.mark.tmux
async def test_an_mcp_report_adds_its_own_steps_and_wrong_times_are_left_out(make_kernel, workdir):
    async with make_kernel(agents=("developer",)) as kernel:
        term = await kernel.create_session(CreateTerminalRequest(
            agent_profile="developer", session_name="report", working_directory=workdir))
        now = time.time()
        await kernel.mcp_connected(term.id, {
            "started": now - 0.3, "asked": now - 0.25, "initialized": now - 0.2, "listed": now - 0.1,
            "unknown": now, "other": "text",
        })
        events = await kernel.get_timeline(term.id)
        mcp = [e for e in events if e.name.startswith(("mcp_", "tools_"))]
        assert _names(mcp) == ["mcp_started", "mcp_asked", "mcp_initialized", "tools_listed"]
        assert [e.at for e in mcp] == [now - 0.3, now - 0.25, now - 0.2, now - 0.1]
        assert float(mcp[-1].detail["received"]) >= now
        # A second report (a reconnecting client) does not record the steps again.
        await kernel.mcp_connected(term.id, {"started": now, "listed": now})
        assert _names(await kernel.get_timeline(term.id)) == _names(events)

        other = await kernel.create_terminal(CreateTerminalRequest(
            agent_profile="developer", session_name="cao-report", working_directory=workdir))
        await kernel.mcp_connected(other.id, {
            "started": "yesterday", "initialized": True, "listed": math.nan,
        })
        await kernel.mcp_connected(other.id, {"started": now - 86_400, "initialized": now + 86_400})
        steps = _names(await kernel.get_timeline(other.id))
        # Only the kernel's own receipt of the report is there.
        assert [name for name in steps if name.startswith(("mcp_", "tools_"))] == ["tools_listed"]


def _report(status: TerminalStatus) -> StatusReport:
    return StatusReport(status=status, evidence="test", since=time.time())


def test_a_turn_is_typed_drawn_and_answered_once():
    timelines = Timelines()
    timelines.start("t1", at=time.time())
    # The input is not there yet: a screen change or an end of turn now is not its.
    timelines.screen_read("t1", "before")
    timelines.status_changed("t1", _report(TerminalStatus.COMPLETED))
    timelines.typing("t1")
    timelines.typed("t1", "before", {"mark": "m"})
    timelines.screen_read("t1", "before")  # the same screen: nothing drawn yet
    timelines.screen_read("t1", "after")
    timelines.screen_read("t1", "after, more")
    timelines.status_changed("t1", _report(TerminalStatus.PROCESSING))
    timelines.status_changed("t1", _report(TerminalStatus.IDLE))
    timelines.status_changed("t1", _report(TerminalStatus.COMPLETED))
    names = _names(timelines.get("t1"))
    assert names == ["terminal_created", "task_typed", "first_output", "answer_ready"], names
    # An input that could not be typed leaves no turn behind.
    timelines.typing("t1")
    timelines.typing("t1", False)
    timelines.screen_read("t1", "other")
    timelines.status_changed("t1", _report(TerminalStatus.COMPLETED))
    assert _names(timelines.get("t1")) == names
    # Unknown terminals record nothing and have no timeline.
    timelines.record("nobody", "cli_ready")
    assert timelines.get("nobody") is None


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a", "b", "signal:x"]),
                          st.floats(min_value=0, max_value=1e6, allow_nan=False)),
                max_size=400))
def test_a_timeline_stays_in_time_order_and_bounded(steps):
    timelines = Timelines()
    timelines.start("t1", at=0.0)
    for name, at in steps:
        timelines.record("t1", name, at=at)
    events = timelines.get("t1")
    assert [e.at for e in events] == sorted(e.at for e in events)
    assert len(events) == min(len(steps) + 1, timeline_module.MAX_EVENTS)
    if len(steps) + 1 <= timeline_module.MAX_EVENTS:
        assert sorted(_names(events)) == sorted(["terminal_created", *(name for name, _ in steps)])
    # The start is kept whatever follows: the created step stays first.
    assert events[0].name == "terminal_created"


def test_removed_terminals_timelines_are_kept_for_the_latest_only():
    timelines = Timelines()
    count = timeline_module.KEEP_GONE + 5
    for index in range(count):
        timelines.start(f"{index:08x}", at=float(index))
        timelines.end(f"{index:08x}")
    assert timelines.get(f"{0:08x}") is None and timelines.get(f"{4:08x}") is None
    kept = timelines.get(f"{5:08x}")
    assert kept is not None and _names(kept) == ["terminal_created", "terminal_gone"]
    # Once removed, a terminal records nothing more.
    timelines.record(f"{5:08x}", "late")
    assert _names(timelines.get(f"{5:08x}")) == ["terminal_created", "terminal_gone"]
