"""A private config folder per terminal, built from the user's own and never writing it.

Agent CLIs keep sign-in, settings and history in one folder under the user's home. A provider points
its CLI at a fresh folder in the terminal's runtime folder instead: it reads the user's settings and
lays what an orchestrated agent needs over them (:func:`merge`), and links the user's sign-in and
customisation entries in (:func:`link_user_files`), so that a token the CLI refreshes lands in the
user's own file.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

__all__ = ["link_user_files", "merge", "read_config_text", "read_json_object"]


def read_json_object(path: Path) -> dict[str, Any]:
    """The JSON object in ``path``; a missing, unreadable or non-object file counts as empty (the
    user's files are optional, and the CLI itself reports a broken one when it starts)."""
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def read_config_text(path: Path, what: str) -> str | None:
    """The text of the user's config file ``path``, or None when there is none.

    :raises ValueError: ``cannot read <what> <path>: <reason>`` when the file is there but cannot be
        read: an agent started with the user's settings silently dropped would be worse than none.
    """
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ValueError(f"cannot read {what} {path}: {exc}") from exc


def merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """``over`` laid on ``base``: tables merge key by key, anything else is replaced.

    The result shares no table with either argument, so it can be changed freely.
    """
    merged: dict[str, Any] = {k: (merge(v, {}) if isinstance(v, Mapping) else v) for k, v in base.items()}
    for name, value in over.items():
        if isinstance(value, Mapping) and isinstance(merged.get(name), Mapping):
            merged[name] = merge(merged[name], value)
        else:
            merged[name] = merge(value, {}) if isinstance(value, Mapping) else value
    return merged


def link_user_files(source: Path, private: Path, names: Iterable[str]) -> list[str]:
    """Link the entries ``names`` of the user's folder ``source`` into the private folder ``private``;
    return the names linked.

    Only entries that exist are linked, and an entry the private folder already has is left alone.
    Nothing is done when ``source`` is not a folder or is ``private`` itself; otherwise ``private`` is
    created, readable by the user alone.
    """
    linked: list[str] = []
    if not source.is_dir() or source.resolve() == private.resolve():
        return linked
    private.mkdir(parents=True, exist_ok=True, mode=0o700)
    for name in names:
        target, link = source / name, private / name
        if target.exists() and not os.path.lexists(link):
            link.symlink_to(target)
            linked.append(name)
    return linked
