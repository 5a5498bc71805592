"""The plugin command table, cached in the cao home so ``cao --help`` lists plugin commands without
importing any plugin.

The table holds, for each entry point of group ``cao``, whether it loaded and the state of its module
file, and for each command a plugin registered: its name, help line and owner. It is used only when
all of these hold, and otherwise the command line loads the plugins as it always did:

- it parses (``parse_table`` refuses anything malformed rather than guessing);
- it was written for this environment: the same interpreter and the same installed distributions and
  entry points (``install_stamp``);
- no entry-point module changed since (an editable install changes code without reinstalling);
- every entry point the current switches allow was loaded when it was written.

Nothing that went wrong is cached: when a plugin fails to load or to register its commands, no table
is written, so the failure is reported again on the next run.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from typing import Any, NamedTuple

from ..home import CACHE_FOLDER
from ..plugin_switches import allows
from .install_stamp import environment_stamp, file_state

FORMAT = 1


# Named tuples rather than dataclasses: each dataclass costs `cao --help` a millisecond to define.
class PluginEntry(NamedTuple):
    """One entry point as the table saw it; ``module`` is ``[path, mtime_ns, size]`` of its module."""

    name: str
    loaded: bool
    module: list[Any] | None = None


class CommandRow(NamedTuple):
    """One plugin command: its name, help line, entry point, and that plugin's name for messages."""

    name: str
    help: str
    plugin: str
    owner: str


class CommandTable(NamedTuple):
    stamp: list[Any]
    plugins: tuple[PluginEntry, ...]
    commands: tuple[CommandRow, ...]


def table_path(home_root: str) -> str:
    """One table per environment and search path, so two installations sharing a cao home (or the
    ``cao`` script and ``python -m cao_kernel``, whose first path entries differ) keep their own."""
    import zlib

    key = zlib.crc32("\0".join([sys.prefix, sys.version, *sys.path]).encode())
    return os.path.join(home_root, CACHE_FOLDER, f"commands-{key:08x}.json")


def module_state(module_name: str) -> list[Any] | None:
    """``[path, mtime_ns, size]`` of an imported module's file, None when it has none."""
    path = getattr(sys.modules.get(module_name), "__file__", None)
    state = file_state(path) if isinstance(path, str) else None
    return None if state is None else [path, *state]


def render(table: CommandTable) -> str:
    return json.dumps({
        "format": FORMAT,
        "stamp": table.stamp,
        "plugins": [plugin._asdict() for plugin in table.plugins],
        "commands": [row._asdict() for row in table.commands],
    })


def parse_table(raw: bytes | str) -> CommandTable | None:
    """The table in ``raw``, or None when it is not a well-formed table of this format."""
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or set(data) != {"format", "stamp", "plugins", "commands"}:
        return None
    if type(data["format"]) is not int or data["format"] != FORMAT:
        return None
    stamp, plugins, commands = data["stamp"], data["plugins"], data["commands"]
    if not isinstance(stamp, list) or not isinstance(plugins, list) or not isinstance(commands, list):
        return None
    parsed_plugins = [_plugin(item) for item in plugins]
    parsed_commands = [_command(item) for item in commands]
    if None in parsed_plugins or None in parsed_commands:
        return None
    entries = {p.name: p for p in parsed_plugins if p is not None}
    rows = [row for row in parsed_commands if row is not None]
    if len(entries) != len(parsed_plugins) or len({row.name for row in rows}) != len(rows):
        return None
    # A command belongs to an entry point that loaded; anything else is not a table this code wrote.
    if any(row.plugin not in entries or not entries[row.plugin].loaded for row in rows):
        return None
    return CommandTable(stamp=stamp, plugins=tuple(entries.values()), commands=tuple(rows))


def _plugin(item: Any) -> PluginEntry | None:
    if not isinstance(item, dict) or set(item) != {"name", "loaded", "module"}:
        return None
    name, loaded, module = item["name"], item["loaded"], item["module"]
    if not isinstance(name, str) or not name or not isinstance(loaded, bool):
        return None
    if module is not None and not (
        isinstance(module, list) and len(module) == 3 and isinstance(module[0], str)
        and all(type(n) is int for n in module[1:])
    ):
        return None
    return PluginEntry(name=name, loaded=loaded, module=module)


def _command(item: Any) -> CommandRow | None:
    if not isinstance(item, dict) or set(item) != {"name", "help", "plugin", "owner"}:
        return None
    if not all(isinstance(item[key], str) for key in item) or not item["name"] or not item["plugin"]:
        return None
    return CommandRow(name=item["name"], help=item["help"], plugin=item["plugin"], owner=item["owner"])


def cached_commands(
    home_root: str, only: tuple[str, ...] | None, blocked: tuple[str, ...]
) -> list[CommandRow] | None:
    """The commands of the entry points the switches allow, in registration order; None when the
    table is missing or cannot be trusted (see the module docstring)."""
    try:
        with open(table_path(home_root), "rb") as table_file:
            raw = table_file.read()
    except OSError:
        return None
    table = parse_table(raw)
    if table is None:
        return None
    for plugin in table.plugins:
        if not allows(plugin.name, only, blocked):
            continue
        if not plugin.loaded:
            return None
        if plugin.module is not None and file_state(plugin.module[0]) != plugin.module[1:]:
            return None
    # The dearest check last: a listing of every folder on sys.path.
    if table.stamp != environment_stamp():
        return None
    return [row for row in table.commands if allows(row.plugin, only, blocked)]


def save(home_root: str, plugins: list[PluginEntry], commands: list[CommandRow]) -> None:
    """Write the table for this environment, replacing the file in one step. A home that cannot be
    written to only means the next run loads the plugins again, so errors are ignored."""
    table = CommandTable(stamp=environment_stamp(), plugins=tuple(plugins), commands=tuple(commands))
    path = table_path(home_root)
    folder, name = os.path.split(path)
    partial = os.path.join(folder, f".{name}.{os.getpid()}")
    try:
        # Created 0700 like every folder of the cao home, in case this is the first thing to create it.
        os.makedirs(home_root, mode=0o700, exist_ok=True)
        os.makedirs(folder, mode=0o700, exist_ok=True)
        with open(partial, "w", encoding="utf-8") as out:
            out.write(render(table))
        os.replace(partial, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(partial)
