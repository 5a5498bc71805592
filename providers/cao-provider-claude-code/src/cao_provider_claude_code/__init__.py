"""cao provider for Claude Code: launch command, start-up dialogs, screen detector, answer extraction."""
