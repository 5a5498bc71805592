"""Handoffs' durable results, by job id, in ``<home>/db/handoff-results.db`` (SQLite).

A handoff given a job id (``KernelAPI.handoff(job_id=...)``) is written here as ``running`` before its
worker starts, and as ``completed`` (the answer) or ``error`` (why not) before the caller hears of it, so
a caller that stopped waiting reads the outcome later with ``get_handoff_result``, from any surface and
after a restart. A job cannot outlive the server that runs it: one still ``running`` when a server
opens the file is marked ``error`` (its worker, if it started, is still listed with the session).

Rows are kept ``CAO_HANDOFF_RESULT_DAYS`` days (default 14, upstream's retention) after they were last
written, read or not; older ones are removed when the file is opened and after each write.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import threading
import time
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cao_hookspecs import DelegationResult, HandoffJob
from cao_hookspecs.handoff_jobs import COMPLETED, ERROR, RUNNING, job_id_problem

from .errors import CaoError, Conflict, InvalidInput, NotFound

if TYPE_CHECKING:
    from .iopool import IoPool

log = logging.getLogger(__name__)

FILE_NAME = "handoff-results.db"
KEEP_DAYS_SETTING = "CAO_HANDOFF_RESULT_DAYS"
DEFAULT_KEEP_DAYS = 14.0
INTERRUPTED = ("cao-server stopped before this handoff finished; its worker, if it had started, was left "
               "running in the caller's session (see `cao session list`)")

# A job's work: given the function it calls with its worker's id once the worker exists.
Work = Callable[[Callable[[str], object]], Awaitable[DelegationResult]]
_COLUMNS = ("job_id", "state", "terminal_id", "last_message", "error_message", "created_at", "updated_at",
            "agent_profile", "caller_id")
_SCHEMA = """
CREATE TABLE IF NOT EXISTS handoff_results (
    job_id TEXT PRIMARY KEY,
    state TEXT NOT NULL,
    terminal_id TEXT,
    last_message TEXT,
    error_message TEXT,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    agent_profile TEXT,
    caller_id TEXT
);
CREATE INDEX IF NOT EXISTS handoff_results_updated ON handoff_results (updated_at);
"""


def keep_seconds(settings: Mapping[str, Any]) -> float:
    """How long a result is kept, from ``CAO_HANDOFF_RESULT_DAYS`` (a bad value stops the start, named)."""
    raw = settings.get(KEEP_DAYS_SETTING)
    if raw is None or str(raw).strip() == "":
        return DEFAULT_KEEP_DAYS * 86400
    try:
        days = float(raw)
    except ValueError:
        days = -1.0
    if not 0 < days <= 3650:
        raise InvalidInput(f"{KEEP_DAYS_SETTING}={raw!r}: expected a number of days above 0, at most 3650")
    return days * 86400


class HandoffResults:
    """The store. Its methods block (the disk): call them from worker threads."""

    def __init__(self, path: Path, keep: float) -> None:
        self.path = path
        self._keep = keep
        self._lock = threading.Lock()
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        self._conn = sqlite3.connect(path, timeout=10, isolation_level=None, check_same_thread=False)
        path.chmod(0o600)  # answers may quote secrets a worker saw
        with self._lock:
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.executescript(_SCHEMA)
            now = time.time()
            # A job this file says is running belongs to a server that is gone.
            self._conn.execute(
                "UPDATE handoff_results SET state=?, error_message=?, updated_at=? WHERE state=?",
                (ERROR, INTERRUPTED, now, RUNNING))
            self._prune(now)

    def start(self, job_id: str, *, agent_profile: str, caller_id: str | None) -> None:
        now = time.time()
        with self._lock:
            try:
                self._conn.execute(
                    "INSERT INTO handoff_results (job_id, state, created_at, updated_at, agent_profile,"
                    " caller_id) VALUES (?, ?, ?, ?, ?, ?)",
                    (job_id, RUNNING, now, now, agent_profile, caller_id))
            except sqlite3.IntegrityError:
                raise Conflict(f"job id {job_id[:8]}... is already in use; choose a new one") from None
            self._prune(now)

    def finish(self, job_id: str, result: DelegationResult) -> None:
        if result.success:
            self._end(job_id, COMPLETED, result.terminal_id, last_message=result.output)
        else:
            self._end(job_id, ERROR, result.terminal_id, error_message=result.message)

    def worker(self, job_id: str, terminal_id: str) -> None:
        with self._lock:
            self._conn.execute(
                "UPDATE handoff_results SET terminal_id=?, updated_at=? WHERE job_id=? AND state=?",
                (terminal_id, time.time(), job_id, RUNNING))

    def fail(self, job_id: str, text: str) -> None:
        self._end(job_id, ERROR, None, error_message=text)

    def _end(self, job_id: str, state: str, terminal_id: str | None, *, last_message: str | None = None,
             error_message: str | None = None) -> None:
        now = time.time()
        with self._lock:
            self._conn.execute(
                "UPDATE handoff_results SET state=?, terminal_id=COALESCE(?, terminal_id), last_message=?,"
                " error_message=?, updated_at=? WHERE job_id=?",
                (state, terminal_id, last_message, error_message, now, job_id))
            self._prune(now)

    def get(self, job_id: str) -> HandoffJob | None:
        with self._lock:
            row = self._conn.execute(f"SELECT {', '.join(_COLUMNS)} FROM handoff_results WHERE job_id=?",
                                     (job_id,)).fetchone()
        if row is None or row[6] < time.time() - self._keep:
            return None
        return HandoffJob(**dict(zip(_COLUMNS, row, strict=True)))

    def _prune(self, now: float) -> None:
        self._conn.execute("DELETE FROM handoff_results WHERE updated_at < ? AND state != ?",
                           (now - self._keep, RUNNING))

    def close(self) -> None:
        with self._lock:
            self._conn.close()


class HandoffJobs:
    """Runs handoffs that have a job id: detached from their caller, written to the store as they go."""

    def __init__(self, store: HandoffResults, io: IoPool) -> None:
        self._store = store
        self._io = io
        self._running: set[asyncio.Task[DelegationResult]] = set()
        self._writes: set[asyncio.Future[None]] = set()

    async def run(self, job_id: str, *, agent_profile: str, caller_id: str | None,
                  work: Work) -> DelegationResult:
        """Run ``work(on_worker)`` as job ``job_id``; ``work`` calls ``on_worker`` with its worker's id."""
        problem = job_id_problem(job_id)
        if problem is not None:
            raise InvalidInput(problem)
        await self._io.run(self._store.start, job_id, agent_profile=agent_profile, caller_id=caller_id)
        task = asyncio.ensure_future(self._follow(job_id, work))
        self._running.add(task)
        task.add_done_callback(self._running.discard)
        # The caller going away (an MCP client's time limit) must not stop the job it will read later.
        return await asyncio.shield(task)

    async def _follow(self, job_id: str, work: Work) -> DelegationResult:
        def on_worker(terminal_id: str) -> None:
            # Written in the background: a reader learns which worker runs the job while it runs.
            worker = asyncio.ensure_future(self._io.run(self._store.worker, job_id, terminal_id))
            self._writes.add(worker)
            worker.add_done_callback(self._writes.discard)

        try:
            result = await work(on_worker)
        except asyncio.CancelledError:
            await self._io.run(self._store.fail, job_id, INTERRUPTED)
            raise
        except CaoError as exc:
            await self._io.run(self._store.fail, job_id, f"Handoff failed: {str(exc).splitlines()[0]}")
            raise
        except Exception:
            await self._io.run(self._store.fail, job_id,
                               "Handoff failed: an internal error (see the server log)")
            raise
        await asyncio.gather(*self._writes, return_exceptions=True)
        await self._io.run(self._store.finish, job_id, result)
        return result

    async def get(self, job_id: str) -> HandoffJob:
        problem = job_id_problem(job_id)
        if problem is not None:
            raise InvalidInput(problem)
        job = await self._io.run(self._store.get, job_id)
        if job is None:
            raise NotFound(f"no handoff result for job id {job_id[:8]}...: never started here, or older than "
                           f"its keeping time ({KEEP_DAYS_SETTING})")
        return job

    async def aclose(self) -> None:
        """Stop the jobs still running (each is marked interrupted), then close the store."""
        for task in list(self._running):
            task.cancel()
        await asyncio.gather(*self._running, *self._writes, return_exceptions=True)
        await self._io.run(self._store.close)


def open_jobs(home_db: Path, settings: Mapping[str, Any], io: IoPool) -> Callable[[], HandoffJobs]:
    """A function (run off the event loop) opening the store under ``home_db``."""
    keep = keep_seconds(settings)

    def opener() -> HandoffJobs:
        return HandoffJobs(HandoffResults(home_db / FILE_NAME, keep), io)

    return opener


__all__ = ["DEFAULT_KEEP_DAYS", "HandoffJobs", "HandoffResults", "KEEP_DAYS_SETTING", "keep_seconds",
           "open_jobs"]
