"""The ``qwen_code`` provider record: how cao launches Qwen Code and reads its screen and prompts."""

from __future__ import annotations

from cao_hookspecs import ProviderCapabilities, ProviderSpec
from cao_launch_core.record import provider_spec
from cao_screen_core.reports import pending_reader

from . import launch, screen
from .dialogs import STARTUP_DIALOGS
from .launch import model_endpoint
from .prompts import read_prompt
from .signals import native_answer, native_signal

__all__ = ["NAME", "TESTED_VERSIONS", "provider"]

NAME = "qwen_code"
#: Qwen Code releases whose screens are recorded under tests/screens/ and pass the live tests.
TESTED_VERSIONS = ("0.24.4",)


def provider() -> ProviderSpec:
    """The provider record registered by this distribution's plugin."""
    return provider_spec(
        NAME, launch, screen,
        description="Qwen Code, Alibaba's agent CLI",
        exit_command="/quit",
        # A bracketed paste and one Enter submit a message. Typed while a turn runs, a message steers
        # that turn ("Enter to steer"). Its hooks report each turn's start and end, the end with the
        # answer (signals.py). cao's MCP tools are in the model's list from the first request once
        # the server is connected (alwaysLoadTools, launch.py).
        capabilities=ProviderCapabilities(accepts_input_while_busy=True, native_status=True, enter_count=1,
                                          submit_delay=0.0, mcp_settle=0.0, uncertain_delivery="retype",
                                          takes_model=True),
        startup_dialogs=STARTUP_DIALOGS,
        tested_versions=TESTED_VERSIONS,
        model_endpoint=model_endpoint,
        native_signal=native_signal,
        native_answer=native_answer,
        read_prompt=read_prompt,
        pending_input=pending_reader(screen.parse_screen),
    )
