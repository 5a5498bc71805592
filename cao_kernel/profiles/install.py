"""``cao install``: put a profile into the local store from a name, a ``.md`` file or an https URL.

Everything is checked before anything is written: the source is read (downloads are capped), the
``--env`` pairs are checked, and the profile is parsed with them applied. Only then are the files
written, each to a temporary file in its own folder and moved into place with ``os.replace``; a
failure leaves the cao home exactly as it was.

What is written:

- ``<home>/agent-store/<name>.md``: the raw source (placeholders unresolved), under the name in
  its frontmatter (for a bare-name install from another source, the looked-up name when the
  frontmatter has none);
- ``<home>/agent-context/<name>.md``: the same raw source, as upstream keeps it;
- ``<home>/.env``: the ``--env`` values, which ``${VAR}`` placeholders are resolved from.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from cao_hookspecs import AgentProfile

from ..errors import InvalidInput, NotFound
from ..home import CaoHome
from .envfile import env_path, parse_assignments, read_env, updated_env_text
from .fetch import fetch_profile
from .parse import decode_profile, parse_profile_text, read_profile_file
from .store import ProfileStore, looks_like_path
from .validate import check_name

if TYPE_CHECKING:
    import ssl

SOURCE_NAME = "name"
SOURCE_PATH = "path"
SOURCE_URL = "url"


@attrs.frozen(kw_only=True)
class InstallResult:
    """What an install did (the fields of upstream's install response, plus paths)."""

    name: str
    source_kind: str
    origin: str
    store_file: str
    context_file: str
    provider: str | None = None
    env_file: str | None = None
    env_set: tuple[str, ...] = ()
    unresolved_vars: tuple[str, ...] = ()
    found_in: str | None = None
    already_local: bool = False
    profile: AgentProfile | None = attrs.field(default=None, eq=False, repr=False)


def source_kind(source: str) -> str:
    """``url`` for anything with a scheme, ``path`` for something that looks like a file, else ``name``."""
    if "://" in source or source.lower().startswith(("http:", "https:")):
        return SOURCE_URL
    if looks_like_path(source) or source.startswith("~"):
        return SOURCE_PATH
    return SOURCE_NAME


def install(
    source: str,
    home: CaoHome | None = None,
    *,
    provider: str | None = None,
    env: Iterable[str] = (),
    provider_dirs: Mapping[str, Iterable[str]] | None = None,
    known_providers: Collection[str] | None = None,
    allowed_hosts: Iterable[str] | None = None,
    ssl_context: ssl.SSLContext | None = None,
    timeout: float | None = None,
) -> InstallResult:
    """Install the profile ``source`` (a profile name, a ``.md`` path or an ``https://`` URL).

    :param provider: the provider to record for the profile; checked against ``known_providers``
        when that is given. Defaults to the profile's own ``provider`` field.
    :param env: ``KEY=VALUE`` strings written to the managed ``.env`` (checked first).
    :param provider_dirs: provider agent folders, for finding a bare name.
    :param allowed_hosts: hosts a URL may point at; default github.com, raw.githubusercontent.com
        and ``CAO_PROFILE_ALLOWED_HOSTS``.
    :param timeout: the deadline for a download in seconds; default ``CAO_PROFILE_DOWNLOAD_TIMEOUT``, 20.
    :raises InvalidInput: anything wrong with the source, the URL, the profile or the pairs.
    :raises NotFound: a name no source holds, a missing file, HTTP 404.
    """
    home = home or CaoHome.from_env()
    store = ProfileStore(home, provider_dirs)
    if provider is not None:
        check_name(provider, what="provider name")
        if known_providers is not None and provider not in known_providers:
            known = ", ".join(sorted(known_providers)) or "none installed"
            raise NotFound(f"unknown provider {provider!r} (known: {known})")
    updates = parse_assignments(env)

    kind = source_kind(source)
    default_name: str | None = None
    found_local = None
    found_in = None
    if kind == SOURCE_URL:
        origin, data = fetch_profile(source, hosts=allowed_hosts, ssl_context=ssl_context, timeout=timeout)
        raw = decode_profile(data, origin)
    elif kind == SOURCE_PATH:
        path = Path(source).expanduser()
        origin = str(path)
        if path.suffix != ".md":
            raise InvalidInput(f"{origin}: a profile file must end with .md")
        if not path.exists():
            raise NotFound(f"{origin}: no such file")
        raw = read_profile_file(path)
    else:
        default_name = check_name(source)
        raw, location = store.read(source)
        origin = str(location.path)
        found_in = location.source
        found_local = location.path if location.source == "local" else None

    values = {**read_env(home), **updates}
    unresolved: set[str] = set()
    profile = parse_profile_text(
        raw, origin=origin, default_name=default_name, env=values, unresolved=unresolved
    )
    name = profile.name
    store_file = home.agent_store / f"{name}.md"
    context_file = home.agent_context / f"{name}.md"
    already_local = found_local is not None and found_local == store_file

    writes: list[tuple[Path, str, int]] = []
    if not already_local:
        writes.append((store_file, raw, 0o644))
    writes.append((context_file, raw, 0o644))
    with _env_lock(home) if updates else contextlib.nullcontext():
        # Read and rewritten under the lock: two installs at once must not drop each other's keys.
        if updates:
            current = _read_existing(env_path(home))
            writes.insert(0, (env_path(home), updated_env_text(current, updates), 0o600))
        _commit(home, writes)

    return InstallResult(
        name=name,
        source_kind=kind,
        origin=origin,
        store_file=str(store_file),
        context_file=str(context_file),
        provider=provider or profile.provider,
        env_file=str(env_path(home)) if updates else None,
        env_set=tuple(updates),
        unresolved_vars=tuple(sorted(unresolved)),
        found_in=found_in,
        already_local=already_local,
        profile=attrs.evolve(profile, source="local", path=str(store_file)),
    )


def _env_lock(home: CaoHome) -> contextlib.AbstractContextManager[None]:
    """An exclusive lock on the managed ``.env``, across processes (``cao env`` takes the same one)."""
    from .env_store import env_lock

    return env_lock(home)


def _read_existing(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"cannot read {path}: {exc}") from None


def _commit(home: CaoHome, writes: list[tuple[Path, str, int]]) -> None:
    """Write every file to a temporary sibling first, then move them all into place. On failure the
    temporary files and any folder created here are removed again."""
    staged: list[tuple[str, Path]] = []
    created: list[Path] = []
    done = False
    try:
        for target, text, mode in writes:
            _make_dirs(target.parent, created)
            fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
            staged.append((tmp, target))
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
            os.chmod(tmp, mode)
        for tmp, target in staged:
            os.replace(tmp, target)
        done = True
    except OSError as exc:
        raise InvalidInput(f"cannot write to {home.root}: {exc.strerror or exc}") from None
    finally:
        for tmp, _ in staged:
            if os.path.exists(tmp):
                os.unlink(tmp)
        if not done:
            for folder in reversed(created):
                with contextlib.suppress(OSError):
                    folder.rmdir()


def _make_dirs(folder: Path, created: list[Path]) -> None:
    """Create ``folder`` and its missing parents (mode 0700), recording each one as it is made."""
    missing = []
    while not folder.exists():
        missing.append(folder)
        folder = folder.parent
    for path in reversed(missing):
        path.mkdir(mode=0o700)
        created.append(path)
