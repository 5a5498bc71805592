"""cao provider for Cursor CLI (entry point ``cursor_cli`` in group ``cao``)."""
