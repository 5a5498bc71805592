"""The ``Kernel``: one plugin manager, its registries, and (in later modules) the orchestration engine."""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pluggy

from cao_hookspecs import BackendSpec, CommandSpec, InboxStoreSpec, ProviderSpec

from . import builtins
from .errors import NotFound, PluginError
from .home import CaoHome
from .hooks import Hooks, records_of
from .plugins import (
    ACTIVE,
    FAILED,
    LoadPolicy,
    PluginLoader,
    PluginRecord,
    create_plugin_manager,
    hook_names,
    register_checked,
)

log = logging.getLogger(__name__)

BUILTIN_PLUGIN = "cao_kernel.builtins"


class Kernel:
    """Owns a fresh plugin manager; embedding apps may run several kernels side by side.

    :param plugins: objects (modules, classes, instances) to register explicitly, in order.
    :param load_entrypoints: load plugins from entry-point group ``cao`` (subject to ``policy``).
    :param policy: which entry points to load; default from ``CAO_LOAD_PLUGINS`` /
        ``CAO_DISABLE_PLUGINS`` / ``CAO_STRICT_PLUGINS``.
    :param home: the cao home; default from ``CAO_HOME_DIR``.
    :param settings: settings overriding the environment (``CAO_*`` names).
    """

    def __init__(
        self,
        *,
        plugins: Iterable[object] = (),
        load_entrypoints: bool = True,
        policy: LoadPolicy | None = None,
        home: CaoHome | str | os.PathLike[str] | None = None,
        settings: Mapping[str, Any] | None = None,
    ) -> None:
        self.settings: dict[str, Any] = {k: v for k, v in os.environ.items() if k.startswith("CAO_")}
        self.settings.update(settings or {})
        if home is None:
            self.home = CaoHome.from_env(self.settings)
        elif isinstance(home, CaoHome):
            self.home = home
        else:
            self.home = CaoHome(Path(home).expanduser())
        self.pm: pluggy.PluginManager = create_plugin_manager()
        self.hooks = Hooks(self.pm, describe=self.describe_plugin)
        self._explicit: dict[str, PluginRecord] = {}
        self.pm.register(builtins, name=BUILTIN_PLUGIN)
        self.loader = PluginLoader(self.pm, policy or LoadPolicy.from_env(self.settings))
        for plugin in plugins:
            self.register_plugin(plugin)
        if load_entrypoints:
            self.loader.load_all()
        self._started = False

    # -- plugins ----------------------------------------------------------------------------------

    def register_plugin(self, plugin: object, name: str | None = None) -> str:
        """Register a plugin object (module, class or instance). Returns its name.

        Raises :class:`PluginError` (and leaves nothing registered) when it implements unknown hooks
        or pluggy refuses it.
        """
        name = name or getattr(plugin, "__name__", None) or f"{type(plugin).__name__}-{id(plugin):x}"
        register_checked(self.pm, plugin, name)
        self._explicit[name] = PluginRecord(name=name, status=ACTIVE, hooks=hook_names(self.pm, plugin))
        self._invalidate()
        if self._started:
            self.hooks.startup(self, plugin)
        return name

    def unregister_plugin(self, name: str) -> None:
        self.pm.unregister(name=name)
        self._explicit.pop(name, None)
        self._invalidate()

    def describe_plugin(self, name: str) -> str:
        dist = self.loader.distribution_of(name)
        return f"{name!r} ({dist})" if dist else repr(name)

    def plugin_records(self, *, include_builtin: bool = False) -> list[PluginRecord]:
        records = list(self.loader.records.values()) + list(self._explicit.values())
        if include_builtin:
            records.insert(
                0,
                PluginRecord(
                    name=BUILTIN_PLUGIN, distribution="cao-kernel", version=_kernel_version(),
                    hooks=hook_names(self.pm, builtins), builtin=True,
                ),
            )
        return records

    @property
    def failed_plugins(self) -> list[PluginRecord]:
        return [r for r in self.plugin_records() if r.status == FAILED]

    # -- registries -------------------------------------------------------------------------------

    def _invalidate(self) -> None:
        for attr in ("providers", "backends", "inbox_stores", "commands"):
            self.__dict__.pop(attr, None)

    @functools.cached_property
    def providers(self) -> dict[str, ProviderSpec]:
        return records_of(self.hooks.providers(), ProviderSpec)

    @functools.cached_property
    def backends(self) -> dict[str, BackendSpec]:
        return records_of(self.hooks.backends(), BackendSpec)

    @functools.cached_property
    def inbox_stores(self) -> dict[str, InboxStoreSpec]:
        return records_of(self.hooks.inbox_stores(), InboxStoreSpec)

    @functools.cached_property
    def commands(self) -> dict[str, CommandSpec]:
        return records_of(self.hooks.commands(), CommandSpec)

    def provider(self, name: str) -> ProviderSpec:
        try:
            return self.providers[name]
        except KeyError:
            known = ", ".join(sorted(self.providers)) or "none installed"
            raise NotFound(f"unknown provider {name!r} (known: {known})") from None

    def setting(self, name: str, default: Any = None) -> Any:
        return self.settings.get(name, default)


def _kernel_version() -> str:
    from . import __version__

    return __version__


__all__ = ["Kernel", "PluginError"]
