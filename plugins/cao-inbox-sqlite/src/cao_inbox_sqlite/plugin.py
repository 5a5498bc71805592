"""Entry point of cao-inbox-sqlite (kept thin: heavy imports happen inside functions)."""
