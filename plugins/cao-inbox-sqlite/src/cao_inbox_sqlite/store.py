"""``SqliteInboxStore``: the durable inbox, one SQLite file in WAL mode.

Every change runs in its own ``BEGIN IMMEDIATE`` transaction, which takes the database's write lock
up front: two claimers (threads of one process, or separate processes opening the same file) are
serialised by SQLite itself, so a pending message can move to ``delivering`` only once. A method
returns only after its transaction committed, and with ``synchronous=FULL`` a commit is on disk.

Within a process one connection is shared by all threads behind a lock; that is enough because every
method is one short transaction.

The kernel's store (``open_store``) opens its database in a thread of its own: on a fresh home,
creating the file, switching to WAL and creating the tables take several synced writes, which a
starting kernel need not wait for while it does its other work. The first call waits for the opening
and raises what it raised.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import stat
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import attrs

from cao_hookspecs import Message, MessageDraft, MessageState, RuntimeContext
from cao_hookspecs.inbox_checks import (
    FINISHED_BADLY,
    check_draft,
    check_failure,
    check_list_args,
    in_state,
    pending_message,
)

from .retention import forget_old_bodies, keep_days
from .schema import ensure_schema

__all__ = ["DEFAULT_DB_NAME", "SqliteInboxStore", "database_path", "open_store"]

DEFAULT_DB_NAME = "inbox.sqlite3"

_COLUMNS = (
    "id, sender_id, receiver_id, body, state, created_at, updated_at, orchestration_type, attempts, "
    "last_error, idempotency_key, not_before"
)
_PENDING = MessageState.PENDING.value


def database_path(ctx: RuntimeContext) -> Path:
    """Where the store lives: the ``CAO_INBOX_DB`` setting, else ``<home>/db/inbox.sqlite3``."""
    override = ctx.settings.get("CAO_INBOX_DB")
    if override:
        return Path(str(override)).expanduser()
    return Path(ctx.home_dir).expanduser() / "db" / DEFAULT_DB_NAME


def open_store(ctx: RuntimeContext) -> SqliteInboxStore:
    """The factory registered as the ``sqlite`` inbox store (opened in the background), which empties
    finished messages older than ``CAO_INBOX_KEEP_DAYS`` as it opens (:mod:`.retention`)."""
    return SqliteInboxStore(database_path(ctx), background=True, keep_days=keep_days(ctx.settings))


class SqliteInboxStore:
    """An ``InboxStore`` in a SQLite file, created (mode 0600, folder 0700) when missing.

    :param path: the database file.
    :param busy_timeout: seconds to wait for another process holding the write lock.
    :param background: open the database in a thread and return at once; the first call waits for
        it and raises what opening raised (``RuntimeError``). Otherwise opening raises here.
    :param keep_days: on opening, empty the body of finished messages last changed more than this many
        days ago (None or 0: keep every body).
    """

    def __init__(
        self, path: str | os.PathLike[str], *, busy_timeout: float = 30.0, background: bool = False,
        keep_days: float | None = None,
    ) -> None:
        self.path = Path(path).expanduser()
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._opening: Future[sqlite3.Connection] | None = None
        if background:
            self._opening = Future()
            threading.Thread(
                target=_connect_into, args=(self._opening, self.path, busy_timeout, keep_days or 0),
                name="cao-inbox-open", daemon=True,
            ).start()
        else:
            self._conn = _connect(self.path, busy_timeout, keep_days or 0)

    def __repr__(self) -> str:
        closed = self._conn is None and self._opening is None
        return f"<SqliteInboxStore {str(self.path)!r}{' closed' if closed else ''}>"

    # -- writes -----------------------------------------------------------------------------------

    def enqueue(self, draft: MessageDraft) -> Message:
        """Store ``draft`` as pending and return it once committed; a known key returns the stored one."""
        check_draft(draft)
        with self._write() as conn:
            if draft.idempotency_key is not None:
                row = conn.execute(
                    f"SELECT {_COLUMNS} FROM messages WHERE idempotency_key = ?", (draft.idempotency_key,)
                ).fetchone()
                if row is not None:
                    return _message(row)
            now = time.time()
            cursor = conn.execute(
                "INSERT INTO messages (sender_id, receiver_id, body, orchestration_type, state, created_at,"
                " updated_at, idempotency_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    draft.sender_id,
                    draft.receiver_id,
                    draft.body,
                    draft.orchestration_type.value,
                    _PENDING,
                    now,
                    now,
                    draft.idempotency_key,
                ),
            )
            message_id = cursor.lastrowid
            assert message_id is not None
            message = pending_message(draft, message_id, now)
        return message

    def claim_next(self, receiver_id: str, *, now: float | None = None) -> Message | None:
        """Move the receiver's oldest due pending message to delivering and return it (None if none)."""
        due_at = time.time() if now is None else now
        with self._write() as conn:
            row = conn.execute(
                f"SELECT {_COLUMNS} FROM messages WHERE receiver_id = ? AND state = ?"
                " AND (not_before IS NULL OR not_before <= ?) ORDER BY id LIMIT 1",
                (receiver_id, _PENDING, due_at),
            ).fetchone()
            if row is None:
                return None
            return self._move(conn, _message(row), MessageState.DELIVERING)

    def claim(self, message_id: int) -> Message | None:
        """Move one pending message to delivering; None when it is not pending (or does not exist)."""
        with self._write() as conn:
            row = conn.execute(f"SELECT {_COLUMNS} FROM messages WHERE id = ?", (message_id,)).fetchone()
            message = None if row is None else _message(row)
            if message is None or message.state is not MessageState.PENDING:
                return None
            return self._move(conn, message, MessageState.DELIVERING)

    def mark_delivered(self, message_id: int) -> Message:
        """delivering -> delivered."""
        with self._write() as conn:
            message = self._delivering(conn, message_id, "mark delivered")
            return self._move(conn, message, MessageState.DELIVERED)

    def mark_failed(self, message_id: int, reason: str, *, retry_at: float | None) -> Message:
        """delivering -> pending again at ``retry_at`` (or dead when it is None), counting the attempt."""
        check_failure(reason, retry_at)
        with self._write() as conn:
            message = self._delivering(conn, message_id, "mark failed")
            if retry_at is None:
                return self._move(
                    conn, message, MessageState.DEAD, attempts=message.attempts + 1, last_error=reason
                )
            return self._move(
                conn,
                message,
                MessageState.PENDING,
                attempts=message.attempts + 1,
                last_error=reason,
                not_before=float(retry_at),
            )

    def release(self, message_id: int) -> Message:
        """delivering -> pending without counting an attempt."""
        with self._write() as conn:
            message = self._delivering(conn, message_id, "release")
            return self._move(conn, message, MessageState.PENDING)

    def mark_uncertain(self, message_id: int, reason: str) -> Message:
        """delivering -> uncertain, keeping ``reason``."""
        check_failure(reason, None)
        with self._write() as conn:
            message = self._delivering(conn, message_id, "mark uncertain")
            return self._move(conn, message, MessageState.UNCERTAIN, last_error=reason)

    def requeue(self, message_id: int) -> Message:
        """dead, failed or uncertain -> pending, due now, attempts and last error cleared."""
        with self._write() as conn:
            message = self._in(conn, message_id, "retry", FINISHED_BADLY)
            return self._move(conn, message, MessageState.PENDING, attempts=0, last_error=None, not_before=None)

    def cancel(self, message_id: int, reason: str) -> Message:
        """pending -> dead, keeping ``reason``."""
        check_failure(reason, None)
        with self._write() as conn:
            message = self._in(conn, message_id, "cancel", (MessageState.PENDING,))
            return self._move(conn, message, MessageState.DEAD, last_error=reason, not_before=None)

    # -- reads ------------------------------------------------------------------------------------

    def get(self, message_id: int) -> Message | None:
        """One message by id, or None."""
        with self._read() as conn:
            row = conn.execute(f"SELECT {_COLUMNS} FROM messages WHERE id = ?", (message_id,)).fetchone()
        return None if row is None else _message(row)

    def list(
        self, receiver_id: str | None = None, *, state: MessageState | None = None, limit: int = 100
    ) -> list[Message]:
        """Up to ``limit`` messages oldest first, optionally of one receiver and one state."""
        wanted = check_list_args(state, limit)
        where: list[str] = []
        args: list[Any] = []
        if receiver_id is not None:
            where.append("receiver_id = ?")
            args.append(receiver_id)
        if wanted is not None:
            where.append("state = ?")
            args.append(wanted.value)
        sql = f"SELECT {_COLUMNS} FROM messages"
        if where:
            sql += " WHERE " + " AND ".join(where)
        with self._read() as conn:
            rows = conn.execute(sql + " ORDER BY id LIMIT ?", (*args, limit)).fetchall()
        return [_message(row) for row in rows]

    def receivers_with_pending(self) -> list[str]:
        """Receivers with at least one pending message, the one waiting longest first."""
        with self._read() as conn:
            rows = conn.execute(
                "SELECT receiver_id FROM messages WHERE state = ? GROUP BY receiver_id ORDER BY min(id)",
                (_PENDING,),
            ).fetchall()
        return [row[0] for row in rows]

    def close(self) -> None:
        """Close the connection; the file keeps everything. Closing twice is fine."""
        with self._lock:
            conn, self._conn = self._conn, None
            opening, self._opening = self._opening, None
        if opening is not None and opening.exception() is None:
            conn = opening.result()
        if conn is not None:
            conn.close()

    # -- helpers ----------------------------------------------------------------------------------

    @contextlib.contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            yield self._open_connection()

    @contextlib.contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            conn = self._open_connection()
            with _immediate(conn):
                yield conn

    def _open_connection(self) -> sqlite3.Connection:
        if self._opening is not None:
            # Raises what opening raised, on every call: a store that could not open stays unusable.
            self._conn = self._opening.result()
            self._opening = None
        if self._conn is None:
            raise RuntimeError(f"the inbox store {self.path} is closed")
        return self._conn

    @staticmethod
    def _delivering(conn: sqlite3.Connection, message_id: int, action: str) -> Message:
        return SqliteInboxStore._in(conn, message_id, action, (MessageState.DELIVERING,))

    @staticmethod
    def _in(conn: sqlite3.Connection, message_id: int, action: str, states: tuple[MessageState, ...]) -> Message:
        row = conn.execute(f"SELECT {_COLUMNS} FROM messages WHERE id = ?", (message_id,)).fetchone()
        if row is None:
            raise LookupError(f"cannot {action} message {message_id}: no such message")
        return in_state(_message(row), action, states)

    @staticmethod
    def _move(conn: sqlite3.Connection, message: Message, state: MessageState, **changes: Any) -> Message:
        updated = attrs.evolve(message, state=state, updated_at=time.time(), **changes)
        cursor = conn.execute(
            "UPDATE messages SET state = ?, updated_at = ?, attempts = ?, last_error = ?, not_before = ?"
            " WHERE id = ? AND state = ?",
            (
                updated.state.value,
                updated.updated_at,
                updated.attempts,
                updated.last_error,
                updated.not_before,
                message.id,
                message.state.value,
            ),
        )
        # Unreachable while we hold the write lock; kept so a future refactor cannot double-claim quietly.
        if cursor.rowcount != 1:
            raise RuntimeError(f"message {message.id} changed state under a write transaction")
        return updated


@contextlib.contextmanager
def _immediate(conn: sqlite3.Connection) -> Iterator[None]:
    """A write transaction taken up front, committed on success and rolled back on any error."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def _message(row: tuple[Any, ...]) -> Message:
    (id_, sender, receiver, body, state, created, updated, kind, attempts, error, key, not_before) = row
    return Message(
        id=id_,
        sender_id=sender,
        receiver_id=receiver,
        body=body,
        state=state,
        created_at=created,
        updated_at=updated,
        orchestration_type=kind,
        attempts=attempts,
        last_error=error,
        idempotency_key=key,
        not_before=not_before,
    )


def _connect(path: Path, busy_timeout: float, keep_days: float = 0) -> sqlite3.Connection:
    _create_private(path)
    conn = sqlite3.connect(path, timeout=busy_timeout, isolation_level=None, check_same_thread=False)
    try:
        mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise RuntimeError(f"inbox database {path}: SQLite refused WAL mode (got {mode!r})")
        conn.execute("PRAGMA synchronous=FULL")
        with _immediate(conn):
            ensure_schema(conn, str(path))
            forget_old_bodies(conn, keep_days)
    except sqlite3.DatabaseError as err:
        conn.close()
        raise RuntimeError(f"cannot open inbox database {path}: {err}") from err
    except BaseException:
        conn.close()
        raise
    return conn


def _connect_into(
    opening: Future[sqlite3.Connection], path: Path, busy_timeout: float, keep_days: float
) -> None:
    try:
        opening.set_result(_connect(path, busy_timeout, keep_days))
    except BaseException as exc:  # noqa: BLE001 - handed to the first caller
        opening.set_exception(exc)


def _create_private(path: Path) -> None:
    # Create the file ourselves so it is born 0600: SQLite would use the umask (often 0644), and it
    # gives the -wal and -shm files the mode of the database file.
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        if stat.S_IMODE(os.fstat(fd).st_mode) & 0o077:
            os.fchmod(fd, 0o600)
    finally:
        os.close(fd)
    for suffix in ("-wal", "-shm"):
        side = path.with_name(path.name + suffix)
        with contextlib.suppress(FileNotFoundError):
            if stat.S_IMODE(side.stat().st_mode) & 0o077:
                side.chmod(0o600)
