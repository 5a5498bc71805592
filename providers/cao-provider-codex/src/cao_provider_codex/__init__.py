"""cao provider for Codex."""
