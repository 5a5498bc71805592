"""The ``q_cli`` provider record: how cao launches ``q chat`` and reads its screen."""

from __future__ import annotations

import re
from collections.abc import Mapping

from cao_hookspecs import ProviderCapabilities, ProviderSpec
from cao_launch_core.record import provider_spec

from . import launch, screen
from .prompts import read_prompt

__all__ = ["NAME", "TESTED_VERSIONS", "model_endpoint", "parse_version", "q_cli_provider"]

NAME = "q_cli"
#: Releases whose screens are under tests/screens/. They are transcribed from public documentation,
#: not recorded: the CLI cannot be installed from the registries this project may use.
TESTED_VERSIONS = ("1.17.0",)
_VERSION = re.compile(r"^\s*q\s+v?(?P<version>\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]+)?)\s*$", re.MULTILINE)


def parse_version(output: str) -> str | None:
    """The version in what ``q --version`` printed (``q 1.17.0``), or None when it is not there."""
    match = _VERSION.search(output or "")
    return match.group("version") if match else None


def model_endpoint(env: Mapping[str, str]) -> str | None:
    """None: q talks to the Amazon Q service of the signed-in account, with no documented setting
    that names a model API base URL cao could check."""
    return None


def q_cli_provider() -> ProviderSpec:
    """The provider record registered by this distribution's plugin."""
    return provider_spec(
        NAME, launch, screen,
        # q's documentation names /quit (aliases /exit, /q).
        exit_command="/quit",
        description="Amazon Q Developer CLI (q chat), line-based chat; succeeded by Kiro CLI",
        # One Enter submits a bracketed paste; the short pause lets q finish taking the paste first.
        capabilities=ProviderCapabilities(enter_count=1, submit_delay=0.3,
                                          uncertain_delivery="retype", takes_model=True),
        # q draws no start-up dialog cao must answer (sign-in problems stop it; see chat_screen.FATAL).
        startup_dialogs=(),
        read_prompt=read_prompt,
        tested_versions=TESTED_VERSIONS,
        model_endpoint=model_endpoint,
    )
