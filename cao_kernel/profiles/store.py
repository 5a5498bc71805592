"""Where profiles live and how a name is found.

Lookup order for a name (first hit wins):

1. ``local``: the local store ``<home>/agent-store/<name>.md`` (what ``cao install`` writes);
2. each provider's agent folders (``ProviderSpec.agent_dirs``), as ``<name>.md`` or
   ``<name>/agent.md``, labelled with the provider's name;
3. ``installed``: ``<home>/agent-context/`` (raw sources written at install), same two forms;
4. ``built-in``: the profiles packaged in ``cao_kernel/agent_store``.

A folder listed twice (a provider pointing at the local store, two providers sharing a folder) is
searched once, under the first label.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import attrs

from cao_hookspecs import AgentProfile

from ..errors import CaoError, NotFound
from ..home import CaoHome
from .envfile import read_env
from .parse import parse_profile_text, read_profile_file
from .validate import check_name, name_problem

log = logging.getLogger(__name__)

LOCAL = "local"
INSTALLED = "installed"
BUILT_IN = "built-in"
CUSTOM = "custom"
AGENT_FILE = "agent.md"


def builtin_dir() -> Path:
    """The folder of the profiles packaged with the kernel."""
    from importlib import resources

    return Path(str(resources.files("cao_kernel.agent_store")))


@attrs.frozen(kw_only=True)
class ProfileRoot:
    """One folder searched for profiles. ``nested`` allows ``<name>/agent.md`` besides ``<name>.md``."""

    label: str
    path: Path
    nested: bool


@attrs.frozen(kw_only=True)
class ProfileLocation:
    """A profile file found under a name: its source label and its path."""

    name: str
    source: str
    path: Path


@attrs.frozen(kw_only=True)
class ProfileEntry:
    """One row of the profile listing (upstream's ``GET /agents/profiles`` shape plus ``path`` and
    ``error``). ``duplicated_in`` names the later sources that hold the same name and are shadowed."""

    name: str
    source: str
    path: str
    loadable: bool
    error: str | None = None
    description: str = ""
    capabilities: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    role: str | None = None
    duplicated_in: tuple[str, ...] = ()
    profile: AgentProfile | None = attrs.field(default=None, eq=False, repr=False)

    def to_dict(self) -> dict[str, Any]:
        """JSON row: upstream's keys first, then ``path`` and ``error``."""
        return {
            "name": self.name,
            "source": self.source,
            "loadable": self.loadable,
            "description": self.description,
            "capabilities": list(self.capabilities),
            "tags": list(self.tags),
            "role": self.role,
            "duplicated_in": list(self.duplicated_in),
            "path": self.path,
            "error": self.error,
        }


class ProfileStore:
    """Finds, loads and lists agent profiles for one cao home.

    :param home: the cao home; default ``CaoHome.from_env()``.
    :param provider_dirs: provider name -> its agent folders (``~`` is expanded), in lookup order.
    """

    def __init__(
        self,
        home: CaoHome | None = None,
        provider_dirs: Mapping[str, Iterable[str | os.PathLike[str]]] | None = None,
    ) -> None:
        self.home = home or CaoHome.from_env()
        self.provider_dirs = {name: tuple(dirs) for name, dirs in (provider_dirs or {}).items()}

    # -- where to look ----------------------------------------------------------------------------

    def roots(self) -> list[ProfileRoot]:
        """The folders searched, in lookup order, each once."""
        candidates = [ProfileRoot(label=LOCAL, path=self.home.agent_store, nested=False)]
        for provider, dirs in self.provider_dirs.items():
            for folder in dirs:
                candidates.append(ProfileRoot(label=provider, path=Path(folder).expanduser(), nested=True))
        candidates.append(ProfileRoot(label=INSTALLED, path=self.home.agent_context, nested=True))
        candidates.append(ProfileRoot(label=BUILT_IN, path=builtin_dir(), nested=False))
        seen: set[Path] = set()
        roots = []
        for root in candidates:
            key = _canonical(root.path)
            if key in seen:
                continue
            seen.add(key)
            roots.append(root)
        return roots

    def env(self) -> dict[str, str]:
        """The managed ``.env`` values used for ``${VAR}`` substitution."""
        return read_env(self.home)

    # -- lookup -----------------------------------------------------------------------------------

    def locations(self, name: str) -> list[ProfileLocation]:
        """Every file holding ``name``, in lookup order (the first is the one used)."""
        check_name(name)
        found = []
        for root in self.roots():
            for path in _candidates(root, name):
                try:
                    exists = path.is_file()
                except OSError as exc:  # e.g. a provider folder we may not enter
                    log.warning("cannot inspect %s: %s", path, exc)
                    continue
                if exists:
                    found.append(ProfileLocation(name=name, source=root.label, path=path))
                    break
        return found

    def locate(self, name: str) -> ProfileLocation:
        """The file ``name`` resolves to; ``NotFound`` lists every folder searched."""
        found = self.locations(name)
        if found:
            return found[0]
        looked = "; ".join(f"{root.label} {root.path}" for root in self.roots())
        raise NotFound(f"agent profile {name!r} not found (looked in: {looked})")

    def read(self, name: str) -> tuple[str, ProfileLocation]:
        """The raw text of ``name`` (placeholders unresolved) and where it was found."""
        location = self.locate(name)
        return read_profile_file(location.path), location

    def load(self, name: str, *, unresolved: set[str] | None = None) -> AgentProfile:
        """Find ``name`` and parse it, ``${VAR}`` resolved from the managed ``.env``."""
        text, location = self.read(name)
        return self._parse(text, location, unresolved)

    def load_ref(self, ref: str, *, unresolved: set[str] | None = None) -> AgentProfile:
        """Load ``ref`` as a path when it looks like one (has a slash or ends ``.md``), else as a name."""
        if looks_like_path(ref):
            path = Path(ref).expanduser()
            text = read_profile_file(path)
            return parse_profile_text(
                text,
                origin=str(path),
                default_name=_default_name(path),
                env=self.env(),
                unresolved=unresolved,
                source=CUSTOM,
                path=str(path),
            )
        return self.load(ref, unresolved=unresolved)

    def _parse(
        self,
        text: str,
        location: ProfileLocation,
        unresolved: set[str] | None,
        env: Mapping[str, str] | None = None,
    ) -> AgentProfile:
        return parse_profile_text(
            text,
            origin=str(location.path),
            default_name=location.name,
            env=self.env() if env is None else env,
            unresolved=unresolved,
            source=location.source,
            path=str(location.path),
        )

    # -- listing ----------------------------------------------------------------------------------

    def list(self) -> list[ProfileEntry]:
        """Every profile name found, sorted; a malformed file is listed as not loadable, never raised."""
        by_name: dict[str, list[ProfileLocation]] = {}
        for root in self.roots():
            for location in _scan(root):
                by_name.setdefault(location.name, []).append(location)
        env = self.env()
        entries = []
        for name in sorted(by_name):
            winner, *others = by_name[name]
            duplicated = tuple(dict.fromkeys(o.source for o in others if o.source != winner.source))
            entries.append(self._entry(winner, duplicated, env))
        return entries

    def _entry(
        self, location: ProfileLocation, duplicated: tuple[str, ...], env: Mapping[str, str]
    ) -> ProfileEntry:
        common = {
            "name": location.name,
            "source": location.source,
            "path": str(location.path),
            "duplicated_in": duplicated,
        }
        problem = name_problem(location.name)
        if problem:
            return ProfileEntry(loadable=False, error=f"profile name {problem}", **common)
        try:
            profile = self._parse(read_profile_file(location.path), location, None, env)
        except CaoError as exc:
            return ProfileEntry(loadable=False, error=str(exc), **common)
        return ProfileEntry(
            loadable=True,
            description=profile.description,
            capabilities=profile.capabilities,
            tags=profile.tags,
            role=profile.role,
            profile=profile,
            **common,
        )


def looks_like_path(ref: str) -> bool:
    return "/" in ref or "\\" in ref or ref.endswith(".md")


def _default_name(path: Path) -> str:
    return path.parent.name if path.name == AGENT_FILE else path.stem


def _canonical(path: Path) -> Path:
    try:
        return path.resolve()
    except OSError:
        return path.absolute()


def _candidates(root: ProfileRoot, name: str) -> list[Path]:
    paths = [root.path / f"{name}.md"]
    if root.nested:
        paths.append(root.path / name / AGENT_FILE)
    return paths


def _scan(root: ProfileRoot) -> Iterator[ProfileLocation]:
    try:
        items = sorted(root.path.iterdir())
    except FileNotFoundError:
        return
    except OSError as exc:
        log.warning("cannot list profiles in %s: %s", root.path, exc)
        return
    flat: dict[str, Path] = {}
    nested: dict[str, Path] = {}
    for item in items:
        if item.name.startswith("."):
            continue  # hidden files, editors' backups and our own install temp files
        try:
            if item.suffix == ".md" and item.is_file():
                flat[item.stem] = item
            elif root.nested and item.is_dir() and (item / AGENT_FILE).is_file():
                nested[item.name] = item / AGENT_FILE
        except OSError as exc:  # an unreadable entry must not hide the others
            log.warning("cannot inspect %s: %s", item, exc)
    # <name>.md wins over <name>/agent.md in the same folder, as in lookup.
    for name in sorted(nested.keys() | flat.keys()):
        yield ProfileLocation(name=name, source=root.label, path=flat.get(name) or nested[name])


def find_profile(
    name: str,
    *,
    home: CaoHome | None = None,
    provider_dirs: Mapping[str, Iterable[str | os.PathLike[str]]] | None = None,
) -> AgentProfile:
    """Load the profile ``name`` from the first source holding it (see the module docstring).

    :raises InvalidInput: a bad name (``/``, ``\\``, ``..``, not ``[A-Za-z0-9_-]{1,64}``) or a
        malformed profile file.
    :raises NotFound: no source holds ``name``; the message lists where it looked.
    """
    return ProfileStore(home, provider_dirs).load(name)


def list_profiles(
    *,
    home: CaoHome | None = None,
    provider_dirs: Mapping[str, Iterable[str | os.PathLike[str]]] | None = None,
) -> list[ProfileEntry]:
    """Every profile from every source, sorted by name, with its source and loadability."""
    return ProfileStore(home, provider_dirs).list()


__all__ = [
    "BUILT_IN",
    "CUSTOM",
    "INSTALLED",
    "LOCAL",
    "ProfileEntry",
    "ProfileLocation",
    "ProfileRoot",
    "ProfileStore",
    "find_profile",
    "list_profiles",
]
