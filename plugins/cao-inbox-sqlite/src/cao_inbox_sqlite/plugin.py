"""Entry point of cao-inbox-sqlite (kept thin: sqlite3 and the store load only when a store is opened)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cao_hookspecs import InboxStoreSpec, hookimpl

if TYPE_CHECKING:
    from cao_hookspecs import RuntimeContext


def _open(ctx: RuntimeContext) -> Any:
    from .store import open_store

    return open_store(ctx)


@hookimpl
def cao_register_inbox_stores() -> list[InboxStoreSpec]:
    """The durable ``sqlite`` store: ``<home>/db/inbox.sqlite3``, or the file named by ``CAO_INBOX_DB``."""
    return [
        InboxStoreSpec(
            name="sqlite",
            factory=_open,
            description="durable inbox in a SQLite file (WAL, survives restarts)",
        )
    ]
