"""cao provider for OpenCode: launch command and config, screen detector, answer extraction."""
