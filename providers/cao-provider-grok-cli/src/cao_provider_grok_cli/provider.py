"""The ``grok_cli`` provider record: how cao launches xAI's Grok Build and reads its screen."""

from __future__ import annotations

from cao_hookspecs import ProviderCapabilities, ProviderSpec
from cao_launch_core.record import provider_spec

from . import launch, screen
from .dialogs import STARTUP_DIALOGS
from .launch import model_endpoint
from .prompts import read_prompt
from .signals import native_answer, native_signal

__all__ = ["NAME", "TESTED_VERSIONS", "provider"]

NAME = "grok_cli"
#: @xai-official/grok releases whose screens are recorded under tests/screens/ and pass the live tests.
TESTED_VERSIONS = ("1.0.41",)


def provider() -> ProviderSpec:
    """The provider record registered by this distribution's plugin."""
    return provider_spec(
        NAME, launch, screen,
        description="Grok Build, xAI's agent CLI (@xai-official/grok on npm)",
        # /quit ends the session (Ctrl+Q too, but a typed command goes through cao's input path).
        exit_command="/quit",
        # One Enter after a bracketed paste submits. Text typed while Grok works would sit in its input
        # box until the turn ends, so cao waits for the turn instead.
        # Grok's hooks (signals.py) report turns natively; a Stop carries the answer.
        capabilities=ProviderCapabilities(accepts_input_while_busy=False, enter_count=1, submit_delay=0.3,
                                          native_status=True, uncertain_delivery="retype", takes_model=True),
        native_signal=native_signal,
        native_answer=native_answer,
        startup_dialogs=STARTUP_DIALOGS,
        tested_versions=TESTED_VERSIONS,
        model_endpoint=model_endpoint,
        pending_input=screen.pending_input,
        read_prompt=read_prompt,
    )
