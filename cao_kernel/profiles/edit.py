"""Editing the local profile store: create, replace and delete ``<home>/agent-store/<name>.md``, and
rank the catalog for a free-text search.

Only the local store is written: a provider's folder, the installed sources and the built-in profiles
are never touched, so replacing or deleting a name that lives only there is ``NotFound`` (the local
store is the one place a write could land, and a new local file would silently shadow the other one).
Writes are atomic (a temporary sibling moved into place) and serialised by a lock file, so two
creators of one name cannot both succeed.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from ..errors import Conflict, InvalidInput, NotFound
from .parse import parse_profile_text
from .validate import check_name

if TYPE_CHECKING:
    from pathlib import Path

    from cao_hookspecs import AgentProfile

    from ..home import CaoHome

LOCK_FILE = ".store.lock"
SEARCH_FIELDS = ("name", "description", "capabilities", "tags", "role")


def check_profile_text(name: str, text: str) -> AgentProfile:
    """Parse ``text`` as the profile ``name`` (placeholders left as written); a frontmatter ``name``
    that differs from ``name`` is refused, since the file name is what callers address it by."""
    check_name(name)
    profile = parse_profile_text(text, origin=f"profile {name!r}", default_name=name)
    if profile.name != name:
        raise InvalidInput(
            f"frontmatter name {profile.name!r} does not match the profile name {name!r} (renaming is not "
            "supported: create the new name and delete the old one)"
        )
    return profile


def findings(text: str) -> list[dict[str, Any]]:
    """What is wrong with profile ``text``, as upstream's validation findings (``severity``, ``message``,
    ``path``): empty when it parses. Nothing is written."""
    try:
        parse_profile_text(text, origin="profile")
    except InvalidInput as exc:
        message = str(exc)
        field = re.search(r"field '([^']+)'", message)
        return [{"severity": "error", "message": message, "path": field.group(1) if field else None}]
    return []


_STRINGS = {"type": "array", "items": {"type": "string"}}
_OBJECT = {"type": "object"}


def profile_schema() -> dict[str, Any]:
    """A JSON Schema of the frontmatter cao reads (``validate.FIELDS``); unknown keys are kept as
    extras, so ``additionalProperties`` stays open."""
    from .validate import ENGINES, MAX_DESCRIPTION, MAX_DISCOVERY_ITEMS, PERMISSION_MODES

    name = {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$"}
    props: dict[str, Any] = {
        "name": name,
        "description": {"type": "string", "maxLength": MAX_DESCRIPTION},
        "provider": {"type": "string"}, "role": {"type": "string"}, "model": {"type": "string"},
        "allowedTools": _STRINGS,
        "capabilities": {**_STRINGS, "maxItems": MAX_DISCOVERY_ITEMS},
        "tags": {"type": "array", "items": name, "maxItems": MAX_DISCOVERY_ITEMS},
        "skills": _STRINGS, "mcpServers": _OBJECT, "tools": _STRINGS, "toolAliases": _OBJECT,
        "toolsSettings": _OBJECT, "resources": _STRINGS, "hooks": _OBJECT,
        "useLegacyMcpJson": {"type": "boolean"}, "prompt": {"type": "string"},
        "engine": {"type": "string", "enum": list(ENGINES)},
        "permissionMode": {"type": "string", "enum": list(PERMISSION_MODES)},
        "native_agent": {"type": "string"}, "codexProfile": {"type": "string", "minLength": 1},
        "codexConfig": _OBJECT, "claudeConfig": _OBJECT, "hermesProfile": {"type": "string"},
        "promptPolicy": _OBJECT, "pool": _OBJECT, "provider_init_timeout": {"type": "integer", "minimum": 1},
        "container": _OBJECT,
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "cao agent profile frontmatter",
        "type": "object",
        "required": ["name"],
        "properties": props,
        "additionalProperties": True,
    }


@contextlib.contextmanager
def _store_lock(home: CaoHome) -> Iterator[Path]:
    from ..home_files import locked

    folder = home.agent_store
    with locked(folder / LOCK_FILE):
        yield folder


def _write_atomic(target: Path, text: str) -> None:
    from ..home_files import write_private

    write_private(target, text)


def save_profile(home: CaoHome, name: str, text: str, *, replace: bool) -> Path:
    """Write ``text`` as the local profile ``name`` after checking it (``check_profile_text``).

    :param replace: ``False`` creates (``Conflict`` when the local store has the name already);
        ``True`` replaces (``NotFound`` when it has not).
    """
    check_profile_text(name, text)
    with _store_lock(home) as folder:
        target = folder / f"{name}.md"
        exists = target.is_file()
        if exists and not replace:
            raise Conflict(f"agent profile {name!r} already exists in the local store")
        if replace and not exists:
            raise NotFound(
                f"agent profile {name!r} is not in the local store (only local profiles are editable)"
            )
        _write_atomic(target, text)
    return target


def delete_profile(home: CaoHome, name: str) -> None:
    """Remove the local profile ``name``; ``NotFound`` when the local store does not hold it."""
    check_name(name)
    with _store_lock(home) as folder:
        try:
            (folder / f"{name}.md").unlink()
        except FileNotFoundError:
            raise NotFound(
                f"agent profile {name!r} is not in the local store (only local profiles can be deleted)"
            ) from None


def _words(value: Any) -> list[str]:
    if isinstance(value, (list, tuple)):
        return [w for item in value for w in _words(item)]
    return [w for w in re.split(r"[^a-z0-9]+", str(value or "").lower()) if w]


def search_rows(rows: Iterable[dict[str, Any]], query: str, limit: int) -> list[dict[str, Any]]:
    """Rank profile rows (``name``, ``description``, ``capabilities``, ``tags``, ``role``, ``source``)
    against the words of ``query``: ``coverage`` counts the distinct query words a row holds, ``score``
    adds the share of the row's words that matched as a tie-break below 1, so a higher score is always
    the better match. Rows matching nothing are left out; the prompt body is never searched."""
    wanted = set(_words(query))
    if not wanted:
        return []
    ranked = []
    for row in rows:
        words = [w for field in SEARCH_FIELDS for w in _words(row.get(field))]
        coverage = len(wanted & set(words))
        if not coverage:
            continue
        density = sum(1 for w in words if w in wanted) / (len(words) + 1)
        result = {field: row.get(field) for field in (*SEARCH_FIELDS, "source")}
        result["description"] = row.get("description") or ""
        result["capabilities"] = list(row.get("capabilities") or ())
        result["tags"] = list(row.get("tags") or ())
        ranked.append({**result, "coverage": coverage, "score": round(coverage + density, 4)})
    ranked.sort(key=lambda r: (-r["score"], r["name"]))
    return ranked[:limit]


__all__ = [
    "check_profile_text", "delete_profile", "findings", "profile_schema", "save_profile", "search_rows",
]
