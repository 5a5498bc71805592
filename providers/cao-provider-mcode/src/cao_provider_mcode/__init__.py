"""cao provider for MiniMax Code (entry point ``mcode`` in group ``cao``)."""
