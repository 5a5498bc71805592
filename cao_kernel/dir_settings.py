"""Where profiles and skills are looked for beyond cao's own folders, as upstream's settings pages set it:
a provider's agent folder moved elsewhere, extra agent folders, folders switched off, and extra skill
folders. Kept in ``<home>/dirs.json`` (atomic writes under a lock); the profile catalog and skill lookup
read it on every lookup, so a change needs no restart.

Every path must be absolute (``~`` is expanded) and one line; extra folders must exist when they are
added (a typo would otherwise match nothing, silently); a folder can only be switched off when it is
configured. Refusals name the offending path and leave the file as it was.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from .errors import InvalidInput

if TYPE_CHECKING:
    from .home import CaoHome

FILE = "dirs.json"
MAX_DIRS = 64
MAX_PATH = 4096
EXTRA = "extra"


def check_dir(path: Any, *, what: str, must_exist: bool) -> str:
    """``path`` as stored (``~`` expanded, trailing slashes gone); ``InvalidInput`` naming ``what``."""
    if not isinstance(path, str) or not path.strip():
        raise InvalidInput(f"{what}: a folder path must be a non-empty string, got {path!r}")
    if len(path) > MAX_PATH or any(ord(c) < 32 or c == "\x7f" for c in path):
        raise InvalidInput(f"{what}: {path[:80]!r} is not a usable path (control characters or too long)")
    expanded = os.path.normpath(os.path.expanduser(path.strip()))
    if not os.path.isabs(expanded):
        raise InvalidInput(f"{what}: {path!r} must be an absolute path (or start with ~)")
    if expanded == os.sep:
        raise InvalidInput(f"{what}: the system root is not a folder of profiles or skills")
    if must_exist and not os.path.isdir(expanded):
        raise InvalidInput(f"{what}: {path!r} is not an existing folder")
    return expanded


def _norm(path: str) -> str:
    return os.path.normpath(os.path.expanduser(path))


def _dir_list(value: Any, *, what: str, must_exist: bool) -> list[str]:
    if not isinstance(value, list):
        raise InvalidInput(f"{what} must be a list of folder paths")
    if len(value) > MAX_DIRS:
        raise InvalidInput(f"{what} has {len(value)} folders (at most {MAX_DIRS})")
    return list(dict.fromkeys(check_dir(p, what=what, must_exist=must_exist) for p in value))


class DirSettings:
    """The folder settings of one cao home. ``provider_dirs`` gives the providers' own agent folders."""

    def __init__(self, home: CaoHome, provider_dirs: Callable[[], Mapping[str, list[str]]]) -> None:
        self.home = home
        self._provider_dirs = provider_dirs

    @property
    def path(self) -> Any:
        return self.home.root / FILE

    def read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    # -- agent folders ----------------------------------------------------------------------------

    def agent_dirs(self) -> dict[str, Any]:
        """Upstream's shape: ``agent_dirs`` (provider -> its folder), ``extra_dirs``, ``disabled_dirs``."""
        data = self.read()
        dirs = {name: folders[0] for name, folders in self._provider_dirs().items() if folders}
        dirs.update({k: v for k, v in (data.get("agent_dirs") or {}).items() if k in dirs})
        return {"agent_dirs": dirs, "extra_dirs": list(data.get("extra_dirs") or []),
                "disabled_dirs": list(data.get("disabled_dirs") or [])}

    def set_agent_dirs(self, agent_dirs: Mapping[str, Any] | None, extra_dirs: list[Any] | None,
                       disabled_dirs: list[Any] | None) -> dict[str, Any]:
        """Change what is given (``None`` leaves a part alone); all checked before anything is written."""
        known = self._provider_dirs()
        with self._lock():
            data = self.read()
            if agent_dirs is not None:
                if not isinstance(agent_dirs, Mapping):
                    raise InvalidInput("agent_dirs must be an object of provider name to folder")
                unknown = sorted(set(agent_dirs) - set(known))
                if unknown:
                    raise InvalidInput(f"agent_dirs: unknown provider {unknown[0]!r} "
                                       f"(known: {', '.join(sorted(known)) or 'none'})")
                moved = dict(data.get("agent_dirs") or {})
                moved.update({name: check_dir(path, what=f"agent_dirs.{name}", must_exist=False)
                              for name, path in agent_dirs.items()})
                data["agent_dirs"] = moved
            if extra_dirs is not None:
                data["extra_dirs"] = _dir_list(extra_dirs, what="extra_dirs", must_exist=True)
            configured = {_norm(p) for p in (*self._effective_provider_dirs(data, known),
                                              *(data.get("extra_dirs") or []))}
            if disabled_dirs is not None:
                wanted = _dir_list(disabled_dirs, what="disabled_dirs", must_exist=False)
                stray = next((p for p in wanted if p not in configured), None)
                if stray is not None:
                    raise InvalidInput(f"disabled_dirs: {stray!r} is not a configured agent folder")
                data["disabled_dirs"] = wanted
            # A folder no longer configured is no longer switched off (it would come back switched off).
            data["disabled_dirs"] = [p for p in data.get("disabled_dirs") or [] if _norm(p) in configured]
            self._write(data)
        return self.agent_dirs()

    @staticmethod
    def _effective_provider_dirs(data: Mapping[str, Any], known: Mapping[str, list[str]]) -> list[str]:
        moved = data.get("agent_dirs") or {}
        return [moved.get(name, folders[0]) if i == 0 else folder
                for name, folders in known.items() for i, folder in enumerate(folders)]

    def profile_dirs(self) -> dict[str, list[str]]:
        """The folders the profile catalog searches beyond its own, by label: each provider's (moved
        where set), then the extra folders (``extra``); switched-off folders left out."""
        data = self.read()
        if not data:
            return {name: list(folders) for name, folders in self._provider_dirs().items()}
        moved = data.get("agent_dirs") or {}
        off = {_norm(p) for p in data.get("disabled_dirs") or []}
        out: dict[str, list[str]] = {}
        for name, folders in self._provider_dirs().items():
            chosen = [moved.get(name, folder) if i == 0 else folder for i, folder in enumerate(folders)]
            kept = [f for f in chosen if _norm(f) not in off]
            if kept:
                out[name] = kept
        extras = [p for p in data.get("extra_dirs") or [] if p not in off]
        if extras:
            out[EXTRA] = extras
        return out

    # -- skill folders ----------------------------------------------------------------------------

    def skill_dirs(self) -> dict[str, Any]:
        return {"skills_dir": str(self.home.skills), "extra_dirs": list(self.read().get("skill_dirs") or [])}

    def set_skill_dirs(self, extra_dirs: Iterable[Any] | None) -> dict[str, Any]:
        if extra_dirs is not None:
            checked = _dir_list(list(extra_dirs), what="extra_dirs", must_exist=True)
            with self._lock():
                data = self.read()
                data["skill_dirs"] = checked
                self._write(data)
        return self.skill_dirs()

    # -- the file ---------------------------------------------------------------------------------

    def _lock(self) -> contextlib.AbstractContextManager[None]:
        from .home_files import locked

        return locked(self.home.root / f".{FILE}.lock")

    def _write(self, data: dict[str, Any]) -> None:
        from .home_files import write_private

        write_private(self.path, json.dumps(data, indent=2))


__all__ = ["DirSettings", "check_dir"]
