"""Durable SQLite inbox store for cao.

The store class lives in ``cao_inbox_sqlite.store`` (imported on demand, so loading the plugin stays
cheap); ``cao_inbox_sqlite.plugin`` registers it as the ``sqlite`` inbox store.
"""
