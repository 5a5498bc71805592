"""The ``mcode`` provider record: how cao launches MiniMax Code and reads its screen and prompts."""

from __future__ import annotations

from cao_hookspecs import ProviderCapabilities, ProviderSpec
from cao_launch_core.record import provider_spec

from . import launch, screen
from .dialogs import STARTUP_DIALOGS
from .launch import model_endpoint
from .prompts import read_prompt

__all__ = ["NAME", "TESTED_VERSIONS", "provider"]

NAME = "mcode"
#: Versions whose screens are under tests/screens/<version>/: 0.1.2 is transcribed from documentation
#: and upstream CAO's fixtures ("source": "documented"), not recorded (the CLI is not installable here).
TESTED_VERSIONS = ("0.1.2",)


def provider() -> ProviderSpec:
    """The provider record registered by this distribution's plugin."""
    return provider_spec(
        NAME, launch, screen,
        description="MiniMax Code",
        exit_command="/exit",
        # One Enter submits a bracketed paste; a message sent while a turn runs is queued ("Enter
        # queue" on the activity row), so delivery need not wait for the turn to end.
        capabilities=ProviderCapabilities(accepts_input_while_busy=True, enter_count=1, submit_delay=0.0,
                                          uncertain_delivery="retype", takes_model=True),
        startup_dialogs=STARTUP_DIALOGS,
        tested_versions=TESTED_VERSIONS,
        model_endpoint=model_endpoint,
        read_prompt=read_prompt,
    )
