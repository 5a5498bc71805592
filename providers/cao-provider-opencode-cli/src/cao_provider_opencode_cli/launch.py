"""The command line and config file that start OpenCode for one terminal, built from the agent profile.

OpenCode takes almost everything from config files, so each terminal gets one of its own,
``<runtime>/opencode.json``, named by ``OPENCODE_CONFIG`` (the user's global and project configs are
still read; OpenCode merges them):

- an agent ``cao-<profile>`` (``mode: primary``) carrying the permission rules, so that the
  project's own ``permission`` block cannot make an orchestrated agent stop and ask; the command line
  selects it with ``--agent``. A profile's ``native_agent`` names one of the user's OpenCode agents
  instead, and the rules then go to the config's top-level ``permission``;
- the profile body as an ``instructions`` file, added to OpenCode's own system prompt;
- the profile's MCP servers as ``mcp`` entries (``type: local``, the server's ``env`` as
  ``environment``: cao's terminal id and server address travel with each entry);
- ``autoupdate: false`` (and ``OPENCODE_DISABLE_AUTOUPDATE``): an orchestrated agent must not
  replace itself or stop at an update offer mid-run.

When the user runs OpenCode with an ``OPENCODE_CONFIG`` of their own, that file's settings are copied
into the terminal's file first, so they still apply.

OpenCode runs with ``--mini``, its inline interface, rather than its full-screen one: the full-screen
interface draws its prompt about a second before it accepts keys (a task typed as soon as the prompt
shows is lost without a trace), keeps nothing in tmux's scrollback, and adds a sidebar to wide
windows. The inline one takes input as soon as its footer is drawn and leaves the conversation in the
scrollback, where cao can read answers longer than the window.
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
from cao_launch_core.environment import environment
from cao_launch_core.json_config import plain

from .config import CONFIG_ENV, custom_config, deep_merge

__all__ = [
    "AGENT_PREFIX",
    "BINARY",
    "BINARY_ENV",
    "CONFIG_FILE",
    "INSTALL_HINT",
    "NATIVE_TOOLS",
    "OPENCODE_TOOLS",
    "PERMISSION_MODES",
    "agent_name",
    "build_config",
    "launch",
    "permission_rules",
    "resolve_binary",
]

BINARY = "opencode"
#: Environment variable naming the ``opencode`` program to run instead of the one on PATH.
BINARY_ENV = "CAO_OPENCODE_CLI_BIN"
INSTALL_HINT = "npm install -g opencode-ai"
CONFIG_FILE = "opencode.json"
SYSTEM_PROMPT_FILE = "system-prompt.md"
AGENT_PREFIX = "cao-"

#: cao's tool vocabulary -> OpenCode's permission names (``edit`` covers writing and patching too).
NATIVE_TOOLS: dict[str, tuple[str, ...]] = {
    "execute_bash": ("bash",),
    "fs_read": ("read", "grep"),
    "fs_list": ("glob", "list"),
    "fs_write": ("edit",),
    "web_fetch": ("webfetch", "websearch", "codesearch"),
}
#: OpenCode's own permission names; a profile may allow any of them by name.
OPENCODE_TOOLS = frozenset({tool for tools in NATIVE_TOOLS.values() for tool in tools} | {
    "task", "skill", "lsp", "todowrite", "todoread", "question", "external_directory", "doom_loop"})
#: ``permissionMode`` values: ``bypassPermissions`` (the default, like ``yolo``) allows everything not
#: denied by the allowed-tools list; ``default`` keeps OpenCode's own rules and the user's config.
PERMISSION_MODES = ("bypassPermissions", "default")
# OpenCode names an MCP tool <server>_<tool>, replacing other characters; keep names it leaves alone.
_MCP_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_AGENT_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_MODEL = re.compile(r"^[A-Za-z0-9._-]+/\S+$")


def resolve_binary(env: Mapping[str, str]) -> str:
    """The ``opencode`` program: ``CAO_OPENCODE_CLI_BIN`` when set, else ``opencode`` on PATH."""
    return find_program(env, BINARY, BINARY_ENV,
                        missing=f"OpenCode ('{BINARY}') is not on PATH; install it with: {INSTALL_HINT}")


def agent_name(ctx: LaunchContext) -> str:
    """The OpenCode agent the terminal runs: the profile's ``native_agent``, else ``cao-<profile>``."""
    profile = ctx.profile
    if profile is not None and profile.native_agent:
        if not _AGENT_NAME.match(profile.native_agent):
            raise ValueError(f"native_agent {profile.native_agent!r} is not an agent name "
                             "(1-64 letters, digits, '_' or '-')")
        return profile.native_agent
    return AGENT_PREFIX + (profile.name if profile is not None else ctx.terminal.agent_profile)


def _base_rules(ctx: LaunchContext) -> dict[str, str]:
    mode = ctx.profile.permission_mode if ctx.profile else None
    if ctx.yolo or mode in (None, "bypassPermissions"):
        # An orchestrated agent has nobody to answer a permission prompt.
        return {"*": "allow"}
    if mode == "default":
        return {}
    raise ValueError(f"permissionMode {mode!r} is not supported by OpenCode (use one of: "
                     f"{', '.join(PERMISSION_MODES)})")


def permission_rules(ctx: LaunchContext, mcp_servers: Sequence[str]) -> dict[str, str]:
    """OpenCode permission rules for the terminal (later rules win, so the order matters).

    Allowed tools in cao's vocabulary: None or ``*``: no restriction; ``@builtin`` allows every native
    tool; ``execute_bash``, ``fs_read``, ``fs_list``, ``fs_write``, ``fs_*`` and ``web_fetch`` allow
    their native tools and deny the other categories'; ``@<server>`` allows one MCP server (the
    profile's other servers are denied); an OpenCode permission name (``bash``, ``todowrite``...) is
    allowed as it is, whatever its category.
    """
    rules = _base_rules(ctx)
    allowed = ctx.allowed_tools
    if allowed is None or "*" in allowed:
        return rules
    read = read_allowed_tools(allowed, NATIVE_TOOLS)
    categories, servers, builtin = read.categories, read.servers, read.builtin
    for name in sorted(servers):
        if not _MCP_NAME.match(name):
            raise ValueError(f"allowed tool '@{name}': '@' must be followed by an MCP server name")
    for item in read.other:
        if item not in OPENCODE_TOOLS:
            known = ", ".join([*NATIVE_TOOLS, "fs_*", "@builtin", "@<server>", *sorted(OPENCODE_TOOLS)])
            raise ValueError(f"allowed tool {item!r} is not one OpenCode can be limited to (known: {known})")
    named = list(read.other)
    if not builtin:
        for category, tools in NATIVE_TOOLS.items():
            if category not in categories:
                rules.update({tool: "deny" for tool in tools})
    for name in sorted(mcp_servers):
        if name not in servers:
            rules[f"{name}_*"] = "deny"
    if rules.get("*") != "allow":
        # Under OpenCode's own rules an allowed tool must not stop to ask either.
        for category in sorted(categories):
            rules.update({tool: "allow" for tool in NATIVE_TOOLS[category]})
        rules.update({f"{name}_*": "allow" for name in sorted(servers)})
    # A tool allowed by name wins over its category's rule (each name has a single rule).
    rules.update({name: "allow" for name in named})
    return rules


def _mcp_entry(name: str, entry: Any) -> dict[str, Any]:
    """An OpenCode ``mcp`` entry for one server of the profile (stdio or remote)."""
    if not _MCP_NAME.match(name):
        raise ValueError(f"MCP server name {name!r} must be 1-64 letters, digits, '_' or '-'")
    server = plain(entry) if isinstance(entry, Mapping) else None
    if server is None:
        raise ValueError(f"MCP server {name!r} must be a mapping with a 'command' or a 'url'")
    env = server.get("env") or {}
    if not isinstance(env, dict) or not all(isinstance(v, str | int | float) for v in env.values()):
        raise ValueError(f"MCP server {name!r}: env must map names to strings")
    result: dict[str, Any]
    if server.get("url"):
        if not isinstance(server["url"], str) or not re.match(r"https?://\S+$", server["url"]):
            raise ValueError(f"MCP server {name!r}: url must be an http(s) URL")
        result = {"type": "remote", "url": server["url"], "enabled": True}
        if server.get("headers"):
            result["headers"] = {str(k): str(v) for k, v in dict(server["headers"]).items()}
    else:
        command = server.get("command")
        args = server.get("args") or []
        if not isinstance(command, str) or not command.strip():
            raise ValueError(f"MCP server {name!r} needs a 'command' (or a 'url')")
        if not isinstance(args, list) or not all(isinstance(a, str | int | float) for a in args):
            raise ValueError(f"MCP server {name!r}: args must be a list of strings")
        result = {"type": "local", "command": [command, *map(str, args)], "enabled": True}
        if env:
            # OpenCode's name for it; some CLIs start MCP servers with a scrubbed environment, so what
            # cao-mcp-server needs (terminal id, server address) is given explicitly here.
            result["environment"] = {str(k): str(v) for k, v in env.items()}
    timeout = server.get("timeout")
    if isinstance(timeout, int) and not isinstance(timeout, bool) and timeout > 0:
        result["timeout"] = timeout
    return result


def build_config(ctx: LaunchContext, env: Mapping[str, str]) -> dict[str, Any]:
    """The content of the terminal's ``opencode.json``."""
    profile = ctx.profile
    runtime = Path(ctx.runtime_dir)
    mcp = {name: _mcp_entry(name, entry) for name, entry in ctx.mcp_servers.items()}
    rules = permission_rules(ctx, list(mcp))
    ours: dict[str, Any] = {"$schema": "https://opencode.ai/config.json", "autoupdate": False}
    if mcp:
        ours["mcp"] = mcp
    if profile is not None and profile.system_prompt.strip():
        ours["instructions"] = [str(runtime / SYSTEM_PROMPT_FILE)]
    name = agent_name(ctx)
    if profile is not None and profile.native_agent:
        if rules:
            ours["permission"] = rules
    else:
        agent: dict[str, Any] = {"mode": "primary",
                                 "description": (profile.description if profile and profile.description
                                                 else f"cao agent profile {name[len(AGENT_PREFIX):]}")}
        if rules:
            agent["permission"] = rules
        ours["agent"] = {name: agent}
    return deep_merge(custom_config(env), ours)


def launch(ctx: LaunchContext) -> LaunchPlan:
    """The launch plan of one OpenCode terminal."""
    env = environment(ctx)
    runtime = Path(ctx.runtime_dir)
    # --mini: OpenCode's inline interface (see the module docstring).
    argv = [resolve_binary(env), "--mini", "--agent", agent_name(ctx)]
    if ctx.model:
        if not _MODEL.match(ctx.model):
            raise ValueError(f"model {ctx.model!r}: OpenCode names models provider/model "
                             "(e.g. anthropic/claude-sonnet-4-5)")
        argv += ["--model", ctx.model]
    files = {CONFIG_FILE: json.dumps(build_config(ctx, env), indent=2) + "\n"}
    if ctx.profile is not None and ctx.profile.system_prompt.strip():
        files[SYSTEM_PROMPT_FILE] = ctx.profile.system_prompt.strip() + "\n"
    plan_env = {
        CONFIG_ENV: str(runtime / CONFIG_FILE),
        # An orchestrated agent must not replace itself mid-run (nor stop at an update offer).
        "OPENCODE_DISABLE_AUTOUPDATE": "1",
    }
    return LaunchPlan(argv=argv, env=plan_env, files=files)
