"""cao provider for the OpenAI Codex CLI: launch plan, status detector, answer extraction."""

__version__ = "0.1.0"
