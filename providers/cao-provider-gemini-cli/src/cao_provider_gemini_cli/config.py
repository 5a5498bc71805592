"""The private Gemini CLI home each terminal runs with (``GEMINI_CLI_HOME``).

Gemini CLI keeps everything user-level in ``<home>/.gemini``: ``settings.json``, the global context
file (``GEMINI.md``), sign-in files, trusted folders, chat history. ``GEMINI_CLI_HOME`` moves that
home without touching ``HOME``, so cao gives every terminal its own under the terminal's runtime
folder and never writes the user's:

- ``settings.json`` is the user's own, with what an orchestrated agent needs laid over it
  (:func:`private_settings`): the profile's MCP servers instead of the user's, no update checks or
  prompts, the screen layout the detector reads (header and spinner on, no screen-reader layout, no
  compatibility notes or code line numbers), tool restrictions, and the API-key sign-in when a
  ``GEMINI_API_KEY`` is in the environment and the user chose no other;
- the global context file is the user's followed by the profile's body, so the profile adds to
  Gemini CLI's own system prompt instead of replacing it;
- the user's sign-in and customisation files are linked (:data:`LINKED`, by the launch), so a
  refreshed token lands in the user's own file.

Settings the project keeps in ``<project>/.gemini/settings.json`` still apply on top, as Gemini CLI
documents.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cao_launch_core.user_config import merge

__all__ = [
    "CONTEXT_FILE",
    "HOME_DIR",
    "LINKED",
    "context_file_name",
    "private_settings",
    "user_context",
    "user_gemini_dir",
]

#: The private home, relative to the terminal's runtime folder (the CLI adds ``.gemini`` itself).
HOME_DIR = "gemini-home"
#: Gemini CLI's default name for context files.
CONTEXT_FILE = "GEMINI.md"
#: Entries of the user's ``.gemini`` folder linked into the private one: sign-in (refreshed in place)
#: and what the user customised (commands, skills, agents, extensions, policies, key bindings).
LINKED = (
    "oauth_creds.json", "google_accounts.json", "gemini-credentials.json", "mcp-oauth-tokens.json",
    "commands", "skills", "agents", "extensions", "policies", "keybindings.json",
)

# What an orchestrated terminal needs, whatever the user's settings say. The screen must look the way
# the detector reads it: the header (its arrival says set-up is done), the spinner, no screen-reader
# layout; line numbers are off so a code block in an answer reads back as code; the rest would only
# add rows or stop the agent.
_FORCED: dict[str, Any] = {
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
    "ui": {"showCompatibilityWarnings": False, "showLineNumbers": False, "showHomeDirectoryWarning": False,
           "hideBanner": False, "showSpinner": True, "accessibility": {"screenReader": False}},
    "ide": {"enabled": False, "hasSeenNudge": True},
}


def _home(env: Mapping[str, str]) -> Path:
    return Path(env.get("HOME") or Path.home())


def user_gemini_dir(env: Mapping[str, str]) -> Path:
    """The user's own Gemini CLI folder: ``$GEMINI_CLI_HOME/.gemini``, else ``~/.gemini``."""
    custom = env.get("GEMINI_CLI_HOME")
    return (Path(custom).expanduser() if custom else _home(env)) / ".gemini"


def private_settings(user: Mapping[str, Any], *, env: Mapping[str, str], mcp_servers: Mapping[str, Any],
                     excluded_tools: list[str], excluded_servers: list[str],
                     auto_approved: list[str]) -> dict[str, Any]:
    """The ``settings.json`` of one terminal: the user's settings with cao's needs laid over them."""
    settings = merge(user, _FORCED)
    # The profile decides the agent's MCP servers (the user's own may need a browser sign-in).
    settings["mcpServers"] = {name: dict(entry) for name, entry in mcp_servers.items()}
    security = settings.get("security") if isinstance(settings.get("security"), dict) else {}
    auth = security.get("auth") if isinstance(security.get("auth"), dict) else {}
    if not auth.get("selectedType") and env.get("GEMINI_API_KEY"):
        # Without a choice Gemini CLI asks how to sign in, even with a key in the environment.
        settings = merge(settings, {"security": {"auth": {"selectedType": "gemini-api-key"}}})
    tools = settings.get("tools") if isinstance(settings.get("tools"), dict) else {}
    if excluded_tools:
        kept = [t for t in tools.get("exclude") or [] if isinstance(t, str)]
        settings = merge(settings, {"tools": {"exclude": sorted(set(kept) | set(excluded_tools))}})
    if auto_approved:
        kept = [t for t in tools.get("allowed") or [] if isinstance(t, str)]
        settings = merge(settings, {"tools": {"allowed": list(dict.fromkeys(kept + auto_approved))}})
    if excluded_servers:
        settings = merge(settings, {"mcp": {"excluded": sorted(excluded_servers)}})
    return settings


def context_file_name(settings: Mapping[str, Any]) -> str:
    """The global context file Gemini CLI reads: the first of ``context.fileName`` (a name or a list
    of names), else ``GEMINI.md``."""
    context = settings.get("context")
    names = context.get("fileName") if isinstance(context, Mapping) else None
    if isinstance(names, str) and names.strip():
        return Path(names.strip()).name
    if isinstance(names, list):
        for name in names:
            if isinstance(name, str) and name.strip():
                return Path(name.strip()).name
    return CONTEXT_FILE


def user_context(env: Mapping[str, str], name: str) -> str:
    """The text of the user's global context file ``name`` ('' when there is none)."""
    try:
        return (user_gemini_dir(env) / name).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""

