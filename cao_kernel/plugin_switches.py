"""The switches that choose which entry points load: ``--no-plugins``, ``CAO_LOAD_PLUGINS``,
``CAO_DISABLE_PLUGINS`` and ``CAO_STRICT_PLUGINS``.

Plain functions over strings, importing nothing beyond ``os``: the ``cao`` command line applies them
to its cached command table before anything decides that a plugin must load.
"""

from __future__ import annotations

import os
from collections.abc import Mapping


def read_switches(
    environ: Mapping[str, str] | None = None, *, no_plugins: bool = False
) -> tuple[tuple[str, ...] | None, tuple[str, ...], bool]:
    """``(only, blocked, strict)`` from the environment and the ``--no-plugins`` flag.

    ``only`` None means every entry point; an empty tuple means none (``--no-plugins``, or
    ``CAO_LOAD_PLUGINS`` set to an empty string).
    """
    env = os.environ if environ is None else environ
    only: tuple[str, ...] | None = None
    if no_plugins:
        only = ()
    elif "CAO_LOAD_PLUGINS" in env:
        only = split_names(env["CAO_LOAD_PLUGINS"])
    strict = env.get("CAO_STRICT_PLUGINS", "").lower() in ("1", "true", "yes")
    return only, split_names(env.get("CAO_DISABLE_PLUGINS", "")), strict


def allows(name: str, only: tuple[str, ...] | None, blocked: tuple[str, ...]) -> bool:
    """Whether the entry point ``name`` may load: blocking wins over selecting."""
    if name in blocked:
        return False
    return only is None or name in only


def split_names(value: str) -> tuple[str, ...]:
    """A comma-separated list of entry-point names, blanks dropped."""
    return tuple(part.strip() for part in value.split(",") if part.strip())
