"""The ``antigravity_cli`` provider record: how cao launches Antigravity CLI and reads its screen and
prompts."""

from __future__ import annotations

from cao_hookspecs import ProviderCapabilities, ProviderSpec
from cao_launch_core.record import provider_spec

from . import launch, screen
from .dialogs import STARTUP_DIALOGS
from .launch import model_endpoint
from .prompts import read_prompt

__all__ = ["NAME", "TESTED_VERSIONS", "provider"]

NAME = "antigravity_cli"
#: Versions whose screens are under tests/screens/<version>/: 1.0.10 is transcribed from upstream CAO's
#: fixtures ("source": "documented"), not recorded (the CLI is not installable here).
TESTED_VERSIONS = ("1.0.10",)


def provider() -> ProviderSpec:
    """The provider record registered by this distribution's plugin."""
    return provider_spec(
        NAME, launch, screen,
        description="Google Antigravity CLI (agy)",
        # Antigravity CLI's documented command (Ctrl-D twice also quits).
        exit_command="/quit",
        # One Enter submits a bracketed paste (as upstream's provider sends it); a message typed while
        # a turn runs is not known to be queued.
        capabilities=ProviderCapabilities(accepts_input_while_busy=False, enter_count=1, submit_delay=0.0,
                                          uncertain_delivery="retype", takes_model=True),
        startup_dialogs=STARTUP_DIALOGS,
        tested_versions=TESTED_VERSIONS,
        model_endpoint=model_endpoint,
        # The prompt a waiting screen shows, with each option's keys: cao shows it, answers it by option
        # and lets policies answer it.
        read_prompt=read_prompt,
    )
