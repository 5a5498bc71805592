"""The private agent folder (``PI_CODING_AGENT_DIR``) each Oh My Pi terminal runs with.

Oh My Pi keeps its settings (``config.yml``), model providers (``models.yml``), MCP servers
(``mcp.json``), sessions and sign-ins in one agent folder, ``~/.omp/agent`` or ``PI_CODING_AGENT_DIR``.
cao never writes the user's own: every terminal gets a fresh folder under its runtime folder, holding

- ``config.yml``: cao's settings (:data:`OVERRIDES`, written as JSON, which YAML reads). They are also
  passed last with ``--config``, so they win over the user's own ``config.yml``, passed before them
  (read by Oh My Pi, never written by cao): a finished first-run setup (``setupVersion: 2``; without
  it a five-step setup wizard opens, see dialogs.py), no update check, no plugin auto-update, no
  welcome screen or changelog (cao reads the screen), MCP tools offered to the model directly
  (``tools.xdev: false``; by default they hide behind the ``hub`` tool's devices), no MCP servers
  from the project's folder (``mcp.enableProjectConfig: false``), and no probing for local model
  servers (Ollama, llama.cpp, LM Studio) at start;
- ``mcp.json``: the profile's MCP servers and nothing else (launch.py);
- links to the user's model providers (:data:`LINKED`), so a profile's ``provider/model`` resolves as
  it does for the user.

Oh My Pi also reads other tools' MCP configs (Claude Code's, Cursor's, Codex's, ...): those in the
project are off with ``mcp.enableProjectConfig``; those in the user's home are off unless opted in
(``enabledProviders``, which cao's settings empty, or ``CLAUDE_CONFIG_DIR``, which launch.py blanks).
Sign-ins made with ``/login`` live in the user's ``agent.db``, an SQLite database: it is not linked
(two paths to one database would each get their own journal), so a terminal uses keys from
``models.yml`` or the providers' variables.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["AGENT_DIR", "AGENT_DIR_ENV", "LINKED", "OVERRIDES", "settings_text", "user_agent_dir"]

#: The private agent folder, relative to the terminal's runtime folder.
AGENT_DIR = "omp-agent"
#: The variable Oh My Pi reads its agent folder from.
AGENT_DIR_ENV = "PI_CODING_AGENT_DIR"
#: Entries of the user's agent folder linked into the private one (read, never written by Oh My Pi).
LINKED = ("models.yml", "models.json", "AGENTS.md", "SYSTEM.md", "skills", "commands", "prompts",
          "themes", "tools", "rules")
#: cao's settings, over the user's.
OVERRIDES: dict[str, Any] = {
    "setupVersion": 2,
    "startup": {"quiet": True, "checkUpdate": False, "setupWizard": False, "showSplash": False,
                "changelogMode": "hidden"},
    "marketplace": {"autoUpdate": "off"},
    "tools": {"xdev": False},
    "mcp": {"enableProjectConfig": False},
    "enabledProviders": [],
    # Model servers Oh My Pi otherwise looks for on this machine at every start (requests to 127.0.0.1).
    "disabledProviders": ["ollama", "llama.cpp", "lm-studio"],
}


def user_agent_dir(env: Mapping[str, str]) -> Path:
    """The user's own agent folder (``PI_CODING_AGENT_DIR`` or ``~/.omp/agent``)."""
    custom = env.get(AGENT_DIR_ENV, "").strip()
    if custom:
        return Path(custom).expanduser()
    return Path(env.get("HOME") or Path.home()) / ".omp" / "agent"


def settings_text() -> str:
    """cao's settings as a ``config.yml`` (JSON is YAML)."""
    return json.dumps(OVERRIDES, indent=2) + "\n"
