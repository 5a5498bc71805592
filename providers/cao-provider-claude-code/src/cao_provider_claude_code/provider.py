"""The ``claude_code`` provider record: how cao launches Claude Code and reads its screen."""

from __future__ import annotations

from collections.abc import Mapping

from cao_hookspecs import ProviderCapabilities, ProviderSpec
from cao_launch_core.record import provider_spec
from cao_screen_core.reports import pending_reader

from . import launch, screen
from .dialogs import STARTUP_DIALOGS
from .prompts import read_prompt
from .signals import native_answer, native_signal

__all__ = ["NAME", "TESTED_VERSIONS", "claude_code_provider", "model_endpoint"]

NAME = "claude_code"
#: Claude Code releases whose screens are recorded under tests/screens/ and pass the live tests.
TESTED_VERSIONS = ("2.1.330",)
DEFAULT_ENDPOINT = "https://api.anthropic.com"


def model_endpoint(env: Mapping[str, str]) -> str | None:
    """The model API Claude Code will call with ``env``: ``ANTHROPIC_BASE_URL``, else Anthropic's API.

    Through Bedrock or Vertex (``CLAUDE_CODE_USE_BEDROCK`` / ``CLAUDE_CODE_USE_VERTEX``) the address
    depends on the cloud region, so only an explicit base URL for that service is known.
    """
    if env.get("CLAUDE_CODE_USE_BEDROCK"):
        return env.get("ANTHROPIC_BEDROCK_BASE_URL") or None
    if env.get("CLAUDE_CODE_USE_VERTEX"):
        return env.get("ANTHROPIC_VERTEX_BASE_URL") or None
    return env.get("ANTHROPIC_BASE_URL") or DEFAULT_ENDPOINT


def claude_code_provider() -> ProviderSpec:
    """The provider record registered by this distribution's plugin."""
    return provider_spec(
        NAME, launch, screen,
        description="Claude Code, Anthropic's agent CLI",
        # Claude Code takes a bracketed paste and an Enter in one go, and queues messages typed while
        # it works. Its hooks report each turn's start and end (signals.py). It marks an MCP server
        # connected a moment after every list it asked for is answered, when cao's relay reports it: on a
        # loaded machine that moment reached 0.19 s (a first request still listing cao's server as
        # connecting), so the gate waits half a second more.
        capabilities=ProviderCapabilities(accepts_input_while_busy=True, native_status=True, enter_count=1,
                                          submit_delay=0.0, mcp_settle=0.5,
                                          uncertain_delivery="retype", takes_model=True),
        startup_dialogs=STARTUP_DIALOGS,
        tested_versions=TESTED_VERSIONS,
        model_endpoint=model_endpoint,
        native_signal=native_signal,
        native_answer=native_answer,
        read_prompt=read_prompt,
        pending_input=pending_reader(screen.parse_screen),
    )
