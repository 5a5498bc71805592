"""What callers say about a terminal (upstream's ``description``, ``group`` and ``metadata``), kept in the
cao home (``<home>/db/terminal-labels.json``) so a server restart does not lose it.

The file is small (one entry per live terminal that has a label; entries of terminals that are gone are
dropped on the next write), replaced atomically and written under a lock, so two servers on one home
cannot lose each other's writes. The limits are upstream's, so a label upstream accepts is accepted.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from .errors import InvalidInput

if TYPE_CHECKING:
    from pathlib import Path

    from .home import CaoHome

FILE = "terminal-labels.json"
FIELDS = ("description", "group", "metadata")
MAX_DESCRIPTION = 64
MAX_GROUP_ITEMS = 16
MAX_GROUP_ITEM = 128
MAX_METADATA_BYTES = 16 * 1024
_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def check_label(field: str, value: Any) -> Any:
    """``value`` as stored for ``field`` (``None`` clears it); ``InvalidInput`` names what is wrong.

    A description is one line: line breaks become spaces, control characters go, blanks around it are
    trimmed, and an empty one clears it.
    """
    if value is None:
        return None
    if field == "description":
        if not isinstance(value, str):
            raise InvalidInput(f"description must be a string or null, got {type(value).__name__}")
        # Counted as sent, before the clean-up, so the limit means what a client's schema check says.
        if len(value) > MAX_DESCRIPTION:
            raise InvalidInput(f"description must be at most {MAX_DESCRIPTION} characters, got {len(value)}")
        text = _CONTROLS.sub("", " ".join(value.splitlines())).strip()
        return text or None
    if field == "group":
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise InvalidInput("group must be a list of strings or null")
        if len(value) > MAX_GROUP_ITEMS:
            raise InvalidInput(f"group has {len(value)} elements (at most {MAX_GROUP_ITEMS})")
        long = next((item for item in value if len(item) > MAX_GROUP_ITEM), None)
        if long is not None:
            raise InvalidInput(f"group element {long[:40]!r}... is over {MAX_GROUP_ITEM} characters")
        return list(value) or None
    if field == "metadata":
        if not isinstance(value, dict):
            raise InvalidInput(f"metadata must be a JSON object or null, got {type(value).__name__}")
        size = len(json.dumps(value).encode("utf-8"))
        if size > MAX_METADATA_BYTES:
            raise InvalidInput(f"metadata is {size} bytes as JSON (at most {MAX_METADATA_BYTES})")
        return value or None
    raise InvalidInput(f"unknown terminal label {field!r} (one of {', '.join(FIELDS)})")


class TerminalLabels:
    """The label file of one cao home."""

    def __init__(self, home: CaoHome) -> None:
        self.home = home

    @property
    def path(self) -> Path:
        return self.home.db / FILE

    def read(self) -> dict[str, dict[str, Any]]:
        """Every terminal's labels by id (a missing or unreadable file reads as none)."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return {k: v for k, v in data.items() if isinstance(v, dict)} if isinstance(data, dict) else {}

    def get(self, terminal_id: str) -> dict[str, Any]:
        """The three labels of one terminal, ``None`` where unset."""
        stored = self.read().get(terminal_id, {})
        return {field: stored.get(field) for field in FIELDS}

    def set(self, terminal_id: str, field: str, value: Any, live: Collection[str]) -> dict[str, Any]:
        """Store one label (whole-value replace, as upstream); entries of terminals not in ``live``
        are dropped in the same write. Returns the terminal's labels."""
        value = check_label(field, value)
        with self._lock():
            labels = {k: v for k, v in self.read().items() if k in live}
            entry = {k: v for k, v in labels.get(terminal_id, {}).items() if k in FIELDS}
            if value is None:
                entry.pop(field, None)
            else:
                entry[field] = value
            if entry:
                labels[terminal_id] = entry
            else:
                labels.pop(terminal_id, None)
            self._write(labels)
        return {f: entry.get(f) for f in FIELDS}

    def _lock(self) -> contextlib.AbstractContextManager[None]:
        from .home_files import locked

        return locked(self.home.db / f".{FILE}.lock")

    def _write(self, labels: dict[str, dict[str, Any]]) -> None:
        from .home_files import write_private

        write_private(self.path, json.dumps(labels))


__all__ = ["FIELDS", "TerminalLabels", "check_label"]
