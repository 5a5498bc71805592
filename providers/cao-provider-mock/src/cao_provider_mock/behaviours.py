"""Scripted behaviours: naming one and finding it.

A behaviour is an ``async def behaviour(turn) -> str | None`` (see ``turns.Turn``). For each ordinary
input (not ``/exit`` or a ``__mock_*`` command) mock_cli calls it and prints what it returns as the
answer; ``None`` ends the turn with no answer (a visible end row, so the turn still reads completed).
An exception ends the turn with an ``ERROR: mock behaviour failed: ...`` row (status error).

A behaviour is named by the profile's ``mockBehaviour`` key: an entry point of group
``cao.mock_behaviours``, or ``package.module:function``. Modules are looked for first in the folders of
``CAO_MOCK_BEHAVIOUR_PATH``, then on ``sys.path``, then in the agent's working directory.

This module is loaded before mock_cli shows its prompt, so it imports only small stdlib modules; the
machinery that runs turns (asyncio, threads) lives in ``turns`` and loads with the first turn.
"""

from __future__ import annotations

import importlib
import os
import re
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from .turns import Turn

    Behaviour = Callable[[Turn], Awaitable[str | None]]


ENTRY_POINT_GROUP = "cao.mock_behaviours"
PATH_VARIABLE = "CAO_MOCK_BEHAVIOUR_PATH"
# ``name`` (an entry point) or ``package.module:function`` (the function may be a dotted attribute).
SPEC_RE = re.compile(r"^[A-Za-z_][\w.-]*$|^[A-Za-z_][\w]*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")


class BehaviourError(ValueError):
    """A behaviour name that cannot be resolved; the message says what was tried."""


def check_spec(spec: str) -> str:
    """``spec`` if it is shaped like a behaviour name, else a ``BehaviourError`` saying what is expected."""
    if not isinstance(spec, str) or not SPEC_RE.match(spec):
        raise BehaviourError(
            f"mock behaviour {spec!r} is not an entry-point name (group {ENTRY_POINT_GROUP}) "
            "nor 'package.module:function'"
        )
    return spec


def load_behaviour(spec: str) -> Behaviour:
    """The behaviour function ``spec`` names (see the module docstring for where it is looked for)."""
    check_spec(spec)
    if ":" not in spec:
        from importlib.metadata import entry_points

        found = [ep for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.name == spec]
        if not found:
            known = sorted({ep.name for ep in entry_points(group=ENTRY_POINT_GROUP)})
            raise BehaviourError(f"no mock behaviour named {spec!r} is installed (entry points in group "
                                 f"{ENTRY_POINT_GROUP}: {', '.join(known) or 'none'})")
        target: Any = found[0].load()
    else:
        module_name, _, attr = spec.partition(":")
        _extend_path()
        try:
            target = importlib.import_module(module_name)
        except ImportError as exc:
            raise BehaviourError(f"cannot import {module_name!r} for mock behaviour {spec!r}: {exc} "
                                 f"(looked on sys.path, in ${PATH_VARIABLE} and the working directory)") from None
        for part in attr.split("."):
            try:
                target = getattr(target, part)
            except AttributeError:
                raise BehaviourError(f"mock behaviour {spec!r}: {module_name} has no attribute {attr!r}") from None
    if not _is_coroutine_function(target):
        raise BehaviourError(f"mock behaviour {spec!r} must be an 'async def' function taking a turn")
    return target


def _is_coroutine_function(target: Any) -> bool:
    # inspect.iscoroutinefunction, without importing inspect on the start-up path.
    code = getattr(target, "__code__", None)
    return code is not None and bool(code.co_flags & 0x80)  # CO_COROUTINE


def _extend_path() -> None:
    # Folders the user named come first; the working directory last, so a project's own modules can
    # never shadow the standard library for the agent.
    extra = [p for p in os.environ.get(PATH_VARIABLE, "").split(os.pathsep) if p]
    for folder in reversed(extra):
        if folder not in sys.path:
            sys.path.insert(0, folder)
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.append(cwd)
