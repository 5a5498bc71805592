"""What only the SQLite store promises: durability across a kill, private files, several processes."""

from __future__ import annotations

import os
import signal
import sqlite3
import stat
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from cao_hookspecs import MessageDraft, MessageState
from cao_inbox_sqlite.schema import SCHEMA_VERSION
from cao_inbox_sqlite.store import SqliteInboxStore

# Children import the store the way any cao process would; only the database path is passed in.
_PRELUDE = """
import sys
from cao_hookspecs import MessageDraft
from cao_inbox_sqlite.store import SqliteInboxStore
store = SqliteInboxStore(sys.argv[1])
"""


def _child(code: str, db: Path, **popen: object) -> subprocess.Popen[str]:
    script = _PRELUDE + textwrap.dedent(code)
    return subprocess.Popen(  # type: ignore[call-overload, no-any-return]
        [sys.executable, "-c", script, str(db)], text=True, stdout=subprocess.PIPE, **popen
    )


def _draft(body: str, receiver: str = "r1") -> MessageDraft:
    return MessageDraft(sender_id="s1", receiver_id=receiver, body=body)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "db" / "inbox.sqlite3"


@pytest.fixture
def store(db: Path) -> Iterator[SqliteInboxStore]:
    opened = SqliteInboxStore(db)
    yield opened
    opened.close()


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


# -- durability -----------------------------------------------------------------------------------


def test_a_message_survives_sigkill_right_after_enqueue_returns(db: Path) -> None:
    SqliteInboxStore(db).close()  # created by the parent, so the child only writes
    child = _child(
        """
        import os, signal
        draft = MessageDraft(sender_id="s1", receiver_id="r1", body="persist me", idempotency_key="k")
        message = store.enqueue(draft)
        print(message.id, flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
        """,
        db,
    )
    out, _ = child.communicate(timeout=60)
    assert child.returncode == -signal.SIGKILL
    message_id = int(out.split()[0])

    reopened = SqliteInboxStore(db)
    try:
        message = reopened.get(message_id)
        assert message is not None
        assert (message.body, message.state, message.idempotency_key) == (
            "persist me",
            MessageState.PENDING,
            "k",
        )
        again = MessageDraft(sender_id="s1", receiver_id="r1", body="x", idempotency_key="k")
        assert reopened.enqueue(again).id == message_id
    finally:
        reopened.close()


def test_every_acknowledged_message_survives_a_kill_mid_stream(db: Path) -> None:
    SqliteInboxStore(db).close()
    child = _child(
        """
        i = 0
        while True:
            message = store.enqueue(MessageDraft(sender_id="s1", receiver_id="r1", body=f"m{i}"))
            claimed = store.claim(message.id) if i % 3 == 0 else None
            print(message.id, message.body, claimed is not None, flush=True)
            i += 1
        """,
        db,
    )
    assert child.stdout is not None
    acknowledged = [child.stdout.readline().split() for _ in range(40)]
    os.kill(child.pid, signal.SIGKILL)  # somewhere inside a later enqueue, claim or print
    rest, _ = child.communicate(timeout=60)
    acknowledged += [line.split() for line in rest.splitlines() if len(line.split()) == 3]
    assert child.returncode == -signal.SIGKILL

    reopened = SqliteInboxStore(db)
    try:
        stored = {m.id: m for m in reopened.list(limit=100_000)}
        for id_text, body, claimed in acknowledged:
            message = stored[int(id_text)]
            assert message.body == body
            expected = MessageState.DELIVERING if claimed == "True" else MessageState.PENDING
            assert message.state is expected
        # The store is usable after recovery, and ids keep increasing past anything the child wrote.
        assert reopened.enqueue(_draft("after")).id > max(stored)
    finally:
        reopened.close()


# -- files and settings ---------------------------------------------------------------------------


def test_database_is_private_and_in_wal_mode(db: Path, store: SqliteInboxStore) -> None:
    store.enqueue(_draft("secret"))
    assert _mode(db.parent) == 0o700
    assert _mode(db) == 0o600
    for suffix in ("-wal", "-shm"):
        side = db.with_name(db.name + suffix)
        assert side.exists()
        assert _mode(side) == 0o600
    with sqlite3.connect(db) as probe:
        assert probe.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert probe.execute("SELECT version FROM schema_version").fetchall() == [(SCHEMA_VERSION,)]
    probe.close()
    # FULL (2) is per connection: the store's own connection must use it.
    assert store._open_connection().execute("PRAGMA synchronous").fetchone()[0] == 2


def test_database_is_private_whatever_the_umask(db: Path) -> None:
    old = os.umask(0)
    try:
        opened = SqliteInboxStore(db)
        opened.enqueue(_draft("x"))
    finally:
        os.umask(old)
    try:
        assert _mode(db) == 0o600
        assert _mode(db.with_name(db.name + "-wal")) == 0o600
    finally:
        opened.close()


def test_an_existing_database_readable_by_others_is_tightened(db: Path) -> None:
    SqliteInboxStore(db).close()
    db.chmod(0o644)
    SqliteInboxStore(db).close()
    assert _mode(db) == 0o600


def test_reopening_keeps_one_schema_row(db: Path) -> None:
    for _ in range(3):
        SqliteInboxStore(db).close()
    with sqlite3.connect(db) as probe:
        assert probe.execute("SELECT count(*) FROM schema_version").fetchone() == (1,)
    probe.close()


def test_a_newer_schema_is_refused(db: Path) -> None:
    SqliteInboxStore(db).close()
    with sqlite3.connect(db) as probe:
        probe.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION + 1,))
    probe.close()
    with pytest.raises(RuntimeError, match=rf"schema version {SCHEMA_VERSION + 1}.*upgrade cao-inbox-sqlite"):
        SqliteInboxStore(db)


def test_a_file_that_is_not_a_database_is_refused_clearly(db: Path) -> None:
    db.parent.mkdir(parents=True)
    db.write_bytes(b"this is not sqlite at all, just some text that fills the header" * 4)
    with pytest.raises(RuntimeError, match=r"cannot open inbox database .*inbox\.sqlite3"):
        SqliteInboxStore(db)


def test_opening_in_the_background_reports_its_failure_on_every_call(db: Path) -> None:
    db.parent.mkdir(parents=True)
    db.write_bytes(b"this is not sqlite at all, just some text that fills the header" * 4)
    store = SqliteInboxStore(db, background=True)
    for _ in range(2):
        with pytest.raises(RuntimeError, match=r"cannot open inbox database .*inbox\.sqlite3"):
            store.list()
    store.close()
    store.close()


def test_the_kernels_store_opens_in_the_background(tmp_path: Path) -> None:
    from cao_hookspecs import RuntimeContext
    from cao_inbox_sqlite.store import open_store

    store = open_store(RuntimeContext(home_dir=str(tmp_path), settings={}))
    try:
        assert store._opening is not None  # returned before the database was open
        message = store.enqueue(_draft("first"))
        assert [m.id for m in store.list()] == [message.id]
        assert (tmp_path / "db" / "inbox.sqlite3").exists()
    finally:
        store.close()


# -- several connections --------------------------------------------------------------------------


def test_two_stores_on_one_file_never_claim_the_same_message(db: Path) -> None:
    first, second = SqliteInboxStore(db), SqliteInboxStore(db)
    try:
        ids = [first.enqueue(_draft(f"m{i}")).id for i in range(80)]
        barrier = threading.Barrier(4)
        claimed: list[list[int]] = [[] for _ in range(4)]

        def drain(slot: int) -> None:
            store = (first, second)[slot % 2]
            barrier.wait(timeout=30)
            while (message := store.claim_next("r1")) is not None:
                claimed[slot].append(message.id)

        threads = [threading.Thread(target=drain, args=(i,)) for i in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        assert sorted(i for got in claimed for i in got) == ids
        assert second.get(ids[-1]).state is MessageState.DELIVERING  # written by one, seen by the other
    finally:
        first.close()
        second.close()


def test_two_processes_claiming_one_inbox_never_get_the_same_message(
    db: Path, store: SqliteInboxStore
) -> None:
    ids = [store.enqueue(_draft(f"m{i}")).id for i in range(150)]
    code = """
        print("ready", flush=True)
        import time
        sys.stdin.readline()  # start together
        while (message := store.claim_next("r1")) is not None:
            time.sleep(0.002)  # typing it in: the write lock is free meanwhile, as in a real delivery
            store.mark_delivered(message.id)
            print(message.id, flush=True)
        """
    children = [_child(code, db, stdin=subprocess.PIPE) for _ in range(2)]
    for child in children:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "ready"
    for child in children:
        assert child.stdin is not None
        child.stdin.write("go\n")
        child.stdin.flush()
    outputs = [child.communicate(timeout=120)[0] for child in children]
    assert [child.returncode for child in children] == [0, 0]

    per_child = [[int(line) for line in out.split()] for out in outputs]
    assert sorted(per_child[0] + per_child[1]) == ids, "a message was claimed by both processes, or by none"
    assert all(per_child), f"one process got nothing, so nothing raced: {[len(c) for c in per_child]}"
    assert [m.state for m in store.list(limit=1000)] == [MessageState.DELIVERED] * len(ids)


def test_old_finished_messages_lose_their_text_when_the_kernels_store_opens(tmp_path: Path) -> None:
    """``CAO_INBOX_KEEP_DAYS``: finished messages keep their text that long; the row itself stays."""
    import time

    from cao_hookspecs import RuntimeContext
    from cao_inbox_sqlite.store import open_store

    ctx = RuntimeContext(home_dir=str(tmp_path), settings={"CAO_INBOX_KEEP_DAYS": "7"})
    store = open_store(ctx)
    old, recent, dead, waiting = (store.enqueue(_draft(f"text {i}", receiver=f"r{i}")) for i in range(4))
    for message in (old, recent):
        store.mark_delivered(store.claim_next(message.receiver_id).id)
    store.mark_failed(store.claim_next(dead.receiver_id).id, "gone", retry_at=None)
    store.close()
    with sqlite3.connect(store.path) as conn:  # as if these changed eight days ago
        eight_days_ago = time.time() - 8 * 86400
        conn.execute("UPDATE messages SET updated_at = ? WHERE id IN (?, ?, ?)",
                     (eight_days_ago, old.id, dead.id, waiting.id))
    store = open_store(ctx)
    try:
        bodies = {m.id: (m.state, m.body) for m in store.list(limit=10)}
    finally:
        store.close()
    assert bodies == {old.id: (MessageState.DELIVERED, ""), recent.id: (MessageState.DELIVERED, "text 1"),
                      dead.id: (MessageState.DEAD, ""), waiting.id: (MessageState.PENDING, "text 3")}


def test_keep_days_zero_keeps_text_and_a_bad_value_is_refused_by_name(tmp_path: Path) -> None:
    from cao_hookspecs import RuntimeContext
    from cao_inbox_sqlite.store import open_store

    with pytest.raises(ValueError, match="CAO_INBOX_KEEP_DAYS must be a number of days"):
        open_store(RuntimeContext(home_dir=str(tmp_path), settings={"CAO_INBOX_KEEP_DAYS": "forever"}))
    store = open_store(RuntimeContext(home_dir=str(tmp_path), settings={"CAO_INBOX_KEEP_DAYS": "0"}))
    store.mark_delivered(store.claim(store.enqueue(_draft("kept")).id).id)
    store.close()
    with sqlite3.connect(store.path) as conn:
        conn.execute("UPDATE messages SET updated_at = 0")
    store = open_store(RuntimeContext(home_dir=str(tmp_path), settings={"CAO_INBOX_KEEP_DAYS": "0"}))
    try:
        assert [m.body for m in store.list(limit=10)] == ["kept"]
    finally:
        store.close()
