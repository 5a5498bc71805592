"""What plugin commands need from the ``cao`` command line, without importing the kernel or click."""

from __future__ import annotations

from typing import Any

KERNEL_KEY = "cao.kernel"


def kernel_from_context(ctx: Any) -> Any:
    """The kernel of this ``cao`` invocation (a ``KernelAPI``; not started), for plugin commands.

    ``ctx`` is the click context of the running command. The ``cao`` root command stores a factory under
    ``KERNEL_KEY`` in the root context's ``obj``; the kernel is built on first use.
    """
    root = ctx.find_root()
    factory = (root.obj or {}).get(KERNEL_KEY) if isinstance(root.obj, dict) else None
    if factory is None:
        raise RuntimeError("this command must run under the `cao` command line")
    return factory()
