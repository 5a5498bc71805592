"""The ``omp`` provider record: how cao launches Oh My Pi and reads its screen and prompts."""

from __future__ import annotations

from cao_hookspecs import ProviderCapabilities, ProviderSpec
from cao_launch_core.record import provider_spec

from . import launch, screen
from .dialogs import STARTUP_DIALOGS
from .launch import model_endpoint
from .prompts import read_prompt
from .signals import native_answer, native_signal

__all__ = ["NAME", "TESTED_VERSIONS", "provider"]

NAME = "omp"
#: Oh My Pi releases whose screens are recorded under tests/screens/ and pass the live tests. (18.2.9
#: and 18.3.4 do not install from the npm registry: sibling packages they pin exactly are missing.)
TESTED_VERSIONS = ("18.2.3",)


def provider() -> ProviderSpec:
    """The provider record registered by this distribution's plugin."""
    return provider_spec(
        NAME, launch, screen,
        description="Oh My Pi, a fork of the pi coding agent running on Bun",
        exit_command="/exit",
        # A bracketed paste and one Enter submit a message, the Enter a second after the paste: Oh My
        # Pi stalls on the first input of a session and drops an Enter that comes with it. Its
        # extension events report each turn's start and end, the end with the answer (signals.py). cao's MCP tools are in the model's list
        # from the first request once the server is connected (tools.xdev off, config.py).
        capabilities=ProviderCapabilities(accepts_input_while_busy=False, native_status=True,
                                          enter_count=1, submit_delay=1.0, mcp_settle=0.0,
                                          uncertain_delivery="retype", takes_model=True),
        startup_dialogs=STARTUP_DIALOGS,
        tested_versions=TESTED_VERSIONS,
        model_endpoint=model_endpoint,
        native_signal=native_signal,
        native_answer=native_answer,
        read_prompt=read_prompt,
        pending_input=screen.pending_input,
    )
