"""The profiles one kernel can load: its own in-memory ones first, then the stores (``store.py``)."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import CaoError

if TYPE_CHECKING:
    from cao_hookspecs import AgentProfile

    from ..home import CaoHome
    from ..iopool import NetPool

# Downloads one kernel runs at once; more are refused until one ends (each ends by its deadline).
DOWNLOAD_THREADS = 4


class ProfileCatalog:
    """Looks profiles up by name for one kernel.

    :param provider_dirs: the providers' own agent folders, by provider name (asked on every lookup:
        providers may be registered later).
    :param known_providers: names of the installed providers, for checking what ``install`` writes.
    :param settings: where ``CAO_PROFILE_DOWNLOAD_TIMEOUT`` is read from (default: the environment).
    """

    def __init__(self, home: CaoHome, provider_dirs: Callable[[], dict[str, list[str]]],
                 known_providers: Callable[[], set[str]], settings: Mapping[str, Any] | None = None) -> None:
        self._home = home
        self._provider_dirs = provider_dirs
        self._known_providers = known_providers
        self._settings = settings
        self._profiles: dict[str, AgentProfile] = {}
        self._downloads: NetPool | None = None

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

    # -- the local store's editing (``edit.py``) --------------------------------------------------

    def source(self, name: str) -> str:
        """The profile's text as stored, ``${VAR}`` placeholders left as written (an in-memory profile
        is written out as Markdown)."""
        if name in self._profiles:
            from .parse import serialize_profile

            return serialize_profile(self._profiles[name])
        from .store import ProfileStore

        return ProfileStore(self._home, self._provider_dirs()).read(name)[0]

    def save(self, name: str, text: str, *, replace: bool) -> None:
        from .edit import save_profile

        save_profile(self._home, name, text, replace=replace)

    def delete(self, name: str) -> None:
        from .edit import delete_profile

        delete_profile(self._home, name)

    def rows(self) -> list[dict[str, Any]]:
        """Every loadable profile as a listing row (name, source, description, capabilities, tags, role)."""
        from .store import ProfileStore

        rows = {p.name: {"name": p.name, "source": p.source or "memory", "description": p.description,
                         "capabilities": list(p.capabilities), "tags": list(p.tags), "role": p.role}
                for p in self._profiles.values()}
        for entry in ProfileStore(self._home, self._provider_dirs()).list():
            if entry.loadable and entry.name not in rows:
                rows[entry.name] = entry.to_dict()
        return [rows[name] for name in sorted(rows)]

    async def install(
        self, source: str, *, provider: str | None = None, env: Sequence[str] | None = None, **options: Any
    ) -> Any:
        """Install a profile from a name, a ``.md`` path or an https URL (see ``install.py``).

        A download runs on threads of its own (``DOWNLOAD_THREADS``; ``Conflict`` when all are busy), so
        slow hosts never hold the threads that profile reads and terminals use.
        """
        from .install import SOURCE_URL, install, source_kind

        call = functools.partial(
            install, source, self._home, provider=provider, env=env or (),
            provider_dirs=self._provider_dirs(), known_providers=self._known_providers(), **options,
        )
        if source_kind(source) != SOURCE_URL:
            return await asyncio.to_thread(call)
        from ..iopool import NetPool
        from .fetch import THREAD_PREFIX, download_timeout

        if "timeout" not in options:
            call.keywords["timeout"] = download_timeout(self._settings)
        if self._downloads is None:
            self._downloads = NetPool(DOWNLOAD_THREADS, what="profile downloads", name=THREAD_PREFIX)
        return await self._downloads.run(call)

    def close(self) -> None:
        """Let the download threads end (a download still running ends by its deadline)."""
        if self._downloads is not None:
            self._downloads.close()
            self._downloads = None


__all__ = ["ProfileCatalog"]
