"""The command line and private data folder that start MiniMax Code for one terminal.

MiniMax Code keeps its settings, sign-in and plugins in one data folder (``~/.minimax``, or
``MINIMAX_DATA_DIR``). Each terminal gets its own under the runtime folder, so the user's is never
written:

- ``config.yaml``: the user's own, linked; with a model to use, a copy with ``defaultModel`` set (the
  interactive CLI has no model flag);
- the user's sign-in (``local-runtime.auth.json``, ``cli-auth/``), linked, so a refreshed token lands
  in the user's own file;
- the profile's MCP servers as a plugin of that folder (``plugins.py``): MiniMax Code reads MCP
  servers from plugins only.

The profile's body reaches the model as the first message, given on the command line (MiniMax Code
takes no system-prompt option): it asks the model to keep the instructions and only acknowledge them,
so the terminal is ready once that turn is answered.

MiniMax Code has no option that limits its tools, so a profile restricting them is refused (unless
the request says ``yolo``) instead of running with every tool.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import yaml

from cao_hookspecs import LaunchContext, LaunchPlan
from cao_hookspecs.programs import find_program
from cao_launch_core.environment import environment
from cao_launch_core.user_config import link_user_files, read_config_text

from .plugins import plugin_files

__all__ = ["BINARY", "BINARY_ENV", "DATA_DIR", "INSTALL_HINT", "launch", "model_endpoint", "resolve_binary"]

BINARY = "mcode"
#: Environment variable naming a program to run instead of ``mcode`` on PATH.
BINARY_ENV = "CAO_MCODE_BIN"
INSTALL_HINT = "npm install -g @minimax-ai/code, then sign in once with 'mcode login'"
#: The private data folder (``MINIMAX_DATA_DIR``), relative to the terminal's runtime folder.
DATA_DIR = "minimax-data"
CONFIG = "config.yaml"
#: Sign-in entries of the user's data folder, linked into the private one.
SIGN_IN = ("local-runtime.auth.json", "cli-auth")
ACKNOWLEDGE = ("These instructions hold for every later message of this session. No task has been given "
               "yet: reply with one word, Understood, and wait for the task.")


def resolve_binary(env: Mapping[str, str]) -> str:
    """The program to run: ``CAO_MCODE_BIN`` when set, else ``mcode`` on PATH."""
    return find_program(env, BINARY, BINARY_ENV,
                        missing=f"MiniMax Code ('{BINARY}') is not on PATH; install it with: {INSTALL_HINT}")


def user_data_dir(env: Mapping[str, str]) -> Path:
    """The user's own data folder: ``MINIMAX_DATA_DIR``, else ``~/.minimax``."""
    custom = env.get("MINIMAX_DATA_DIR", "").strip()
    return Path(custom).expanduser() if custom else Path(env.get("HOME") or Path.home()) / ".minimax"


def check_tools(ctx: LaunchContext) -> None:
    """Refuse a tool restriction MiniMax Code cannot enforce (it would run with every tool)."""
    allowed = ctx.allowed_tools
    if ctx.yolo or allowed is None or "*" in allowed:
        return
    raise ValueError(f"allowedTools {list(allowed)!r}: MiniMax Code has no option that limits its tools, so "
                     "the provider 'mcode' cannot keep the agent to them; allow '*' or use another provider")


def model_config(user_text: str | None, model: str) -> str:
    """The user's ``config.yaml`` (text, or None for none) with ``defaultModel`` set to ``model``."""
    if model.startswith("-") or not model.strip():
        raise ValueError(f"model {model!r} is not a model name")
    try:
        settings = yaml.safe_load(user_text or "") or {}
    except yaml.YAMLError as exc:
        raise ValueError(f"cannot read MiniMax Code's config.yaml to set the model: {exc}") from exc
    if not isinstance(settings, dict):
        raise ValueError("MiniMax Code's config.yaml holds no mapping, so the model cannot be set in it")
    settings["defaultModel"] = model.strip()
    return yaml.safe_dump(settings, sort_keys=False, allow_unicode=True)


def first_message(body: str) -> str:
    """The message the CLI starts with: the profile's body and the request to acknowledge it."""
    return f"{body.strip()}\n\n{ACKNOWLEDGE}" if body.strip() else ""


def launch(ctx: LaunchContext) -> LaunchPlan:
    """The launch plan of one MiniMax Code terminal."""
    check_tools(ctx)
    env = environment(ctx)
    argv = [resolve_binary(env)]
    user = user_data_dir(env)
    files = plugin_files(DATA_DIR, ctx.mcp_servers, path=env.get("PATH", ""))
    linked = list(SIGN_IN)
    if ctx.model:
        files[f"{DATA_DIR}/{CONFIG}"] = model_config(read_config_text(user / CONFIG, "MiniMax Code's"),
                                                    ctx.model)
    else:
        linked.append(CONFIG)
    link_user_files(user, Path(ctx.runtime_dir) / DATA_DIR, linked)
    message = first_message(ctx.profile.system_prompt if ctx.profile else "")
    if message:
        argv.append(message)
    return LaunchPlan(argv=argv, env={"MINIMAX_DATA_DIR": str(Path(ctx.runtime_dir) / DATA_DIR)},
                      files=files)


def model_endpoint(env: Mapping[str, str]) -> str | None:
    """None: MiniMax Code talks to the service its sign-in or ``config.yaml`` names, with no documented
    variable for its address."""
    return None
