"""The command line that starts Oh My Pi for one terminal, built from the agent profile.

- approval mode: ``--approval-mode yolo`` when the request says ``yolo`` and by default (an
  orchestrated agent has nobody to answer an "Allow tool" prompt); a profile's ``permissionMode``
  picks another of Oh My Pi's modes (``always-ask``, ``write``, ``yolo``);
- ``--model`` (Oh My Pi's ``provider/id``, or a name it matches); ``--no-title`` (no side request
  for a session title);
- the profile body in a file passed with ``--append-system-prompt`` (after Oh My Pi's own prompt,
  which keeps its tools described);
- the MCP servers (with cao's terminal id and server address in each entry's env) in the private
  agent folder's ``mcp.json``, the only MCP servers the terminal sees (config.py says how the others
  are kept out);
- allowed tools in cao's vocabulary turned into ``--tools`` (Oh My Pi's built-in tools); an
  ``@<server>`` list keeps only those MCP servers;
- a private agent folder (``PI_CODING_AGENT_DIR``, config.py), and the extension of signals.py when
  the kernel offers native signals.

Oh My Pi is a Bun program (``#!/usr/bin/env bun``): ``bun`` must be on PATH, or next to ``omp``.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path

from cao_hookspecs import LaunchContext, LaunchPlan
from cao_hookspecs.allowed_tools import read_allowed_tools
from cao_hookspecs.programs import find_program
from cao_hookspecs.signals import signal_command
from cao_launch_core.environment import environment
from cao_launch_core.json_config import check_server_name, mcp_config, stdio_typed
from cao_launch_core.user_config import link_user_files

from .config import AGENT_DIR, AGENT_DIR_ENV, LINKED, settings_text, user_agent_dir
from .signals import EXTENSION_FILE, extension_source

__all__ = ["APPROVAL_MODES", "BINARY", "BINARY_ENV", "INSTALL_HINT", "NATIVE_TOOLS", "launch",
           "model_endpoint", "resolve_binary", "tool_args"]

BINARY = "omp"
#: Environment variable naming a program to run instead of ``omp`` on PATH.
BINARY_ENV = "CAO_OMP_BIN"
INSTALL_HINT = "bun install -g @oh-my-pi/pi-coding-agent (Oh My Pi runs on Bun)"
SYSTEM_PROMPT_FILE = "system-prompt.md"
#: cao's settings again, as the last ``--config`` overlay (config.py).
OVERLAY_FILE = "cao-config.yml"
#: Oh My Pi 18's approval modes.
APPROVAL_MODES = ("always-ask", "write", "yolo")
#: cao's tool vocabulary -> Oh My Pi's built-in tools.
NATIVE_TOOLS: dict[str, tuple[str, ...]] = {
    "execute_bash": ("bash", "eval"),
    "fs_read": ("read", "grep"),
    "fs_list": ("glob",),
    "fs_write": ("write", "edit", "ast_edit"),
    "web_fetch": ("web_search",),
}
#: Built-in tools that touch neither the machine nor the web: kept whenever a list is given.
_ALWAYS = ("ask", "todo")
_BASE_URL = re.compile(r"""^\s*"?baseUrl"?\s*:\s*["']?(?P<url>[^"'\s,}]+)""", re.MULTILINE)


def resolve_binary(env: Mapping[str, str]) -> str:
    """The program to run: ``CAO_OMP_BIN`` when set, else ``omp`` on PATH; ValueError when Bun, which
    runs it, cannot be found."""
    program = find_program(env, BINARY, BINARY_ENV,
                           missing=f"Oh My Pi ('{BINARY}') is not on PATH; install it with: {INSTALL_HINT}")
    beside = str(Path(program).parent)
    if shutil.which("bun", path=os.pathsep.join([env.get("PATH", ""), beside])) is None:
        raise ValueError(f"Oh My Pi ({program}) runs on Bun, and 'bun' is not on PATH: install it "
                         "(https://bun.sh, or npm install bun) and put it on PATH")
    return program


def approval_mode(ctx: LaunchContext) -> str:
    """The ``--approval-mode`` of a terminal (see the module docstring)."""
    mode = ctx.profile.permission_mode if ctx.profile else None
    if ctx.yolo or not mode:
        return "yolo"
    if mode not in APPROVAL_MODES:
        raise ValueError(f"permissionMode {mode!r} is not one of Oh My Pi's approval modes "
                         f"({', '.join(APPROVAL_MODES)})")
    return mode


def tool_args(allowed: Sequence[str] | None, mcp_servers: Sequence[str]) -> tuple[list[str], list[str]]:
    """``--tools`` for cao's allowed-tools list, and the MCP servers kept.

    None or ``*``: no restriction. ``@builtin`` keeps every built-in tool; ``execute_bash``,
    ``fs_read``, ``fs_list``, ``fs_write``, ``fs_*`` and ``web_fetch`` keep their built-in tools (and
    ``ask`` and ``todo``) and leave the others out; ``@<server>`` keeps that MCP server. Anything else is
    refused by name: Oh My Pi has no rule syntax cao could pass it on as.
    """
    if allowed is None or "*" in allowed:
        return [], list(mcp_servers)
    read = read_allowed_tools(allowed, NATIVE_TOOLS)
    if read.other:
        raise ValueError(f"allowed tool {read.other[0]!r} is not one Oh My Pi can be limited to (use "
                         f"{', '.join(sorted(NATIVE_TOOLS))}, fs_*, @builtin, @<server> or *)")
    kept = [name for name in mcp_servers if name in read.servers]
    if read.builtin:
        return [], kept
    tools = [tool for cat in NATIVE_TOOLS if cat in read.categories for tool in NATIVE_TOOLS[cat]]
    # An empty --tools would mean every tool; --no-tools leaves the MCP tools.
    return (["--tools", ",".join([*tools, *_ALWAYS])] if tools else ["--no-tools"]), kept


def launch(ctx: LaunchContext) -> LaunchPlan:
    """The launch plan of one Oh My Pi terminal."""
    env = environment(ctx)
    runtime = Path(ctx.runtime_dir)
    agent = runtime / AGENT_DIR
    argv = [resolve_binary(env), "--approval-mode", approval_mode(ctx), "--no-title"]
    if ctx.model:
        if ctx.model.startswith("-"):
            raise ValueError(f"model {ctx.model!r} is not a model name")
        argv += ["--model", ctx.model]
    files: dict[str, str] = {f"{AGENT_DIR}/config.yml": settings_text(), OVERLAY_FILE: settings_text()}
    profile = ctx.profile
    if profile is not None and profile.system_prompt.strip():
        files[SYSTEM_PROMPT_FILE] = profile.system_prompt.strip() + "\n"
        argv += ["--append-system-prompt", str(runtime / SYSTEM_PROMPT_FILE)]
    tools, kept = tool_args(ctx.allowed_tools, list(ctx.mcp_servers))
    argv += tools
    servers = {check_server_name(name): stdio_typed(ctx.mcp_servers[name]) for name in kept}
    files[f"{AGENT_DIR}/mcp.json"] = mcp_config(servers)
    user = user_agent_dir(env)
    if (user / "config.yml").is_file() and user.resolve() != agent.resolve():
        argv += ["--config", str(user / "config.yml")]
    argv += ["--config", str(runtime / OVERLAY_FILE)]
    command = signal_command(ctx.env)
    if command is not None:
        files[EXTENSION_FILE] = extension_source(command)
        argv += ["--extension", str(runtime / EXTENSION_FILE)]
    link_user_files(user, agent, LINKED)
    # CLAUDE_CONFIG_DIR, when set, opts Claude Code's MCP servers in; OTEL_SDK_DISABLED keeps an
    # OpenTelemetry endpoint of the user's environment from receiving the terminal's traces.
    return LaunchPlan(argv=argv, env={AGENT_DIR_ENV: str(agent), "CLAUDE_CONFIG_DIR": "",
                                      "OTEL_SDK_DISABLED": "true"}, files=files)


def model_endpoint(env: Mapping[str, str]) -> str | None:
    """The model API Oh My Pi will call with ``env``: the first ``baseUrl`` of the user's
    ``models.yml`` (or ``models.json``), read as text. None when there is none (Oh My Pi's built-in
    providers and sign-ins decide then, which cannot be told from files)."""
    folder = user_agent_dir(env)
    for name in ("models.yml", "models.json"):
        try:
            found = _BASE_URL.search((folder / name).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            continue
        if found:
            return found.group("url")
    return None
