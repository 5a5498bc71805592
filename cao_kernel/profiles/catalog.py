"""The profiles one kernel can load: its own in-memory ones first, then the stores (``store.py``)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import CaoError

if TYPE_CHECKING:
    from cao_hookspecs import AgentProfile

    from ..home import CaoHome


class ProfileCatalog:
    """Looks profiles up by name for one kernel.

    :param provider_dirs: the providers' own agent folders, by provider name (asked on every lookup:
        providers may be registered later).
    :param known_providers: names of the installed providers, for checking what ``install`` writes.
    """

    def __init__(self, home: CaoHome, provider_dirs: Callable[[], dict[str, list[str]]],
                 known_providers: Callable[[], set[str]]) -> None:
        self._home = home
        self._provider_dirs = provider_dirs
        self._known_providers = known_providers
        self._profiles: dict[str, AgentProfile] = {}

    def add(self, profile: AgentProfile) -> None:
        """Make a profile available to this kernel only, ahead of every store (embedding and tests)."""
        self._profiles[profile.name] = profile

    def load(self, name: str) -> AgentProfile:
        """The profile ``name`` (blocking: it may read files)."""
        if name in self._profiles:
            return self._profiles[name]
        from .store import find_profile

        return find_profile(name, home=self._home, provider_dirs=self._provider_dirs())

    async def get(self, name: str) -> AgentProfile:
        return await asyncio.to_thread(self.load, name)

    async def list(self) -> list[AgentProfile]:
        """Every loadable profile, first in lookup order per name (in-memory ones first)."""
        from .store import ProfileStore

        entries = await asyncio.to_thread(lambda: ProfileStore(self._home, self._provider_dirs()).list())
        found = {p.name: p for p in self._profiles.values()}
        for entry in entries:
            if entry.name not in found and entry.loadable:
                try:
                    found[entry.name] = await asyncio.to_thread(self.load, entry.name)
                except CaoError:
                    continue
        return [found[name] for name in sorted(found)]

    async def install(
        self, source: str, *, provider: str | None = None, env: Sequence[str] | None = None, **options: Any
    ) -> Any:
        """Install a profile from a name, a ``.md`` path or an https URL (see ``install.py``)."""
        from .install import install

        return await asyncio.to_thread(
            install, source, self._home, provider=provider, env=env or (),
            provider_dirs=self._provider_dirs(), known_providers=self._known_providers(), **options,
        )


__all__ = ["ProfileCatalog"]
