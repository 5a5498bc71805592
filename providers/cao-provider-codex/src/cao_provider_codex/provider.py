"""The ``codex`` provider record: how cao launches Codex and reads its screen."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from cao_hookspecs import ProviderCapabilities, ProviderSpec, StartupDialog
from cao_launch_core.record import provider_spec

from . import launch as launching
from . import screen
from .prompts import read_prompt
from .codex_home import read_toml
# Imported here too, so that code written against this module before launch.py keeps working.
from .launch import BINARY, BINARY_ENV, launch, resolve_binary
from .signals import native_signal

__all__ = ["BINARY", "BINARY_ENV", "NAME", "TESTED_VERSIONS", "codex_provider", "launch", "model_endpoint",
           "resolve_binary"]

NAME = "codex"
#: Versions whose screens are recorded under tests/screens/ and checked by the live tests.
TESTED_VERSIONS = ("0.169.0",)
DEFAULT_ENDPOINT = "https://api.openai.com/v1"

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
    return provider_spec(
        NAME, launching, screen,
        description="OpenAI Codex CLI (inline TUI, private CODEX_HOME per terminal)",
        # Its notify program reports each turn's end (signals.py).
        capabilities=ProviderCapabilities(handoff_banner=True, native_status=True, enter_count=1,
                                          submit_delay=0.0,
                                          uncertain_delivery="retype", takes_model=True),
        startup_dialogs=STARTUP_DIALOGS,
        tested_versions=TESTED_VERSIONS,
        model_endpoint=model_endpoint,
        native_signal=native_signal,
        read_prompt=read_prompt,
    )
