"""The private Hermes home of one terminal (``HERMES_HOME`` under its runtime folder).

Hermes keeps everything in its home (``$HERMES_HOME``, else ``~/.hermes``): ``config.yaml`` (the model,
MCP servers, hooks, display and security settings), ``.env`` and ``auth.json`` (keys and sign-ins),
``SOUL.md`` (the agent's persona, which Hermes puts into its system prompt), sessions, logs and caches.
cao never writes the user's own home. Each terminal gets a fresh one whose ``config.yaml`` is the
user's config (read, never written) with cao's settings on top: the profile's MCP servers instead of
the user's, cao's hooks instead of the user's (accepted without a question), no tirith download, no
TUI, input typed during a turn queued rather than interrupting it. The user's keys are linked in (so a
refreshed sign-in lands in the user's own files); the sessions and logs the agent writes stay in the
terminal's runtime folder.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cao_launch_core.user_config import merge, read_config_text

__all__ = ["CONFIG_FILE", "HOME_DIR", "LINKED", "SOUL_FILE", "UPDATE_CHECK_FILE", "build_config",
           "read_user_config", "update_check", "user_home"]

#: The private home, relative to the terminal's runtime folder.
HOME_DIR = "hermes-home"
CONFIG_FILE = "config.yaml"
SOUL_FILE = "SOUL.md"
#: Where Hermes caches its update check for six hours; seeded so that a start makes no PyPI call.
UPDATE_CHECK_FILE = ".update_check"
#: Entries of the user's home linked into the private one: keys, sign-ins, installed skills and plugins.
LINKED = (".env", "auth.json", "skills", "plugins")

# What cao sets over the user's config, whatever it says.
_FIXED: dict[str, Any] = {
    # Hooks are cao's alone and run without a consent question (no person answers it).
    "hooks_auto_accept": True,
    # tirith is a command scanner Hermes downloads from GitHub in the background when it is missing.
    "security": {"tirith_enabled": False},
    # The classic REPL is the screen cao reads; the TUI is another program. Hermes runs its turn-end hook
    # while it still finishes the turn on screen: a message typed then would interrupt that turn by
    # default, queued it waits for the turn's end.
    "display": {"interface": "cli", "busy_input_mode": "queue"},
}


def user_home(env: Mapping[str, str]) -> Path:
    """The user's own Hermes home: ``HERMES_HOME``, else ``~/.hermes``."""
    configured = env.get("HERMES_HOME")
    if configured:
        return Path(configured).expanduser()
    return Path(env.get("HOME") or Path.home()) / ".hermes"


def read_user_config(home: Path) -> dict[str, Any]:
    """The user's ``config.yaml``; {} when there is none. A file that cannot be read or parsed is an
    error naming it: an agent started with the user's model settings silently dropped would be worse."""
    import yaml

    path = home / CONFIG_FILE
    text = read_config_text(path, "the Hermes config")
    if text is None:
        return {}
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ValueError(f"cannot read the Hermes config {path}: {exc}") from None
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValueError(f"the Hermes config {path} is not a mapping of settings")
    return value


def build_config(user: Mapping[str, Any], mcp_servers: Mapping[str, Any],
                 hooks: Mapping[str, Any]) -> dict[str, Any]:
    """The private ``config.yaml``: the user's settings, cao's on top, the MCP servers and hooks cao's."""
    config = merge(user, _FIXED)
    config["mcp_servers"] = dict(mcp_servers)
    config["hooks"] = dict(hooks)
    return config


def update_check(version: str | None, now: float | None = None) -> str | None:
    """The update-check cache Hermes reads before asking PyPI (fresh, "up to date"), for the installed
    ``version``; None when the version is not known (Hermes then checks, which is only slower)."""
    if not version:
        return None
    stamp = time.time() if now is None else now
    return json.dumps({"ts": stamp, "rev": None, "ver": version, "behind": 0})
