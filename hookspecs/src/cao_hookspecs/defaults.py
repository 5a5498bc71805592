"""Settings the kernel reads whose defaults are upstream CAO's, named here so the kernel names no plugin.

A setting left unset (``CAO_*`` variable or kernel setting) falls back to these values.
"""

from __future__ import annotations

__all__ = [
    "DEFAULT_INBOX_STORE",
    "DEFAULT_PROVIDER",
    "DEFAULT_TERMINAL_BACKEND",
    "INBOX_STORE_SETTING",
    "PROVIDER_SETTING",
    "TERMINAL_BACKEND_SETTING",
]

#: The provider a profile runs on when neither the request nor the profile names one.
PROVIDER_SETTING = "CAO_DEFAULT_PROVIDER"
DEFAULT_PROVIDER = "kiro_cli"

#: The inbox store the kernel opens; when the default one is not installed it keeps messages in memory.
INBOX_STORE_SETTING = "CAO_INBOX_STORE"
DEFAULT_INBOX_STORE = "sqlite"

#: Where terminals run.
TERMINAL_BACKEND_SETTING = "CAO_TERMINAL_BACKEND"
DEFAULT_TERMINAL_BACKEND = "tmux"
