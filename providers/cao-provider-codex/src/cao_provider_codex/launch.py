"""The command line that starts Codex for one terminal, with a private ``CODEX_HOME`` in its runtime
folder (see ``codex_home.py``).

- ``--no-alt-screen``: Codex runs inline, so the transcript stays in tmux's scrollback;
- ``--no-daemon``: one agent, one process tree (a shared background server would outlive the terminal);
- ``--dangerously-bypass-approvals-and-sandbox`` like upstream CAO (an approval prompt would block
  ``handoff`` and ``assign``), unless the profile names a Codex profile (``codexProfile``) and the
  terminal is neither yolo nor unrestricted: then ``--profile <name>``, whose approval settings apply;
- ``--model``;
- the user's sign-in (``auth.json``) linked into the private home, so a refreshed token lands in
  their own file.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

from cao_hookspecs import LaunchContext, LaunchPlan
from cao_hookspecs.programs import find_program
from cao_launch_core.environment import environment

from .codex_home import AUTH_FILE, HOME_DIR, build_config, read_toml, user_codex_home

__all__ = ["BINARY", "BINARY_ENV", "INSTALL_HINT", "launch", "resolve_binary"]

BINARY = "codex"
#: Environment variable naming the ``codex`` program to run instead of the one on PATH.
BINARY_ENV = "CAO_CODEX_BIN"
INSTALL_HINT = "npm install -g @openai/codex"

_PROFILE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")


def _config_header(ctx: LaunchContext) -> str:
    return (f"# Written by cao for terminal {ctx.terminal.id}: this Codex home is private to it.\n"
            "# Built from your own Codex config (never modified) plus the agent profile.\n\n")


def _codex_profile(ctx: LaunchContext, user_home: Path, config: dict) -> tuple[str | None, dict[str, str]]:
    """The ``--profile`` to pass (the profile's ``codexProfile``) and the files it needs copied in."""
    name = ctx.profile.codex_profile if ctx.profile is not None else None
    tools = ctx.allowed_tools or ()
    if not name or ctx.yolo or "*" in tools:
        return None, {}
    if not _PROFILE_NAME.fullmatch(name):
        raise ValueError(f"codexProfile {name!r} is not a valid Codex profile name")
    layered = user_home / f"{name}.config.toml"
    if layered.is_file():
        try:
            return name, {f"{HOME_DIR}/{name}.config.toml": layered.read_text(encoding="utf-8")}
        except OSError as exc:
            raise ValueError(f"cannot read the Codex profile {layered}: {exc}") from exc
    profiles = config.get("profiles")
    if isinstance(profiles, dict) and name in profiles:
        # Codex 0.169 refuses --profile while config.toml holds a [profiles.<name>] table: the table
        # (from the user's config or the agent profile's codexConfig) moves into the layered file it reads.
        from cao_toml_core import dumps

        table = profiles.pop(name)
        if not profiles:
            del config["profiles"]
        if not isinstance(table, dict):
            raise ValueError(f"Codex profile {name!r} must be a table of settings")
        return name, {f"{HOME_DIR}/{name}.config.toml": dumps(table)}
    raise ValueError(f"Codex profile {name!r} not found: no {layered} "
                     f"and no [profiles.{name}] in its config.toml")


def _link_sign_in(user_home: Path, home: Path) -> None:
    # The user's sign-in is linked, not copied: a refreshed token must reach their own file, or the
    # stale copy could invalidate it. The kernel writes the other files; links it cannot express.
    source = user_home / AUTH_FILE
    target = home / AUTH_FILE
    if not source.is_file() or target.exists() or target.is_symlink():
        return
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.symlink(source, target)


def resolve_binary(env: Mapping[str, str]) -> str:
    """The ``codex`` program: ``CAO_CODEX_BIN`` when set, else ``codex`` on PATH."""
    return find_program(env, BINARY, BINARY_ENV,
                        missing=f"Codex ('{BINARY}') is not on PATH; install it with: {INSTALL_HINT}")


def launch(ctx: LaunchContext) -> LaunchPlan:
    """Launch plan for one terminal: Codex inline, with a private ``CODEX_HOME`` in the runtime folder."""
    program = resolve_binary(environment(ctx))
    user_home = user_codex_home()
    user_config = read_toml(user_home / "config.toml")
    config = build_config(ctx, user_config)
    profile, files = _codex_profile(ctx, user_home, config)
    from cao_toml_core import dumps

    files[f"{HOME_DIR}/config.toml"] = _config_header(ctx) + dumps(config)
    # --no-daemon: one agent, one process tree; a shared background server would outlive the terminal.
    argv = [program, "--no-alt-screen", "--no-daemon"]
    if profile is not None:
        argv += ["--profile", profile]
    else:
        # Approval prompts would block handoff and assign: cao runs Codex the way upstream does.
        argv.append("--dangerously-bypass-approvals-and-sandbox")
    if ctx.model:
        argv += ["--model", ctx.model]
    home = Path(ctx.runtime_dir) / HOME_DIR
    _link_sign_in(user_home, home)
    return LaunchPlan(argv=argv, env={"CODEX_HOME": str(home)}, files=files)
