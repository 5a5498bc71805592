"""cao provider for Oh My Pi (entry point ``omp`` in group ``cao``)."""
