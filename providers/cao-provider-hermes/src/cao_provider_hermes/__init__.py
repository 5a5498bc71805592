"""cao provider for Hermes Agent (entry point ``hermes`` in group ``cao``)."""
