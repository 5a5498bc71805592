"""The shared inbox contract, run against the SQLite store (a reopen is a real close and reconnect)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from cao_inbox_sqlite.store import SqliteInboxStore
from cao_kernel.testing.inbox_contract import InboxStoreContract


class TestSqliteInboxContract(InboxStoreContract):
    @pytest.fixture
    def make_store(self) -> Callable[[Path], SqliteInboxStore]:
        return lambda place: SqliteInboxStore(place / "inbox.sqlite3")


class TestSqliteInboxContractOpenedInBackground(InboxStoreContract):
    """The kernel's store (``open_store``) opens its database in a thread: the same contract holds."""

    @pytest.fixture
    def make_store(self) -> Callable[[Path], SqliteInboxStore]:
        return lambda place: SqliteInboxStore(place / "inbox.sqlite3", background=True)
