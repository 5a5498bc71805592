"""The ``aider`` provider record: how cao launches Aider and reads its screen, its questions and its
turn-end notification. Aider has no MCP client: it can be handed a task and answer, never call cao."""

from __future__ import annotations

from cao_hookspecs import ProviderCapabilities, ProviderSpec
from cao_launch_core.record import provider_spec

from . import launch, screen
from .dialogs import STARTUP_DIALOGS
from .launch import model_endpoint
from .prompts import read_prompt
from .signals import native_signal

__all__ = ["NAME", "TESTED_VERSIONS", "provider"]

NAME = "aider"
#: aider-chat releases whose screens are recorded under tests/screens/<version>/ and pass the live tests.
TESTED_VERSIONS = ("0.86.2",)


def provider() -> ProviderSpec:
    """The provider record registered by this distribution's plugin."""
    return provider_spec(
        NAME, launch, screen,
        description="Aider, the AI pair programmer (aider-chat on PyPI); a worker only, it has no MCP client",
        exit_command="/exit",
        # One Enter after a bracketed paste submits it. No MCP client: cao does not wait for one, and
        # relays an assigned task's answer itself (the worker cannot call send_message). With yolo its
        # notification command reports each turn's end. It passes a chosen model as --model.
        capabilities=ProviderCapabilities(accepts_input_while_busy=False, enter_count=1, submit_delay=0.0,
                                          native_status=True, mcp_client=False, uncertain_delivery="retype",
                                          takes_model=True),
        startup_dialogs=STARTUP_DIALOGS,
        tested_versions=TESTED_VERSIONS,
        model_endpoint=model_endpoint,
        native_signal=native_signal,
        # No pending_input: a sent message stays on Aider's prompt row, so the screen cannot tell it from
        # an unsent one. Aider loads litellm on its first request (seconds with nothing new drawn); cao
        # then pressed Enter twice more, and an Enter waiting in the terminal answers Aider's next
        # question with its default. Aider's Enter always submits a paste, so nothing is lost.
        # The prompt a waiting screen shows, with each option's keys: cao shows it, answers it by option
        # and lets policies answer it.
        read_prompt=read_prompt,
    )
