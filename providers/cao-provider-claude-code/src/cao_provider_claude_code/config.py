"""The private Claude Code config folder each terminal runs with (``CLAUDE_CONFIG_DIR``).

Claude Code keeps its global state (onboarding, trusted folders, approved API keys) in
``.claude.json`` inside its config folder. cao never edits the user's own copy: every terminal gets a
fresh folder under its runtime folder, seeded so that the CLI starts straight at its prompt:

- onboarding done, the working folder trusted, bypass mode accepted, the ``ANTHROPIC_API_KEY`` the
  terminal starts with approved;
- the user's identity and login kept: a few keys of their ``.claude.json`` are copied
  (:data:`KEPT_KEYS`), their ``settings.json`` is copied, and their credentials file and
  customisation folders (agents, commands, skills, plugins, ``CLAUDE.md``) are linked (:data:`LINKED`,
  by the launch), so a token refresh lands in the user's own credentials and nothing else of theirs
  is ever written.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cao_launch_core.user_config import read_json_object

__all__ = ["CONFIG_DIR", "KEPT_KEYS", "LINKED", "global_config", "user_config_dir", "user_settings"]

#: The private config folder, relative to the terminal's runtime folder.
CONFIG_DIR = "claude-config"
#: Keys of the user's ``.claude.json`` worth keeping: who they are and how they log in.
KEPT_KEYS = ("userID", "oauthAccount", "primaryApiKey", "theme", "editorMode")
#: Entries of the user's config folder linked into the private one (read by the CLI, or refreshed
#: in place: the credentials).
LINKED = (".credentials.json", "CLAUDE.md", "agents", "commands", "skills", "plugins", "output-styles")
# Claude Code approves a key by remembering its last 20 characters.
_KEY_SUFFIX = 20


def user_config_dir(env: Mapping[str, str]) -> Path:
    """The user's own Claude Code config folder (``CLAUDE_CONFIG_DIR`` or ``~/.claude``)."""
    custom = env.get("CLAUDE_CONFIG_DIR")
    return Path(custom).expanduser() if custom else _home(env) / ".claude"


def _home(env: Mapping[str, str]) -> Path:
    return Path(env.get("HOME") or Path.home())


def _user_global_file(env: Mapping[str, str]) -> Path:
    custom = env.get("CLAUDE_CONFIG_DIR")
    return Path(custom).expanduser() / ".claude.json" if custom else _home(env) / ".claude.json"


def global_config(working_directory: str, env: Mapping[str, str], api_key: str | None) -> dict[str, Any]:
    """The ``.claude.json`` a terminal starts with."""
    user = read_json_object(_user_global_file(env))
    config: dict[str, Any] = {key: user[key] for key in KEPT_KEYS if key in user}
    approved = list((user.get("customApiKeyResponses") or {}).get("approved") or [])
    if api_key and api_key[-_KEY_SUFFIX:] not in approved:
        approved.append(api_key[-_KEY_SUFFIX:])
    folders = {working_directory, os.path.realpath(working_directory)}
    config.update(
        hasCompletedOnboarding=True,
        theme=config.get("theme", "dark"),
        bypassPermissionsModeAccepted=True,
        autoUpdates=False,
        customApiKeyResponses={"approved": approved, "rejected": []},
        projects={folder: {"hasTrustDialogAccepted": True, "hasCompletedProjectOnboarding": True,
                           "projectOnboardingSeenCount": 1} for folder in sorted(folders)},
    )
    return config


def user_settings(env: Mapping[str, str]) -> str | None:
    """The user's ``settings.json`` text when it holds a JSON object (copied, never linked: the CLI
    may write to it)."""
    settings = read_json_object(user_config_dir(env) / "settings.json")
    return json.dumps(settings, indent=2) if settings else None

