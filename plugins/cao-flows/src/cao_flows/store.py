"""Flows and their runs, in SQLite in the cao home (``<home>/db/flows.sqlite3``).

Every server (or embedding kernel) with cao-flows that uses the same home shares the file. A run is
claimed by inserting its row, unique per flow and due time, so of two schedulers that find the same
occurrence due only one runs it. Each call opens its own short connection: callers run it in a thread.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import attrs

from cao_hookspecs.errors import Conflict, NotFound

DB_NAME = "flows.sqlite3"
#: States of a run. ``running``: claimed, being started; ``started``: its agent has the prompt;
#: the rest are final.
RUN_STATES = ("running", "started", "completed", "failed", "skipped", "busy", "missed", "interrupted")
FINAL_STATES = frozenset(RUN_STATES[2:])
TRIGGERS = ("schedule", "catch_up", "manual")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS flows (
    name TEXT PRIMARY KEY,
    file_path TEXT NOT NULL,
    enabled INTEGER NOT NULL DEFAULT 1,
    added_at REAL NOT NULL,
    last_run REAL,
    next_run REAL
);
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    flow TEXT NOT NULL,
    due_at REAL NOT NULL,
    trigger TEXT NOT NULL,
    runner TEXT NOT NULL,
    started_at REAL NOT NULL,
    ended_at REAL,
    state TEXT NOT NULL,
    session_name TEXT,
    terminal_id TEXT,
    detail TEXT NOT NULL DEFAULT '',
    UNIQUE (flow, due_at)
);
CREATE INDEX IF NOT EXISTS runs_by_flow ON runs (flow, id);
"""


@attrs.frozen(kw_only=True)
class FlowRow:
    name: str
    file_path: str
    enabled: bool
    added_at: float
    last_run: float | None
    next_run: float | None


@attrs.frozen(kw_only=True)
class Run:
    id: int
    flow: str
    due_at: float
    trigger: str
    runner: str
    started_at: float
    ended_at: float | None
    state: str
    session_name: str | None
    terminal_id: str | None
    detail: str


#: A setting naming the database file instead (schedulers of several homes or machines sharing one).
DB_SETTING = "CAO_FLOWS_DB"


def db_path(home: str | Path, settings: Mapping[str, Any] | None = None) -> Path:
    named = (settings or {}).get(DB_SETTING)
    return Path(str(named)).expanduser() if named else Path(home) / "db" / DB_NAME


@attrs.define
class FlowStore:
    path: Path

    @contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, timeout=10.0, isolation_level=None)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA busy_timeout=10000")
            conn.executescript(_SCHEMA)
            conn.row_factory = sqlite3.Row
            yield conn
        finally:
            conn.close()

    # -- flows --------------------------------------------------------------------------------------

    def add(self, name: str, file_path: str, next_run: float | None) -> FlowRow:
        with self._db() as db:
            try:
                db.execute("INSERT INTO flows (name, file_path, enabled, added_at, next_run) "
                           "VALUES (?, ?, 1, ?, ?)",
                           (name, file_path, time.time(), next_run))
            except sqlite3.IntegrityError:
                raise Conflict(f"flow {name!r} already exists; remove it first "
                               f"(cao flow remove {name})") from None
        return self.get(name)

    def get(self, name: str) -> FlowRow:
        with self._db() as db:
            row = db.execute("SELECT * FROM flows WHERE name = ?", (name,)).fetchone()
        if row is None:
            raise NotFound(f"flow {name!r} not found")
        return _flow(row)

    def list(self) -> list[FlowRow]:
        with self._db() as db:
            return [_flow(row) for row in db.execute("SELECT * FROM flows ORDER BY name")]

    def remove(self, name: str) -> None:
        with self._db() as db:
            if db.execute("DELETE FROM flows WHERE name = ?", (name,)).rowcount == 0:
                raise NotFound(f"flow {name!r} not found")
            db.execute("DELETE FROM runs WHERE flow = ?", (name,))

    def set_enabled(self, name: str, enabled: bool, next_run: float | None) -> FlowRow:
        with self._db() as db:
            if db.execute("UPDATE flows SET enabled = ?, next_run = ? WHERE name = ?",
                          (int(enabled), next_run, name)).rowcount == 0:
                raise NotFound(f"flow {name!r} not found")
        return self.get(name)

    def advance(self, name: str, *, next_run: float, last_run: float | None = None) -> None:
        """Move the flow's next run on (and its last run, when one was made)."""
        with self._db() as db:
            if last_run is None:
                db.execute("UPDATE flows SET next_run = ? WHERE name = ?", (next_run, name))
            else:
                db.execute("UPDATE flows SET next_run = ?, last_run = max(coalesce(last_run, 0), ?) "
                           "WHERE name = ?",
                           (next_run, last_run, name))

    def ran(self, name: str, at: float) -> None:
        """Note a run made outside the schedule (``cao flow run``): the next scheduled one stays."""
        with self._db() as db:
            db.execute("UPDATE flows SET last_run = max(coalesce(last_run, 0), ?) WHERE name = ?", (at, name))

    # -- runs ---------------------------------------------------------------------------------------

    def claim(self, flow: str, due_at: float, *, trigger: str, runner: str, started_at: float,
              state: str = "running", detail: str = "") -> Run | None:
        """Record the run of ``flow`` due at ``due_at``; None when some scheduler already has."""
        ended = started_at if state in FINAL_STATES else None
        with self._db() as db:
            cursor = db.execute(
                "INSERT INTO runs (flow, due_at, trigger, runner, started_at, ended_at, state, detail) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (flow, due_at) DO NOTHING",
                (flow, due_at, trigger, runner, started_at, ended, state, detail))
            if cursor.rowcount == 0:
                return None
            run_id = cursor.lastrowid
        assert run_id is not None
        return self.run(run_id)

    def update(self, run_id: int, **fields: Any) -> Run:
        """Set ``state``, ``detail``, ``session_name``, ``terminal_id`` or ``ended_at`` of a run."""
        allowed = {"state", "detail", "session_name", "terminal_id", "ended_at"}
        assert set(fields) <= allowed, fields
        if fields:
            columns = ", ".join(f"{name} = ?" for name in fields)
            with self._db() as db:
                db.execute(f"UPDATE runs SET {columns} WHERE id = ?", (*fields.values(), run_id))
        return self.run(run_id)

    def run(self, run_id: int) -> Run:
        with self._db() as db:
            row = db.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            raise NotFound(f"flow run {run_id} not found")
        return _run(row)

    def runs(self, flow: str, limit: int = 50) -> list[Run]:
        """The flow's most recent runs, newest first."""
        with self._db() as db:
            rows = db.execute("SELECT * FROM runs WHERE flow = ? ORDER BY id DESC LIMIT ?", (flow, limit))
            return [_run(row) for row in rows]

    def unfinished(self) -> list[Run]:
        with self._db() as db:
            return [_run(row) for row in db.execute("SELECT * FROM runs WHERE ended_at IS NULL ORDER BY id")]


def _flow(row: sqlite3.Row) -> FlowRow:
    return FlowRow(name=row["name"], file_path=row["file_path"], enabled=bool(row["enabled"]),
                   added_at=row["added_at"], last_run=row["last_run"], next_run=row["next_run"])


def _run(row: sqlite3.Row) -> Run:
    return Run(**{field.name: row[field.name] for field in attrs.fields(Run)})


__all__ = ["DB_NAME", "FINAL_STATES", "RUN_STATES", "TRIGGERS", "FlowRow", "FlowStore", "Run", "db_path"]
