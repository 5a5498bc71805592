"""cao provider for pi (entry point ``pi`` in group ``cao``)."""
