"""cao provider for Grok Build (entry point ``grok_cli`` in group ``cao``)."""
