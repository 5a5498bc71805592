"""The command line that starts Qwen Code for one terminal, built from the agent profile.

- approval mode: ``--approval-mode yolo`` when the request says ``yolo`` and by default (an
  orchestrated agent has nobody to answer permission prompts); a profile's ``permissionMode`` picks
  another of Qwen Code's modes (``plan``, ``default``, ``auto-edit``, ``auto``, ``yolo``). The mode is
  always given: without it Qwen Code may start in its ``auto`` mode, where a model call judges each
  tool call;
- ``--model``; the profile body as ``--append-system-prompt`` (Qwen Code reads it from no file);
- the MCP servers (with cao's terminal id and server address in each entry's env) in a Claude-style
  file passed with ``--mcp-config``, each marked ``alwaysLoadTools`` (Qwen Code otherwise hides MCP
  tools behind its tool search) and cao's own marked ``trust`` (never an approval on send_message);
- allowed tools in cao's vocabulary turned into ``--exclude-tools`` and ``--allowed-tools``; an
  ``@<server>`` list keeps only those MCP servers;
- a private ``QWEN_HOME`` (config.py), with the hooks of signals.py when the kernel offers native
  signals.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from cao_hookspecs import LaunchContext, LaunchPlan
from cao_hookspecs.allowed_tools import read_allowed_tools
from cao_hookspecs.programs import find_program
from cao_hookspecs.signals import signal_command
from cao_launch_core.environment import environment
from cao_launch_core.json_config import check_server_name, mcp_config, stdio_typed
from cao_launch_core.user_config import link_user_files, read_json_object

from .config import HOME_DIR, LINKED, private_settings, user_home
from .signals import hook_settings

__all__ = ["APPROVAL_MODES", "BINARY", "BINARY_ENV", "INSTALL_HINT", "NATIVE_TOOLS", "launch",
           "model_endpoint", "resolve_binary", "tool_args"]

BINARY = "qwen"
#: Environment variable naming a program to run instead of ``qwen`` on PATH.
BINARY_ENV = "CAO_QWEN_CODE_BIN"
INSTALL_HINT = "npm install -g @qwen-code/qwen-code"
MCP_CONFIG_FILE = "mcp.json"
#: Qwen Code 0.24's approval modes.
APPROVAL_MODES = ("plan", "default", "auto-edit", "auto", "yolo")
_MODE = re.compile(r"^[A-Za-z][A-Za-z-]{0,39}$")
#: cao's tool vocabulary -> Qwen Code's native tools.
NATIVE_TOOLS: dict[str, tuple[str, ...]] = {
    "execute_bash": ("run_shell_command",),
    "fs_read": ("read_file", "grep_search"),
    "fs_list": ("glob", "list_directory"),
    "fs_write": ("write_file", "edit", "notebook_edit"),
    "web_fetch": ("web_fetch", "web_search"),
}
#: Where each of Qwen Code's sign-in types sends its requests unless a variable says otherwise.
_ENDPOINTS = {
    "openai": ("OPENAI_BASE_URL", "https://api.openai.com/v1"),
    "openai-responses": ("OPENAI_BASE_URL", "https://api.openai.com/v1"),
    "anthropic": ("ANTHROPIC_BASE_URL", "https://api.anthropic.com"),
    "qwen-oauth": ("", "https://portal.qwen.ai/v1"),
}


def resolve_binary(env: Mapping[str, str]) -> str:
    """The program to run: ``CAO_QWEN_CODE_BIN`` when set, else ``qwen`` on PATH."""
    return find_program(env, BINARY, BINARY_ENV,
                        missing=f"Qwen Code ('{BINARY}') is not on PATH; install it with: {INSTALL_HINT}")


def approval_mode(ctx: LaunchContext) -> str:
    """The ``--approval-mode`` of a terminal (see the module docstring)."""
    mode = ctx.profile.permission_mode if ctx.profile else None
    if ctx.yolo or not mode:
        return "yolo"
    # Only the shape is checked: Qwen Code itself refuses a mode it does not know (a later release may
    # know more than APPROVAL_MODES), printing its usage, and cao reports that screen at once.
    if not _MODE.match(mode):
        raise ValueError(f"permissionMode {mode!r} is not an approval mode name (one of "
                         f"{', '.join(APPROVAL_MODES)})")
    return mode


def tool_args(allowed: Sequence[str] | None, mcp_servers: Sequence[str]) -> tuple[list[str], list[str]]:
    """``--exclude-tools`` / ``--allowed-tools`` for cao's allowed-tools list, and the MCP servers kept.

    None or ``*``: no restriction. ``@builtin`` keeps every native tool; ``execute_bash``, ``fs_read``,
    ``fs_list``, ``fs_write``, ``fs_*`` and ``web_fetch`` allow their native tools (no approval asked)
    and exclude the other categories'; ``@<server>`` keeps that MCP server (the profile's others are
    left out). Anything else is refused by name: Qwen Code has no rule syntax cao could pass it on as.
    """
    if allowed is None or "*" in allowed:
        return [], list(mcp_servers)
    read = read_allowed_tools(allowed, NATIVE_TOOLS)
    if read.other:
        raise ValueError(f"allowed tool {read.other[0]!r} is not one Qwen Code can be limited to (use "
                         f"{', '.join(sorted(NATIVE_TOOLS))}, fs_*, @builtin, @<server> or *)")
    args: list[str] = []
    allow = [tool for cat in sorted(read.categories) for tool in NATIVE_TOOLS[cat]]
    denied = [] if read.builtin else [cat for cat in NATIVE_TOOLS if cat not in read.categories]
    exclude = [tool for cat in denied for tool in NATIVE_TOOLS[cat]]
    if exclude:
        args += ["--exclude-tools", *exclude]
    if allow:
        args += ["--allowed-tools", *allow]
    return args, [name for name in mcp_servers if name in read.servers]


def _mcp_config(servers: Mapping[str, Any], cao_servers: Sequence[str]) -> str:
    entries: dict[str, Any] = {}
    for name, entry in servers.items():
        server = stdio_typed(entry)
        if isinstance(server, dict):
            server.setdefault("alwaysLoadTools", True)
            if name in cao_servers:
                server["trust"] = True
        entries[check_server_name(name)] = server
    return mcp_config(entries)


def launch(ctx: LaunchContext) -> LaunchPlan:
    """The launch plan of one Qwen Code terminal."""
    env = environment(ctx)
    runtime = Path(ctx.runtime_dir)
    argv = [resolve_binary(env), "--approval-mode", approval_mode(ctx)]
    if ctx.model:
        if ctx.model.startswith("-"):
            raise ValueError(f"model {ctx.model!r} is not a model name")
        argv += ["--model", ctx.model]
    profile = ctx.profile
    if profile is not None and profile.system_prompt.strip():
        argv += ["--append-system-prompt", profile.system_prompt.strip()]
    tools, kept = tool_args(ctx.allowed_tools, list(ctx.mcp_servers))
    argv += tools
    files: dict[str, str] = {}
    if kept:
        servers = {name: ctx.mcp_servers[name] for name in kept}
        files[MCP_CONFIG_FILE] = _mcp_config(servers, ctx.cao_servers)
        argv += ["--mcp-config", str(runtime / MCP_CONFIG_FILE)]
    command = signal_command(ctx.env)
    hooks = hook_settings(command) if command is not None else None
    files[f"{HOME_DIR}/settings.json"] = json.dumps(private_settings(env, hooks), indent=2) + "\n"
    link_user_files(user_home(env), runtime / HOME_DIR, LINKED)
    return LaunchPlan(argv=argv, env={"QWEN_HOME": str(runtime / HOME_DIR)}, files=files)


def model_endpoint(env: Mapping[str, str]) -> str | None:
    """The model API Qwen Code will call with ``env``: by the sign-in type of the user's settings
    (``security.auth.selectedType``), its base-URL variable or its default address; with no type
    chosen, ``OPENAI_BASE_URL`` when set (Qwen Code then signs in with the OpenAI variables). None when
    it cannot be told (a provider configured in ``modelProviders``, Gemini or Vertex AI)."""
    settings = read_json_object(user_home(env) / "settings.json")
    auth = settings.get("security", {}).get("auth", {}) if isinstance(settings.get("security"), dict) else {}
    selected = auth.get("selectedType") if isinstance(auth, dict) else None
    if selected is None:
        return env.get("OPENAI_BASE_URL", "").strip() or None
    variable, default = _ENDPOINTS.get(str(selected), ("", None))
    return (env.get(variable, "").strip() if variable else "") or default

