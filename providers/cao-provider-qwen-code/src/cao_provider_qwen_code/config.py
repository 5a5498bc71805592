"""The private ``QWEN_HOME`` each terminal runs with.

Qwen Code keeps its settings, sign-in and state in one folder, ``~/.qwen`` or ``QWEN_HOME``. cao never
writes the user's own: every terminal gets a fresh folder under its runtime folder, holding

- ``settings.json``: the user's settings with cao's laid over them (:data:`OVERRIDES`): no self-update
  (an update would install itself globally, for every user of the machine), no usage statistics,
  telemetry, feedback dialog or follow-up suggestions (each a request of its own, the suggestion one
  to the model), no background memory agents (more model calls per turn), no folder-trust dialog, no
  ripgrep banner; no logo, tips or scrollbar (cao reads the screen: a tip drawn after an answer or a
  scrollbar column beside it would read as part of the answer, and the logo takes a third of a small
  terminal); the user's own MCP servers left out (a terminal runs the profile's only); and the
  hooks that report the turn to cao (signals.py), after the user's own;
- links to the user's sign-in and customisations (:data:`LINKED`), so a token refresh lands in the
  user's own file and nothing else of theirs is ever written.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cao_launch_core.user_config import merge, read_json_object

__all__ = ["HOME_DIR", "LINKED", "OVERRIDES", "private_settings", "user_home"]

#: The private ``QWEN_HOME``, relative to the terminal's runtime folder.
HOME_DIR = "qwen-home"
#: Entries of the user's ``QWEN_HOME`` linked into the private one.
LINKED = ("oauth_creds.json", ".env", "installation_id", "QWEN.md", "agents", "commands", "skills",
          "output-styles", "extensions")
#: cao's settings over the user's.
OVERRIDES: dict[str, Any] = {
    "general": {"enableAutoUpdate": False},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "ui": {"enableUserFeedback": False, "enableFollowupSuggestions": False, "enableSpeculation": False,
           "hideBanner": True, "hideTips": True, "showScrollbar": False},
    "memory": {"enableManagedAutoMemory": False, "enableManagedAutoDream": False, "enableAutoSkill": False},
    "security": {"folderTrust": {"enabled": False}},
    "tools": {"useRipgrep": False},
}


def user_home(env: Mapping[str, str]) -> Path:
    """The user's own Qwen Code folder (``QWEN_HOME`` or ``~/.qwen``)."""
    custom = env.get("QWEN_HOME", "").strip()
    if custom:
        return Path(custom).expanduser()
    return Path(env.get("HOME") or Path.home()) / ".qwen"


def private_settings(env: Mapping[str, str], hooks: Mapping[str, Any] | None) -> dict[str, Any]:
    """The ``settings.json`` of a terminal's private ``QWEN_HOME``."""
    user = read_json_object(user_home(env) / "settings.json")
    user.pop("mcpServers", None)
    settings = merge(user, OVERRIDES)
    if hooks:
        # The user's own hooks keep running; cao's run after them on the same events.
        own = user.get("hooks") if isinstance(user.get("hooks"), dict) else {}
        settings["hooks"] = {**own, **{event: [*_listed(own.get(event)), *entries]
                                       for event, entries in hooks.items()}}
        settings["disableAllHooks"] = False
    return settings


def _listed(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else []
