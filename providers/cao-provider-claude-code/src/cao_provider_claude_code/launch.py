"""The command line that starts Claude Code for one terminal, built from the agent profile.

- permissions: ``yolo`` asks for ``--dangerously-skip-permissions``; a profile's ``permissionMode``
  gives ``--permission-mode``; otherwise agents run in bypass mode like upstream's (an orchestrated
  agent has nobody to answer permission prompts), except as root without ``IS_SANDBOX``, where
  Claude Code refuses bypass mode and its own default mode is kept;
- ``--model``, ``--effort`` / ``--fallback-model`` (profile ``claudeConfig``), ``--agent``
  (profile ``native_agent``);
- the profile body as ``--append-system-prompt-file``, the MCP servers (with cao's terminal id and
  server address in each entry's env) as ``--mcp-config <file> --strict-mcp-config``;
- allowed tools in cao's vocabulary turned into ``--allowedTools`` / ``--disallowedTools``;
- a private ``CLAUDE_CONFIG_DIR`` (see ``config.py``);
- when the kernel offers native signals, hooks that report the turn's progress, in a settings file of
  the runtime folder passed with ``--settings`` (see ``signals.py``).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from cao_hookspecs import LaunchContext, LaunchPlan
from cao_hookspecs.allowed_tools import MCP_SERVER_NAME, read_allowed_tools
from cao_hookspecs.programs import find_program
from cao_hookspecs.signals import signal_command
from cao_launch_core.environment import environment
from cao_launch_core.json_config import check_server_name, mcp_config, stdio_typed
from cao_launch_core.user_config import link_user_files

from .config import CONFIG_DIR, LINKED, global_config, user_config_dir, user_settings
from .signals import SETTINGS_FILE, hook_settings

__all__ = ["BINARY", "BINARY_ENV", "NATIVE_TOOLS", "launch", "resolve_binary", "tool_args"]

BINARY = "claude"
#: Environment variable naming the ``claude`` program to run instead of the one on PATH.
BINARY_ENV = "CAO_CLAUDE_CODE_BIN"
INSTALL_HINT = "npm install -g @anthropic-ai/claude-code"
SYSTEM_PROMPT_FILE = "system-prompt.md"
MCP_CONFIG_FILE = "mcp.json"

#: cao's tool vocabulary -> Claude Code's native tools.
NATIVE_TOOLS: dict[str, tuple[str, ...]] = {
    "execute_bash": ("Bash", "BashOutput", "KillShell"),
    "fs_read": ("Read", "Grep"),
    "fs_list": ("Glob", "LS"),
    "fs_write": ("Write", "Edit", "MultiEdit", "NotebookEdit"),
    "web_fetch": ("WebFetch", "WebSearch"),
}
_CLAUDE_CONFIG_FLAGS = {"effort": "--effort", "fallback_model": "--fallback-model"}
_MODE = re.compile(r"^[A-Za-z][A-Za-z_-]{0,39}$")


def resolve_binary(env: Mapping[str, str]) -> str:
    """The ``claude`` program: ``CAO_CLAUDE_CODE_BIN`` when set, else ``claude`` on PATH."""
    return find_program(env, BINARY, BINARY_ENV,
                        missing=f"Claude Code ('{BINARY}') is not on PATH; install it with: {INSTALL_HINT}")


def _permission_args(ctx: LaunchContext, env: Mapping[str, str]) -> list[str]:
    mode = ctx.profile.permission_mode if ctx.profile else None
    if ctx.yolo:
        # Asked for explicitly: as root without IS_SANDBOX Claude Code refuses and says why on screen.
        return ["--dangerously-skip-permissions"]
    if mode:
        if not _MODE.match(mode):
            raise ValueError(f"permissionMode {mode!r} is not a permission mode name (letters only, e.g. "
                             "'acceptEdits', 'plan', 'bypassPermissions')")
        return ["--permission-mode", mode]
    if hasattr(os, "geteuid") and os.geteuid() == 0 and not env.get("IS_SANDBOX"):
        return []
    return ["--dangerously-skip-permissions"]


def _claude_config_args(config: Mapping[str, Any] | None) -> list[str]:
    args: list[str] = []
    for key, value in (config or {}).items():
        flag = _CLAUDE_CONFIG_FLAGS.get(key)
        if flag is None:
            known = ", ".join(sorted(_CLAUDE_CONFIG_FLAGS))
            raise ValueError(f"claudeConfig key {key!r} is not supported (known: {known})")
        if not isinstance(value, str) or not value.strip() or value.startswith("-"):
            raise ValueError(f"claudeConfig {key} must be a non-empty word, got {value!r}")
        args += [flag, value.strip()]
    return args


def tool_args(allowed: Sequence[str] | None, mcp_servers: Sequence[str]) -> list[str]:
    """``--allowedTools`` / ``--disallowedTools`` for cao's allowed-tools list.

    None or ``*``: no restriction. ``@builtin`` allows every native tool; ``execute_bash``,
    ``fs_read``, ``fs_list``, ``fs_write``, ``fs_*`` and ``web_fetch`` allow their native tools and
    deny the other categories'; ``@<server>`` allows one MCP server (the profile's other servers are
    denied); anything else is passed on as a Claude Code permission rule (``Bash(git *)``).
    """
    if allowed is None or "*" in allowed:
        return []
    read = read_allowed_tools(allowed, NATIVE_TOOLS)
    categories, servers, builtin = read.categories, read.servers, read.builtin
    for item in read.other:
        if item.startswith("-"):
            raise ValueError(f"allowed tool {item!r} looks like a command-line option")
    rules = list(read.other)
    allow = [tool for cat in sorted(categories) for tool in NATIVE_TOOLS[cat]]
    allow += rules + [f"mcp__{name}" for name in sorted(servers)]
    denied = [] if builtin else [cat for cat in NATIVE_TOOLS if cat not in categories]
    deny = [tool for cat in denied for tool in NATIVE_TOOLS[cat]]
    deny += [f"mcp__{name}" for name in sorted(mcp_servers) if name not in servers]
    args: list[str] = []
    if allow:
        args += ["--allowedTools", *allow]
    if deny:
        args += ["--disallowedTools", *deny]
    return args


def _mcp_config(servers: Mapping[str, Any]) -> str:
    entries: dict[str, Any] = {}
    for name, entry in servers.items():
        check_server_name(name)
        entries[name] = stdio_typed(entry)
    return mcp_config(entries)


def launch(ctx: LaunchContext) -> LaunchPlan:
    """The launch plan of one Claude Code terminal."""
    env = environment(ctx)
    runtime = Path(ctx.runtime_dir)
    profile = ctx.profile
    argv = [resolve_binary(env), *_permission_args(ctx, env)]
    files: dict[str, str] = {}
    if ctx.model:
        argv += ["--model", ctx.model]
    argv += _claude_config_args(profile.claude_config if profile else None)
    if profile and profile.native_agent:
        if not MCP_SERVER_NAME.match(profile.native_agent):
            raise ValueError(f"native_agent {profile.native_agent!r} is not an agent name")
        argv += ["--agent", profile.native_agent]
    if profile and profile.system_prompt.strip():
        files[SYSTEM_PROMPT_FILE] = profile.system_prompt.strip() + "\n"
        argv += ["--append-system-prompt-file", str(runtime / SYSTEM_PROMPT_FILE)]
    if ctx.mcp_servers:
        files[MCP_CONFIG_FILE] = _mcp_config(ctx.mcp_servers)
        argv += ["--mcp-config", str(runtime / MCP_CONFIG_FILE), "--strict-mcp-config"]
    argv += tool_args(ctx.allowed_tools, list(ctx.mcp_servers))
    if ctx.cao_servers and "--dangerously-skip-permissions" not in argv and not ctx.allowed_tools:
        # A permission mode that asks: cao's own tools never wait for an approval (a prompt on
        # send_message would hold up the whole delegation).
        argv += ["--allowedTools", *(f"mcp__{name}" for name in ctx.cao_servers)]
    command = signal_command(ctx.env)
    if command is not None:
        files[SETTINGS_FILE] = json.dumps(hook_settings(command), indent=2)
        argv += ["--settings", str(runtime / SETTINGS_FILE)]

    private = runtime / CONFIG_DIR
    config = global_config(ctx.working_directory, env, env.get("ANTHROPIC_API_KEY"))
    files[f"{CONFIG_DIR}/.claude.json"] = json.dumps(config, indent=2)
    settings = user_settings(env)
    if settings is not None:
        files[f"{CONFIG_DIR}/settings.json"] = settings
    link_user_files(user_config_dir(env), private, LINKED)
    plan_env = {
        "CLAUDE_CONFIG_DIR": str(private),
        # An orchestrated agent must not replace itself mid-run.
        "DISABLE_AUTOUPDATER": "1",
        # Claude Code marks the programs it runs; a terminal started from inside one is not nested in it.
        "CLAUDECODE": "",
    }
    return LaunchPlan(argv=argv, env=plan_env, files=files)
