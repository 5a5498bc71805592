"""cao provider for Moonshot's Kimi CLI: launch plan, start-up gates, screen detector, answer extraction."""
