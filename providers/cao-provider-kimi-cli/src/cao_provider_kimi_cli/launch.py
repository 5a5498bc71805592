"""The command line that starts Kimi CLI for one terminal, built from the agent profile.

- approvals: like upstream CAO, agents run with ``--yolo`` (an orchestrated agent has nobody to
  approve tool calls); a profile's ``permissionMode`` may ask for Kimi's approval prompts
  (``default``), plan mode (``plan``) or away-from-keyboard mode (``afk``);
- ``--model``: a model entry of the config (see ``share.select_model``);
- the profile body goes into Kimi's own system prompt (``--agent-file``: an agent that extends Kimi's
  default one and fills its ``ROLE_ADDITIONAL`` slot), and cao's allowed tools become the agent's
  ``exclude_tools``;
- the MCP servers (with cao's terminal id and server address in each entry's env) as
  ``--mcp-config-file``, which also keeps the user's global ``mcp.json`` out;
- a private ``KIMI_SHARE_DIR`` (see ``share.py``) and ``KIMI_CLI_NO_AUTO_UPDATE=1``: no update check,
  no blocking update or migration gate, no agent replacing itself mid-run.
"""

from __future__ import annotations

import json
import re
import subprocess
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from cao_hookspecs import LaunchContext, LaunchPlan
from cao_hookspecs.allowed_tools import read_allowed_tools
from cao_hookspecs.programs import find_program
from cao_launch_core.environment import environment
from cao_launch_core.json_config import check_server_name, mcp_config, plain
from cao_launch_core.user_config import link_user_files
from cao_toml_core import dumps

from .share import (
    CONFIG_FILE,
    LINKED,
    SHARE_DIR,
    build_config,
    profile_config,
    read_user_config,
    select_model,
    user_share_dir,
)

__all__ = [
    "AGENT_FILE",
    "BINARY",
    "BINARY_ENV",
    "INSTALL_HINT",
    "MCP_CONFIG_FILE",
    "NATIVE_TOOLS",
    "STUB_VERSION",
    "agent_spec",
    "installed_version",
    "launch",
    "resolve_binary",
    "tool_policy",
    "yaml_text",
]

BINARY = "kimi"
#: Environment variable naming the ``kimi`` program to run instead of the one on PATH.
BINARY_ENV = "CAO_KIMI_CLI_BIN"
PACKAGE = "kimi-cli"
#: kimi-cli 1.52.0 and later only print a deprecation notice (and, run with no arguments, download and
#: run the installer of its successor), so the hint pins the last release that is the CLI itself.
INSTALL_HINT = "uv tool install kimi-cli==1.51.0"
STUB_VERSION = (1, 52, 0)
AGENT_FILE = "kimi-agent.yaml"
MCP_CONFIG_FILE = "kimi-mcp.json"

_TOOLS = "kimi_cli.tools"
#: cao's tool vocabulary -> the tools of Kimi's default agent that provide it.
NATIVE_TOOLS: dict[str, tuple[str, ...]] = {
    "execute_bash": (f"{_TOOLS}.shell:Shell", f"{_TOOLS}.background:TaskList",
                     f"{_TOOLS}.background:TaskOutput", f"{_TOOLS}.background:TaskStop"),
    "fs_read": (f"{_TOOLS}.file:ReadFile", f"{_TOOLS}.file:ReadMediaFile", f"{_TOOLS}.file:Grep"),
    "fs_list": (f"{_TOOLS}.file:Glob",),
    "fs_write": (f"{_TOOLS}.file:WriteFile", f"{_TOOLS}.file:StrReplaceFile"),
    "web_fetch": (f"{_TOOLS}.web:SearchWeb", f"{_TOOLS}.web:FetchURL"),
}
# Subagents run with tool lists of their own: with any tool denied, the subagent launcher goes too.
_DELEGATION = f"{_TOOLS}.agent:Agent"
_BY_CLASS = {path.rsplit(":", 1)[1]: path for paths in NATIVE_TOOLS.values() for path in paths}
_PERMISSION_ARGS: dict[str, tuple[str, ...]] = {
    "default": (),
    "plan": ("--plan",),
    "afk": ("--afk",),
    "bypassPermissions": ("--yolo",),
}
_VERSION = re.compile(r"(\d+)\.(\d+)(?:\.(\d+))?")
_versions: dict[tuple[str, int], str | None] = {}
_versions_lock = threading.Lock()


def resolve_binary(env: Mapping[str, str]) -> str:
    """The ``kimi`` program: ``CAO_KIMI_CLI_BIN`` when set, else ``kimi`` on PATH."""
    return find_program(env, BINARY, BINARY_ENV,
                        missing=f"Kimi CLI ('{BINARY}') is not on PATH; install it with: {INSTALL_HINT}")


def _metadata_version(program: Path) -> str | None:
    """The kimi-cli version recorded next to ``program`` in its virtual environment (uv tool, pipx, a
    venv): reading a file is much cheaper than starting the program."""
    env_root = program.parent.parent
    for metadata in sorted(env_root.glob("lib/python3*/site-packages/kimi_cli-*.dist-info/METADATA")):
        try:
            with metadata.open(encoding="utf-8") as handle:
                for line in handle:
                    if line.startswith("Version:"):
                        return line.split(":", 1)[1].strip()
                    if not line.strip():
                        break
        except OSError:
            continue
    return None


def _reported_version(program: Path) -> str | None:
    try:
        done = subprocess.run([str(program), "--version"], capture_output=True, text=True, timeout=20,
                              check=False, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = re.search(r"version\s+(\S+)", done.stdout + done.stderr)
    return found.group(1) if found else None


def installed_version(binary: str) -> str | None:
    """The version of the kimi-cli behind ``binary`` (None when it cannot be told); remembered per
    program file until that file changes."""
    program = Path(binary).resolve()
    try:
        key = (str(program), program.stat().st_mtime_ns)
    except OSError:
        return None
    with _versions_lock:
        if key in _versions:
            return _versions[key]
    version = _metadata_version(program) or _reported_version(program)
    with _versions_lock:
        _versions[key] = version
    return version


def _check_version(binary: str) -> None:
    version = installed_version(binary)
    found = _VERSION.match(version or "")
    if found is None:
        return  # a wrapper script, a development build: let it start and show what it does
    number = tuple(int(part or 0) for part in found.groups())
    if number >= STUB_VERSION:
        raise ValueError(
            f"{binary} is kimi-cli {version}, a release that is no longer the CLI (it only prints a "
            f"deprecation notice); install the last working release with: {INSTALL_HINT}")


def _permission_args(ctx: LaunchContext) -> list[str]:
    mode = ctx.profile.permission_mode if ctx.profile else None
    if mode is None:
        return ["--yolo"]
    if mode not in _PERMISSION_ARGS:
        known = ", ".join(sorted(_PERMISSION_ARGS))
        raise ValueError(f"permissionMode {mode!r} is not supported by Kimi CLI (known: {known})")
    args = list(_PERMISSION_ARGS[mode])
    if ctx.yolo and "--yolo" not in args:
        args.append("--yolo")
    return args


def tool_policy(allowed: Sequence[str] | None, mcp_servers: Sequence[str]) -> tuple[list[str], list[str]]:
    """Kimi tools to exclude and the MCP servers to keep, for cao's allowed-tools list.

    None or ``*``: nothing excluded, every server kept. ``@builtin`` allows every native tool;
    ``execute_bash``, ``fs_read``, ``fs_list``, ``fs_write``, ``fs_*`` and ``web_fetch`` allow their
    Kimi tools and exclude the other categories' (and the subagent launcher ``Agent``, whose subagents
    have tool lists of their own); a Kimi tool's own name (``Shell``, ``ReadFile``...) allows that tool;
    ``@<server>`` keeps one MCP server (servers not named are left out).
    """
    if allowed is None or "*" in allowed:
        return [], list(mcp_servers)
    read = read_allowed_tools(allowed, NATIVE_TOOLS)
    categories, servers, builtin = read.categories, read.servers, read.builtin
    named: set[str] = set()
    for item in read.other:
        if item not in _BY_CLASS:
            known = ", ".join([*NATIVE_TOOLS, "fs_*", "@builtin", "@<mcp server>", *sorted(_BY_CLASS)])
            raise ValueError(f"allowed tool {item!r} means nothing to Kimi CLI (known: {known})")
        named.add(_BY_CLASS[item])
    excluded: list[str] = []
    if not builtin:
        for category, paths in NATIVE_TOOLS.items():
            if category not in categories:
                excluded += [path for path in paths if path not in named]
        if excluded:
            excluded.append(_DELEGATION)
    kept = [name for name in mcp_servers if name in servers]
    return excluded, kept


def agent_spec(system_prompt: str, exclude_tools: Sequence[str]) -> dict[str, Any] | None:
    """A Kimi agent spec extending the default agent: the profile body in its ``ROLE_ADDITIONAL`` slot
    (Kimi's own instructions stay), tools excluded; None when the default agent would do."""
    agent: dict[str, Any] = {"extend": "default"}
    if system_prompt.strip():
        agent["system_prompt_args"] = {"ROLE_ADDITIONAL": system_prompt.strip()}
    if exclude_tools:
        agent["exclude_tools"] = list(exclude_tools)
    return {"version": 1, "agent": agent} if len(agent) > 1 else None


# YAML reads JSON, except characters YAML does not allow raw in a stream or folds as line breaks.
_YAML_UNSAFE = re.compile("[\u007f-\u009f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff]")


def yaml_text(value: Any) -> str:
    """``value`` as JSON that YAML parsers read back unchanged (Kimi reads agent specs as YAML)."""
    text = json.dumps(value, ensure_ascii=False, indent=2)
    return _YAML_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text) + "\n"


def _mcp_entry(name: str, entry: Any) -> dict[str, Any]:
    check_server_name(name)
    if not isinstance(entry, Mapping):
        raise ValueError(f"MCP server {name!r}: expected a table of settings, got {type(entry).__name__}")
    server = plain(entry)
    kind = server.pop("type", None)
    if isinstance(server.get("command"), str) and server["command"]:
        if kind not in (None, "stdio"):
            raise ValueError(f"MCP server {name!r}: a 'command' server must be of type stdio, not {kind!r}")
        server.setdefault("transport", "stdio")
    elif isinstance(server.get("url"), str) and server["url"]:
        if kind is not None:
            server.setdefault("transport", kind)
    else:
        raise ValueError(f"MCP server {name!r}: needs a 'command' to run or a 'url' to connect to")
    if "args" in server and (isinstance(server["args"], str) or not isinstance(server["args"], list)):
        raise ValueError(f"MCP server {name!r}: 'args' must be a list of strings, got {server['args']!r}")
    if "env" in server:
        if not isinstance(server["env"], dict):
            raise ValueError(f"MCP server {name!r}: 'env' must be a table of strings")
        server["env"] = {str(k): str(v) for k, v in server["env"].items()}
    return server


def launch(ctx: LaunchContext) -> LaunchPlan:
    """The launch plan of one Kimi CLI terminal."""
    env = environment(ctx)
    binary = resolve_binary(env)
    _check_version(binary)
    runtime = Path(ctx.runtime_dir)
    profile = ctx.profile
    files: dict[str, str] = {}
    argv = [binary, *_permission_args(ctx)]

    user_share = user_share_dir(env)
    settings = profile_config(profile.extra, profile.name) if profile else {}
    config = build_config(read_user_config(user_share), settings)
    alias, model_env = select_model(config, ctx.model)
    if alias is not None:
        argv += ["--model", alias]
    files[f"{SHARE_DIR}/{CONFIG_FILE}"] = dumps(config)

    excluded, kept = tool_policy(ctx.allowed_tools, list(ctx.mcp_servers))
    spec = agent_spec(profile.system_prompt if profile else "", excluded)
    if spec is not None:
        files[AGENT_FILE] = yaml_text(spec)
        argv += ["--agent-file", str(runtime / AGENT_FILE)]
    servers = {name: _mcp_entry(name, ctx.mcp_servers[name]) for name in kept}
    if servers:
        files[MCP_CONFIG_FILE] = mcp_config(servers)
        argv += ["--mcp-config-file", str(runtime / MCP_CONFIG_FILE)]

    private = runtime / SHARE_DIR
    link_user_files(user_share, private, LINKED)
    plan_env = {
        "KIMI_SHARE_DIR": str(private),
        # No update check, no blocking update or migration gate at start-up, no self-replacement.
        "KIMI_CLI_NO_AUTO_UPDATE": "1",
        **model_env,
    }
    return LaunchPlan(argv=argv, env=plan_env, files=files)
