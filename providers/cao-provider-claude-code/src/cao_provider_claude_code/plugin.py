"""Entry point (thin)."""
