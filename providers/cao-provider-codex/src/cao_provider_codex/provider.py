"""The ``codex`` provider record: how cao launches Codex and reads its screen."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

from cao_hookspecs import LaunchContext, LaunchPlan, ProviderCapabilities, ProviderSpec, StartupDialog
from cao_hookspecs.programs import find_program
from cao_launch_core.environment import environment

from .codex_home import AUTH_FILE, HOME_DIR, build_config, read_toml, user_codex_home
from .screen import detect_status, extract_last_message
from .signals import native_signal

__all__ = ["BINARY", "BINARY_ENV", "NAME", "TESTED_VERSIONS", "codex_provider", "launch", "model_endpoint",
           "resolve_binary"]

NAME = "codex"
BINARY = "codex"
#: Environment variable naming the ``codex`` program to run instead of the one on PATH.
BINARY_ENV = "CAO_CODEX_BIN"
#: Versions whose screens are recorded under tests/screens/ and checked by the live tests.
TESTED_VERSIONS = ("0.169.0",)
INSTALL_HINT = "npm install -g @openai/codex"
DEFAULT_ENDPOINT = "https://api.openai.com/v1"

_PROFILE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")

STARTUP_DIALOGS = (
    # Normally never shown (the private config trusts the working folder under both of its names); should
    # Codex ask about another folder, the first option is "Trust and continue".
    StartupDialog(name="trust-folder", keys=("Enter",),
                  pattern=r"Trust this folder\?|Do you trust the contents of this directory"),
    # The update check is off in the private config; should the prompt show anyway, choose "Skip" (the
    # second option; the cursor starts on "Update now"). 0.169 titles it "Update available · <old> → <new>".
    StartupDialog(name="update-prompt", pattern=r"Update available(?:!| \u00b7 )[\s\S]*\n\s*2\. Skip\b",
                  keys=("Down", "Enter")),
)


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
        return name, {}
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


def model_endpoint(env: Mapping[str, str]) -> str | None:
    """The base URL of the model API Codex will call with ``env``: the ``base_url`` of the model provider
    its config selects (``model_provider``, or the selected ``profile``'s), else ``OPENAI_BASE_URL``,
    else OpenAI's API; None for a built-in provider other than OpenAI (its address is Codex's own)."""
    configured = env.get("CODEX_HOME")
    home = Path(configured).expanduser() if configured else Path(env.get("HOME") or Path.home()) / ".codex"
    try:
        config = read_toml(home / "config.toml")
    except ValueError:
        config = {}
    provider = config.get("model_provider")
    profiles = config.get("profiles")
    selected = profiles.get(config.get("profile")) if isinstance(profiles, dict) else None
    if isinstance(selected, dict) and isinstance(selected.get("model_provider"), str):
        provider = selected["model_provider"]
    provider = provider if isinstance(provider, str) and provider else "openai"
    tables = config.get("model_providers")
    table = tables.get(provider) if isinstance(tables, dict) else None
    if isinstance(table, dict) and isinstance(table.get("base_url"), str) and table["base_url"].strip():
        return table["base_url"].strip()
    if provider == "openai":
        return env.get("OPENAI_BASE_URL") or DEFAULT_ENDPOINT
    return None


def codex_provider() -> ProviderSpec:
    """The provider record registered by this distribution's plugin."""
    return ProviderSpec(
        name=NAME,
        binary=BINARY,
        binary_env=BINARY_ENV,
        launch=launch,
        detect_status=detect_status,
        extract_last_message=extract_last_message,
        exit_command="/exit",
        description="OpenAI Codex CLI (inline TUI, private CODEX_HOME per terminal)",
        # Its notify program reports each turn's end (signals.py).
        capabilities=ProviderCapabilities(handoff_banner=True, native_status=True, enter_count=1,
                                          submit_delay=0.0),
        startup_dialogs=STARTUP_DIALOGS,
        install_hint=INSTALL_HINT,
        version_args=("--version",),
        tested_versions=TESTED_VERSIONS,
        model_endpoint=model_endpoint,
        native_signal=native_signal,
    )
