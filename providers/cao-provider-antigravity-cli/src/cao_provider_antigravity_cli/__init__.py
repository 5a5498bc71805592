"""cao provider for Antigravity CLI (entry point ``antigravity_cli`` in group ``cao``)."""
