"""cao provider for Claude Code."""
