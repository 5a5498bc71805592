"""The command line and private home that start Gemini CLI for one terminal, built from the profile.

- approval mode: ``yolo`` asks for ``--approval-mode yolo``; a profile's ``permissionMode`` gives its
  mode (Gemini CLI's names, or Claude Code's names for the same modes); otherwise yolo, like
  upstream's agents (an orchestrated agent has nobody to answer tool prompts);
- ``--model`` from the profile or the request;
- a private ``GEMINI_CLI_HOME`` (see ``config.py``) holding the settings with the profile's MCP
  servers (cao's terminal id and server address in each entry's own env) and tool restrictions, and
  the global context file ending with the profile's body;
- ``GEMINI_CLI_TRUST_WORKSPACE=true``: the working folder is trusted for this run, so no trust dialog
  (whose answer restarts the CLI) and stdio MCP servers may start (Gemini CLI refuses them in an
  untrusted folder).
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
from cao_launch_core.json_config import check_server_name, plain
from cao_launch_core.user_config import link_user_files, read_json_object

from .config import HOME_DIR, LINKED, context_file_name, private_settings, user_context, user_gemini_dir

__all__ = [
    "APPROVAL_MODES",
    "BINARY",
    "BINARY_ENV",
    "INSTALL_HINT",
    "NATIVE_TOOLS",
    "approval_mode",
    "gemini_mcp_servers",
    "launch",
    "resolve_binary",
    "tool_settings",
]

BINARY = "gemini"
#: Environment variable naming the ``gemini`` program to run instead of the one on PATH.
BINARY_ENV = "CAO_GEMINI_CLI_BIN"
INSTALL_HINT = "npm install -g @google/gemini-cli"

#: cao's tool vocabulary -> Gemini CLI's built-in tools.
NATIVE_TOOLS: dict[str, tuple[str, ...]] = {
    "execute_bash": ("run_shell_command", "list_background_processes", "read_background_output"),
    "fs_read": ("read_file", "read_many_files", "grep_search"),
    "fs_list": ("list_directory", "glob"),
    "fs_write": ("write_file", "replace"),
    "web_fetch": ("web_fetch", "google_web_search"),
}
#: Approval modes Gemini CLI knows, and Claude Code's names for the same modes (profiles written for
#: either CLI carry ``permissionMode``).
APPROVAL_MODES = {
    "default": "default", "auto_edit": "auto_edit", "yolo": "yolo", "plan": "plan",
    "acceptEdits": "auto_edit", "bypassPermissions": "yolo",
}
_MODE = re.compile(r"^[A-Za-z][A-Za-z_-]{0,39}$")
_TOOL_RULE = re.compile(r"^(?P<tool>[A-Za-z_][\w.-]*)(?:\(.*\))?$", re.DOTALL)
# Keys of an mcpServers entry Gemini CLI understands; anything else is dropped (Gemini CLI would
# refuse the whole settings file for an unknown type value).
_MCP_KEYS = ("command", "args", "env", "cwd", "url", "httpUrl", "headers", "tcp", "timeout", "trust",
             "description", "includeTools", "excludeTools", "oauth", "authProviderType", "targetAudience",
             "targetServiceAccount")
_HTTP_TYPES = {"http": "http", "streamable-http": "http", "streamable_http": "http", "streamableHttp": "http",
               "sse": "sse"}
#: MCP request timeout (ms) when a profile gives none: ``handoff`` holds its tool call until the
#: worker finishes (600 s by default); Gemini CLI's own default is exactly 600 s.
MCP_TIMEOUT_MS = 1_200_000


#: Variables that make Gemini CLI run headless when set to "true".
HEADLESS_SWITCHES = ("CI", "GITHUB_ACTIONS")


def resolve_binary(env: Mapping[str, str]) -> str:
    """The ``gemini`` program: ``CAO_GEMINI_CLI_BIN`` when set, else ``gemini`` on PATH."""
    return find_program(env, BINARY, BINARY_ENV,
                        missing=f"Gemini CLI ('{BINARY}') is not on PATH; install it with: {INSTALL_HINT}")


def approval_mode(ctx: LaunchContext) -> str:
    """The ``--approval-mode`` value: yolo when asked for, else the profile's mode, else yolo.

    A mode name neither CLI knows is passed on as it is: Gemini CLI refuses it at start-up and says
    which modes exist, and cao reports that screen.
    """
    if ctx.yolo:
        return "yolo"
    mode = ctx.profile.permission_mode if ctx.profile else None
    if not mode:
        return "yolo"
    if not _MODE.match(mode):
        raise ValueError(f"permissionMode {mode!r} is not an approval mode name (one of: "
                         f"{', '.join(sorted(set(APPROVAL_MODES.values())))})")
    return APPROVAL_MODES.get(mode, mode)


def tool_settings(allowed: Sequence[str] | None,
                  mcp_servers: Sequence[str]) -> tuple[list[str], list[str], list[str]]:
    """``(tools to exclude, MCP servers to exclude, tool rules approved without asking)`` for cao's
    allowed-tools list.

    None or ``*``: no restriction. ``@builtin`` keeps every built-in tool; ``execute_bash``,
    ``fs_read``, ``fs_list``, ``fs_write``, ``fs_*`` and ``web_fetch`` keep their built-in tools and
    exclude the other categories'; ``@<server>`` keeps one MCP server (the profile's other servers are
    excluded); anything else is a Gemini CLI tool name or rule (``run_shell_command(git)``): its tool
    is kept and the rule runs without a confirmation prompt. Excluded tools are never offered to the
    model, whatever the approval mode.
    """
    if allowed is None or "*" in allowed:
        return [], [], []
    read = read_allowed_tools(allowed, NATIVE_TOOLS)
    categories, servers, builtin = read.categories, read.servers, read.builtin
    named: set[str] = set()
    for item in read.other:
        if item.startswith("-"):
            raise ValueError(f"allowed tool {item!r} looks like a command-line option")
        rule = _TOOL_RULE.match(item)
        if rule is None:
            raise ValueError(f"allowed tool {item!r} is neither a cao tool name nor a Gemini CLI tool rule")
        named.add(rule.group("tool"))
    rules = list(read.other)
    excluded: list[str] = []
    if not builtin:
        for category, tools in NATIVE_TOOLS.items():
            if category not in categories:
                excluded += [tool for tool in tools if tool not in named]
    excluded_servers = sorted(name for name in mcp_servers if name not in servers)
    return excluded, excluded_servers, rules


def gemini_mcp_servers(servers: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The profile's MCP servers as Gemini CLI's ``mcpServers`` entries.

    Claude-style entries are translated: ``type: http`` (or ``streamable-http``) with ``url`` becomes
    Gemini CLI's streamable-HTTP entry, ``type: sse`` its SSE entry, ``type: stdio`` is implied by
    ``command``. A request timeout of :data:`MCP_TIMEOUT_MS` is set when the entry has none.
    """
    entries: dict[str, dict[str, Any]] = {}
    for name, raw in servers.items():
        check_server_name(name)
        entry = plain(raw)
        if not isinstance(entry, dict):
            # ValueError like every other bad profile value: the kernel reports it as the profile's fault.
            raise ValueError(  # noqa: TRY004
                f"MCP server {name!r} must be a mapping, got {type(raw).__name__}")
        kind = str(entry.get("type") or "").strip()
        if not (entry.get("command") or entry.get("url") or entry.get("httpUrl") or entry.get("tcp")):
            raise ValueError(f"MCP server {name!r} needs a command (stdio) or a url")
        out = {key: entry[key] for key in _MCP_KEYS if key in entry}
        if kind and kind != "stdio":
            if kind not in _HTTP_TYPES:
                raise ValueError(f"MCP server {name!r}: type {kind!r} is not stdio, http or sse")
            if "url" in out:
                out["type"] = _HTTP_TYPES[kind]
        if "env" in out and not isinstance(out["env"], dict):
            raise ValueError(f"MCP server {name!r}: env must be a mapping")
        if "env" in out:
            out["env"] = {str(k): str(v) for k, v in out["env"].items()}
        out.setdefault("timeout", MCP_TIMEOUT_MS)
        entries[name] = out
    return entries


def _context_text(user_text: str, profile_text: str) -> str:
    parts = [text.strip() for text in (user_text, profile_text) if text and text.strip()]
    return "\n\n".join(parts) + "\n" if parts else ""


def launch(ctx: LaunchContext) -> LaunchPlan:
    """The launch plan of one Gemini CLI terminal."""
    env = environment(ctx)
    argv = [resolve_binary(env), "--approval-mode", approval_mode(ctx)]
    if ctx.model:
        argv += ["--model", ctx.model]
    servers = gemini_mcp_servers(ctx.mcp_servers)
    excluded, excluded_servers, approved = tool_settings(ctx.allowed_tools, list(servers))
    user = read_json_object(user_gemini_dir(env) / "settings.json")
    settings = private_settings(user, env=env, mcp_servers=servers, excluded_tools=excluded,
                                excluded_servers=excluded_servers, auto_approved=approved)
    home = Path(ctx.runtime_dir) / HOME_DIR
    files = {f"{HOME_DIR}/.gemini/settings.json": json.dumps(settings, indent=2) + "\n"}
    context_name = context_file_name(settings)
    body = ctx.profile.system_prompt if ctx.profile else ""
    context = _context_text(user_context(env, context_name), body)
    if context:
        files[f"{HOME_DIR}/.gemini/{context_name}"] = context
    link_user_files(user_gemini_dir(env), home / ".gemini", LINKED)
    plan_env = {
        "GEMINI_CLI_HOME": str(home),
        "GEMINI_CLI_TRUST_WORKSPACE": "true",
    }
    # Gemini CLI goes headless when CI or GITHUB_ACTIONS is "true" (it then exits at once, wanting its
    # prompt on stdin), but a cao terminal is always interactive, in CI pipelines too.
    for name in HEADLESS_SWITCHES:
        if env.get(name, "").strip().lower() == "true":
            plan_env[name] = "false"
    return LaunchPlan(argv=argv, env=plan_env, files=files)
