"""The command line that starts Grok Build for one terminal, built from the agent profile.

- ``--no-alt-screen``: Grok draws inline, so the conversation stays in the pane cao reads;
- ``--model``: the model of the request, else of the profile;
- ``--rules``: the profile's body, appended to Grok's own system prompt (its tool instructions stay);
- approvals: an orchestrated agent has nobody to answer a tool prompt, so Grok runs with
  ``--always-approve`` unless the profile restricts its tools; then ``--permission-mode dontAsk``
  with ``--allow`` rules for what the profile allows (anything else is refused, never asked about).
  A ``permissionMode`` that would make Grok ask is refused: cao cannot read Grok's tool prompts yet;
- ``--no-subagents`` and ``GROK_SUBAGENTS/WORKFLOWS/GOAL=0``: delegation goes through cao's own
  tools, so its accounting and callbacks see every worker;
- a private ``GROK_HOME`` in the runtime folder (``home.py``): cao's MCP servers and hooks
  (``signals.py``, when the kernel offers its signal command) in its ``config.toml``, the user's
  sign-in linked, the user's own folder never written;
- variables that turn off what an orchestrated agent must not do at start or between turns: the
  self-updater, telemetry, feedback prompts, prompt suggestions typed into the input box, and the
  per-turn summary request (it is an extra model call with the agent's tools).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from cao_hookspecs import LaunchContext, LaunchPlan
from cao_hookspecs.allowed_tools import read_allowed_tools
from cao_hookspecs.programs import find_program
from cao_hookspecs.signals import signal_command
from cao_launch_core.environment import environment

from .home import CONFIG_FILE, HOME_DIR, build_config, link_sign_in, user_home
from .signals import hook_config

__all__ = ["BINARY", "BINARY_ENV", "INSTALL_HINT", "NATIVE_TOOLS", "QUIET_ENV", "launch", "model_endpoint",
           "permission_args", "resolve_binary"]

BINARY = "grok"
#: Environment variable naming a program to run instead of ``grok`` on PATH.
BINARY_ENV = "CAO_GROK_CLI_BIN"
INSTALL_HINT = "npm install -g @xai-official/grok"
#: Where Grok sends its model requests when nothing overrides it.
DEFAULT_ENDPOINT = "https://api.x.ai/v1"
#: The variables Grok reads its model API address from, the first set one winning.
ENDPOINT_ENV = ("GROK_MODELS_BASE_URL", "GROK_XAI_API_BASE_URL")

#: Set for every terminal: no update check or download, no telemetry or feedback, no suggestions typed
#: into the input box (cao would read them as a pending input), no side request per turn, no
#: delegation outside cao.
QUIET_ENV = {
    "GROK_AUTO_UPDATE": "0",
    "GROK_DISABLE_AUTOUPDATER": "1",
    "GROK_TELEMETRY_ENABLED": "0",
    "GROK_FEEDBACK_ENABLED": "0",
    "GROK_PROMPT_SUGGESTIONS": "0",
    "GROK_SUGGESTIONS": "0",
    "GROK_TURN_SUMMARY": "0",
    "GROK_SUBAGENTS": "0",
    "GROK_WORKFLOWS": "0",
    "GROK_GOAL": "0",
}

#: cao's tool categories -> the rule names of Grok's built-in tools.
NATIVE_TOOLS: dict[str, tuple[str, ...]] = {
    "execute_bash": ("Bash",),
    "fs_read": ("Read",),
    "fs_write": ("Edit", "Write"),
    "fs_list": ("Grep", "Glob"),
    "web_fetch": ("WebFetch", "WebSearch"),
}
_RULE_NAMES = {name for names in NATIVE_TOOLS.values() for name in names}
#: Modes where Grok decides alone; the others ask questions cao cannot read yet.
_UNATTENDED_MODES = {"bypassPermissions": ("--always-approve",), "dontAsk": ("--permission-mode", "dontAsk")}


def resolve_binary(env: Mapping[str, str]) -> str:
    """The program to run: ``CAO_GROK_CLI_BIN`` when set, else ``grok`` on PATH."""
    return find_program(env, BINARY, BINARY_ENV,
                        missing=f"Grok Build ('{BINARY}') is not on PATH; install it with: {INSTALL_HINT}")


def _tool_rules(allowed: Sequence[str], mcp_servers: Sequence[str]) -> list[str]:
    """``--allow`` rules for a restricted allowed-tools list (Grok's ``dontAsk`` refuses the rest)."""
    read = read_allowed_tools(allowed, NATIVE_TOOLS)
    rules: list[str] = []
    for item in read.other:
        if item not in _RULE_NAMES:
            known = ", ".join([*NATIVE_TOOLS, "fs_*", "@builtin", "@<mcp server>", *sorted(_RULE_NAMES)])
            raise ValueError(f"allowed tool {item!r} means nothing to Grok Build (known: {known})")
        rules.append(item)
    for category, names in NATIVE_TOOLS.items():
        if read.builtin or category in read.categories:
            rules += names
    for server in mcp_servers:
        if server in read.servers:
            rules.append(f"MCPTool({server}__*)")
    return list(dict.fromkeys(rules))


def permission_args(ctx: LaunchContext) -> list[str]:
    """The approval flags: always-approve by default, ``dontAsk`` with allow rules for a restricted
    profile, a refusal for a ``permissionMode`` that would make Grok ask."""
    allowed = ctx.allowed_tools
    mode = ctx.profile.permission_mode if ctx.profile else None
    if mode is not None and mode not in _UNATTENDED_MODES:
        raise ValueError(f"permissionMode {mode!r} makes Grok Build ask before tools run, and cao cannot "
                         f"answer its questions yet; use one of: {', '.join(sorted(_UNATTENDED_MODES))}")
    if allowed is None or "*" in allowed:
        return list(_UNATTENDED_MODES[mode or "bypassPermissions"])
    rules = _tool_rules(allowed, list(ctx.mcp_servers))
    args = list(_UNATTENDED_MODES["dontAsk"])
    for rule in rules:
        args += ["--allow", rule]
    if not rules:
        args += ["--deny", "*"]  # dontAsk still lets read-only tools run; an empty list means none
    return args


def launch(ctx: LaunchContext) -> LaunchPlan:
    """The launch plan of one Grok Build terminal."""
    env = environment(ctx)
    binary = resolve_binary(env)
    runtime = Path(ctx.runtime_dir)
    argv = [binary, "--no-alt-screen", "--no-subagents", *permission_args(ctx)]
    model = ctx.model or (ctx.profile.model if ctx.profile else None)
    if model:
        argv += ["--model", model]
    profile = ctx.profile
    if profile is not None and profile.system_prompt.strip():
        argv += ["--rules", profile.system_prompt.strip()]
    command = signal_command(ctx.env)
    hooks = hook_config(command) if command else None
    files = {f"{HOME_DIR}/{CONFIG_FILE}": build_config(ctx.mcp_servers, hooks)}
    private = runtime / HOME_DIR
    link_sign_in(user_home(env), private)
    return LaunchPlan(argv=argv, env={"GROK_HOME": str(private), **QUIET_ENV}, files=files)


def model_endpoint(env: Mapping[str, str]) -> str | None:
    """The model API Grok will call with ``env``: ``GROK_MODELS_BASE_URL`` (or
    ``GROK_XAI_API_BASE_URL``) when set, else xAI's. Reads variables only; never raises."""
    for name in ENDPOINT_ENV:
        url = (env.get(name) or "").strip()
        if url.startswith(("http://", "https://")):
            return url
    return DEFAULT_ENDPOINT
