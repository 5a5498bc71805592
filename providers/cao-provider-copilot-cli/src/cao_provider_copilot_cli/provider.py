"""The ``copilot_cli`` provider record: how cao launches GitHub Copilot CLI and reads its screen."""

from __future__ import annotations

from cao_hookspecs import ProviderCapabilities, ProviderSpec
from cao_launch_core.record import provider_spec
from cao_screen_core.reports import pending_reader

from . import launch, screen
from .dialogs import STARTUP_DIALOGS
from .launch import model_endpoint
from .prompts import read_prompt

__all__ = ["NAME", "TESTED_VERSIONS", "copilot_cli_provider"]

NAME = "copilot_cli"
#: Copilot CLI releases whose screens are recorded under tests/screens/ and pass the live tests.
TESTED_VERSIONS = ("1.0.102",)


def copilot_cli_provider() -> ProviderSpec:
    """The provider record registered by this distribution's plugin."""
    return provider_spec(
        NAME, launch, screen,
        description="GitHub Copilot CLI",
        # A bracketed paste and an Enter in one go submit; a message typed while a turn runs is queued
        # by the CLI and sent when the turn ends.
        capabilities=ProviderCapabilities(accepts_input_while_busy=True, enter_count=1, submit_delay=0.0,
                                          uncertain_delivery="retype", takes_model=True),
        startup_dialogs=STARTUP_DIALOGS,
        tested_versions=TESTED_VERSIONS,
        model_endpoint=model_endpoint,
        read_prompt=read_prompt,
        pending_input=pending_reader(screen.parse_screen),
    )
