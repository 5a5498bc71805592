"""Plugin manager construction and entry-point loading.

Loading is one plugin at a time: a plugin that fails to import, fails to register or implements a hook
that does not exist is recorded as ``failed`` with its error and the rest load normally. Only
``CAO_STRICT_PLUGINS=1`` turns such a failure into an exception.
"""

from __future__ import annotations

import importlib.metadata
import logging
import os
import sys
import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs
import pluggy

from cao_hookspecs import ALL_SPEC_MODULES, ENTRY_POINT_GROUP, PROJECT_NAME

from .errors import PluginError
from .plugin_switches import allows, read_switches

log = logging.getLogger(__name__)

ACTIVE = "active"
BLOCKED = "blocked"
FAILED = "failed"


@attrs.frozen(kw_only=True)
class PluginRecord:
    """One plugin as ``cao plugins`` shows it."""

    name: str
    distribution: str | None = None
    version: str | None = None
    status: str = ACTIVE
    error: str | None = None
    hooks: tuple[str, ...] = ()
    builtin: bool = False
    entry_point: str | None = None


@attrs.frozen(kw_only=True)
class LoadPolicy:
    """Which entry points to load.

    ``only`` None means every entry point; an empty tuple means none (``--no-plugins``, or
    ``CAO_LOAD_PLUGINS`` set to an empty string). ``blocked`` names are never loaded.
    """

    only: tuple[str, ...] | None = None
    blocked: tuple[str, ...] = ()
    strict: bool = False

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, *, no_plugins: bool = False) -> LoadPolicy:
        only, blocked, strict = read_switches(environ, no_plugins=no_plugins)
        return cls(only=only, blocked=blocked, strict=strict)

    def allows(self, name: str) -> bool:
        return allows(name, self.only, self.blocked)


def _one_line(text: str) -> str:
    # pluggy's validation errors span several lines; `cao plugins` and stderr show one line per plugin.
    return " ".join(text.split())


def create_plugin_manager() -> pluggy.PluginManager:
    """A fresh manager with cao's hookspecs and nothing registered."""
    pm = pluggy.PluginManager(PROJECT_NAME)
    for module in ALL_SPEC_MODULES:
        pm.add_hookspecs(module)
    return pm


def _unknown_hooks(pm: pluggy.PluginManager, plugin: object) -> list[str]:
    """Hook implementations of ``plugin`` that match no spec (a typo, or a hook from a newer contract)."""
    unknown = []
    for caller in pm.get_hookcallers(plugin) or []:
        if caller.has_spec():
            continue
        for impl in caller.get_hookimpls():
            if impl.plugin is plugin and not impl.optionalhook:
                unknown.append(caller.name)
    return unknown


def register_checked(pm: pluggy.PluginManager, plugin: object, name: str) -> None:
    """Register ``plugin`` and verify it, rolling back completely if anything is wrong."""
    if pm.is_blocked(name):
        # pluggy would ignore it without a word: a plugin of that name is switched off.
        raise PluginError(f"plugin name {name!r} is switched off for this kernel (an entry point of that "
                          f"name was not loaded: CAO_LOAD_PLUGINS, CAO_DISABLE_PLUGINS or --no-plugins); "
                          f"register it under another name")
    try:
        pm.register(plugin, name=name)
    except Exception as exc:
        # pluggy's register() is not atomic: undo whatever part of it happened.
        if pm.get_plugin(name) is not None:
            pm.unregister(name=name)
        raise PluginError(f"plugin {name!r} could not be registered: {_one_line(str(exc))}") from exc
    unknown = _unknown_hooks(pm, plugin)
    if unknown:
        pm.unregister(name=name)
        raise PluginError(f"plugin {name!r} implements unknown hook(s) {', '.join(sorted(unknown))}")


def hook_names(pm: pluggy.PluginManager, plugin: object) -> tuple[str, ...]:
    return tuple(sorted(caller.name for caller in (pm.get_hookcallers(plugin) or [])))


class PluginLoader:
    """Loads entry points of group ``cao`` into a manager and remembers what happened to each."""

    def __init__(self, pm: pluggy.PluginManager, policy: LoadPolicy) -> None:
        self.pm = pm
        self.policy = policy
        self.records: dict[str, PluginRecord] = {}

    def entry_points(self) -> Sequence[importlib.metadata.EntryPoint]:
        return list(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP))

    def load_all(self, entry_points: Iterable[importlib.metadata.EntryPoint] | None = None) -> None:
        seen: dict[str, str | None] = {}
        for ep in self.entry_points() if entry_points is None else entry_points:
            dist, version = _distribution(ep)
            if ep.name in seen:
                # pluggy would silently skip the second one; say which two distributions collide.
                message = (
                    f"entry point {ep.name!r} is provided by both {seen[ep.name]} and {dist}; "
                    f"keeping the one from {seen[ep.name]}"
                )
                self.records[f"{ep.name}@{dist}"] = PluginRecord(
                    name=ep.name, distribution=dist, version=version, status=FAILED, error=message,
                    entry_point=ep.value,
                )
                # Same channel as a load failure: the user must see it even with logging unconfigured.
                print(f"cao: {message}", file=sys.stderr)
                if self.policy.strict:
                    raise PluginError(message)
                continue
            seen[ep.name] = dist
            if not self.policy.allows(ep.name):
                self.records[ep.name] = PluginRecord(
                    name=ep.name, distribution=dist, version=version, status=BLOCKED, entry_point=ep.value
                )
                self.pm.set_blocked(ep.name)
                continue
            self._load_one(ep, dist, version)

    def _load_one(self, ep: importlib.metadata.EntryPoint, dist: str | None, version: str | None) -> None:
        try:
            plugin = _load_within(ep, _load_timeout())
            register_checked(self.pm, plugin, ep.name)
        except BaseException as exc:  # noqa: BLE001 - a plugin may raise anything, SystemExit included
            if isinstance(exc, KeyboardInterrupt):
                raise
            error = _one_line(f"{type(exc).__name__}: {exc}")
            self.records[ep.name] = PluginRecord(
                name=ep.name, distribution=dist, version=version, status=FAILED, error=error,
                entry_point=ep.value,
            )
            print(f"cao: plugin {ep.name!r} ({dist or 'unknown distribution'}) failed to load: {error}",
                  file=sys.stderr)
            if self.policy.strict:
                raise PluginError(f"plugin {ep.name!r} failed to load: {error}") from exc
            return
        self.records[ep.name] = PluginRecord(
            name=ep.name, distribution=dist, version=version, status=ACTIVE,
            hooks=hook_names(self.pm, plugin), entry_point=ep.value,
        )

    def distribution_of(self, plugin_name: str) -> str | None:
        record = self.records.get(plugin_name)
        return record.distribution if record else None

    def describe(self, plugin_name: str) -> str:
        """``'name' (distribution)`` for messages that name a plugin (just ``'name'`` when unknown)."""
        dist = self.distribution_of(plugin_name)
        return f"{plugin_name!r} ({dist})" if dist else repr(plugin_name)


def _distribution(ep: importlib.metadata.EntryPoint) -> tuple[str | None, str | None]:
    dist: Any = getattr(ep, "dist", None)
    if dist is None:
        return None, None
    # ``dist.metadata`` runs the email parser over the whole file, twice for name and version: about a
    # millisecond per plugin at every start. Both are one-line headers at the top of the file.
    text = dist.read_text("METADATA") or dist.read_text("PKG-INFO") or ""
    found = _headers(text, ("name", "version"))
    if len(found) == 2:
        return found["name"], found["version"]
    return dist.metadata["Name"], dist.version


def _headers(text: str, wanted: tuple[str, ...]) -> dict[str, str]:
    """The first value of each ``wanted`` header (lower-case names) in a metadata file's header block."""
    found: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            break
        name, colon, value = line.partition(":")
        key = name.strip().lower()
        if colon and not line[:1].isspace() and key in wanted and key not in found:
            found[key] = value.strip()
    return found


# Seconds one plugin's import may take (CAO_PLUGIN_LOAD_TIMEOUT): one that hangs must not hang cao.
LOAD_TIMEOUT = 10.0


def _load_timeout() -> float:
    try:
        return max(0.1, float(os.environ.get("CAO_PLUGIN_LOAD_TIMEOUT") or LOAD_TIMEOUT))
    except ValueError:
        return LOAD_TIMEOUT


def _load_within(ep: importlib.metadata.EntryPoint, seconds: float) -> Any:
    """``ep.load()`` in a thread of its own: an import still running after ``seconds`` is reported as a
    failure and left behind (a daemon thread, gone with the process)."""
    outcome: dict[str, Any] = {}

    def load() -> None:
        try:
            outcome["plugin"] = ep.load()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller below
            outcome["error"] = exc

    thread = threading.Thread(target=load, name=f"cao-plugin-load-{ep.name}", daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        raise TimeoutError(f"its import did not finish within {seconds:g} s (CAO_PLUGIN_LOAD_TIMEOUT)")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["plugin"]
