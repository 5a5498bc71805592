"""cao provider for Aider (entry point ``aider`` in group ``cao``)."""
