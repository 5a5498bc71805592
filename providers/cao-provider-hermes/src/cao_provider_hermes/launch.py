"""The command line that starts Hermes Agent for one terminal, built from the agent profile.

``hermes chat --cli --source cao`` (the classic REPL; sessions tagged as cao's), with:

- approvals: ``--yolo`` always (an orchestrated agent has nobody to approve a command Hermes finds
  dangerous; Hermes's approval prompts are not read by cao yet, so a profile asking for them with
  ``permissionMode`` is refused); Hermes's questions to the user (its ``clarify`` tool) still show,
  as prompts cao reads;
- ``--model``: the model of the request, else of the profile (a name the configured provider serves);
- the profile body: Hermes has no system-prompt flag; its persona is ``SOUL.md`` in its home, which it
  puts into its system prompt, so the body becomes the private home's ``SOUL.md``;
- allowed tools: ``--toolsets`` (``execute_bash`` -> ``terminal``, ``fs_*`` -> ``file``, ``web_fetch``
  -> ``web``, ``@<server>`` -> that MCP server's ``mcp-<server>``, a Hermes toolset by its own name);
- the MCP servers (with cao's terminal id and server address in each entry's env) and cao's hooks in the
  private home's ``config.yaml`` (see ``home.py``); no update check (its cache is seeded) and no
  tirith download.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from cao_hookspecs import LaunchContext, LaunchPlan
from cao_hookspecs.allowed_tools import read_allowed_tools
from cao_hookspecs.programs import find_program
from cao_hookspecs.signals import signal_command
from cao_launch_core.environment import environment
from cao_launch_core.json_config import check_server_name, plain
from cao_launch_core.user_config import link_user_files

from .home import (CONFIG_FILE, HOME_DIR, LINKED, SOUL_FILE, UPDATE_CHECK_FILE, build_config,
                   read_user_config, update_check, user_home)
from .signals import hooks

__all__ = ["BINARY", "BINARY_ENV", "INSTALL_HINT", "TOOLSETS", "installed_version", "launch",
           "model_endpoint", "resolve_binary", "toolsets"]

BINARY = "hermes"
#: Environment variable naming a program to run instead of ``hermes`` on PATH.
BINARY_ENV = "CAO_HERMES_BIN"
#: MCP servers need the ``mcp`` extra: without it Hermes ignores ``mcp_servers`` without a word.
INSTALL_HINT = "uv tool install 'hermes-agent[mcp]==0.19.0'"
#: cao's tool vocabulary -> the Hermes toolset that provides it. Hermes's ``file`` toolset reads and
#: writes: it cannot give one without the other.
TOOLSETS: dict[str, str] = {
    "execute_bash": "terminal",
    "fs_read": "file",
    "fs_list": "file",
    "fs_write": "file",
    "web_fetch": "web",
}
#: Hermes toolsets a profile may name by their own names.
NATIVE_TOOLSETS = ("browser", "clarify", "code_execution", "cronjob", "delegation", "file", "memory",
                   "session_search", "skills", "terminal", "todo", "vision", "web")
_PERMISSION_MODES = ("bypassPermissions",)
#: Hermes gives an MCP tool call 300 s by default; ``handoff`` blocks its call until the worker finishes,
#: so cao's own servers get ten minutes (a value the profile set is kept).
CAO_TOOL_TIMEOUT = 600


def resolve_binary(env: Mapping[str, str]) -> str:
    """The program to run: ``CAO_HERMES_BIN`` when set, else ``hermes`` on PATH."""
    return find_program(env, BINARY, BINARY_ENV,
                        missing=f"Hermes Agent ('{BINARY}') is not on PATH; install it with: {INSTALL_HINT}")


def installed_version(binary: str) -> str | None:
    """The hermes-agent version recorded next to ``binary`` in its virtual environment (uv tool, pipx,
    a venv); None when there is no such record (a wrapper script, a checkout)."""
    env_root = Path(binary).resolve().parent.parent
    for metadata in sorted(env_root.glob("lib/python3*/site-packages/hermes_agent-*.dist-info")):
        found = re.match(r"hermes_agent-(.+)\.dist-info$", metadata.name)
        if found:
            return found.group(1)
    return None


def toolsets(allowed: Sequence[str] | None, mcp_servers: Sequence[str]) -> tuple[list[str] | None, list[str]]:
    """The Hermes toolsets to enable (None: Hermes's defaults, everything) and the MCP servers to keep,
    for cao's allowed-tools list.

    None or ``*``: everything. ``@builtin``: Hermes's defaults without naming them (every MCP server
    kept); otherwise only what is named. Raises ValueError naming an entry Hermes cannot honour.
    """
    if allowed is None or "*" in allowed:
        return None, list(mcp_servers)
    read = read_allowed_tools(allowed, TOOLSETS)
    files = {"fs_read", "fs_list", "fs_write"} & read.categories
    if files and files != {"fs_read", "fs_list", "fs_write"}:
        raise ValueError(f"allowed tools {sorted(files)}: Hermes's file toolset reads, lists and writes "
                         "together; allow fs_* (or none of them)")
    unknown = [item for item in read.other if item not in NATIVE_TOOLSETS]
    if unknown:
        known = ", ".join([*TOOLSETS, "fs_*", "@builtin", "@<mcp server>", *NATIVE_TOOLSETS])
        raise ValueError(f"allowed tool {unknown[0]!r} means nothing to Hermes Agent (known: {known})")
    kept = [name for name in mcp_servers if name in read.servers]
    if read.builtin:
        return None, kept
    chosen = dict.fromkeys([*(TOOLSETS[c] for c in sorted(read.categories)), *read.other,
                            *(f"mcp-{name}" for name in kept)])
    return list(chosen), kept


def _approval_args(ctx: LaunchContext) -> list[str]:
    mode = ctx.profile.permission_mode if ctx.profile else None
    if mode is not None and mode not in _PERMISSION_MODES:
        raise ValueError(f"permissionMode {mode!r} is not supported by Hermes Agent: cao runs it with "
                         f"--yolo (known: {', '.join(_PERMISSION_MODES)})")
    return ["--yolo"]


def _mcp_entry(name: str, entry: Any, cao: bool) -> dict[str, Any]:
    check_server_name(name)
    if not isinstance(entry, Mapping):
        raise ValueError(f"MCP server {name!r}: expected a table of settings, got {type(entry).__name__}")
    server = plain(entry)
    server.pop("type", None)
    if not (isinstance(server.get("command"), str) and server["command"]) and not (
            isinstance(server.get("url"), str) and server["url"]):
        raise ValueError(f"MCP server {name!r}: needs a 'command' to run or a 'url' to connect to")
    if "env" in server:
        if not isinstance(server["env"], dict):
            raise ValueError(f"MCP server {name!r}: 'env' must be a table of strings")
        server["env"] = {str(k): str(v) for k, v in server["env"].items()}
    if cao:
        server.setdefault("timeout", CAO_TOOL_TIMEOUT)
    return server


def _yaml(value: Any) -> str:
    import yaml

    return yaml.safe_dump(value, sort_keys=False, allow_unicode=True, width=10_000)


def launch(ctx: LaunchContext) -> LaunchPlan:
    """The launch plan of one Hermes Agent terminal."""
    env = environment(ctx)
    binary = resolve_binary(env)
    runtime = Path(ctx.runtime_dir)
    profile = ctx.profile
    argv = [binary, "chat", "--cli", "--source", "cao", *_approval_args(ctx)]
    model = ctx.model or (profile.model if profile else None)
    if model:
        argv += ["--model", model]
    chosen, kept = toolsets(ctx.allowed_tools, list(ctx.mcp_servers))
    if chosen is not None:
        argv += ["--toolsets", ",".join(chosen) or "clarify"]

    signal = signal_command(ctx.env)
    servers = {name: _mcp_entry(name, ctx.mcp_servers[name], name in ctx.cao_servers) for name in kept}
    mine = user_home(env)
    config = build_config(read_user_config(mine), servers, hooks(signal) if signal else {})
    files = {f"{HOME_DIR}/{CONFIG_FILE}": _yaml(config)}
    if profile is not None and profile.system_prompt.strip():
        files[f"{HOME_DIR}/{SOUL_FILE}"] = profile.system_prompt.strip() + "\n"
    seeded = update_check(installed_version(binary))
    if seeded is not None:
        files[f"{HOME_DIR}/{UPDATE_CHECK_FILE}"] = seeded
    private = runtime / HOME_DIR
    # The persona is the user's own when the profile has none.
    link_user_files(mine, private, [*LINKED, *([] if f"{HOME_DIR}/{SOUL_FILE}" in files else [SOUL_FILE])])
    return LaunchPlan(argv=argv, env={"HERMES_HOME": str(private)}, files=files)


def model_endpoint(env: Mapping[str, str]) -> str | None:
    """The base URL of the model API Hermes will call with ``env``: ``model.base_url`` of the user's
    config. None when the config names none (a built-in provider's own address). Reads files only and
    never raises."""
    try:
        config = read_user_config(user_home(env))
    except ValueError:
        return None
    model = config.get("model")
    url = model.get("base_url") if isinstance(model, Mapping) else None
    if isinstance(url, str) and url.strip().startswith(("http://", "https://")):
        return url.strip()
    return None
