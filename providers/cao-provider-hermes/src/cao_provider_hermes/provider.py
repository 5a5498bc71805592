"""The ``hermes`` provider record: how cao launches Hermes Agent (Nous Research) and reads its screen,
its prompts and its hooks."""

from __future__ import annotations

from cao_hookspecs import ProviderCapabilities, ProviderSpec
from cao_launch_core.record import provider_spec

from . import launch, screen
from .dialogs import STARTUP_DIALOGS
from .launch import model_endpoint
from .prompts import read_prompt
from .signals import native_answer, native_signal

__all__ = ["NAME", "TESTED_VERSIONS", "provider"]

NAME = "hermes"
#: hermes-agent releases whose screens are recorded under tests/screens/<version>/ and pass the live tests.
TESTED_VERSIONS = ("0.19.0",)


def provider() -> ProviderSpec:
    """The provider record registered by this distribution's plugin."""
    return provider_spec(
        NAME, launch, screen,
        description="Hermes Agent, Nous Research's agent CLI (hermes-agent on PyPI)",
        exit_command="/exit",
        # One Enter after a bracketed paste submits (a multi-line paste is one message). cao types only
        # when Hermes is ready (the private config queues anything typed during a turn, see home.py). Its
        # hooks report a turn's start and its end with the answer. Hermes connects its MCP servers before
        # its prompt shows: nothing to settle.
        capabilities=ProviderCapabilities(accepts_input_while_busy=False, enter_count=1, submit_delay=0.0,
                                          native_status=True, uncertain_delivery="retype", takes_model=True),
        startup_dialogs=STARTUP_DIALOGS,
        tested_versions=TESTED_VERSIONS,
        model_endpoint=model_endpoint,
        native_signal=native_signal,
        native_answer=native_answer,
        read_prompt=read_prompt,
    )
