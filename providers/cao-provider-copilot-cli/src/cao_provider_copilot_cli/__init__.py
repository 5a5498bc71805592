"""cao provider for GitHub Copilot CLI: launch command, start-up dialog, screen detector, answers."""
