"""What plugin commands need from the ``cao`` command line, without importing the kernel or click."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

KERNEL_KEY = "cao.kernel"
#: The console script of the ``cao`` command line; its callable takes ``(argv, prog_name)``.
CAO_SCRIPT = "cao"


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


def missing_cao(prog_name: str) -> str:
    """What ``prog_name`` says when no ``cao`` command line is installed."""
    return (f"{prog_name}: the cao command line is not installed in this environment; install cao-kernel, "
            f"which provides it (for example: pip install 'cao-kernel[all]')")


def run_cao(args: Sequence[str], *, prog_name: str) -> None:
    """Run the ``cao`` command line with ``args``, its usage lines naming ``prog_name``.

    For a plugin's own scripts (``cao-mcp-server``, ``cao-server``), which must not import the kernel:
    the command line is the ``cao`` console script of whichever distribution installs it. Exits with a
    message naming what to install when there is none, or what went wrong when it fails to load.
    """
    from importlib.metadata import entry_points

    try:
        main = next((found.load() for found in entry_points(group="console_scripts", name=CAO_SCRIPT)), None)
    except Exception as exc:  # noqa: BLE001 - a broken installation is reported, not traced
        raise SystemExit(
            f"{prog_name}: the cao command line failed to load: {type(exc).__name__}: {exc}") from None
    if main is None:
        raise SystemExit(missing_cao(prog_name))
    main(list(args), prog_name=prog_name)
