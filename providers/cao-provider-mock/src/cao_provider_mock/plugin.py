"""Entry point of cao-provider-mock (kept thin: heavy imports happen inside functions)."""
