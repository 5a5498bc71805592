"""The ``Kernel``: one plugin manager, its registries, and (in later modules) the orchestration engine."""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pluggy

from cao_hookspecs import (
    AgentProfile,
    BackendSpec,
    CommandSpec,
    InboxStoreSpec,
    McpToolSpec,
    ProviderSpec,
    RouteSpec,
    RuntimeContext,
    StatusReport,
)

from . import builtins
from .errors import CaoError, NotFound, PluginError
from .home import CaoHome
from .hooks import Hooks, records_of
from .live import LiveTerminal
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
from .orchestration import Orchestration
from .terminal_ops import TerminalOps

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

    from .delivery import DeliveryEngine

log = logging.getLogger(__name__)

BUILTIN_PLUGIN = "cao_kernel.builtins"


class Kernel(Orchestration, TerminalOps):
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
        self._started = False
        self.pm.register(builtins, name=BUILTIN_PLUGIN)
        self.loader = PluginLoader(self.pm, policy or LoadPolicy.from_env(self.settings))
        for plugin in plugins:
            self.register_plugin(plugin)
        if load_entrypoints:
            self.loader.load_all()
        self._start_lock: asyncio.Lock | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._executor: ThreadPoolExecutor | None = None
        self._backend: Any = None
        self._live: dict[str, LiveTerminal] = {}
        self._profiles: dict[str, AgentProfile] = {}
        self._store: Any = None
        self._delivery: DeliveryEngine | None = None
        self._assign_pending: dict[int, Any] = {}
        self._signals: Any = None

    # -- running ----------------------------------------------------------------------------------

    async def start(self) -> None:
        """Bind to the running event loop, open the terminal backend, re-adopt live terminals and
        call ``cao_startup``. Idempotent; every operation calls it."""
        if self._started:
            return
        if self._start_lock is None:
            self._start_lock = asyncio.Lock()
        async with self._start_lock:
            if self._started:
                return
            from concurrent.futures import ThreadPoolExecutor

            self._loop = asyncio.get_running_loop()
            self._executor = ThreadPoolExecutor(
                max_workers=int(self.settings.get("CAO_IO_THREADS") or 32), thread_name_prefix="cao-io"
            )
            self.home.ensure()
            self._backend = self._open_backend()
            # Opening a store touches the disk: keep it off the event loop thread.
            self._store = await self._loop.run_in_executor(self._executor, self._open_inbox_store)
            from .delivery import DeliveryEngine

            self._delivery = DeliveryEngine(self, self._store)
            self._started = True
            from .signal_channel import open_channel

            # Before re-adopting: the terminals' hooks name this channel's socket.
            self._signals = open_channel(self)
            await self._adopt_all()
            await self._delivery.recover()
            self.hooks.startup(self)

    def _open_backend(self) -> Any:
        name = str(self.settings.get("CAO_TERMINAL_BACKEND") or "tmux")
        spec = self.backends.get(name)
        if spec is None:
            known = ", ".join(sorted(self.backends)) or "none"
            raise CaoError(f"no terminal backend {name!r} is installed (installed: {known}); install cao-tmux")
        return spec.factory(self.runtime_context())

    def _open_inbox_store(self) -> Any:
        name = self.settings.get("CAO_INBOX_STORE") or ("sqlite" if "sqlite" in self.inbox_stores else "memory")
        spec = self.inbox_stores.get(str(name))
        if spec is None:
            known = ", ".join(sorted(self.inbox_stores)) or "none"
            raise CaoError(f"no inbox store {name!r} is installed (installed: {known})")
        return spec.factory(self.runtime_context())

    def runtime_context(self) -> RuntimeContext:
        return RuntimeContext(home_dir=str(self.home.root), settings=dict(self.settings))

    async def aclose(self) -> None:
        """Stop watching terminals and release threads. Terminals keep running for the next kernel."""
        if not self._started:
            return
        self.hooks.shutdown(self)
        if self._delivery is not None:
            await self._delivery.aclose()
        signals, self._signals = self._signals, None
        if signals is not None:
            signals.close()
        for live in self._live.values():
            live.tracker._clear_latch()
        refreshing = [live.refresh_task for live in self._live.values() if live.refresh_task is not None]
        for task in refreshing:
            task.cancel()
        await asyncio.gather(*refreshing, return_exceptions=True)
        self._live.clear()
        backend, self._backend = self._backend, None
        store, self._store = self._store, None
        loop = asyncio.get_running_loop()
        if backend is not None:
            await loop.run_in_executor(self._executor, backend.close)
        if store is not None:
            await loop.run_in_executor(self._executor, store.close)
        assert self._executor is not None
        self._executor.shutdown(wait=False)
        self._started = False

    async def __aenter__(self) -> Kernel:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def _status_changed(self, live: LiveTerminal, old: StatusReport, new: StatusReport) -> None:
        self.hooks.after("cao_after_status_changed", terminal=live.terminal(), old=old, new=new)
        if self._delivery is not None and live.id in self._live:
            self._delivery.on_status(live)

    # -- profiles ---------------------------------------------------------------------------------

    def add_profile(self, profile: AgentProfile) -> None:
        """Make a profile available to this kernel only, ahead of every store (embedding and tests)."""
        self._profiles[profile.name] = profile

    def load_profile(self, name: str) -> AgentProfile:
        if name in self._profiles:
            return self._profiles[name]
        from .profiles import find_profile

        return find_profile(name, home=self.home, provider_dirs=self.provider_dirs())

    async def list_profiles(self) -> list[AgentProfile]:
        """Every loadable profile, first in lookup order per name (in-memory ones first)."""
        from .profiles import ProfileStore

        entries = await asyncio.to_thread(lambda: ProfileStore(self.home, self.provider_dirs()).list())
        found = {p.name: p for p in self._profiles.values()}
        for entry in entries:
            if entry.name not in found and entry.loadable:
                try:
                    found[entry.name] = await asyncio.to_thread(self.load_profile, entry.name)
                except CaoError:
                    continue
        return [found[name] for name in sorted(found)]

    async def install_profile(
        self, source: str, *, provider: str | None = None, env: list[str] | None = None, **options: Any
    ) -> Any:
        """Install a profile from a name, a ``.md`` path or an https URL (see ``cao_kernel.profiles.install``)."""
        from .profiles.install import install

        return await asyncio.to_thread(
            install, source, self.home, provider=provider, env=env or (), provider_dirs=self.provider_dirs(),
            known_providers=set(self.providers), **options,
        )

    async def get_profile(self, name: str) -> AgentProfile:
        return await asyncio.to_thread(self.load_profile, name)

    async def list_providers(self) -> list[dict[str, Any]]:
        """Installed providers: name, binary, whether the binary is found (its override variable, else
        PATH), install hint."""
        from cao_hookspecs.programs import find_program

        def installed(spec: Any) -> bool:
            try:
                find_program(os.environ, spec.binary, spec.binary_env, missing="")
            except ValueError:
                return spec.name == "mock_cli"
            return True

        return [
            {"name": spec.name, "binary": spec.binary, "installed": installed(spec),
             "description": spec.description, "install_hint": spec.install_hint}
            for spec in sorted(self.providers.values(), key=lambda s: s.name)
        ]

    def provider_dirs(self) -> dict[str, list[str]]:
        return {name: list(spec.agent_dirs) for name, spec in self.providers.items() if spec.agent_dirs}

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
        for attr in ("providers", "backends", "inbox_stores", "commands", "routes", "mcp_tools"):
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

    @functools.cached_property
    def routes(self) -> dict[str, RouteSpec]:
        return records_of(self.hooks.routes(), RouteSpec)

    @functools.cached_property
    def mcp_tools(self) -> dict[str, McpToolSpec]:
        return records_of(self.hooks.mcp_tools(), McpToolSpec)

    def provider(self, name: str) -> ProviderSpec:
        try:
            return self.providers[name]
        except KeyError:
            known = ", ".join(sorted(self.providers)) or "none installed"
            # Provider packages follow one naming rule, so the likely missing package can be named.
            plain = isinstance(name, str) and re.fullmatch(r"[a-z][a-z0-9_]{0,63}", name)
            package = "cao-provider-" + name.replace("_", "-") if plain else None
            hint = f"; to add it, install the package {package}" if package else ""
            raise NotFound(f"unknown provider {name!r} (known: {known}){hint}") from None

    def setting(self, name: str, default: Any = None) -> Any:
        return self.settings.get(name, default)


def _kernel_version() -> str:
    from . import __version__

    return __version__


__all__ = ["Kernel", "PluginError"]
