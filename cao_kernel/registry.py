"""The records plugins registered, by kind and name, each kind collected once and again after a plugin
is added or removed."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

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

# kind (also the name of its registration call on ``Hooks``) -> record type
_KINDS: dict[str, type] = {
    "providers": ProviderSpec,
    "backends": BackendSpec,
    "inbox_stores": InboxStoreSpec,
    "commands": CommandSpec,
    "routes": RouteSpec,
    "mcp_tools": McpToolSpec,
    "mcp_servers": McpServerSpec,
}


class Registry:
    """Name -> record for every registration hook. A kind's dict is built on first use and kept (callers
    may look at it as often as they like) until ``invalidate``."""

    def __init__(self, hooks: Hooks) -> None:
        self._hooks = hooks
        self._records: dict[str, dict[str, Any]] = {}

    def invalidate(self) -> None:
        self._records.clear()

    def _of(self, kind: str) -> dict[str, Any]:
        if kind not in self._records:
            self._records[kind] = records_of(getattr(self._hooks, kind)(), _KINDS[kind])
        return self._records[kind]

    @property
    def providers(self) -> dict[str, ProviderSpec]:
        return self._of("providers")

    @property
    def backends(self) -> dict[str, BackendSpec]:
        return self._of("backends")

    @property
    def inbox_stores(self) -> dict[str, InboxStoreSpec]:
        return self._of("inbox_stores")

    @property
    def commands(self) -> dict[str, CommandSpec]:
        return self._of("commands")

    @property
    def routes(self) -> dict[str, RouteSpec]:
        return self._of("routes")

    @property
    def mcp_tools(self) -> dict[str, McpToolSpec]:
        return self._of("mcp_tools")

    @property
    def mcp_servers(self) -> dict[str, McpServerSpec]:
        return self._of("mcp_servers")

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
