"""Entry point of cao-tmux (kept thin: heavy imports happen inside functions)."""
