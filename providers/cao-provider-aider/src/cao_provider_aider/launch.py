"""The command line that starts Aider for one terminal, built from the agent profile.

Aider is configured by flags (it also reads ``.aider.conf.yml`` and ``.env`` files of its own, which cao
never writes). Where each part comes from:

- ``--model <model>``: the model of the request, else of the profile, in litellm's naming
  (``openai/<id>``, ``anthropic/<id>``, an alias such as ``sonnet``). With a model, a
  ``--model-metadata-file`` in the runtime folder describes it, so Aider does not download litellm's
  price list at start to learn its context window (litellm's own table still wins for a model it knows);
- ``--read <runtime>/system-prompt.md``: the profile's body. Aider has no system-prompt flag; a read-only
  file is in every request the model gets and cannot be edited;
- ``--yes-always`` when the request asks for yolo: Aider's questions (run this shell command? add this
  file?) are answered yes. With it every wait for input is a turn's end, so only then Aider runs cao's
  signal command through ``--notifications-command`` (without yolo the same command would also run
  before a question, which is not a turn's end);
- ``allowedTools``: ``execute_bash`` missing turns off shell command suggestions
  (``--no-suggest-shell-commands``), ``fs_write`` missing makes Aider answer without editing
  (``--chat-mode ask``); anything else Aider cannot honour is refused by name;
- MCP servers: Aider has no MCP client. cao's own entry is left out (the provider says so in its
  capabilities, so cao neither waits for it nor expects the worker to call cao); any other entry is
  refused, since the profile would promise the model tools it never gets.

Always, so an orchestrated Aider neither asks at start nor reaches the network by itself:
``--no-check-update``, ``--no-show-release-notes``, ``--no-analytics`` (this session only: nothing is
written to the user's settings), ``--no-gitignore`` (its start-up question), ``--no-auto-commits`` and
``--no-dirty-commits`` (cao's worker does not commit unless told to), ``--no-detect-urls`` (a URL in a
task would otherwise be fetched), ``--no-show-model-warnings``, and its history files in the runtime
folder instead of ``.aider.*`` files in the user's project. Outside a git repository ``--no-git``: Aider
would otherwise offer to create one there.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from pathlib import Path

from cao_hookspecs import LaunchContext, LaunchPlan
from cao_hookspecs.allowed_tools import read_allowed_tools
from cao_hookspecs.mcp_entry import is_cao_mcp_entry
from cao_hookspecs.programs import find_program
from cao_hookspecs.signals import signal_command
from cao_launch_core.environment import environment

__all__ = ["BINARY", "BINARY_ENV", "INSTALL_HINT", "SIGNAL_EVENT", "launch", "model_endpoint",
           "resolve_binary"]

BINARY = "aider"
#: Environment variable naming a program to run instead of ``aider`` on PATH.
BINARY_ENV = "CAO_AIDER_BIN"
INSTALL_HINT = "uv tool install --python 3.12 aider-chat (or: pipx install aider-chat)"
SYSTEM_PROMPT_FILE = "system-prompt.md"
METADATA_FILE = "model-metadata.json"
#: The event name cao's signal command sends when Aider waits for input after a turn.
SIGNAL_EVENT = "turn_end"
# Aider's fixed settings: no question at start, no network call of its own, no commit cao did not ask for.
QUIET = ("--no-check-update", "--no-show-release-notes", "--no-analytics", "--no-gitignore",
         "--no-auto-commits", "--no-dirty-commits", "--no-detect-urls", "--no-show-model-warnings")
# What the model metadata says about a model litellm may not know (the scripted one, a local server).
CONTEXT_TOKENS = 128_000
OUTPUT_TOKENS = 8_192
# cao's tool categories Aider can switch off; everything else in allowedTools is refused by name.
CATEGORIES = ("execute_bash", "fs_read", "fs_write", "fs_list")
# litellm reads either variable for an OpenAI-compatible server's address.
BASE_URL_ENVS = ("OPENAI_API_BASE", "OPENAI_BASE_URL")
OPENAI_URL = "https://api.openai.com/v1"


def resolve_binary(env: Mapping[str, str]) -> str:
    """The program to run: ``CAO_AIDER_BIN`` when set, else ``aider`` on PATH."""
    return find_program(env, BINARY, BINARY_ENV, missing=f"'{BINARY}' is not on PATH: {INSTALL_HINT}")


def launch(ctx: LaunchContext) -> LaunchPlan:
    """The launch plan of one Aider terminal."""
    env = environment(ctx)
    runtime = Path(ctx.runtime_dir)
    _check_mcp_servers(ctx)
    argv = [resolve_binary(env), *QUIET]
    files: dict[str, str] = {}
    if not _in_git_repo(Path(ctx.working_directory)):
        argv.append("--no-git")
    for flag, name in (("--input-history-file", "input.history"), ("--chat-history-file", "chat.history.md"),
                       ("--llm-history-file", "llm.history")):
        argv += [flag, str(runtime / name)]
    if ctx.model:
        argv += ["--model", ctx.model]
        files[METADATA_FILE] = model_metadata(ctx.model)
        argv += ["--model-metadata-file", str(runtime / METADATA_FILE)]
    profile = ctx.profile
    if profile is not None and profile.system_prompt.strip():
        files[SYSTEM_PROMPT_FILE] = profile.system_prompt.strip() + "\n"
        argv += ["--read", str(runtime / SYSTEM_PROMPT_FILE)]
    argv += _tool_flags(ctx.allowed_tools)
    if ctx.yolo:
        argv.append("--yes-always")
        command = signal_command(ctx.env)
        if command is not None:
            argv += ["--notifications", "--notifications-command", shlex.join([*command, SIGNAL_EVENT])]
    return LaunchPlan(argv=argv, env={}, files=files)


def _check_mcp_servers(ctx: LaunchContext) -> None:
    # cao's entry is known by the kernel's records, or by its command where no MCP plugin is loaded.
    others = sorted(name for name, entry in ctx.mcp_servers.items()
                    if name not in ctx.cao_servers and not is_cao_mcp_entry(dict(entry or {})))
    if others:
        raise ValueError(f"mcpServers: Aider has no MCP client, so the profile's servers {others} cannot be "
                         "given to it; remove them (cao's own server entry is accepted and left out)")


def _in_git_repo(folder: Path) -> bool:
    try:
        return any((parent / ".git").exists() for parent in (folder.resolve(), *folder.resolve().parents))
    except OSError:
        return False


def _tool_flags(allowed: tuple[str, ...] | None) -> list[str]:
    if allowed is None or "*" in allowed:
        return []
    tools = read_allowed_tools(allowed, CATEGORIES)
    refused = [*tools.other, *(f"@{server}" for server in sorted(tools.servers))]
    if refused:
        raise ValueError(f"allowedTools: Aider cannot be limited to {refused}: it knows only its shell "
                         f"commands (execute_bash) and its file edits (fs_read, fs_write, fs_list, fs_*)")
    if tools.builtin:
        return []
    flags = []
    if "execute_bash" not in tools.categories:
        flags.append("--no-suggest-shell-commands")
    if "fs_write" not in tools.categories:
        flags += ["--chat-mode", "ask"]
    return flags


def model_metadata(model: str) -> str:
    """litellm's description of ``model`` for ``--model-metadata-file``: Aider reads it before it would
    download litellm's whole price list to find the model's context window."""
    provider = model.split("/", 1)[0] if "/" in model else "openai"
    entry = {"max_input_tokens": CONTEXT_TOKENS, "max_tokens": OUTPUT_TOKENS,
             "max_output_tokens": OUTPUT_TOKENS,
             "input_cost_per_token": 0.0, "output_cost_per_token": 0.0, "litellm_provider": provider,
             "mode": "chat"}
    return json.dumps({model: entry}, indent=2) + "\n"


def model_endpoint(env: Mapping[str, str]) -> str | None:
    """The OpenAI-compatible API Aider will call with ``env``: ``OPENAI_API_BASE`` or ``OPENAI_BASE_URL``,
    else OpenAI's own when an OpenAI key is set; None when it cannot be told (another provider's model).
    Reads variables only; never raises."""
    for name in BASE_URL_ENVS:
        url = (env.get(name) or "").strip()
        if url:
            return url
    return OPENAI_URL if (env.get("OPENAI_API_KEY") or "").strip() else None
