"""cao provider for the Kiro CLI: agent file, launch command, start-up dialog, screen detector, answer extraction."""
