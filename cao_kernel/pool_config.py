"""How many warm workers a profile keeps, and for how long: a profile's ``pool:`` frontmatter, or the
``CAO_POOLS`` setting (``profile=size[,profile=size...]``) with ``CAO_POOL_TTL`` seconds."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from cao_hookspecs import names

from .errors import InvalidInput

POOLS_SETTING = "CAO_POOLS"
TTL_SETTING = "CAO_POOL_TTL"
STARTS_SETTING = "CAO_POOL_STARTS"
DEFAULT_STARTS = 1
DEFAULT_TTL = 600.0
MAX_SIZE = 8
MAX_TTL = 86_400.0


@attrs.frozen
class PoolConfig:
    """``size`` agents kept started ahead; each one unused for ``ttl`` seconds is stopped."""

    size: int
    ttl: float = DEFAULT_TTL


def _size(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_SIZE:
        raise InvalidInput(f"{where}: 'size' must be a whole number from 0 to {MAX_SIZE} (got {value!r})")
    return value


def _ttl(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 1 <= value <= MAX_TTL:
        raise InvalidInput(f"{where}: 'idleTtl' must be a number of seconds from 1 to {MAX_TTL:g} "
                           f"(got {value!r})")
    return float(value)


def parse_pool(value: Any, where: str = "pool", default_ttl: float = DEFAULT_TTL) -> PoolConfig:
    """A profile's ``pool:`` value (``{size: N, idleTtl: S}``) as a ``PoolConfig``; ``InvalidInput``
    naming the problem otherwise."""
    if not isinstance(value, Mapping):
        raise InvalidInput(f"{where} must be a mapping with 'size' and optionally 'idleTtl' "
                           f"(got {type(value).__name__})")
    unknown = sorted(str(key) for key in value if key not in ("size", "idleTtl"))
    if unknown:
        raise InvalidInput(f"{where}: unknown key {unknown[0]!r} (use 'size' and 'idleTtl')")
    if "size" not in value:
        raise InvalidInput(f"{where}: 'size' is missing")
    ttl = _ttl(value["idleTtl"], where) if "idleTtl" in value else default_ttl
    return PoolConfig(size=_size(value["size"], where), ttl=ttl)


def parse_settings(settings: Mapping[str, Any]) -> tuple[dict[str, PoolConfig], float, int]:
    """The pools the settings configure, by profile name, the idle time-to-live of every pool, and how
    many warm workers may start at once; ``InvalidInput`` naming the setting and the problem."""
    raw_ttl = str(settings.get(TTL_SETTING) or "").strip()
    ttl = DEFAULT_TTL
    if raw_ttl:
        try:
            number = float(raw_ttl)
        except ValueError:
            number = float("nan")
        ttl = _ttl(number if number == number else raw_ttl, TTL_SETTING)
    pools: dict[str, PoolConfig] = {}
    for item in str(settings.get(POOLS_SETTING) or "").replace(";", ",").split(","):
        if not item.strip():
            continue
        name, sep, size = item.partition("=")
        name = name.strip()
        if not sep or not size.strip().isdigit():
            raise InvalidInput(f"{POOLS_SETTING}: {item.strip()!r} is not 'profile=size'")
        names.profile_name(name)
        pools[name] = PoolConfig(size=_size(int(size), f"{POOLS_SETTING} {name}"), ttl=ttl)
    raw_starts = str(settings.get(STARTS_SETTING) or "").strip()
    starts = DEFAULT_STARTS
    if raw_starts:
        if not raw_starts.isdigit() or not 1 <= int(raw_starts) <= MAX_SIZE:
            raise InvalidInput(f"{STARTS_SETTING}: must be a whole number from 1 to {MAX_SIZE} "
                               f"(got {raw_starts!r})")
        starts = int(raw_starts)
    return pools, ttl, starts


__all__ = ["DEFAULT_TTL", "POOLS_SETTING", "STARTS_SETTING", "PoolConfig", "TTL_SETTING", "parse_pool",
           "parse_settings"]
