"""The private Kimi CLI share folder of one terminal (``KIMI_SHARE_DIR`` under its runtime folder).

Kimi CLI keeps everything in its share folder (``$KIMI_SHARE_DIR``, else ``~/.kimi``):
``config.toml`` (model providers, models, loop and MCP settings), its sign-in (``credentials/``,
``device_id``), plugins, conversation history, logs and the caches that make it show its update and
migration gates at start-up. cao never writes the user's own folder. Each terminal gets a fresh one whose ``config.toml`` is the
user's own config (read, never written), with the profile's ``kimiConfig`` merged over it and what
cao needs on top; the user's sign-in and plugins are linked in, so a token Kimi refreshes lands in
the user's own files. The history and logs the agent writes stay in the terminal's runtime folder.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cao_launch_core.user_config import merge, read_config_text

__all__ = [
    "CONFIG_FILE",
    "LINKED",
    "SHARE_DIR",
    "TOOL_CALL_TIMEOUT_MS",
    "build_config",
    "profile_config",
    "read_user_config",
    "select_model",
    "user_share_dir",
]

#: The private share folder, relative to the terminal's runtime folder.
SHARE_DIR = "kimi-share"
CONFIG_FILE = "config.toml"
#: Entries of the user's share folder linked into the private one: the sign-in (refreshed in place),
#: the device id it is bound to, installed plugins and MCP servers' OAuth tokens.
LINKED = ("credentials", "device_id", "plugins", "mcp-oauth")
#: Kimi CLI gives an MCP tool call 60 s by default; ``handoff`` blocks its call until the worker
#: finishes, so cao's default is ten minutes (a value the user or the profile set is kept).
TOOL_CALL_TIMEOUT_MS = 600_000

_MODEL_NAME = re.compile(r"[A-Za-z0-9._:/@-]{1,128}")


def user_share_dir(env: Mapping[str, str]) -> Path:
    """The user's own share folder: ``KIMI_SHARE_DIR``, else ``~/.kimi``."""
    configured = env.get("KIMI_SHARE_DIR")
    if configured:
        return Path(configured).expanduser()
    return Path(env.get("HOME") or Path.home()) / ".kimi"


def read_user_config(share: Path) -> dict[str, Any]:
    """The user's Kimi config (``config.toml``, else the legacy ``config.json``); {} when there is none.

    A file that exists but cannot be read or parsed is an error naming it: starting an agent with half
    of the user's settings silently dropped would be worse.
    """
    for name, parse in (("config.toml", tomllib.loads), ("config.json", json.loads)):
        path = share / name
        text = read_config_text(path, "the Kimi CLI config")
        if text is None:
            continue
        try:
            data = parse(text)
        except ValueError as exc:  # tomllib.TOMLDecodeError and json.JSONDecodeError are ValueErrors
            raise ValueError(f"the Kimi CLI config {path} is not valid {name.rsplit('.', 1)[1].upper()}: "
                             f"{exc}") from exc
        if not isinstance(data, dict):
            raise ValueError(f"the Kimi CLI config {path} must hold a table of settings")
        return data
    return {}


def profile_config(extra: Mapping[str, Any], profile_name: str) -> Mapping[str, Any]:
    """The profile's ``kimiConfig`` frontmatter table (Kimi CLI settings laid over the user's)."""
    value = extra.get("kimiConfig")
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ValueError(f"agent profile {profile_name!r}: kimiConfig must be a table of Kimi CLI settings, "
                         f"got {type(value).__name__}")
    return value


def select_model(config: dict[str, Any], requested: str | None) -> tuple[str | None, dict[str, str]]:
    """The ``--model`` alias for ``requested`` (adding a model entry to ``config`` when needed) and any
    environment it needs.

    Kimi's ``--model`` names a model entry of the config, not a model. A name that is an entry, or the
    ``model`` of one, selects it; another name becomes a new entry on the default model's provider;
    with no model configured at all (Kimi's ``KIMI_BASE_URL`` / ``KIMI_API_KEY`` set-up), the name
    goes to ``KIMI_MODEL_NAME``.
    """
    if not requested:
        return None, {}
    if not _MODEL_NAME.fullmatch(requested):
        raise ValueError(f"model {requested!r} must be 1-128 letters, digits or . _ : / @ -")
    models = config.get("models")
    if models is not None and not isinstance(models, dict):
        raise ValueError("the Kimi CLI config's 'models' must be a table of model entries")
    models = models or {}
    if requested in models:
        return requested, {}
    for alias, entry in models.items():
        if isinstance(entry, Mapping) and entry.get("model") == requested:
            return alias, {}
    default = config.get("default_model")
    base = models.get(default) if isinstance(default, str) else None
    if isinstance(base, Mapping):
        entry = {key: value for key, value in base.items() if key != "display_name"}
        entry["model"] = requested
        config["models"] = {**models, requested: entry}
        return requested, {}
    return None, {"KIMI_MODEL_NAME": requested}


def build_config(user_config: Mapping[str, Any], profile_settings: Mapping[str, Any]) -> dict[str, Any]:
    """The private ``config.toml`` (as a dict): the user's config, the profile's settings, then cao's."""
    config = merge(user_config, profile_settings)
    mcp = config.setdefault("mcp", {})
    if not isinstance(mcp, dict):
        raise ValueError("the Kimi CLI config's 'mcp' must be a table")
    client = mcp.setdefault("client", {})
    if not isinstance(client, dict):
        raise ValueError("the Kimi CLI config's 'mcp.client' must be a table")
    client.setdefault("tool_call_timeout_ms", TOOL_CALL_TIMEOUT_MS)
    return config

