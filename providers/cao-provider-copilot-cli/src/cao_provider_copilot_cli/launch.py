"""The command line that starts Copilot CLI for one terminal, built from the agent profile.

Copilot keeps the user's sign-in (system keychain, or its config file), settings and conversation
history in its config folder (``COPILOT_HOME``, default ``~/.copilot``). cao leaves that folder as it
is and passes everything particular to one terminal on the command line, pointing at files in the
terminal's runtime folder, so the user's login keeps working and none of their files is written:

- permissions: with no tool restriction (or ``yolo``) ``--allow-all`` and ``COPILOT_ALLOW_ALL=true``,
  which also trusts the working folder without asking, like upstream CAO (an orchestrated agent has
  nobody to answer prompts); a profile's allowed tools become ``--allow-tool`` / ``--deny-tool`` /
  ``--excluded-tools`` rules (:func:`tool_args`);
- ``--stream=off``: a streamed answer is still being typed out on screen after the footer says the
  turn is over, so a finished-looking screen could hold half an answer;
- ``--model``;
- the profile body as a custom agent: ``<runtime>/copilot-agent/.github/agents/cao-<profile>.agent.md``,
  loaded with ``--add-dir <runtime>/copilot-agent --agent cao-<profile>`` (Copilot appends it to its
  own system prompt);
- the MCP servers (with cao's terminal id and server address in each entry's env) as
  ``--additional-mcp-config @<runtime>/mcp-config.json``;
- ``COPILOT_AUTO_UPDATE=false``: an orchestrated agent must not replace itself mid-run.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from cao_hookspecs import LaunchContext, LaunchPlan
from cao_hookspecs.allowed_tools import read_allowed_tools
from cao_hookspecs.programs import find_program
from cao_launch_core.environment import environment
from cao_launch_core.json_config import check_server_name, mcp_config, stdio_typed

__all__ = [
    "AGENT_DIR",
    "BINARY",
    "BINARY_ENV",
    "DEFAULT_ENDPOINT",
    "INSTALL_HINT",
    "MCP_CONFIG_FILE",
    "agent_name",
    "launch",
    "model_endpoint",
    "resolve_binary",
    "tool_args",
]

BINARY = "copilot"
#: Environment variable naming the ``copilot`` program to run instead of the one on PATH.
BINARY_ENV = "CAO_COPILOT_CLI_BIN"
INSTALL_HINT = "npm install -g @github/copilot"
#: The runtime subfolder given to ``--add-dir``: Copilot loads custom agents from its ``.github/agents``.
AGENT_DIR = "copilot-agent"
MCP_CONFIG_FILE = "mcp-config.json"
#: Where Copilot sends model requests for a github.com account (no custom provider configured).
DEFAULT_ENDPOINT = "https://api.githubcopilot.com"

#: cao's tool categories -> (permission kind to allow or deny, built-in tools hidden when denied).
#: Reads need no approval in Copilot, so denying them hides the tools from the model instead.
CATEGORIES: dict[str, tuple[str | None, tuple[str, ...]]] = {
    "execute_bash": ("shell", ()),
    "fs_write": ("write", ()),
    "web_fetch": ("url", ()),
    "fs_read": (None, ("view", "grep")),
    "fs_list": (None, ("glob",)),
}
# Copilot's own permission patterns: shell(git:*), write(src/), url(github.com), <server>(<tool>).
_NATIVE_RULE = re.compile(r"^(?P<kind>[A-Za-z0-9_.-]+)\((?P<argument>[^()\n]*)\)$")
_AGENT_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


def resolve_binary(env: Mapping[str, str]) -> str:
    """The ``copilot`` program: ``CAO_COPILOT_CLI_BIN`` when set, else ``copilot`` on PATH."""
    return find_program(env, BINARY, BINARY_ENV,
                        missing=f"GitHub Copilot CLI ('{BINARY}') is not on PATH; install it with: {INSTALL_HINT}")


def tool_args(allowed: Sequence[str] | None, mcp_servers: Sequence[str]) -> list[str]:
    """Copilot's permission options for cao's allowed-tools list.

    None or ``*``: ``--allow-all`` (every tool, path and URL without asking). Otherwise file paths stay
    open (``--allow-all-paths``: a path prompt would stall an agent nobody watches) and:

    - ``@builtin`` allows every built-in tool; ``execute_bash`` allows shell commands, ``fs_write`` file
      writes, ``web_fetch`` every URL, ``fs_read`` / ``fs_list`` keep the read and search tools;
    - ``@<server>`` allows one MCP server;
    - a Copilot permission pattern (``shell(git:*)``, ``write(docs/)``, ``url(github.com)``,
      ``<server>(<tool>)``) is allowed as it is, and its kind is then not denied as a whole;
    - every category and profile MCP server left out is denied (``--deny-tool``), or for reads hidden
      from the model (``--excluded-tools``); anything else Copilot would ask about waits for an answer.
    """
    if allowed is None or "*" in allowed:
        return ["--allow-all"]
    read = read_allowed_tools(allowed, CATEGORIES)
    categories, servers, builtin = set(read.categories), read.servers, read.builtin
    for item in read.other:
        if not _NATIVE_RULE.match(item):
            known = ", ".join(["@builtin", "@<mcp server>", "fs_*", *CATEGORIES])
            raise ValueError(f"allowed tool {item!r} is not one copilot_cli understands (known: {known}, "
                             "or a Copilot permission pattern such as 'shell(git:*)')")
    rules = list(read.other)
    if builtin:
        categories.update(CATEGORIES)
    partly = {match.group("kind") for match in map(_NATIVE_RULE.match, rules) if match}
    args = ["--allow-all-paths"]
    for category in sorted(CATEGORIES):
        kind, hidden = CATEGORIES[category]
        if category in categories:
            if kind == "url":
                args.append("--allow-all-urls")
            elif kind is not None:
                args.append(f"--allow-tool={kind}")
        else:
            if kind is not None and kind not in partly:
                args.append(f"--deny-tool={kind}")
            args += [f"--excluded-tools={tool}" for tool in hidden]
    args += [f"--allow-tool={rule}" for rule in rules]
    args += [f"--allow-tool={name}" for name in sorted(servers)]
    args += [f"--deny-tool={name}" for name in sorted(mcp_servers)
             if name not in servers and name not in partly]
    return args


def _mcp_config(servers: Mapping[str, Any]) -> str:
    entries: dict[str, Any] = {}
    for name, entry in servers.items():
        check_server_name(name)
        server = entries[name] = stdio_typed(entry)
        if not isinstance(server, dict):
            raise ValueError(f"MCP server {name!r}: the entry must be a mapping, got {type(server).__name__}")
        # Copilot offers only the tools an entry lists; cao restricts tools with permission rules instead.
        server.setdefault("tools", ["*"])
    return mcp_config(entries)


def agent_name(profile_name: str) -> str:
    """The custom agent a profile becomes (prefixed, so it cannot shadow one of the user's own)."""
    name = f"cao-{profile_name}"
    if not _AGENT_NAME.match(name):
        raise ValueError(f"profile name {profile_name!r} cannot name a Copilot agent (letters, digits, "
                         "'_', '-' and '.' only)")
    return name


def _yaml_string(text: str) -> str:
    """``text`` as a double-quoted YAML scalar: quotes, colons, '---' or line breaks cannot end it."""
    out = []
    for char in text:
        code = ord(char)
        if char in '"\\':
            out.append("\\" + char)
        elif code < 0x20 or 0x7F <= code <= 0x9F or code in (0x2028, 0x2029, 0xFEFF, 0xFFFE, 0xFFFF) \
                or 0xD800 <= code <= 0xDFFF:
            out.append(f"\\u{code:04x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def _agent_file(name: str, description: str, prompt: str) -> str:
    header = f"---\nname: {_yaml_string(name)}\ndescription: {_yaml_string(description or name)}\n---\n\n"
    return header + prompt.strip() + "\n"


def launch(ctx: LaunchContext) -> LaunchPlan:
    """The launch plan of one Copilot CLI terminal."""
    env = environment(ctx)
    runtime = Path(ctx.runtime_dir)
    profile = ctx.profile
    allowed = None if ctx.yolo else ctx.allowed_tools
    argv = [resolve_binary(env), *tool_args(allowed, list(ctx.mcp_servers)),
            # Streamed answers keep appearing, a few characters at a time, after the footer already says
            # the turn is over; unstreamed ones are whole when it does.
            "--stream=off"]
    files: dict[str, str] = {}
    plan_env = {"COPILOT_AUTO_UPDATE": "false"}
    # Exactly "true": every tool allowed and the working folder trusted, so no trust dialog. A restricted
    # agent must not inherit the user's own setting.
    plan_env["COPILOT_ALLOW_ALL"] = "true" if argv[1] == "--allow-all" else "false"
    if ctx.model:
        # One argument: a model name can never be read as an option.
        argv.append(f"--model={ctx.model}")
    if profile is not None and profile.system_prompt.strip():
        name = agent_name(profile.name)
        files[f"{AGENT_DIR}/.github/agents/{name}.agent.md"] = _agent_file(
            name, profile.description, profile.system_prompt)
        argv += ["--add-dir", str(runtime / AGENT_DIR), "--agent", name]
    if ctx.mcp_servers:
        files[MCP_CONFIG_FILE] = _mcp_config(ctx.mcp_servers)
        argv += ["--additional-mcp-config", "@" + str(runtime / MCP_CONFIG_FILE)]
    return LaunchPlan(argv=argv, env=plan_env, files=files)


def model_endpoint(env: Mapping[str, str]) -> str | None:
    """The model API Copilot CLI will call with ``env``.

    A custom model provider (``COPILOT_PROVIDER_BASE_URL``) is called directly; otherwise requests go
    to GitHub Copilot's API for a github.com account. For GitHub Enterprise hosts (``COPILOT_GH_HOST``
    or ``GH_HOST``) the address comes from the account's token at run time, so it is not known here.
    """
    custom = (env.get("COPILOT_PROVIDER_BASE_URL") or "").strip()
    if custom:
        return custom
    host = (env.get("COPILOT_GH_HOST") or env.get("GH_HOST") or "").strip().lower()
    host = re.sub(r"^https?://", "", host).rstrip("/")
    if host and host != "github.com":
        return None
    return DEFAULT_ENDPOINT
