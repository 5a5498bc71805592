"""A provider's recorded screens (``tests/screens/<version>/``), read by its own tests.

The format is ``cao_kernel.testing.screens``'s: one folder per CLI version, each screen a ``<name>.txt``
and ``manifest.json`` saying what each shows. The conformance kit judges every screen; a provider's own
tests pick screens by name or by what the manifest says of them:

- :func:`screen_text`: one screen as the CLI drew it.
- :func:`manifest`: one version's manifest.
- :func:`manifest_entries`: ``(version, name, entry)`` for every screen of every version.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cao_kernel.testing.screens import MANIFEST

__all__ = ["manifest", "manifest_entries", "screen_text"]


def screen_text(folder: Path, version: str, name: str) -> str:
    return (folder / version / f"{name}.txt").read_text(encoding="utf-8")


def manifest(folder: Path, version: str) -> dict[str, Any]:
    return json.loads((folder / version / MANIFEST).read_text(encoding="utf-8"))


def manifest_entries(folder: Path) -> list[tuple[str, str, dict[str, Any]]]:
    """Every screen's version, name and manifest entry, version folders in name order."""
    found = []
    for path in sorted(folder.glob(f"*/{MANIFEST}")):
        read = manifest(folder, path.parent.name)
        found += [(read["version"], name, entry) for name, entry in read["screens"].items()]
    return found
