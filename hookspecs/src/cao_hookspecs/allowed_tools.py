"""cao's allowed-tools vocabulary, read once for every provider.

A profile's ``allowedTools`` (or ``--allowed-tools``) holds cao's names: tool categories such as
``execute_bash`` or ``fs_read``, ``fs_*`` for every file category, ``@builtin`` for every native tool,
``@<server>`` for one MCP server, cao-only groups (``discovery``) that no CLI sees, and whatever else a
provider accepts in its CLI's own terms (a permission rule, a tool name). ``*`` (or no list) means no
restriction; providers check that before reading the entries.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable

import attrs

__all__ = ["CAO_ONLY", "FS_CATEGORIES", "MCP_SERVER_NAME", "AllowedTools", "read_allowed_tools"]

#: What ``fs_*`` stands for.
FS_CATEGORIES = ("fs_read", "fs_list", "fs_write")
#: Entries that are groups of cao's own MCP surface, never tools of an agent CLI.
CAO_ONLY = ("discovery",)
#: An MCP server name as ``@<server>`` may give it.
MCP_SERVER_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


@attrs.frozen
class AllowedTools:
    """An allowed-tools list, sorted into cao's forms.

    ``categories`` holds the categories named (``fs_*`` expanded); ``servers`` the MCP servers named with
    ``@``; ``builtin`` whether ``@builtin`` was given; ``other`` every remaining entry, stripped and in
    order, for the provider to map to its CLI's own terms or to refuse.
    """

    categories: frozenset[str]
    servers: frozenset[str]
    builtin: bool
    other: tuple[str, ...]


def read_allowed_tools(allowed: Iterable[str], categories: Collection[str]) -> AllowedTools:
    """Sort ``allowed`` into cao's forms; ``categories`` are the category names the provider maps.

    Blank entries and cao-only groups are dropped.

    :raises ValueError: for an ``@`` entry that is not followed by an MCP server name, naming it.
    """
    named: set[str] = set()
    servers: set[str] = set()
    other: list[str] = []
    builtin = False
    for raw in allowed:
        item = raw.strip()
        if not item or item in CAO_ONLY:
            continue
        if item == "@builtin":
            builtin = True
        elif item == "fs_*":
            named.update(FS_CATEGORIES)
        elif item in categories:
            named.add(item)
        elif item.startswith("@"):
            if not MCP_SERVER_NAME.match(item[1:]):
                raise ValueError(f"allowed tool {item!r}: '@' must be followed by an MCP server name")
            servers.add(item[1:])
        else:
            other.append(item)
    return AllowedTools(categories=frozenset(named), servers=frozenset(servers), builtin=builtin,
                        other=tuple(other))
