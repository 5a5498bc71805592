"""The ``opencode_cli`` provider record: how cao launches OpenCode and reads its screen."""

from __future__ import annotations

from cao_hookspecs import ProviderCapabilities, ProviderSpec
from cao_launch_core.record import provider_spec

from . import launch, screen
from .prompts import read_prompt
from .config import model_endpoint
from .screen import STARTUP_DIALOGS

__all__ = ["NAME", "PACKAGE", "TESTED_VERSIONS", "opencode_provider"]

NAME = "opencode_cli"
#: The npm package the ``opencode`` program comes from.
PACKAGE = "opencode-ai"
#: OpenCode releases whose screens are recorded under tests/screens/ and pass the live tests.
TESTED_VERSIONS = ("1.18.33",)


def opencode_provider() -> ProviderSpec:
    """The provider record registered by this distribution's plugin."""
    return provider_spec(
        NAME, launch, screen,
        description="OpenCode, the open-source agent CLI (inline interface, a config file per terminal)",
        # A bracketed paste and one Enter submit; a message sent while a turn runs is queued by OpenCode
        # and answered after it.
        capabilities=ProviderCapabilities(accepts_input_while_busy=True, enter_count=1, submit_delay=0.0,
                                          uncertain_delivery="retype", takes_model=True),
        startup_dialogs=STARTUP_DIALOGS,
        read_prompt=read_prompt,
        tested_versions=TESTED_VERSIONS,
        model_endpoint=model_endpoint,
    )
