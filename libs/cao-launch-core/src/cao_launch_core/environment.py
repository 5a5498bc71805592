"""The environment an agent CLI starts in."""

from __future__ import annotations

import os

from cao_hookspecs import LaunchContext

__all__ = ["environment"]


def environment(ctx: LaunchContext) -> dict[str, str]:
    """The environment the CLI will run with: this process's, then the terminal's on top.

    Launch code reads it to find the program (``PATH``, the provider's ``*_BIN`` variable) and the
    user's config folders (``HOME`` and the CLI's own variables).
    """
    return {**os.environ, **dict(ctx.env)}
