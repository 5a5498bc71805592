"""The ``pi`` provider record: how cao launches pi and reads its turns."""

from __future__ import annotations

from cao_hookspecs import ProviderCapabilities, ProviderSpec
from cao_launch_core.record import provider_spec

from . import launch, screen
from .dialogs import STARTUP_DIALOGS
from .launch import model_endpoint
from .prompts import read_prompt
from .signals import native_answer, native_signal

__all__ = ["NAME", "TESTED_VERSIONS", "provider"]

NAME = "pi"
#: pi releases whose screens are recorded under tests/screens/ and pass the live tests.
TESTED_VERSIONS = ("0.73.1",)


def provider() -> ProviderSpec:
    """The provider record registered by this distribution's plugin."""
    return provider_spec(
        NAME, launch, screen,
        description="pi, Mario Zechner's minimal coding agent",
        exit_command="/quit",
        # A bracketed paste and one Enter submit a message; typed while a turn runs, it is queued as a
        # steering message, which cao never relies on. The bridge extension reports each turn's start
        # and end, the end with the answer (signals.py). It lists cao's tools before pi's session
        # starts, so they are in the model's first request: no settle time.
        capabilities=ProviderCapabilities(accepts_input_while_busy=False, native_status=True, enter_count=1,
                                          submit_delay=0.0, mcp_settle=0.0, uncertain_delivery="retype",
                                          takes_model=True),
        startup_dialogs=STARTUP_DIALOGS,
        tested_versions=TESTED_VERSIONS,
        model_endpoint=model_endpoint,
        native_signal=native_signal,
        native_answer=native_answer,
        read_prompt=read_prompt,
        pending_input=screen.pending_input,
    )
