"""cao kernel: the plugin manager, the registries and the orchestration semantics.

Nothing is loaded at import time; build a :class:`cao_kernel.kernel.Kernel` to get a plugin manager.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

__all__ = ["Kernel", "__version__", "hookimpl"]


def __getattr__(name: str) -> Any:
    # Lazy so `import cao_kernel` (and `cao --help`) stays cheap.
    if name == "Kernel":
        from .kernel import Kernel

        return Kernel
    if name == "hookimpl":
        from cao_hookspecs import hookimpl

        return hookimpl
    raise AttributeError(name)
