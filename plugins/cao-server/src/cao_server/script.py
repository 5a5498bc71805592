"""The ``cao-server`` script: ``cao server`` under its own name.

cao-server depends on the contract only, so it does not import the kernel: the ``cao`` command line is
found through installed metadata (the console script named ``cao``), and when none is installed the
script says what to install instead of failing on an import.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

MISSING = (
    "cao-server: the cao command line is not installed in this environment; install cao-kernel, "
    "which provides it (for example: pip install 'cao-kernel[all]')"
)


def find_cao() -> Callable[..., Any] | None:
    """The function behind the installed ``cao`` script, or None when there is none."""
    from importlib.metadata import entry_points

    for entry_point in entry_points(group="console_scripts", name="cao"):
        return entry_point.load()
    return None


def main() -> None:
    try:
        cao = find_cao()
    except Exception as exc:  # noqa: BLE001 - a broken installation is reported, not traced
        sys.exit(f"cao-server: the cao command line failed to load: {type(exc).__name__}: {exc}")
    if cao is None:
        sys.exit(MISSING)
    cao(["server", *sys.argv[1:]], prog_name="cao-server")
