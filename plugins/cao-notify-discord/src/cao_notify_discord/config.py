"""Discord's own setting: the name posts appear under (``CAO_DISCORD_USERNAME``, ``notify.discord.username``).

The settings every notifier has, and how they are read and checked, are in ``cao_notify_core.config``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cao_notify_core.config import ConfigError, NotifyConfig

USERNAME_MAX = 80
# Discord refuses webhook names containing these words.
USERNAME_FORBIDDEN = ("discord", "clyde")


@dataclass(frozen=True, kw_only=True)
class DiscordConfig(NotifyConfig):
    """A checked configuration of the Discord notifier."""

    username: str = "cao"


def parse_username(name: str, value: Any) -> str:
    """The name the webhook posts under, within Discord's rules for webhook names."""
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(name, "must be a non-empty name")
    text = value.strip()
    if len(text) > USERNAME_MAX:
        raise ConfigError(name, f"must be at most {USERNAME_MAX} characters, got {len(text)}")
    if any(ord(ch) < 32 for ch in text):
        raise ConfigError(name, "must not contain control characters")
    lowered = text.lower()
    if any(word in lowered for word in USERNAME_FORBIDDEN):
        raise ConfigError(name, "must not contain 'discord' or 'clyde' (Discord refuses such webhook names)")
    return text
