"""What a folder holds, taken before and after an operation that must leave it alone (or write only
what it says)."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["file_bytes", "snapshot"]


def snapshot(root: Path) -> dict[str, bytes | None]:
    """Every path under ``root`` with its bytes (``None`` for folders, named with a trailing ``/``) and
    nothing else; empty when ``root`` does not exist."""
    if not root.exists():
        return {}
    found: dict[str, bytes | None] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for d in dirnames:
            found[os.path.relpath(os.path.join(dirpath, d), root) + "/"] = None
        for f in filenames:
            found[os.path.relpath(os.path.join(dirpath, f), root)] = Path(dirpath, f).read_bytes()
    return found


def file_bytes(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (folders themselves left out) with its bytes."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}
