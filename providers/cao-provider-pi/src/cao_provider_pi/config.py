"""The private agent folder (``PI_CODING_AGENT_DIR``) each terminal runs pi with.

pi keeps its settings, sign-in, model list and sessions in one folder, ``~/.pi/agent`` or
``PI_CODING_AGENT_DIR``. cao never writes the user's own: every terminal gets a fresh folder under its
runtime folder, holding

- ``settings.json``: the user's settings with cao's laid over them (:data:`OVERRIDES`): no install
  telemetry (a request to pi's site after a first start) and no start-up header (it would push a small
  terminal's transcript off the screen). The update check and every other start-up download are off
  through ``--offline`` (launch.py), which settings cannot turn off;
- links to the user's sign-in, model list and customisations (:data:`LINKED`), so a token refresh lands
  in the user's own file and nothing else of theirs is ever written.

Sessions are written into the private folder and go with the terminal.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cao_launch_core.user_config import merge, read_json_object

__all__ = ["AGENT_DIR", "AGENT_DIR_ENV", "LINKED", "OVERRIDES", "private_settings", "user_agent_dir"]

#: The variable naming pi's agent folder.
AGENT_DIR_ENV = "PI_CODING_AGENT_DIR"
#: The private agent folder, relative to the terminal's runtime folder.
AGENT_DIR = "pi-agent"
#: Entries of the user's agent folder linked into the private one.
LINKED = ("auth.json", "models.json", "keybindings.json", "AGENTS.md", "SYSTEM.md", "APPEND_SYSTEM.md",
          "extensions", "skills", "prompts", "themes")
#: cao's settings over the user's.
OVERRIDES: dict[str, Any] = {"enableInstallTelemetry": False, "quietStartup": True, "collapseChangelog": True}


def user_agent_dir(env: Mapping[str, str]) -> Path:
    """The user's own pi agent folder (``PI_CODING_AGENT_DIR`` or ``~/.pi/agent``)."""
    custom = env.get(AGENT_DIR_ENV, "").strip()
    if custom:
        return Path(custom).expanduser()
    return Path(env.get("HOME") or Path.home()) / ".pi" / "agent"


def private_settings(env: Mapping[str, str]) -> dict[str, Any]:
    """The ``settings.json`` of a terminal's private agent folder."""
    return merge(read_json_object(user_agent_dir(env) / "settings.json"), OVERRIDES)
