"""The records plugins registered, by kind and name, each kind collected once and again after a plugin
is added or removed."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from cao_hookspecs import (
    BackendSpec,
    CommandSpec,
    InboxStoreSpec,
    McpServerSpec,
    McpToolSpec,
    ProviderSpec,
    RouteSpec,
)

from .errors import NotFound
from .hooks import records_of

if TYPE_CHECKING:
    from .hooks import Hooks

T = TypeVar("T")

class _Records(Generic[T]):
    """A ``Registry`` attribute: the records of one registration hook, by name. The attribute's name is
    the hook facade's call that collects them (``Hooks.providers`` for ``providers``)."""

    def __init__(self, record_type: type[T]) -> None:
        self._type = record_type

    def __set_name__(self, owner: type, name: str) -> None:
        self._kind = name

    def __get__(self, registry: Registry, owner: type | None = None) -> dict[str, T]:
        return registry.records(self._kind, self._type)


class Registry:
    """Name -> record for every registration hook. A kind's dict is built on first use and kept (callers
    may look at it as often as they like) until ``invalidate``."""

    providers = _Records(ProviderSpec)
    backends = _Records(BackendSpec)
    inbox_stores = _Records(InboxStoreSpec)
    commands = _Records(CommandSpec)
    routes = _Records(RouteSpec)
    mcp_tools = _Records(McpToolSpec)
    mcp_servers = _Records(McpServerSpec)

    def __init__(self, hooks: Hooks) -> None:
        self._hooks = hooks
        self._records: dict[str, dict[str, Any]] = {}

    def invalidate(self) -> None:
        self._records.clear()

    def records(self, kind: str, record_type: type[T]) -> dict[str, T]:
        """The records the ``kind`` registration hook collects, checked to be ``record_type``."""
        if kind not in self._records:
            self._records[kind] = records_of(getattr(self._hooks, kind)(), record_type)
        return self._records[kind]

    def provider(self, name: str) -> ProviderSpec:
        """The provider named ``name``; ``NotFound`` naming the known ones and the package to install."""
        try:
            return self.providers[name]
        except KeyError:
            known = ", ".join(sorted(self.providers)) or "none installed"
            # Provider packages follow one naming rule, so the likely missing package can be named.
            plain = isinstance(name, str) and re.fullmatch(r"[a-z][a-z0-9_]{0,63}", name)
            package = "cao-provider-" + name.replace("_", "-") if plain else None
            hint = f"; to add it, install the package {package}" if package else ""
            raise NotFound(f"unknown provider {name!r} (known: {known}){hint}") from None

    def provider_dirs(self) -> dict[str, list[str]]:
        """Folders where providers' CLIs keep agent profiles of their own, by provider name."""
        return {name: list(spec.agent_dirs) for name, spec in self.providers.items() if spec.agent_dirs}


__all__ = ["Registry"]
