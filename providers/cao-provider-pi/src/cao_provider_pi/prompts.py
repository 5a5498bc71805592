"""Prompts pi shows: none of its own.

pi has no approval system (every tool runs without a question) and no tool that asks the user, so a
screen never shows a prompt cao could answer. An extension of the user's may open its own dialogs;
cao does not read those.
"""

from __future__ import annotations

from cao_hookspecs import Prompt

__all__ = ["read_prompt"]


def read_prompt(screen: str) -> Prompt | None:
    """None for every screen: pi asks no questions. Never raises."""
    return None
