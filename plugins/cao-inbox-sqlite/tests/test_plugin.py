"""Registration: the entry point, the ``sqlite`` spec, where its factory puts the database."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cao_hookspecs import InboxStore, InboxStoreSpec, MessageDraft, RuntimeContext
from cao_inbox_sqlite import plugin


def _spec() -> InboxStoreSpec:
    (spec,) = plugin.cao_register_inbox_stores()
    return spec


def test_hook_cao_register_inbox_stores_registers_sqlite(tmp_path: Path) -> None:
    spec = _spec()
    assert isinstance(spec, InboxStoreSpec)
    assert spec.name == "sqlite"
    store = spec.factory(RuntimeContext(home_dir=str(tmp_path)))
    try:
        assert isinstance(store, InboxStore)
        store.enqueue(MessageDraft(sender_id="s", receiver_id="r", body="hi"))
    finally:
        store.close()
    assert (tmp_path / "db" / "inbox.sqlite3").is_file()


def test_cao_inbox_db_setting_moves_the_database(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere" / "mail.db"
    ctx = RuntimeContext(home_dir=str(tmp_path / "home"), settings={"CAO_INBOX_DB": str(target)})
    _spec().factory(ctx).close()
    assert target.is_file()
    assert not (tmp_path / "home" / "db").exists()


@pytest.mark.parametrize("enabled_plugins", [("inbox_sqlite",)])
def test_the_kernel_finds_the_store_through_its_entry_point(kernel: object, cao_home: Path) -> None:
    stores = kernel.inbox_stores  # type: ignore[attr-defined]
    assert "sqlite" in stores
    store = stores["sqlite"].factory(RuntimeContext(home_dir=str(cao_home)))
    store.close()
    assert (cao_home / "db" / "inbox.sqlite3").is_file()


def test_loading_the_plugin_imports_neither_sqlite3_nor_the_store() -> None:
    code = (
        "import sys, cao_inbox_sqlite.plugin\n"
        "loaded = [m for m in ('sqlite3', 'cao_inbox_sqlite.store') if m in sys.modules]\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
