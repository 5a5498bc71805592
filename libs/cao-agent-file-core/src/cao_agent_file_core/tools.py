"""cao's allowed-tools vocabulary turned into the ``tools`` list of an agent file.

Kiro CLI and Q CLI give the model exactly the tools an agent's ``tools`` field names (``*`` for all,
``@builtin`` for every native tool, ``@<server>`` or ``@<server>/<tool>`` for MCP tools, native names
such as ``fs_read`` or ``execute_bash``, which Kiro 2 also calls ``read`` and ``shell``). A tool left
out does not exist for the model, so this is where cao's allow-list is enforced; ``allowedTools`` (no
confirmation) repeats the same list because cao starts the CLI with ``--trust-all-tools`` anyway: an
orchestrated agent has nobody to answer a prompt.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["UNRESTRICTED", "agent_tools"]

UNRESTRICTED = ("*",)
# cao names that are not tool names of these CLIs, and what they stand for.
_EXPANSIONS = {
    "fs_*": ("fs_read", "fs_write"),
    # Both CLIs read folders with fs_read (Kiro 2: read); neither has a separate listing tool.
    "fs_list": ("fs_read",),
}
# cao-only entries (tool groups of cao's own MCP surface), never passed to the CLI.
_CAO_ONLY = ("discovery",)
_NATIVE = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,63}\Z")
_MCP = re.compile(r"^@[A-Za-z0-9_.-]{1,64}(?:/[A-Za-z0-9_.*-]{1,128})?\Z")


def agent_tools(allowed: Sequence[str] | None, profile_tools: Sequence[str] | None = None, *,
                cli: str) -> list[str]:
    """The agent file's ``tools`` for cao's allowed-tools list.

    None or a list holding ``*`` means unrestricted: the profile's own ``tools`` when it has some,
    else ``["*"]``. Otherwise each entry is mapped (``fs_*`` and ``fs_list`` expanded, cao-only entries
    dropped) and checked: a value that is neither a tool name nor an ``@server[/tool]`` reference is
    refused with a ``ValueError`` naming it (and ``cli``, the short name of the CLI it is meant for).
    """
    if allowed is None or "*" in allowed:
        chosen = list(profile_tools) if profile_tools else list(UNRESTRICTED)
        for item in chosen:
            _check(item, "profile tools", cli)
        return chosen
    tools: list[str] = []
    for raw in allowed:
        item = raw.strip() if isinstance(raw, str) else raw
        if not isinstance(item, str):
            raise ValueError(f"allowed tool {raw!r} is not text")
        if not item or item in _CAO_ONLY:
            continue
        for name in _EXPANSIONS.get(item, (item,)):
            _check(name, "allowed tool", cli)
            if name not in tools:
                tools.append(name)
    return tools


def _check(item: str, what: str, cli: str) -> None:
    if not isinstance(item, str):
        raise ValueError(f"{what} {item!r} is not text")
    if item in ("*", "@builtin") or _NATIVE.match(item) or _MCP.match(item):
        return
    if item.startswith("-"):
        raise ValueError(f"{what} {item!r} looks like a command-line option, not a tool name")
    raise ValueError(f"{what} {item!r} is not a {cli} tool name (a native name such as 'fs_read', '@builtin', "
                     "'@<server>' or '@<server>/<tool>')")
