"""cao provider for the Amazon Q Developer CLI: agent file, launch command, screen detector, answer extraction."""
