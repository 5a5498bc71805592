"""Entry point of cao-console: ``plugin`` adds the ``cao console`` command. Kept thin: the command's
module loads only when it runs, and Textual only when the terminal UI starts."""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from typing import Any

from cao_hookspecs import CommandSpec, hookimpl


def _load() -> Any:
    return importlib.import_module("cao_console.command").console


class ConsolePlugin:
    """Registers ``cao console`` (one instance per kernel)."""

    @hookimpl
    def cao_register_commands(self) -> Iterable[CommandSpec]:
        return [CommandSpec(name="console", load=_load,
                            help="Watch and steer the team in a terminal UI (--web: a login link).")]


#: What the ``console`` entry point loads.
plugin = ConsolePlugin()
