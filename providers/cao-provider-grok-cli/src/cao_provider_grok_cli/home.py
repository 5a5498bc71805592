"""The private ``GROK_HOME`` each terminal runs with.

Grok keeps its settings, MCP servers, sessions and sign-in in one folder (``$GROK_HOME``, else
``~/.grok``). A terminal gets a fresh one in its runtime folder, so cao's MCP servers never land in
the user's ``config.toml`` and two agents never share session state. Only the sign-in file is linked
from the user's folder (never copied), so a token Grok refreshes is written where the user keeps it;
an API key in ``XAI_API_KEY`` needs nothing here.

The ``config.toml`` holds :data:`SETTINGS` (the same switches ``launch.QUIET_ENV`` sets, written down
where Grok documents them) and one ``[mcp_servers.<name>]`` table per server: ``command``/``args``/``env``
for a program Grok starts, ``url`` (and ``type``, ``headers``) for one it connects to. Grok offers MCP
tools to its model through its ``search_tool``/``use_tool`` catalog, keyed ``<server>__<tool>``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cao_launch_core.json_config import check_server_name, plain
from cao_launch_core.user_config import link_user_files
from cao_toml_core import dumps

__all__ = ["CONFIG_FILE", "HOME_DIR", "LINKED", "SETTINGS", "build_config", "link_sign_in", "mcp_table",
           "user_home"]

HOME_DIR = "grok-home"
CONFIG_FILE = "config.toml"
#: The user's entries a private home links: the sign-in Grok stores after ``grok login``.
LINKED = ("auth.json",)
_URL_TYPES = ("http", "sse")
#: No update check, telemetry, feedback, remote campaigns, title or per-turn summary requests (extra
#: model calls), and no suggestion typed into the input box after a turn.
SETTINGS: dict[str, Any] = {
    "cli": {"auto_update": False},
    "features": {"telemetry": "off", "feedback": False, "campaigns": False, "title_refresh": False,
                 "turn_summary": False},
    "ui": {"prompt_suggestions": False},
}


def user_home(env: Mapping[str, str]) -> Path:
    """The user's own Grok folder: ``GROK_HOME`` when set, else ``~/.grok``."""
    custom = (env.get("GROK_HOME") or "").strip()
    if custom:
        return Path(custom).expanduser()
    home = env.get("HOME")
    return (Path(home) if home else Path.home()) / ".grok"


def link_sign_in(user: Path, private: Path) -> list[str]:
    """Link the user's sign-in into the private home (nothing when the user has none)."""
    return link_user_files(user, private, LINKED)


def _strings(value: Any, name: str, key: str) -> dict[str, str]:
    if not isinstance(value, Mapping):
        raise ValueError(f"MCP server {name!r}: {key!r} must be a table of strings")
    return {str(k): str(v) for k, v in value.items()}


def mcp_table(name: str, entry: Any) -> dict[str, Any]:
    """One server of a profile (or cao's own) as Grok's ``[mcp_servers.<name>]`` table."""
    check_server_name(name)
    if not isinstance(entry, Mapping):
        raise ValueError(f"MCP server {name!r}: expected a table of settings, got {type(entry).__name__}")
    server = plain(entry)
    kind = server.get("type")
    table: dict[str, Any] = {}
    if isinstance(server.get("command"), str) and server["command"]:
        if kind not in (None, "stdio"):
            raise ValueError(f"MCP server {name!r}: a 'command' server must be of type stdio, not {kind!r}")
        args = server.get("args", [])
        if isinstance(args, str) or not isinstance(args, list):
            raise ValueError(f"MCP server {name!r}: 'args' must be a list of strings, got {args!r}")
        table.update(command=server["command"], args=[str(arg) for arg in args])
        if server.get("env"):
            table["env"] = _strings(server["env"], name, "env")
    elif isinstance(server.get("url"), str) and server["url"]:
        if kind is not None and kind not in _URL_TYPES:
            raise ValueError(f"MCP server {name!r}: Grok Build connects over {' or '.join(_URL_TYPES)}, "
                             f"not {kind!r}")
        table["url"] = server["url"]
        if kind is not None:
            table["type"] = kind
        if server.get("headers"):
            table["headers"] = _strings(server["headers"], name, "headers")
    else:
        raise ValueError(f"MCP server {name!r}: needs a 'command' to run or a 'url' to connect to")
    timeout = server.get("timeout")
    if timeout is not None:
        # cao's profiles have one timeout; Grok has one for starting and one per tool call.
        table["startup_timeout_sec"] = table["tool_timeout_sec"] = int(timeout)
    return table


def build_config(mcp_servers: Mapping[str, Any], hooks: Mapping[str, Any] | None = None) -> str:
    """The private home's ``config.toml``: cao's settings, its ``hooks`` (signals.py) and the terminal's
    MCP servers."""
    config: dict[str, Any] = dict(SETTINGS)
    if hooks:
        config["hooks"] = dict(hooks)
    servers = {name: mcp_table(name, entry) for name, entry in mcp_servers.items()}
    if servers:
        config["mcp_servers"] = servers
    return dumps(config)
