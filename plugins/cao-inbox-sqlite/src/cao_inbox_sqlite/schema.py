"""The inbox database's tables, and the version stamp that guards them.

``schema_version`` holds one row. A database written by a newer release (a higher version) is refused
rather than misread; an older one would be migrated here, step by step, when version 2 exists.
"""

from __future__ import annotations

import sqlite3

SCHEMA_VERSION = 1

_TABLES = """
CREATE TABLE IF NOT EXISTS schema_version (
    version INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS messages (
    -- AUTOINCREMENT: an id is never handed out twice, even if the newest rows are ever purged
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    sender_id TEXT NOT NULL,
    receiver_id TEXT NOT NULL,
    body TEXT NOT NULL,
    orchestration_type TEXT NOT NULL,
    state TEXT NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    last_error TEXT,
    idempotency_key TEXT UNIQUE,
    not_before REAL
);
CREATE INDEX IF NOT EXISTS messages_by_receiver ON messages (receiver_id, state, id);
CREATE INDEX IF NOT EXISTS messages_by_state ON messages (state, id);
"""


def ensure_schema(conn: sqlite3.Connection, path: str) -> None:
    """Create the tables in a new database, or check the version of an existing one.

    The caller holds a write transaction, so two processes opening a fresh file do not both stamp it.
    """
    for statement in _TABLES.split(";"):
        if statement.strip():
            conn.execute(statement)
    row = conn.execute("SELECT max(version), count(*) FROM schema_version").fetchone()
    version, rows = row
    if rows == 0:
        conn.execute("INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION,))
    elif version > SCHEMA_VERSION:
        raise RuntimeError(
            f"inbox database {path} has schema version {version}, newer than the {SCHEMA_VERSION} this "
            "cao-inbox-sqlite understands; upgrade cao-inbox-sqlite or point CAO_INBOX_DB elsewhere"
        )
