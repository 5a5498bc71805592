"""The scheduler: runs each enabled flow when it is due, once per occurrence however many run it.

One asyncio task per kernel. Each pass reads the flows from the store, runs those due and sleeps until
the next one is (at most ``MAX_IDLE`` seconds, so flows another server or command added are seen), or
until a route changes a flow. A run is claimed in the store before anything starts; its work (gate
script, session, prompt) goes on in a task of its own, and its end (the agent's turn done) is recorded
when the agent reports it.

A flow found due more than ``MISSED_AFTER`` seconds after its next run was missed (no scheduler ran
then): its ``catch_up`` says whether its latest missed occurrence runs once now (``once``) or is
recorded as missed (``skip``). Earlier missed occurrences are never made up one by one.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import time
from collections.abc import Awaitable, Callable
from typing import Any

import attrs

from cao_hookspecs import CreateTerminalRequest, TerminalStatus
from cao_hookspecs.errors import CaoError, NotFound
from cao_hookspecs.names import with_prefix

from . import cron
from .flow_file import Flow, read_flow, script_path
from .gate import run_gate
from .store import FlowRow, FlowStore, Run
from .template import render

log = logging.getLogger(__name__)

MAX_IDLE = 60.0
MISSED_AFTER = 60.0
#: How long a run waits for its agent's turn to end before recording it as still going.
TURN_TIMEOUT = 3600.0
SESSION_PREFIX = "flow-"

Clock = Callable[[], float]
Sleep = Callable[[float, asyncio.Event], Awaitable[None]]


async def real_sleep(seconds: float, poke: asyncio.Event) -> None:
    try:
        await asyncio.wait_for(poke.wait(), max(0.0, seconds))
    except TimeoutError:
        pass


def session_of(flow_name: str) -> str:
    """The session a flow's runs use (``cao-flow-<name>``, as upstream): one per flow, recycled each run."""
    return with_prefix(SESSION_PREFIX + flow_name)


def runner_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


@attrs.define(eq=False)
class Scheduler:
    kernel: Any
    store: FlowStore
    clock: Clock = time.time
    sleep: Sleep = real_sleep
    runner: str = attrs.field(factory=runner_name)
    _task: asyncio.Task[None] | None = attrs.field(init=False, default=None)
    _poke: asyncio.Event = attrs.field(init=False, factory=asyncio.Event)
    _runs: set[asyncio.Task[Any]] = attrs.field(init=False, factory=set)

    # -- life cycle ---------------------------------------------------------------------------------

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._loop(), name="cao-flows")

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def poke(self) -> None:
        """Look at the flows again now (one was added, enabled or disabled)."""
        self._poke.set()

    async def aclose(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
        pending = [*self._runs, *([task] if task is not None else [])]
        for run in self._runs:
            run.cancel()
        await asyncio.gather(*pending, return_exceptions=True)

    async def _loop(self) -> None:
        await self._reattach()
        while True:
            self._poke.clear()
            try:
                wake = await self.tick()
            except Exception:  # noqa: BLE001 - a broken pass is logged; the next one tries again
                log.exception("flow scheduler pass failed")
                wake = self.clock() + MAX_IDLE
            await self.sleep(wake - self.clock(), self._poke)

    # -- one pass -----------------------------------------------------------------------------------

    async def tick(self) -> float:
        """Run what is due now; when to look again."""
        now = self.clock()
        wake = now + MAX_IDLE
        for row in await asyncio.to_thread(self.store.list):
            if not row.enabled:
                continue
            try:
                flow = await asyncio.to_thread(read_flow, row.file_path)
                due = row.next_run
                if due is None:
                    due = cron.next_after(flow.schedule, now, flow.timezone)
                    await asyncio.to_thread(self.store.advance, row.name, next_run=due)
                elif due <= now:
                    due = await self._due(row, flow, now)
                wake = min(wake, due)
            except CaoError as exc:
                # A flow whose file went bad waits for a fix; the others run regardless.
                log.warning("flow %s: %s", row.name, exc)
        return wake

    async def _due(self, row: FlowRow, flow: Flow, now: float) -> float:
        """``row`` is due: run (or record) its latest due occurrence; its next due time."""
        latest = cron.latest_by(flow.schedule, now, flow.timezone)
        upcoming = cron.next_after(flow.schedule, now, flow.timezone)
        assert row.next_run is not None
        missed = now - row.next_run > MISSED_AFTER  # no scheduler ran when it was due
        if missed and flow.catch_up == "skip":
            await asyncio.to_thread(
                self.store.claim, flow.name, latest, trigger="catch_up", runner=self.runner, started_at=now,
                state="missed", detail="missed while no scheduler ran; the flow's catch_up is 'skip'")
        else:
            await self.fire(flow, latest, trigger="catch_up" if missed else "schedule")
        await asyncio.to_thread(self.store.advance, flow.name, next_run=upcoming, last_run=latest)
        return upcoming

    async def fire(self, flow: Flow, due_at: float, *, trigger: str, wait: bool = False) -> Run | None:
        """Claim and start the run of ``flow`` due at ``due_at``; None when another scheduler has it.

        The run starts in the background (gate script, session, prompt) and its end is recorded when the
        agent's turn ends. ``wait``: return the record once the agent has its prompt (or the run ended
        before: skipped, busy, failed); else the claim at once.
        """
        run = await asyncio.to_thread(self.store.claim, flow.name, due_at, trigger=trigger,
                                      runner=self.runner, started_at=self.clock())
        if run is None:
            return None
        await self._report(run, flow, "claimed")
        starting = self._track(self._begin(run, flow))
        return await asyncio.shield(starting) if wait else run

    def _track(self, work: Awaitable[Any]) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(work)
        self._runs.add(task)
        task.add_done_callback(self._runs.discard)
        return task

    # -- a run --------------------------------------------------------------------------------------

    async def _begin(self, run: Run, flow: Flow) -> Run:
        try:
            terminal_id = await self._start(run, flow)
        except asyncio.CancelledError:
            await self._end(run, flow, "interrupted", "the server stopped while the run was starting")
            raise
        except CaoError as exc:
            await self._end(run, flow, "failed", str(exc))
            terminal_id = None
        except Exception as exc:  # noqa: BLE001 - recorded, not lost: the next run tries again
            log.exception("flow %s: run %s failed", flow.name, run.id)
            await self._end(run, flow, "failed", f"{type(exc).__name__}: {exc}")
            terminal_id = None
        if terminal_id is not None:
            self._track(self._await_turn(run, flow, terminal_id))
        return await asyncio.to_thread(self.store.run, run.id)

    async def _start(self, run: Run, flow: Flow) -> str | None:
        gate = await run_gate(script_path(flow))
        if not gate.execute:
            await self._end(run, flow, "skipped", "the script answered execute: false")
            return None
        prompt = render(flow.prompt_template, gate.output)
        session = session_of(flow.name)
        try:
            _, terminals = await self.kernel.get_session(session)
        except NotFound:
            terminals = []
        if terminals:
            status = (await self.kernel.get_status(terminals[0].id)).status
            if status in (TerminalStatus.PROCESSING, TerminalStatus.WAITING_USER_ANSWER):
                await self._end(run, flow, "busy", f"the previous run's agent ({terminals[0].id}) is still "
                                                   f"{status.value}")
                return None
            await self.kernel.delete_session(session)
        terminal = await self.kernel.create_session(CreateTerminalRequest(
            agent_profile=flow.agent_profile, provider=flow.provider, session_name=session,
            working_directory=flow.working_directory))
        await self.kernel.send_input(terminal.id, prompt)
        started = await asyncio.to_thread(self.store.update, run.id, state="started",
                                          session_name=terminal.session_name, terminal_id=terminal.id)
        await self._report(started, flow, "started")
        return str(terminal.id)

    async def _await_turn(self, run: Run, flow: Flow, terminal_id: str) -> None:
        try:
            await self.kernel.wait_for_status(terminal_id, [TerminalStatus.COMPLETED], TURN_TIMEOUT)
        except asyncio.CancelledError:
            raise  # the server stops; the agent goes on and the next server looks at it again
        except NotFound:
            await self._end(run, flow, "interrupted", f"the agent's terminal {terminal_id} was removed")
        except CaoError as exc:
            await self._end(run, flow, "failed", str(exc).splitlines()[0])
        else:
            await self._end(run, flow, "completed", "")

    async def _reattach(self) -> None:
        """Runs a stopped server left unfinished: follow those whose agent still works, close the rest."""
        for run in await asyncio.to_thread(self.store.unfinished):
            if _followed_elsewhere(run.runner, self.runner):
                continue
            try:
                row = await asyncio.to_thread(self.store.get, run.flow)
                flow = await asyncio.to_thread(read_flow, row.file_path)
            except CaoError:
                await asyncio.to_thread(self.store.update, run.id, state="interrupted", ended_at=self.clock(),
                                        detail="the flow is gone")
                continue
            alive = False
            if run.terminal_id is not None:
                try:
                    await self.kernel.get_terminal(run.terminal_id)
                    alive = True
                except CaoError:
                    alive = False
            if not alive:
                await self._end(run, flow, "interrupted", "the server stopped while the run went on")
                continue
            self._track(self._await_turn(run, flow, run.terminal_id or ""))

    async def _end(self, run: Run, flow: Flow, state: str, detail: str) -> None:
        ended = await asyncio.to_thread(self.store.update, run.id, state=state, detail=detail[:2000],
                                        ended_at=self.clock())
        await self._report(ended, flow, state)

    async def _report(self, run: Run, flow: Flow, state: str) -> None:
        data = {"run_id": run.id, "flow": flow.name, "state": state, "trigger": run.trigger,
                "due_at": run.due_at, "session_name": run.session_name or session_of(flow.name),
                "terminal_id": run.terminal_id, "detail": run.detail[:500],
                "summary": f"flow {flow.name}: {state}" + (f" ({run.detail[:120]})" if run.detail else "")}
        report = getattr(self.kernel, "report_activity", None)
        if report is None:
            return
        try:
            await report("flow.run", data)
        except CaoError as exc:
            log.warning("flow %s: the run's activity was not reported: %s", flow.name, exc)


def _followed_elsewhere(runner: str, mine: str) -> bool:
    """Whether the scheduler named ``runner`` still follows its own runs: it is on another machine, or it
    is another process of this one that is alive."""
    if runner == mine:
        return False
    host, _, pid = runner.rpartition(":")
    if host != socket.gethostname():
        return True
    if not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


__all__ = ["MAX_IDLE", "MISSED_AFTER", "Scheduler", "real_sleep", "session_of"]
