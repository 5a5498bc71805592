"""Entry point of cao-console: ``plugin`` adds the ``cao console`` command. Kept thin: Textual loads only
when the command runs."""

from __future__ import annotations

from collections.abc import Iterable

from cao_hookspecs import CommandSpec, hookimpl


class ConsolePlugin:
    """Registers ``cao console`` (one instance per kernel)."""

    @hookimpl
    def cao_register_commands(self) -> Iterable[CommandSpec]:
        return []


#: What the ``console`` entry point loads.
plugin = ConsolePlugin()
