"""Writing TOML documents for agent CLIs' configuration files; see ``writer.dumps``."""

from __future__ import annotations

from .writer import dumps

__all__ = ["dumps"]
