"""The scheduler on real kernels and tmux with mock agents, on a fake clock: each due occurrence runs
once, on time, in the flow's own session, however many schedulers share the flows; a missed one is made
up once or recorded as missed; a busy agent is not interrupted; the gate script decides and fills."""

from __future__ import annotations

import asyncio
import os
import stat
from pathlib import Path

import pytest
from cao_flows.plugin import plugin
from cao_flows.scheduler import Scheduler
from cao_testkit.waiting import eventually

from cao_hookspecs import TerminalStatus, hookimpl

from .conftest import T0

pytestmark = pytest.mark.tmux

MINUTE = 60.0
FIRST = T0 + 30  # the first minute after T0


def _fake(kernel, clock):
    """The kernel's flows, scheduled by ``clock``."""
    service = plugin.service(kernel)
    service.scheduler = Scheduler(kernel, service.store, clock=clock.now, sleep=clock.sleep)
    return service


async def _settled(service, count: int, *, states=("completed", "skipped", "busy", "failed", "missed")):
    async def done():
        runs = await asyncio.to_thread(service.store.runs, "daily", 100)
        return runs if len(runs) == count and all(r.state in states for r in runs) else None

    return list(reversed(await eventually(done, 20, f"{count} finished runs", interval=0.05)))


async def test_a_flow_every_minute_runs_on_time_once_per_minute_in_its_own_session(
        flows_kernel, clock, flow_file):
    path = flow_file(body="Summarise the day.")
    async with flows_kernel() as kernel:
        service = _fake(kernel, clock)
        added = await service.add_file(str(path))
        assert added["next_run"].startswith("2026-03-02T10:01:00")
        terminals = []
        for minute in range(3):
            clock.advance_to(FIRST + minute * MINUTE)
            runs = await _settled(service, minute + 1)
            terminals.append(runs[-1].terminal_id)
        assert [r.due_at for r in runs] == [FIRST, FIRST + MINUTE, FIRST + 2 * MINUTE]
        # On time: each claimed at the moment it was due, by the schedule.
        assert [r.started_at for r in runs] == [r.due_at for r in runs]
        assert {r.trigger for r in runs} == {"schedule"} and {r.state for r in runs} == {"completed"}
        assert {r.session_name for r in runs} == {"cao-flow-daily"} and len(set(terminals)) == 3
        # The session is recycled: only the last run's agent is left, and it was given the prompt.
        _, left = await kernel.get_session("cao-flow-daily")
        assert [t.id for t in left] == [terminals[-1]]
        assert "Summarise the day." in await kernel.get_output(terminals[-1])
        row = await asyncio.to_thread(service.store.get, "daily")
        assert row.last_run == FIRST + 2 * MINUTE and row.next_run == FIRST + 3 * MINUTE


async def test_two_schedulers_sharing_the_flows_run_each_occurrence_once(
        flows_kernel, flow_file, tmp_path, cao_home):
    from cao_testkit.tmux import private_tmux_socket

    from .conftest import FakeClock

    shared = str(tmp_path / "shared-flows.sqlite3")
    path = flow_file()
    other_home = tmp_path / "other-home"
    with private_tmux_socket() as other_socket:
        async with flows_kernel(CAO_FLOWS_DB=shared) as one, \
                flows_kernel(home=other_home, socket=other_socket.socket_path, CAO_FLOWS_DB=shared) as two:
            started: list[str] = []  # every agent either kernel starts

            class Count:
                @hookimpl
                def cao_after_terminal_created(self, terminal):
                    started.append(terminal.id)

            for kernel in (one, two):
                kernel.register_plugin(Count(), name="count")
            clocks = (FakeClock(), FakeClock())
            first, second = _fake(one, clocks[0]), _fake(two, clocks[1])
            await first.add_file(str(path))
            second.scheduler.start()
            for minute in range(2):
                for fake in clocks:
                    fake.advance_to(FIRST + minute * MINUTE)
                runs = await _settled(first, minute + 1)
            assert [r.due_at for r in runs] == [FIRST, FIRST + MINUTE]
            # One agent per occurrence, whichever scheduler claimed it.
            assert sorted(started) == sorted(r.terminal_id for r in runs), (started, runs)


@pytest.mark.parametrize("catch_up", ["once", "skip"])
async def test_a_run_missed_while_no_scheduler_ran_is_made_up_once_or_recorded(
        flows_kernel, clock, flow_file, catch_up):
    path = flow_file(catch_up=catch_up)
    async with flows_kernel() as kernel:
        service = _fake(kernel, clock)
        await service.scheduler.aclose()  # no scheduler runs while time passes
        service.scheduler = Scheduler(kernel, service.store, clock=clock.now, sleep=clock.sleep)
        await asyncio.to_thread(service.store.add, "daily", str(path), FIRST)
        clock.advance_to(FIRST + 4 * MINUTE + 20)  # five occurrences went by
        service.scheduler.start()
        (run,) = await _settled(service, 1)
        assert run.due_at == FIRST + 4 * MINUTE and run.trigger == "catch_up"
        sessions = {s.name for s in await kernel.list_sessions()}
        if catch_up == "once":
            assert run.state == "completed" and "cao-flow-daily" in sessions
        else:
            assert run.state == "missed" and "cao-flow-daily" not in sessions
            assert "catch_up is 'skip'" in run.detail
        clock.advance_to(FIRST + 5 * MINUTE)  # the schedule goes on as before
        runs = await _settled(service, 2)
        assert runs[-1].trigger == "schedule" and runs[-1].state == "completed"


async def test_a_busy_agent_is_not_interrupted_and_the_run_says_so(flows_kernel, clock, flow_file):
    path = flow_file(body="__mock_sleep_30")
    async with flows_kernel() as kernel:
        service = _fake(kernel, clock)
        await service.add_file(str(path))
        clock.advance_to(FIRST)

        async def started():
            runs = await asyncio.to_thread(service.store.runs, "daily", 10)
            return runs[0] if runs and runs[0].state == "started" else None

        first = await eventually(started, 20, "the first run started", interval=0.05)
        await kernel.wait_for_status(first.terminal_id, [TerminalStatus.PROCESSING], 10)
        clock.advance_to(FIRST + MINUTE)

        async def busy():
            runs = await asyncio.to_thread(service.store.runs, "daily", 10)
            return runs[0] if len(runs) == 2 and runs[0].state == "busy" else None

        second = await eventually(busy, 20, "the second run found the agent busy", interval=0.05)
        assert first.terminal_id in second.detail
        assert (await kernel.get_terminal(first.terminal_id)).id == first.terminal_id  # left alone


def _script(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text("#!/bin/sh\n" + text + "\n", encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.mark.parametrize(("script", "state", "detail"), [
    ('echo \'{"execute": true, "output": {"topic": "sales"}}\'', "completed", ""),
    ('echo \'{"execute": false, "output": {}}\'', "skipped", "execute: false"),
    ('echo \'{"execute": true, "output": {}}\'', "failed", "no value for [[topic]]"),
    ("echo not json", "failed", "must print a JSON object"),
    ('echo \'{"execute": true}\'', "failed", "with both keys"),
    ("echo oops >&2; exit 3", "failed", "exited with status 3: oops"),
])
async def test_the_gate_script_decides_and_fills_the_prompt(flows_kernel, clock, flow_file, tmp_path,
                                                               script, state, detail):
    _script(tmp_path, "gate.sh", script)
    path = flow_file(body="Report on [[topic]].", script="./gate.sh")
    async with flows_kernel() as kernel:
        service = _fake(kernel, clock)
        run = await service.run_now((await service.add_file(str(path)))["name"])
        (run,) = await _settled(service, 1)
        assert run.state == state and detail in run.detail and run.trigger == "manual"
        if state == "completed":
            assert "Report on sales." in await kernel.get_output(run.terminal_id)


async def test_a_hanging_script_is_stopped_with_its_children(flows_kernel, clock, flow_file, tmp_path,
                                                              monkeypatch):
    import cao_flows.gate as gate

    monkeypatch.setattr(gate, "SCRIPT_TIMEOUT", 0.5)
    marker = tmp_path / "child.pid"
    _script(tmp_path, "slow.sh", f"sleep 60 & echo $! > {marker}; wait")
    path = flow_file(script="./slow.sh")
    async with flows_kernel() as kernel:
        service = _fake(kernel, clock)
        await service.add_file(str(path))
        run = await service.run_now("daily")
        assert run.state == "failed" and "did not finish within 0.5 s" in run.detail
        child = int(marker.read_text())

        def gone() -> bool:
            try:
                os.kill(child, 0)
            except ProcessLookupError:
                return True
            return False

        await eventually(lambda: gone() or None, 5, "the script's child was stopped", interval=0.05)
