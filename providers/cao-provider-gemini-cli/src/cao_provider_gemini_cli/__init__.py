"""cao provider for Gemini CLI: launch command, start-up dialogs, screen detector, answer extraction."""
