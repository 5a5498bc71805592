"""The private home an Antigravity CLI terminal runs with.

Antigravity CLI reads MCP servers from ``~/.gemini/config/mcp_config.json`` only. Writing the user's
file would hand cao's servers (and this terminal's id) to every other ``agy`` the user runs, so the
terminal gets a ``HOME`` of its own instead, in its runtime folder: every entry of the user's home is
linked into it (settings, sign-in, dotfiles the agent's commands read: all the user's own, read and
updated in place), except ``.gemini/config/mcp_config.json``, which is cao's.

What a program writes directly at the top of this home (a new dotfile) stays in the runtime folder.
"""

from __future__ import annotations

from pathlib import Path

from cao_launch_core.user_config import link_user_files

__all__ = ["HOME_DIR", "MCP_CONFIG", "mirror_home"]

#: The private home, relative to the terminal's runtime folder.
HOME_DIR = "agy-home"
#: cao's MCP config, relative to the private home.
MCP_CONFIG = ".gemini/config/mcp_config.json"


def _entries(folder: Path, keep: str) -> list[str]:
    try:
        return sorted(entry.name for entry in folder.iterdir() if entry.name != keep)
    except OSError:
        return []


def mirror_home(user: Path, private: Path) -> None:
    """Link the user's home into ``private`` level by level down to ``MCP_CONFIG``, leaving that file
    out (the launch plan writes it)."""
    parts = Path(MCP_CONFIG).parts
    source, target = user, private
    target.mkdir(parents=True, exist_ok=True, mode=0o700)
    for part in parts:
        link_user_files(source, target, _entries(source, keep=part))
        source, target = source / part, target / part
        if part != parts[-1]:
            target.mkdir(exist_ok=True, mode=0o700)
