"""The ``kiro_cli`` provider record: how cao launches ``kiro-cli chat`` and reads its screen.

``kiro_cli`` is cao's default provider, as it is upstream's: the kernel picks it when neither the
request, the profile nor ``CAO_DEFAULT_PROVIDER`` names another.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from cao_hookspecs import ProviderCapabilities, ProviderSpec
from cao_launch_core.record import provider_spec

from . import launch, screen
from .prompts import read_prompt
from .dialogs import STARTUP_DIALOGS

__all__ = ["AGENT_DIRS", "NAME", "TESTED_VERSIONS", "kiro_cli_provider", "model_endpoint", "parse_version"]

NAME = "kiro_cli"
#: Releases whose screens are under tests/screens/: 1.20.0 (line-based chat) and 2.25.0 (full-screen).
#: They are transcribed from public documentation, not recorded: the CLI cannot be installed from the
#: registries this project may use.
TESTED_VERSIONS = ("1.20.0", "2.25.0")
#: Where upstream CAO looks for Kiro-side agent profiles by name (``<name>.md``; cao's own generated
#: ``cao-*.json`` files there are not profiles).
AGENT_DIRS = ("~/.kiro/agents",)
_VERSION = re.compile(r"^\s*kiro-cli\s+v?(?P<version>\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]+)?)\s*$", re.MULTILINE)


def parse_version(output: str) -> str | None:
    """The version in what ``kiro-cli --version`` printed (``kiro-cli 1.20.0``), or None."""
    match = _VERSION.search(output or "")
    return match.group("version") if match else None


def model_endpoint(env: Mapping[str, str]) -> str | None:
    """None: Kiro talks to the Kiro service of the signed-in account, with no documented setting that
    names a model API base URL cao could check."""
    return None


def kiro_cli_provider() -> ProviderSpec:
    """The provider record registered by this distribution's plugin."""
    return provider_spec(
        NAME, launch, screen,
        # Kiro's documentation names /quit (aliases /exit, /q); its trust banner says "/quit to exit".
        exit_command="/quit",
        description="Kiro CLI (kiro-cli chat), line-based or full-screen; cao's default provider",
        # Kiro submits a bracketed paste on one Enter (upstream's kiro provider sends one); the pause
        # lets the CLI take the whole paste first.
        capabilities=ProviderCapabilities(enter_count=1, submit_delay=0.3,
                                          uncertain_delivery="retype", takes_model=True),
        startup_dialogs=STARTUP_DIALOGS,
        read_prompt=read_prompt,
        tested_versions=TESTED_VERSIONS,
        agent_dirs=AGENT_DIRS,
        model_endpoint=model_endpoint,
    )
