"""One kernel's flows: the store in its home, the scheduler, and what the routes and commands ask of them."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import attrs

from cao_hookspecs.errors import CaoError, Conflict
from cao_server.converter import iso

from . import cron
from .flow_file import Flow, FlowError, flow_text, parse_flow, read_flow
from .scheduler import Scheduler
from .store import FlowRow, FlowStore, Run, db_path


@attrs.define(eq=False)
class FlowService:
    kernel: Any
    home: Path
    settings: Any = None
    store: FlowStore = attrs.field(init=False)
    scheduler: Scheduler = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        self.store = FlowStore(db_path(self.home, self.settings))
        self.scheduler = Scheduler(self.kernel, self.store)

    def start_if_used(self) -> None:
        """Start the scheduler when this home has flows (a home that never had one costs nothing)."""
        if self.store.path.exists():
            self.scheduler.start()

    def _started(self) -> None:
        self.scheduler.start()
        self.scheduler.poke()

    # -- what the routes do -------------------------------------------------------------------------

    async def add_file(self, path: str) -> dict[str, Any]:
        flow = await asyncio.to_thread(read_flow, path)
        return await self._add(flow)

    async def add_fields(self, *, name: str, schedule: str, agent_profile: str, prompt: str,
                         provider: str | None) -> dict[str, Any]:
        """Upstream's ``POST /flows``: the flow's file is written to ``<home>/flows/<name>.flow.md``."""
        text = flow_text(name=name, schedule=schedule, agent_profile=agent_profile, prompt=prompt,
                         provider=provider)
        target = self.home / "flows" / f"{name}.flow.md"
        flow = parse_flow(text, str(target))  # checked before anything is written
        if await asyncio.to_thread(target.exists):
            raise Conflict(f"flow file {target} already exists; remove flow {name!r} first")

        def write() -> None:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")

        await asyncio.to_thread(write)
        try:
            return await self._add(flow)
        except CaoError:
            await asyncio.to_thread(target.unlink, missing_ok=True)
            raise

    async def _add(self, flow: Flow) -> dict[str, Any]:
        next_run = cron.next_after(flow.schedule, self.scheduler.clock(), flow.timezone)
        row = await asyncio.to_thread(self.store.add, flow.name, flow.file_path, next_run)
        self._started()
        return flow_json(row, flow)

    async def get(self, name: str) -> dict[str, Any]:
        row = await asyncio.to_thread(self.store.get, name)
        return await self._described(row)

    async def list(self) -> list[dict[str, Any]]:
        return [await self._described(row) for row in await asyncio.to_thread(self.store.list)]

    async def _described(self, row: FlowRow) -> dict[str, Any]:
        try:
            return flow_json(row, await asyncio.to_thread(read_flow, row.file_path))
        except FlowError as exc:
            return flow_json(row, None, problem=str(exc))

    async def remove(self, name: str) -> None:
        row = await asyncio.to_thread(self.store.get, name)
        await asyncio.to_thread(self.store.remove, name)
        managed = self.home / "flows" / f"{name}.flow.md"
        if Path(row.file_path) == managed:  # a file written by POST /flows goes with its flow
            await asyncio.to_thread(managed.unlink, missing_ok=True)

    async def set_enabled(self, name: str, enabled: bool) -> dict[str, Any]:
        row = await asyncio.to_thread(self.store.get, name)
        next_run = None
        if enabled:
            flow = await asyncio.to_thread(read_flow, row.file_path)
            next_run = cron.next_after(flow.schedule, self.scheduler.clock(), flow.timezone)
        row = await asyncio.to_thread(self.store.set_enabled, name, enabled, next_run)
        self._started()
        return await self._described(row)

    async def run_now(self, name: str) -> Run:
        """Run the flow now, whatever its schedule (enabled or not); the run once its agent has the prompt
        or it ended (skipped, busy, failed)."""
        row = await asyncio.to_thread(self.store.get, name)
        flow = await asyncio.to_thread(read_flow, row.file_path)
        self.scheduler.start()
        run = await self.scheduler.fire(flow, self.scheduler.clock(), trigger="manual", wait=True)
        if run is None:  # two manual runs in the same microsecond
            raise Conflict(f"flow {name!r} is being run already")
        await asyncio.to_thread(self.store.ran, name, run.started_at)
        return run

    async def runs(self, name: str, limit: int) -> list[dict[str, Any]]:
        await asyncio.to_thread(self.store.get, name)
        return [run_json(run) for run in await asyncio.to_thread(self.store.runs, name, limit)]

    async def aclose(self) -> None:
        await self.scheduler.aclose()


def flow_json(row: FlowRow, flow: Flow | None, *, problem: str | None = None) -> dict[str, Any]:
    """A flow as the routes answer it: upstream's fields, then cao's."""
    fields: dict[str, Any] = {"name": row.name, "file_path": row.file_path}
    if flow is not None:
        fields.update(schedule=flow.schedule, agent_profile=flow.agent_profile, provider=flow.provider,
                      engine=flow.engine, script=flow.script or None)
    else:
        fields.update(schedule=None, agent_profile=None, provider=None, engine=None, script=None)
    fields.update(last_run=iso(row.last_run), next_run=iso(row.next_run) if row.enabled else None,
                  enabled=row.enabled, prompt_template=flow.prompt_template if flow is not None else None)
    if flow is not None:
        fields.update(catch_up=flow.catch_up, timezone=flow.timezone,
                      working_directory=flow.working_directory)
    fields["problem"] = problem
    return fields


def run_json(run: Run) -> dict[str, Any]:
    return {"id": run.id, "flow": run.flow, "due_at": iso(run.due_at), "trigger": run.trigger,
            "runner": run.runner, "started_at": iso(run.started_at), "ended_at": iso(run.ended_at),
            "state": run.state, "session_name": run.session_name, "terminal_id": run.terminal_id,
            "detail": run.detail}


__all__ = ["FlowService", "flow_json", "run_json"]
